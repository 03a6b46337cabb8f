// The expected-failures file: known failures that must not fail the run, kept honest by failing
// the run on stale entries (a listed check that now passes, or that no longer exists).
import { readFile } from 'node:fs/promises';
import type { CheckResult } from './model.ts';
import { ConfigError } from './exit.ts';

/** Check id -> reason. */
export type ExpectedFailures = ReadonlyMap<string, string>;

export async function loadExpectedFailures(file: string): Promise<ExpectedFailures> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read expected-failures file ${file}: ${(e as Error).message}`);
  }
  return parseExpectedFailures(text, file);
}

export function parseExpectedFailures(text: string, source = 'expected-failures'): ExpectedFailures {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${source} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ConfigError(`${source} must be a JSON object {"<check id>": "reason", ...}`);
  }
  const map = new Map<string, string>();
  for (const [id, reason] of Object.entries(data)) {
    if (typeof reason !== 'string') throw new ConfigError(`${source}: the reason for "${id}" must be a string`);
    map.set(id, reason);
  }
  return map;
}

export const STALE_SUITE = 'expected-failures';

/**
 * Marks listed failures as expected and appends one failed result per stale entry.
 * `knownIds` are all checks the suites offered: an entry filtered out by the selection is not
 * stale, and one whose check was not reached (interrupted run) is not judged.
 */
export function applyExpectedFailures(results: readonly CheckResult[], expected: ExpectedFailures, knownIds: ReadonlySet<string>, source = 'expected-failures file'): CheckResult[] {
  const out = results.map((r) => {
    const reason = expected.get(r.id);
    return reason !== undefined && r.status === 'failed' ? { ...r, expected: 'failure' as const, expectedReason: reason } : r;
  });
  for (const [id, reason] of expected) {
    const result = results.find((r) => r.id === id);
    let problem: string | undefined;
    if (!knownIds.has(id)) problem = `no check "${id}" exists in this run`;
    else if (result?.status === 'passed') problem = `check "${id}" now passes`;
    if (problem === undefined) continue;
    out.push({
      id: `${STALE_SUITE}#${id}`,
      title: 'stale expected-failure entry',
      suite: STALE_SUITE,
      rules: result?.rules ?? [],
      level: result?.level ?? 'MUST',
      gating: true,
      status: 'failed',
      detail: `stale expected-failure entry: ${problem}; remove it from ${source} (reason given: ${reason})`,
      durationMs: 0,
    });
  }
  return out;
}
