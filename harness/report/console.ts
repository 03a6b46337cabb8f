// Human output: progress on stderr while running, the summary on stdout at the end.
// The last line, "N passed, N failed, N skipped", is a contract: CI scripts parse it.
import type { CheckResult, Level, Reporter, RuleEntry, RunReport } from '../run/model.ts';
import { countResults, type Counts } from '../run/summary.ts';
import { firstLine, groupBy, groupKey } from './groups.ts';

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ConsoleOptions {
  stdout: Output;
  stderr: Output;
  verbose?: boolean;
  /** No progress and no table: failures and the final line only. */
  quiet?: boolean;
  /** Default: stdout is a TTY and NO_COLOR is unset. */
  color?: boolean;
  /** The rule catalogue, to print each cited rule with its own level. */
  rules?: readonly RuleEntry[];
  env?: Record<string, string | undefined>;
}

/** In CI, a progress line at most every this many checks (plus one per finished suite). */
const CI_PROGRESS_EVERY = 50;
const SKIP_SOURCES_SHOWN = 3;

export function consoleReporter(options: ConsoleOptions): Reporter {
  const env = options.env ?? process.env;
  const color = options.color ?? (options.stdout.isTTY === true && env.NO_COLOR === undefined);
  const live = options.stderr.isTTY === true;
  let total = 0;
  let done = 0;
  let sinceLine = 0;
  /** Checks left per suite: suites run at once, so a suite is done when its last check is. */
  let left = new Map<string, number>();
  const running: CheckResult[] = [];

  const ciLine = (label: string): void => {
    const c = countResults(running);
    options.stderr.write(`${counter(done, total)} ${label} (so far ${c.passed} passed, ${c.failed + c.errors} failed, ${c.skipped} skipped)\n`);
    sinceLine = 0;
  };

  return {
    onStart(n, perSuite) {
      total = n;
      left = new Map(Object.entries(perSuite ?? {}));
    },
    onResult(result) {
      if (options.quiet) return;
      done++;
      if (live) {
        const line = `${counter(done, total)} ${result.suite} ${groupKey(result)}`;
        options.stderr.write(`\r\x1b[2K${truncate(line, (options.stderr.columns ?? 80) - 1)}`);
        return;
      }
      running.push(result);
      const remaining = (left.get(result.suite) ?? 1) - 1;
      left.set(result.suite, remaining);
      if (remaining === 0) ciLine(`${result.suite} done`);
      else if (++sinceLine >= CI_PROGRESS_EVERY) ciLine(result.suite);
    },
    onEnd(report) {
      if (!options.quiet && live && done > 0) options.stderr.write('\r\x1b[2K');
      options.stdout.write(renderSummary(report, { color, verbose: options.verbose ?? false, quiet: options.quiet ?? false, rules: options.rules ?? [] }));
    },
  };
}

