// `npm run mutation -- <area ...> | --all | --list`: StrykerJS over the reference's
// rule-enforcing modules (scripts/mutation/areas.ts), each mutant judged by the checks citing its
// area's rules against a fresh reference. Prints per area the mutants killed, survived, triaged
// (test/mutation/triage.yaml: equivalent or unobservable, with the reason) and the score over the
// non-equivalent, observable ones; writes reports/mutation/<area>.html and summary.json.
// The full run takes hours on 2 cores: it is not part of CI (test/mutation/sample.test.ts is).
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { MutantResult } from '@stryker-mutator/api/core';
import { AREAS, area, type MutationArea } from './areas.ts';
import { recordedSample, recordSample, regressions, runSample } from './sample.ts';
import { INCREMENTAL, killLog, mutate, REPORTS } from './stryker.ts';
import { byPlace, loadTriage, sameMutant, type TriageEntry } from './triage.ts';

export interface AreaFigures {
  area: string;
  mutants: number;
  killed: number;
  survived: number;
  equivalent: number;
  unobservable: number;
  /** Survivors that only change a project decision: judged by profile checks, apart from the score. */
  profile: number;
  /** Killed only by profile checks in this run (scripts/mutation/kill.mjs's log): no document check failed. */
  profileKilled: number;
  /** Killed over the mutants neither equivalent, unobservable nor profile-only. */
  score: number;
  /** The same, counting only the kills some document check made. */
  documentScore: number;
  untriaged: Array<{ file: string; line: number; mutator: string; replacement: string }>;
  /** Each mutant only profile checks killed, with those checks. */
  killedByProfile: string[];
}

const KILLED = new Set(['Killed', 'Timeout']);
const LIVE = new Set(['Survived', 'NoCoverage']);

/**
 * `sources`: the mutated files as they were when the run began (absolute path → text), so an edit
 * made while it ran does not move the places byPlace reads.
 */
export async function figures(
  a: MutationArea,
  results: readonly MutantResult[],
  triage: readonly TriageEntry[],
  kills: ReadonlyMap<string, Kill> = new Map(),
  sources: ReadonlyMap<string, string> = new Map(),
): Promise<AreaFigures> {
  const counted = results.filter((m) => KILLED.has(m.status) || LIVE.has(m.status));
  const killed = counted.filter((m) => KILLED.has(m.status)).length;
  const kill = (m: MutantResult) => kills.get(placeOf(m));
  const byProfile = counted.filter((m) => KILLED.has(m.status) && kill(m)?.document.length === 0 && (kill(m)?.profile.length ?? 0) > 0);
  const profileKilled = byProfile.length;
  const judged = await Promise.all(
    counted
      .filter((m) => LIVE.has(m.status))
      .map(async (m) => ({ m, verdict: triage.find((t) => sameMutant(t, m))?.verdict ?? (await byPlace(m, m.fileName, sources.get(resolve(m.fileName))))?.verdict })),
  );
  const count = (v: string) => judged.filter((j) => j.verdict === v).length;
  const [equivalent, unobservable, profile] = [count('equivalent'), count('unobservable'), count('profile')];
  const denominator = counted.length - equivalent - unobservable - profile;
  return {
    area: a.name,
    mutants: counted.length,
    killed,
    survived: judged.filter((j) => !j.verdict).length,
    equivalent,
    unobservable,
    profile,
    profileKilled,
    score: denominator === 0 ? 1 : killed / denominator,
    documentScore: denominator === 0 ? 1 : (killed - profileKilled) / denominator,
    untriaged: judged
      .filter((j) => !j.verdict)
      .map(({ m }) => ({ file: m.fileName.replace(/^.*?(reference\/)/, '$1'), line: m.location.start.line, mutator: m.mutatorName, replacement: m.replacement ?? '' })),
    killedByProfile: byProfile.map(
      (m) => `${m.fileName.replace(/^.*?(reference\/)/, '$1')}:${m.location.start.line} ${m.mutatorName} → ${JSON.stringify(m.replacement ?? '')} (${kill(m)!.profile.join(', ')})`,
    ),
  };
}

