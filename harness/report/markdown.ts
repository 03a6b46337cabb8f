// A Markdown report for humans reading CI: the summary per suite, every failure with the rules it
// breaks, and the rules no check covered. Fits a GitHub job summary ($GITHUB_STEP_SUMMARY).
import type { CheckResult, Reporter, RunReport } from '../run/model.ts';
import { countResults } from '../run/summary.ts';
import { firstLine, groupBy } from './groups.ts';
import { writeFileAtomic } from './write.ts';

/** Table cells cannot hold pipes or line breaks. */
const cell = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
const code = (text: string): string => `\`${text.replace(/`/g, "'")}\``;

export function renderMarkdown(report: RunReport): string {
  const { summary, coverage } = report;
  const verdict = summary.interrupted ? 'interrupted' : summary.failed + summary.errors > 0 ? 'FAILED' : summary.total === 0 ? 'nothing tested' : 'passed';
  const lines = [`# ${report.tool.name} ${report.tool.version}: ${verdict}`, ''];
  lines.push(`Seed ${summary.seed}, ${(summary.durationMs / 1000).toFixed(1)} s, started ${summary.startedAt}.`, '');
  lines.push('| suite | passed | failed | errors | skipped | expected failures | profile passed |', '|---|---:|---:|---:|---:|---:|---:|');
  const profileOf = (results: readonly CheckResult[]): string => {
    const p = results.filter((r) => r.profile);
    return p.length === 0 ? '-' : `${p.filter((r) => r.status === 'passed').length}/${p.length}`;
  };
  for (const [suite, results] of groupBy(report.results, (r) => r.suite)) {
    const c = countResults(results);
    lines.push(`| ${cell(suite)} | ${c.passed} | ${c.failed} | ${c.errors} | ${c.skipped} | ${c.expected} | ${profileOf(results)} |`);
  }
  lines.push(`| **total** | ${summary.passed} | ${summary.failed} | ${summary.errors} | ${summary.skipped} | ${summary.expectedFailures} | ${profileOf(report.results)} |`, '');

  const bad = report.results.filter((r) => r.gating !== false && ((r.status === 'failed' && r.expected !== 'failure') || r.status === 'error'));
  if (bad.length > 0) {
    lines.push('## Failures', '', '| check | level | rules | detail |', '|---|---|---|---|');
    for (const r of bad) lines.push(row(r));
    lines.push('');
  }
  const differ = report.results.filter((r) => r.gating === false && (r.status === 'failed' || r.status === 'error'));
  if (differ.length > 0) {
    lines.push(
      '## Project profile differences (not gating)',
      '',
      'Decisions the documents leave open, where this implementation chose otherwise than the project. `--profile` makes them gate.',
      '',
      '| check | level | rules | detail |',
      '|---|---|---|---|',
    );
    for (const r of differ) lines.push(row(r));
    lines.push('');
  }
  lines.push('## Rule coverage', '', '| document | covered | proven | unobservable | uncovered | profile decisions covered |', '|---|---:|---:|---:|---:|---:|');
  for (const [doc, c] of Object.entries(coverage.documents ?? {})) {
    const total = c.covered.length + c.unobservable.length + c.uncovered.length;
    lines.push(
      `| ${doc} | ${c.covered.length}/${total} | ${(c.proven ?? []).length}/${total} | ${c.unobservable.length} | ${c.uncovered.length} | ${c.profile.covered.length}/${c.profile.covered.length + c.profile.uncovered.length} |`,
    );
  }
  if (coverage.uncovered.length > 0) lines.push('', `Uncovered: ${coverage.uncovered.map(code).join(', ')}.`);
  const unobservable = Object.values(coverage.documents ?? {}).flatMap((d) => d.unobservable);
  if (unobservable.length > 0) lines.push('', 'Unobservable over the wire:', '', ...unobservable.map((u) => `- ${code(u.id)}: ${cell(u.reason)}`));
  if (coverage.unknown.length > 0) lines.push('', `Cited but not in the catalogue: ${coverage.unknown.map(code).join(', ')}.`);
  return `${lines.join('\n')}\n`;
}

function row(r: CheckResult): string {
  return `| ${code(r.id)} | ${r.level} | ${r.rules.map(code).join(' ')} | ${cell(firstLine(r.detail))} |`;
}

export function markdownReporter(file: string): Reporter {
  return { onEnd: (report) => writeFileAtomic(file, renderMarkdown(report)) };
}