function counter(done: number, total: number): string {
  const width = String(total).length;
  return `[${String(done).padStart(Math.max(width, 3))}/${total}]`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

interface RenderOptions {
  color: boolean;
  verbose: boolean;
  quiet: boolean;
  rules: readonly RuleEntry[];
}

export function renderSummary(report: RunReport, opts: RenderOptions): string {
  const paint = painter(opts.color);
  const out: string[] = [];
  const { summary, results } = report;
  if (!opts.quiet) out.push(...renderTable(results, paint), '');

  const bad = results.filter((r) => r.gating !== false && (r.status === 'error' || (r.status === 'failed' && r.expected !== 'failure')));
  if (bad.length > 0) {
    out.push(paint.bold(`Failures and errors (${bad.length}):`));
    const levels = new Map<string, Level>(opts.rules.map((r) => [r.id, r.level]));
    for (const r of bad) {
      const tag = r.status === 'error' ? paint.red('ERROR ') : paint.red('FAILED');
      // The reason code (a failure) or cause (an error): what dashboards and expected-failures match on.
      const reason = r.status === 'error' ? r.cause : r.code;
      out.push(`  ${tag} ${r.id}${reason ? ` [${reason}]` : ''}${r.title ? `  (${r.title})` : ''}`);
      for (const [i, a] of (r.attempts ?? []).entries()) out.push(`    attempt ${i + 1} met the environment: ${a.environment.join('; ')}`);
      if (r.rules.length > 0) out.push(`    rules: ${r.rules.map((id) => `${id} ${levels.get(id) ?? r.level}`).join(', ')}`);
      out.push(indent(r.detail || '(no detail)', '    '));
      if (opts.verbose && r.log?.length) out.push('    log:', indent(r.log.join('\n'), '      '));
    }
    out.push('');
  }

  out.push(...renderProfile(report, paint, opts.verbose));

  const expected = results.filter((r) => r.expected === 'failure');
  if (expected.length > 0) {
    out.push(paint.bold(`Expected failures (${expected.length}):`));
    for (const r of expected) {
      out.push(`  ${r.id}: ${r.expectedReason ?? ''}`);
      if (opts.verbose) out.push(indent(r.detail, '    '));
    }
    out.push('');
  }

  if (!opts.quiet) out.push(...renderSkipped(report, opts.verbose, paint));
  out.push(...renderCoverage(report, opts.verbose));
  out.push(
    `seed ${summary.seed}, ${(summary.durationMs / 1000).toFixed(1)} s${summary.expectedFailures ? `, ${summary.expectedFailures} expected failure(s)` : ''}${summary.errors ? `, ${summary.errors} error(s) counted as failed` : ''}`,
  );
  if (summary.interrupted) out.push(paint.yellow('run interrupted: results are incomplete and the run does not pass'));
  if (summary.total === 0) out.push(paint.yellow('nothing tested: no check ran'));
  // Plain on purpose, whatever the colour setting: machines read this line.
  out.push(`${summary.passed} passed, ${summary.failed + summary.errors} failed, ${summary.skipped} skipped`);
  return `${out.join('\n')}\n`;
}

function renderTable(results: readonly CheckResult[], paint: Painter): string[] {
  const profileOf = (members: readonly CheckResult[]): string => {
    const p = members.filter((r) => r.profile);
    return p.length === 0 ? '-' : `${p.filter((r) => r.status === 'passed').length}/${p.length}`;
  };
  const rows: Array<[string, Counts, string]> = [];
  for (const [suite, inSuite] of groupBy(results, (r) => r.suite)) {
    rows.push([suite, countResults(inSuite), profileOf(inSuite)]);
    // Suites built from sources (vector files: ids "file#case") get one row per source.
    if (!inSuite.every((r) => r.id.includes('#'))) continue;
    const groups = groupBy(inSuite, groupKey);
    if (groups.size > 1) for (const [group, members] of groups) rows.push([`  ${group}`, countResults(members), profileOf(members)]);
  }
  if (rows.length === 0) return [];
  const heads = ['passed', 'failed', 'skipped', 'errors', 'expected', 'profile'] as const;
  const nameWidth = Math.min(70, Math.max(5, ...rows.map(([n]) => n.length)));
  const cell = (n: number, width: number, tint: (s: string) => string): string => {
    const text = String(n).padStart(width);
    return n > 0 ? tint(text) : text;
  };
  const lines = [paint.bold(['suite'.padEnd(nameWidth), ...heads.map((h) => h.padStart(8))].join(' '))];
  for (const [name, c, profile] of rows) {
    lines.push(
      [
        truncate(name, nameWidth).padEnd(nameWidth),
        cell(c.passed, 8, paint.green),
        cell(c.failed, 8, paint.red),
        cell(c.skipped, 8, paint.yellow),
        cell(c.errors, 8, paint.red),
        cell(c.expected, 8, paint.yellow),
        profile.padStart(8),
      ].join(' '),
    );
  }
  return lines;
}

function renderSkipped(report: RunReport, verbose: boolean, paint: Painter): string[] {
  // De-duplicated by reason: a hundred vectors skipped for one reason are one line.
  const byReason = new Map<string, Set<string>>();
  const add = (reason: string, source: string): void => {
    const set = byReason.get(reason) ?? new Set<string>();
    set.add(source);
    byReason.set(reason, set);
  };
  for (const s of report.skipped_inputs) add(s.reason, s.source);
  for (const r of report.results) if (r.status === 'skipped') add(r.detail || 'skipped', groupKey(r));
  if (byReason.size === 0) return [];
  const lines = [paint.bold(`Skipped (${byReason.size} reason${byReason.size === 1 ? '' : 's'}):`)];
  for (const [reason, sources] of byReason) {
    const list = [...sources];
    const shown = verbose ? list : list.slice(0, SKIP_SOURCES_SHOWN);
    const more = list.length - shown.length;
    lines.push(`  ${firstLine(reason)}`, `    ${shown.join(', ')}${more > 0 ? `, and ${more} more` : ''}`);
  }
  lines.push('');
  return lines;
}

/**
 * The project profile: checks of decisions the documents leave open (statuses, codes, envelope
 * fields). Differences are listed apart, and fail the run only when the profile gates.
 */
function renderProfile(report: RunReport, paint: Painter, verbose: boolean): string[] {
  const { profile } = report.summary;
  const differ = report.results.filter((r) => r.profile && (r.status === 'failed' || r.status === 'error') && r.expected !== 'failure');
  if (profile.passed + profile.failed + profile.skipped === 0) return [];
  const head = `Project profile: ${profile.passed} passed, ${profile.failed} differ, ${profile.skipped} skipped`;
  const how = profile.gating ? 'the profile gates this run' : 'differences do not fail this run; --profile makes them gate';
  if (differ.length === 0) return [paint.bold(`${head} (${how})`), ''];
  // Gating differences were already listed with the failures; show the table only once.
  if (profile.gating) return [paint.bold(`${head} (${how}): listed with the failures above`), ''];
  const lines = [paint.bold(`${head} (${how}):`)];
  const width = Math.min(60, Math.max(...differ.map((r) => r.id.length)));
  for (const r of differ) {
    lines.push(`  ${paint.yellow('DIFFERS')} ${r.id.padEnd(width)}  ${r.rules.join(', ')}${(r.code ?? r.cause) ? `  [${r.code ?? r.cause}]` : ''}`);
    lines.push(indent(verbose ? r.detail : firstLines(r.detail, 3), '    '));
  }
  lines.push('');
  return lines;
}

function firstLines(text: string, n: number): string {
  const lines = (text || '(no detail)').split('\n');
  return lines.length <= n ? lines.join('\n') : `${lines.slice(0, n).join('\n')}\n… (${lines.length - n} more lines; --verbose shows all)`;
}

/**
 * Per document: rules decided by a check, proven by a variant, unobservable over the wire,
 * uncovered; the facets (spec/facets/) a variant proved of those observable; and the profile's.
 */
function renderCoverage(report: RunReport, verbose: boolean): string[] {
  const { coverage } = report;
  const lines: string[] = [];
  const docs = Object.entries(coverage.documents ?? {});
  // The facet column only once some document has facets, so a run without them reads as before.
  const withFacets = docs.some(([, c]) => (c.facets?.observable.length ?? 0) > 0);
  const columns = ['covered', 'proven', ...(withFacets ? ['facets proven'] : []), 'unobservable', 'uncovered', 'profile'];
  if (docs.length > 0) {
    lines.push(['coverage'.padEnd(10), ...columns.map((h) => h.padStart(Math.max(13, h.length + 2)))].join(''));
    for (const [doc, c] of docs) {
      const total = c.covered.length + c.unobservable.length + c.uncovered.length;
      const profileTotal = c.profile.covered.length + c.profile.uncovered.length;
      lines.push(
        [
          `doc ${doc}`.padEnd(10),
          `${c.covered.length}/${total}`.padStart(13),
          `${(c.proven ?? []).length}/${total}`.padStart(13),
          ...(withFacets ? [`${c.facets?.proven.length ?? 0}/${c.facets?.observable.length ?? 0}`.padStart(15)] : []),
          String(c.unobservable.length).padStart(13),
          String(c.uncovered.length).padStart(13),
          `${c.profile.covered.length}/${profileTotal}`.padStart(13),
        ].join(''),
      );
      if (verbose) {
        if (c.uncovered.length > 0) lines.push('  uncovered:', ...c.uncovered.map((id) => `    ${id}`));
        if (c.unobservable.length > 0) lines.push('  unobservable over the wire:', ...c.unobservable.map((u) => `    ${u.id}: ${u.reason}`));
        const unproven = (c.facets?.observable ?? []).filter((id) => !c.facets!.proven.includes(id));
        if (unproven.length > 0) lines.push('  facets no variant proved:', ...unproven.map((id) => `    ${id}`));
      }
    }
  }
  if (coverage.unknown.length > 0) lines.push(`rules cited by checks but missing from the catalogue: ${coverage.unknown.join(', ')}`);
  return lines;
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

interface Painter {
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
}

function painter(on: boolean): Painter {
  const sgr = (code: number) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);
  return { bold: sgr(1), red: sgr(31), green: sgr(32), yellow: sgr(33) };
}