/** What scripts/mutation/kill.mjs logged for one mutant: the checks that failed under it, by kind. */
export interface Kill {
  document: string[];
  profile: string[];
}

/** A mutant's place, which outlives Stryker's ids across runs: file, position, mutator and replacement. */
const placeOf = (m: MutantResult): string =>
  `${m.fileName.replace(/^.*?(reference\/)/, '$1')}:${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column} ${m.mutatorName} ${m.replacement ?? ''}`;

/**
 * Which checks killed each mutant, by place: this run's kill log (by Stryker's id) merged over
 * the record of earlier runs (`<label>.kills.json` beside the incremental file), so the mutants an
 * incremental run reuses keep their killers.
 */
async function readKills(label: string, results: readonly MutantResult[]): Promise<Map<string, Kill>> {
  const record = `${INCREMENTAL}/${label}.kills.json`;
  const kept = JSON.parse(await readFile(record, 'utf8').catch(() => '{}')) as Record<string, Kill>;
  const text = await readFile(killLog(label), 'utf8').catch(() => '');
  const byId = new Map(
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Kill & { mutant: string })
      .map((k) => [k.mutant, { document: k.document, profile: k.profile }]),
  );
  for (const m of results) {
    const k = byId.get(m.id);
    if (k) kept[placeOf(m)] = k;
  }
  const live = new Set(results.map(placeOf));
  const merged = Object.fromEntries(Object.entries(kept).filter(([place]) => live.has(place)));
  await writeFile(record, `${JSON.stringify(merged, null, 1)}\n`);
  return new Map(Object.entries(merged));
}

const USAGE = `usage: npm run mutation -- <area ...> | --all | --list | --sample [--record]

  <area ...>            run StrykerJS over the areas' files (--list names them); each mutant is
                        judged by the checks citing the area's rules against a fresh reference
  --all                 every area (hours on 2 cores)
  --list                the areas, their files and rules
  --concurrency N       mutants judged at once (default: Stryker's; 2 on 2 cores)
  --fresh               ignore the incremental file: test every mutant again
  --retest-survivors    test again only the mutants that survived last time
  --recount             no run: the figures of the last one (its incremental file) under the
                        triage as it is now, after entries were added
  --mutate FILE:L1-L2   a slice of one area (repeatable), with --rule ID to narrow its checks
  --sample [--record]   the fixed sample npm test runs; --record writes it anew

Figures, triage (test/mutation/triage.yaml) and what the areas mean: docs/harness.md.`;

