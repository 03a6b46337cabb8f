// JUnit XML, the format CI servers display natively. Expected failures are reported as
// skipped: they do not fail the run, so they must not show red in CI either.
import type { CheckResult, Reporter, RunReport } from '../run/model.ts';
import { countResults } from '../run/summary.ts';
import { curlOf, exchangesOf, failingExchange, needsAction, propertyOf, reasonOf } from './exchanges.ts';
import { firstLine, groupBy } from './groups.ts';
import { exchangeText } from './markdown.ts';
import { writeFileAtomic } from './write.ts';

/**
 * Escapes text for XML 1.0 content and attributes. Characters XML 1.0 cannot carry at all
 * (C0 controls other than tab/newline/CR, lone surrogates, U+FFFE/U+FFFF) become a visible
 * `\uXXXX` rather than making the whole file unreadable.
 */
export function escapeXml(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const ch = text[i]!;
    if (ch === '&') out += '&amp;';
    else if (ch === '<') out += '&lt;';
    else if (ch === '>') out += '&gt;';
    else if (ch === '"') out += '&quot;';
    else if (ch === "'") out += '&apos;';
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      out += ch + text[i + 1]!;
      i++;
    } else if (forbidden(code)) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

/** Attributes additionally keep their line breaks and tabs, which parsers would normalise to spaces. */
function escapeAttr(text: string): string {
  return escapeXml(text).replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function forbidden(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || (code >= 0xd800 && code <= 0xdfff) || code === 0xfffe || code === 0xffff;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function attrs(pairs: Record<string, string | number>): string {
  return Object.entries(pairs)
    .map(([k, v]) => ` ${k}="${escapeAttr(String(v))}"`)
    .join('');
}

function testcase(r: CheckResult): string[] {
  const lines = [`    <testcase${attrs({ name: r.id, classname: r.suite, time: seconds(r.durationMs) })}>`];
  lines.push('      <properties>');
  lines.push(`        <property${attrs({ name: 'title', value: r.title })}/>`);
  lines.push(`        <property${attrs({ name: 'level', value: r.level })}/>`);
  for (const rule of r.rules) lines.push(`        <property${attrs({ name: 'rule', value: rule })}/>`);
  if (r.profile) lines.push(`        <property${attrs({ name: 'profile', value: r.gating ? 'gating' : 'not gating' })}/>`);
  const reason = reasonOf(r);
  if (reason) lines.push(`        <property${attrs({ name: r.status === 'error' ? 'cause' : 'code', value: reason })}/>`);
  lines.push('      </properties>');
  // The type is the reason code where there is one, so CI viewers group failures by reason.
  const body = (tag: string, message: string, type: string): void => {
    lines.push(`      <${tag}${attrs({ message, type })}>${escapeXml(r.detail)}</${tag}>`);
  };
  const differs = r.gating === false && (r.status === 'failed' || r.status === 'error');
  if (differs) body('skipped', `project profile differs (not gating): ${firstLine(r.detail)}`, 'profile-difference');
  else if (r.status === 'failed' && r.expected === 'failure') body('skipped', `expected failure: ${r.expectedReason ?? ''}`, 'expected-failure');
  else if (r.status === 'failed') body('failure', firstLine(r.detail), reason ?? 'failed');
  else if (r.status === 'error') body('error', firstLine(r.detail), reason ?? 'error');
  else if (r.status === 'skipped') body('skipped', firstLine(r.detail), 'skipped');
  const out = systemOut(r);
  if (out) lines.push(`      <system-out>${escapeXml(out)}</system-out>`);
  lines.push('    </testcase>');
  return lines;
}

/** What CI viewers show beside a failure: its log, a property's replay, the curl line and every exchange. */
function systemOut(r: CheckResult): string {
  const parts: string[] = [];
  if (r.log?.length) parts.push(r.log.join('\n'));
  if (!needsAction(r)) return parts.join('\n\n');
  const p = propertyOf(r.evidence);
  if (p) parts.push(`shrunk counterexample: ${p.counterexample}\nreplay: ${p.replay}`);
  const exchanges = exchangesOf(r.evidence);
  const last = failingExchange(exchanges);
  if (last) {
    const curl = curlOf(last);
    parts.push(`reproduce ${last.judged ? 'the request whose answer the failure quotes' : 'the last request'}:\n${curl.command}${curl.warnings.map((w) => `\n# ${w}`).join('')}`);
  }
  exchanges.forEach((x, i) => parts.push(`--- exchange ${i + 1} of ${exchanges.length} ---\n${exchangeText(x)}`));
  return parts.join('\n\n');
}

/** JUnit "skipped" merges our skipped results, expected failures and non-gating profile differences. */
function junitCounts(results: readonly CheckResult[]): Record<string, number> {
  const c = countResults(results);
  return {
    tests: results.length,
    failures: c.failed,
    errors: c.errors,
    skipped: results.length - c.passed - c.failed - c.errors - results.filter((r) => r.gating === false && r.status === 'passed').length,
  };
}

export function renderJUnit(report: RunReport): string {
  const { summary } = report;
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites${attrs({ name: report.tool.name, ...junitCounts(report.results), time: seconds(summary.durationMs), timestamp: summary.startedAt })}>`);
  for (const [suite, results] of groupBy(report.results, (r) => r.suite)) {
    const time = results.reduce((t, r) => t + r.durationMs, 0);
    lines.push(`  <testsuite${attrs({ name: suite, ...junitCounts(results), time: seconds(time), timestamp: summary.startedAt })}>`);
    lines.push('    <properties>');
    lines.push(`      <property${attrs({ name: 'seed', value: summary.seed })}/>`);
    lines.push(`      <property${attrs({ name: 'tool', value: `${report.tool.name} ${report.tool.version}` })}/>`);
    if (summary.interrupted) lines.push(`      <property${attrs({ name: 'interrupted', value: 'true' })}/>`);
    lines.push('    </properties>');
    for (const r of results) lines.push(...testcase(r));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

export function junitReporter(file: string): Reporter {
  return { onEnd: (report) => writeFileAtomic(file, renderJUnit(report)) };
}
