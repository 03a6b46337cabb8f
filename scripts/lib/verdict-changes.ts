// What `npm run stability` reports from the JSON reports of its runs: per run its counts and its
// failures and errors (with their codes and causes), and per check whether its status changed
// between runs. Pure, so it is tested on reports made by hand.
import type { CheckResult, RunReport } from '../../harness/run/model.ts';

export interface RunLine {
  run: number;
  /** Exit code of the run. */
  exit: number;
  seconds: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  /** `id: status code/cause: first line` of every gating failure and error. */
  bad: string[];
}

export interface Stability {
  runs: RunLine[];
  /** Checks whose status differs between runs: id -> status per run (`-` where absent). */
  changes: Array<{ id: string; statuses: string[] }>;
  /** Every run had the same verdict on every check, and none failed or errored. */
  stable: boolean;
}

const bad = (r: CheckResult): boolean => r.gating !== false && (r.status === 'error' || (r.status === 'failed' && r.expected !== 'failure'));

export function runLine(run: number, exit: number, seconds: number, report: RunReport | undefined): RunLine {
  if (!report) return { run, exit, seconds, passed: 0, failed: 0, errors: 0, skipped: 0, bad: [`no report (the run exited ${exit} before writing one)`] };
  const { summary } = report;
  return {
    run,
    exit,
    seconds,
    passed: summary.passed,
    failed: summary.failed,
    errors: summary.errors,
    skipped: summary.skipped,
    bad: report.results.filter(bad).map((r) => `${r.id}: ${r.status} ${r.code ?? r.cause ?? ''}: ${r.detail.split('\n')[0]!.slice(0, 200)}`),
  };
}

export function compareRuns(reports: ReadonlyArray<RunReport | undefined>, lines: RunLine[]): Stability {
  const ids = new Set<string>();
  for (const report of reports) for (const r of report?.results ?? []) ids.add(r.id);
  const changes: Stability['changes'] = [];
  for (const id of [...ids].sort()) {
    const statuses = reports.map((report) => report?.results.find((r) => r.id === id)?.status ?? '-');
    if (new Set(statuses).size > 1) changes.push({ id, statuses });
  }
  const stable = reports.every((r) => r !== undefined) && changes.length === 0 && lines.every((l) => l.exit === 0 && l.failed === 0 && l.errors === 0);
  return { runs: lines, changes, stable };
}

export function renderStability(s: Stability, load: number): string {
  const out: string[] = [`${s.runs.length} run(s) beside ${load} busy process(es):`];
  for (const l of s.runs) {
    out.push(`  run ${l.run}: exit ${l.exit}, ${l.seconds.toFixed(0)} s, ${l.passed} passed, ${l.failed} failed, ${l.errors} error(s), ${l.skipped} skipped`);
    for (const b of l.bad) out.push(`    ${b}`);
  }
  if (s.changes.length === 0) out.push('verdict changes: none (every check had the same status in every run)');
  else {
    out.push(`verdict changes (${s.changes.length} check(s) whose status differed between runs):`);
    for (const c of s.changes) out.push(`  ${c.id}: ${c.statuses.join(' ')}`);
  }
  const identical = s.runs.filter((l) => l.exit === 0 && l.failed === 0 && l.errors === 0).length;
  out.push(`${identical} of ${s.runs.length} run(s) passed with 0 failed and 0 errors; ${s.stable ? 'stable' : 'NOT stable'}`);
  return `${out.join('\n')}\n`;
}
