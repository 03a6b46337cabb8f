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
  lines.push('| suite | passed | failed | errors | skipped | expected failures |', '|---|---:|---:|---:|---:|---:|');
  for (const [suite, results] of groupBy(report.results, (r) => r.suite)) {
    const c = countResults(results);
    lines.push(`| ${cell(suite)} | ${c.passed} | ${c.failed} | ${c.errors} | ${c.skipped} | ${c.expected} |`);
  }
  lines.push(`| **total** | ${summary.passed} | ${summary.failed} | ${summary.errors} | ${summary.skipped} | ${summary.expectedFailures} |`, '');

  const bad = report.results.filter((r) => (r.status === 'failed' && r.expected !== 'failure') || r.status === 'error');
  if (bad.length > 0) {
    lines.push('## Failures', '', '| check | level | rules | detail |', '|---|---|---|---|');
    for (const r of bad) lines.push(row(r));
    lines.push('');
  }
  const total = coverage.rules.length;
  lines.push('## Rule coverage', '', `${coverage.covered.length} of ${total} rules of document${coverage.docs.length > 1 ? 's' : ''} ${coverage.docs.join(', ')} covered.`);
  if (coverage.uncovered.length > 0) lines.push('', `Uncovered: ${coverage.uncovered.map(code).join(', ')}.`);
  if (coverage.unknown.length > 0) lines.push('', `Cited but not in the catalogue: ${coverage.unknown.map(code).join(', ')}.`);
  return `${lines.join('\n')}\n`;
}

function row(r: CheckResult): string {
  return `| ${code(r.id)} | ${r.level} | ${r.rules.map(code).join(' ')} | ${cell(firstLine(r.detail))} |`;
}

export function markdownReporter(file: string): Reporter {
  return { onEnd: (report) => writeFileAtomic(file, renderMarkdown(report)) };
}
