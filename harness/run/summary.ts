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

export function countResults(results: Iterable<CheckResult>): Counts {
  const c: Counts = { passed: 0, failed: 0, skipped: 0, errors: 0, expected: 0, total: 0 };
  for (const r of results) {
    c.total++;
    if (r.status === 'passed') c.passed++;
    else if (r.status === 'skipped') c.skipped++;
    else if (r.status === 'error') c.errors++;
    else if (r.expected === 'failure') c.expected++;
    else c.failed++;
  }
  return c;
}
