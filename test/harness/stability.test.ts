// `npm run stability`'s reading of its runs: verdict changes per check, failures and errors per run.
import { describe, expect, it } from 'vitest';
import type { CheckResult, RunReport } from '../../harness/run/model.ts';
import { compareRuns, renderStability, runLine } from '../../scripts/lib/verdict-changes.ts';

const result = (id: string, status: CheckResult['status'], extra: Partial<CheckResult> = {}): CheckResult => ({
  id,
  title: id,
  suite: 'rp',
  rules: [],
  level: 'MUST',
  gating: true,
  status,
  detail: 'why\nmore',
  durationMs: 1,
  ...extra,
});

function report(results: CheckResult[]): RunReport {
  const n = (s: string) => results.filter((r) => r.status === s).length;
  return {
    tool: { name: 'svc-conformance', version: '0' },
    summary: {
      passed: n('passed'),
      failed: n('failed'),
      skipped: n('skipped'),
      errors: n('error'),
      expectedFailures: 0,
      total: results.length,
      profile: { gating: true, passed: 0, failed: 0, skipped: 0 },
      durationMs: 1,
      seed: 1,
      startedAt: '',
      interrupted: false,
    },
    results,
    coverage: { docs: [], rules: [], documents: {}, covered: [], uncovered: [], unknown: [] },
    skipped_inputs: [],
    config: {},
  };
}

describe('stability', () => {
  it('names the checks whose status changed and each run failures and errors with code or cause', () => {
    const a = report([result('rp/a', 'passed'), result('rp/b', 'passed')]);
    const b = report([result('rp/a', 'failed', { code: 'status' }), result('rp/b', 'error', { cause: 'authority-late' })]);
    const lines = [runLine(1, 0, 10, a), runLine(2, 1, 12, b), runLine(3, 2, 1, undefined)];
    const s = compareRuns([a, b, undefined], lines);
    expect(s.stable).toBe(false);
    expect(s.changes).toEqual([
      { id: 'rp/a', statuses: ['passed', 'failed', '-'] },
      { id: 'rp/b', statuses: ['passed', 'error', '-'] },
    ]);
    expect(lines[1]!.bad).toEqual(['rp/a: failed status: why', 'rp/b: error authority-late: why']);
    const text = renderStability(s, 4);
    expect(text).toMatch(/rp\/a: passed failed -/);
    expect(text).toMatch(/1 of 3 run\(s\) passed with 0 failed and 0 errors; NOT stable/);
  });

  it('is stable when every run passed with the same verdicts', () => {
    const runs = [report([result('rp/a', 'passed')]), report([result('rp/a', 'passed')])];
    const s = compareRuns(runs, [runLine(1, 0, 1, runs[0]), runLine(2, 0, 1, runs[1])]);
    expect([s.stable, s.changes]).toEqual([true, []]);
  });
});
