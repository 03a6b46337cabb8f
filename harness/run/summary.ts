// Status counts, shared by the runner's summary and the reporters' per-group tables.
import type { CheckResult } from './model.ts';

export interface Counts {
  passed: number;
  /** Unexpected failures only. */
  failed: number;
  skipped: number;
  errors: number;
  expected: number;
  total: number;
}

/** Counts of the gating results: a profile check that does not gate is counted by countProfile only. */
export function countResults(results: Iterable<CheckResult>): Counts {
  const c: Counts = { passed: 0, failed: 0, skipped: 0, errors: 0, expected: 0, total: 0 };
  for (const r of results) {
    if (r.gating === false) continue;
    c.total++;
    if (r.status === 'passed') c.passed++;
    else if (r.status === 'skipped') c.skipped++;
    else if (r.status === 'error') c.errors++;
    else if (r.expected === 'failure') c.expected++;
    else c.failed++;
  }
  return c;
}

/** The project profile's checks, gating or not; an error counts as a failure (no verdict on the decision). */
export function countProfile(results: Iterable<CheckResult>, gating: boolean): { gating: boolean; passed: number; failed: number; skipped: number } {
  const c = { gating, passed: 0, failed: 0, skipped: 0 };
  for (const r of results) {
    if (!r.profile) continue;
    if (r.status === 'passed') c.passed++;
    else if (r.status === 'skipped') c.skipped++;
    else if (r.expected !== 'failure') c.failed++;
  }
  return c;
}
