// A Markdown report for humans reading CI: the summary per suite, every failure with the rules it
// breaks, and the rules no check covered; then each failure as the HTML report shows it (the
// rules' text, the target's answer, its HTTP exchanges, a curl line, a property's replay).
// Fits a GitHub job summary ($GITHUB_STEP_SUMMARY).
import type { Exchange } from '../actors/http.ts';
import type { CheckResult, Reporter, RuleEntry, RunReport } from '../run/model.ts';
import { countResults } from '../run/summary.ts';
import { curlOf, exchangeLine, exchangesOf, failingExchange, needsAction, propertyOf, reasonOf, rulesOf } from './exchanges.ts';
import { firstLine, groupBy } from './groups.ts';
import { escapeHtml } from './html.ts';
import { writeFileAtomic } from './write.ts';

export interface MarkdownOptions {
  /** The rule catalogue: each failure quotes its rules' text. */
  rules?: readonly RuleEntry[];
}

/** Table cells cannot hold pipes or line breaks. */
const cell = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
const code = (text: string): string => `\`${text.replace(/`/g, "'")}\``;

export function renderMarkdown(report: RunReport, options: MarkdownOptions = {}): string {
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
    lines.push('## Failures', '', '| check | level | reason | rules | detail |', '|---|---|---|---|---|');
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
      '| check | level | reason | rules | detail |',
      '|---|---|---|---|---|',
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
  const acting = report.results.filter(needsAction);
  if (acting.length > 0) {
    lines.push('', '## Failure details');
    for (const r of acting) lines.push('', ...failureDetail(r, options.rules ?? []));
  }
  return `${lines.join('\n')}\n`;
}

function row(r: CheckResult): string {
  return `| ${code(r.id)} | ${r.level} | ${reasonOf(r) ?? ''} | ${r.rules.map(code).join(' ')} | ${cell(firstLine(r.detail))} |`;
}

/** A fenced block whose fence no backtick run in `text` can close. */
export function fenced(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

function failureDetail(r: CheckResult, catalogue: readonly RuleEntry[]): string[] {
  const reason = reasonOf(r);
  const out = [`### ${code(r.id)}: ${r.gating === false ? 'profile difference' : r.status}${reason ? ` (${reason})` : ''}`, '', `${r.title} (${r.level}${r.profile ? ', project profile' : ''})`];
  for (const x of rulesOf(r, catalogue)) out.push('', `- ${code(x.id)} ${x.level}, ${x.where}${x.title ? `: ${x.title}` : ''}`, ...(x.text ? ['', `  > ${x.text.replace(/\r?\n/g, ' ')}`] : []));
  out.push('', r.status === 'error' ? 'Why there is no verdict:' : 'What the target answered:', '', fenced(r.detail || '(no detail)'));
  for (const [i, a] of (r.attempts ?? []).entries()) out.push('', `Attempt ${i + 1} (${a.status} ${a.code ?? a.cause ?? ''}) met the environment: ${a.environment.join('; ')}`);
  const p = propertyOf(r.evidence);
  if (p) out.push('', `Property: seed ${p.seed}, path ${code(p.path)}, ${p.numShrinks} shrink(s). Shrunk counterexample:`, '', fenced(p.counterexample), '', 'Replay:', '', fenced(p.replay, 'sh'));
  const exchanges = exchangesOf(r.evidence);
  const last = failingExchange(exchanges);
  if (last) {
    const curl = curlOf(last);
    out.push('', last.judged ? 'Reproduce the request whose answer the failure quotes:' : 'Reproduce the last request:', '', fenced(curl.command, 'sh'), ...curl.warnings.map((w) => `\n> ${w}`));
  }
  if (exchanges.length > 0) {
    out.push('', `<details><summary>HTTP exchanges (${exchanges.length})</summary>`, '');
    for (const [i, x] of exchanges.entries()) out.push(`${i + 1}. ${escapeHtml(exchangeLine(x))}`, '', fenced(exchangeText(x), 'http'), '');
    out.push('</details>');
  }
  return out;
}

/** An exchange as HTTP text: the request line, headers and body, then the response's. */
export function exchangeText(x: Exchange): string {
  const head = (h: Record<string, string | string[]>): string[] => Object.entries(h).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => `${k}: ${one}`));
  const request = [`${x.method} ${x.url}`, ...head(x.requestHeaders), ...(x.requestBody !== undefined ? ['', x.requestBody + (x.requestTruncated ? '\n[… truncated in the evidence]' : '')] : [])];
  const response =
    x.status !== undefined ? [`HTTP ${x.status}`, ...head(x.headers), '', x.body + (x.truncated ? '\n[… truncated in the evidence]' : '')] : [`(no answer: ${x.error ?? 'unknown error'})`];
  return [...request, '', '---', '', ...response].join('\n');
}

export function markdownReporter(file: string, options: MarkdownOptions = {}): Reporter {
  return { onEnd: (report) => writeFileAtomic(file, renderMarkdown(report, options)) };
}