function table(rows: readonly AreaFigures[]): string {
  const head = ['area', 'mutants', 'killed', 'by profile only', 'survived', 'equivalent', 'unobservable', 'profile', 'score', 'document score'];
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const body = rows.map((r) => [r.area, r.mutants, r.killed, r.profileKilled, r.survived, r.equivalent, r.unobservable, r.profile, pct(r.score), pct(r.documentScore)].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  return [head, ...body].map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      all: { type: 'boolean' },
      list: { type: 'boolean' },
      concurrency: { type: 'string' },
      fresh: { type: 'boolean' },
      'retest-survivors': { type: 'boolean' },
      recount: { type: 'boolean' },
      sample: { type: 'boolean' },
      record: { type: 'boolean' },
      // A slice of one area: Stryker ranges (`file:line-line`) and, optionally, fewer rules.
      mutate: { type: 'string', multiple: true },
      rule: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.sample) return sample(values.record === true);
  if (values.list || (positionals.length === 0 && !values.all)) {
    for (const a of AREAS) console.log(`${a.name.padEnd(18)} ${a.suite.padEnd(7)} ${a.mutate.join(', ')}  (${a.rules.length ? `rules ${a.rules.join(' ')}` : 'the whole suite'})`);
    if (!values.list) console.log(`\n${USAGE}`);
    return values.list ? 0 : 2;
  }
  const areas = values.all ? AREAS : positionals.map(area);
  if ((values.mutate || values.rule) && areas.length !== 1) throw new Error('--mutate and --rule slice one area');
  const triage = await loadTriage();
  const rows: AreaFigures[] = [];
  for (const whole of areas) {
    const a = values.rule ? { ...whole, rules: values.rule } : whole;
    const slice = values.mutate ? { mutate: values.mutate, label: sliceLabel(a.name, values.mutate) } : {};
    const label = slice.label ?? a.name;
    const files = [...new Set((slice.mutate ?? a.mutate).map((f) => resolve(f.split(':')[0]!)))];
    const sources = new Map(await Promise.all(files.map(async (f) => [f, await readFile(f, 'utf8')] as const)));
    if (values.recount) {
      const last = await recorded(label);
      rows.push(await figures({ ...a, name: label }, last.results, triage, await readKills(label, last.results), last.sources));
      continue;
    }
    const results = await mutate(a, { concurrency: Number(values.concurrency ?? 1), force: values.fresh === true, retestSurvivors: values['retest-survivors'] === true, ...slice });
    rows.push(await figures({ ...a, name: label }, results, triage, await readKills(label, results), sources));
  }
  console.log(`\n${table(rows)}\n`);
  for (const r of rows) for (const u of r.untriaged) console.log(`survived, not triaged: ${r.area} ${u.file}:${u.line} ${u.mutator} → ${JSON.stringify(u.replacement)}`);
  for (const r of rows) for (const k of r.killedByProfile) console.log(`killed by profile checks only: ${r.area} ${k}`);
  await writeFile(`${REPORTS}/summary.json`, JSON.stringify(rows, null, 2));
  console.log(`reports: ${REPORTS}/<area>.html, ${REPORTS}/summary.json`);
  return rows.every((r) => r.score >= 0.9) ? 0 : 1;
}

/**
 * The last run of `label` as its incremental file records it: each mutant's place and status, and
 * the sources they were made of (so byPlace reads the code the mutants were, not today's).
 */
async function recorded(label: string): Promise<{ results: MutantResult[]; sources: Map<string, string> }> {
  const file = `${INCREMENTAL}/${label}.json`;
  const text = await readFile(file, 'utf8').catch(() => {
    throw new Error(`${file}: no run of ${label} to recount`);
  });
  const report = JSON.parse(text) as { files: Record<string, { source: string; mutants: Array<Omit<MutantResult, 'fileName'>> }> };
  const entries = Object.entries(report.files);
  return {
    results: entries.flatMap(([fileName, f]) => f.mutants.map((m) => ({ ...m, fileName }) as MutantResult)),
    sources: new Map(entries.map(([fileName, f]) => [resolve(fileName), f.source])),
  };
}

/** A slice's own report and incremental file: `relay-auth` with `reference/relay/sessions.ts:30-49` is `relay-auth.sessions-30-49`. */
function sliceLabel(name: string, ranges: readonly string[]): string {
  return `${name}.${ranges
    .map((r) =>
      r
        .replace(/^.*\//, '')
        .replace(/\.ts(:|$)/, '$1')
        .replace(/[^A-Za-z0-9]+/g, '-'),
    )
    .join('+')}`;
}

/** The fixed sample: record it, or compare with the record (exit 1 when a killed mutant survives). */
async function sample(record: boolean): Promise<number> {
  const now = await runSample();
  const killed = now.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
  console.log(`sample: ${now.length} mutants, ${killed} killed`);
  if (record) {
    await recordSample(now);
    console.log('recorded in test/mutation/sample.json');
    return 0;
  }
  const { survived, missing } = regressions(await recordedSample(), now);
  for (const m of survived) console.log(`killed before, survives now: ${m.file}:${m.line}:${m.column} ${m.mutator} → ${JSON.stringify(m.replacement)}`);
  for (const m of missing) console.log(`recorded, no longer made (record the sample again): ${m.file}:${m.line}:${m.column} ${m.mutator}`);
  return survived.length + missing.length === 0 ? 0 : 1;
}

process.exitCode = await main();
