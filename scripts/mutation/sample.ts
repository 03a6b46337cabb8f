// The fixed sample of mutants `npm test` runs (test/mutation/sample.test.ts): a few lines of
// rule enforcement per document, a few minutes in all. `npm run mutation -- --sample --record`
// records what each sampled mutant came to in test/mutation/sample.json; the test fails when a
// mutant recorded killed survives (a check lost its edge).
import { readFile, writeFile } from 'node:fs/promises';
import type { MutantResult } from '@stryker-mutator/api/core';
import { area, type MutationArea } from './areas.ts';
import { mutate } from './stryker.ts';

/** Each sampled area's lines, judged by the checks of a few rules (seconds a mutant, a few minutes in all). */
export const SAMPLE: ReadonlyArray<{ area: string; ranges: string[]; rules: string[] }> = [
  // A session's lifetime bounds (ra.sessions.ttl, and the project's lower bound ra.sessions.ttl-positive):
  // only those rules' checks, not all of ra.sessions, whose restart checks cost minutes a mutant.
  { area: 'relay-auth', ranges: ['reference/relay/sessions.ts:51-51'], rules: ['ra.sessions.ttl', 'ra.sessions.ttl-positive'] },
  // A session-signed envelope: the session is the sender's, the signature verifies.
  {
    area: 'relay-messages',
    ranges: ['reference/relay/messages.ts:75-75', 'reference/relay/messages.ts:80-80'],
    rules: ['ra.messages.session-expired', 'ra.messages.signature', 'ra.messages.session-proof'],
  },
  // An authorization code bound to its client and redirect URI (ob.code.binding).
  { area: 'bridge-token', ranges: ['reference/bridge/token.ts:71-72'], rules: ['ob.code'] },
];

const RECORD = new URL('../../test/mutation/sample.json', import.meta.url);

export interface SampledMutant {
  area: string;
  file: string;
  line: number;
  column: number;
  mutator: string;
  replacement: string;
  status: string;
}

const key = (m: Omit<SampledMutant, 'status'>) => `${m.area} ${m.file}:${m.line}:${m.column} ${m.mutator} ${m.replacement}`;

function sampled(a: MutationArea, r: MutantResult): SampledMutant {
  const file = r.fileName.replace(/^.*?(reference\/)/, '$1');
  return { area: a.name, file, line: r.location.start.line, column: r.location.start.column, mutator: r.mutatorName, replacement: r.replacement ?? '', status: r.status };
}

/** Runs every sampled range from scratch (no incremental file: the point is to test again). */
export async function runSample(): Promise<SampledMutant[]> {
  const out: SampledMutant[] = [];
  for (const s of SAMPLE) {
    const a = { ...area(s.area), rules: s.rules };
    const results = await mutate(a, { mutate: s.ranges, incremental: false, label: `sample-${a.name}`, quiet: true });
    out.push(...results.map((r) => sampled(a, r)));
  }
  return out.sort((x, y) => key(x).localeCompare(key(y)));
}

export async function recordSample(results: readonly SampledMutant[]): Promise<void> {
  await writeFile(RECORD, `${JSON.stringify(results, null, 2)}\n`);
}

export async function recordedSample(): Promise<SampledMutant[]> {
  return JSON.parse(await readFile(RECORD, 'utf8')) as SampledMutant[];
}

/**
 * Mutants recorded killed that now live, and recorded mutants that no longer exist (the code moved:
 * record again). Two mutants can share a place, a mutator and a replacement (a condition and its
 * first operand both start at one column), so each such key is compared by its count of kills.
 */
export function regressions(recorded: readonly SampledMutant[], now: readonly SampledMutant[]): { survived: SampledMutant[]; missing: SampledMutant[] } {
  const killed = (s: string) => s === 'Killed' || s === 'Timeout';
  const group = (list: readonly SampledMutant[]) => {
    const by = new Map<string, SampledMutant[]>();
    for (const m of list) by.set(key(m), [...(by.get(key(m)) ?? []), m]);
    return by;
  };
  const current = group(now);
  const survived: SampledMutant[] = [];
  const missing: SampledMutant[] = [];
  for (const [k, was] of group(recorded)) {
    const before = was.filter((m) => killed(m.status)).length;
    if (before === 0) continue;
    const is = current.get(k);
    if (!is) {
      missing.push(...was.filter((m) => killed(m.status)));
      continue;
    }
    const after = is.filter((m) => killed(m.status)).length;
    if (after < before) survived.push(...is.filter((m) => !killed(m.status)).slice(0, before - after));
  }
  return { survived, missing };
}
