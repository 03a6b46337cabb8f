// The expected-failures file: known failures that must not fail the run, kept honest by failing
// the run on stale entries (a listed check that now passes, or that no longer exists). An entry
// is a reason (`"<check id>": "reason"`), or names the failure codes it expects
// (`"<check id>": {"reason": "...", "code": "status"}`, `code` one code or a list): a failure with
// another code is not the known one, and fails the run.
import { readFile } from 'node:fs/promises';
import type { CheckResult, FailureCode } from './model.ts';
import { ConfigError } from './exit.ts';

export interface ExpectedEntry {
  reason: string;
  /** The failure codes this known failure has; absent: any. */
  code?: readonly FailureCode[];
}

/** Check id -> reason, or reason and codes. */
export type ExpectedFailures = ReadonlyMap<string, string | ExpectedEntry>;

export const FAILURE_CODES: readonly FailureCode[] = ['status', 'code', 'field', 'shape', 'timing', 'state', 'crypto', 'binding', 'access', 'limit', 'transport', 'stale', 'assertion'];

const entryOf = (e: string | ExpectedEntry): ExpectedEntry => (typeof e === 'string' ? { reason: e } : e);

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
  const map = new Map<string, string | ExpectedEntry>();
  for (const [id, value] of Object.entries(data)) {
    if (typeof value === 'string') {
      map.set(id, value);
      continue;
    }
    const v = value as { reason?: unknown; code?: unknown } | null;
    if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof v.reason !== 'string') {
      throw new ConfigError(`${source}: the entry for "${id}" must be a reason string or {"reason": "...", "code": "<failure code>"}`);
    }
    const codes = v.code === undefined ? undefined : Array.isArray(v.code) ? (v.code as unknown[]) : [v.code];
    const bad = (codes ?? []).filter((c) => !(FAILURE_CODES as readonly unknown[]).includes(c));
    if (bad.length > 0 || (codes !== undefined && codes.length === 0)) {
      throw new ConfigError(`${source}: "${id}" names unknown failure code(s) ${bad.map((c) => JSON.stringify(c)).join(', ') || '(none)'}; the codes are ${FAILURE_CODES.join(', ')}`);
    }
    map.set(id, { reason: v.reason, ...(codes ? { code: codes as FailureCode[] } : {}) });
  }
  return map;
}

/** The `expected_failures` of a targets file, its codes checked like the file's. */
export function expectedFailuresOf(entries: Record<string, unknown>, source = 'the targets file'): ExpectedFailures {
  return parseExpectedFailures(JSON.stringify(entries), source);
}

/** A failure this entry describes: any failure, or one with one of the codes it names. */
function matches(entry: ExpectedEntry, result: CheckResult): boolean {
  return result.status === 'failed' && (entry.code === undefined || (result.code !== undefined && entry.code.includes(result.code)));
}

export const STALE_SUITE = 'expected-failures';

/**
 * Marks listed failures as expected and appends one failed result per stale entry.
 * `knownIds` are all checks the suites offered: an entry filtered out by the selection is not
 * stale, and one whose check was not reached (interrupted run) is not judged.
 */
export function applyExpectedFailures(results: readonly CheckResult[], expected: ExpectedFailures, knownIds: ReadonlySet<string>, source = 'expected-failures file'): CheckResult[] {
  const out = results.map((r) => {
    const listed = expected.get(r.id);
    if (listed === undefined) return r;
    const entry = entryOf(listed);
    if (matches(entry, r)) return { ...r, expected: 'failure' as const, expectedReason: entry.reason };
    // Listed, but failing for another reason than the known one: a new failure, said so.
    if (r.status === 'failed') return { ...r, detail: `${r.detail}\n(listed as an expected failure with code ${entry.code!.join(' or ')}; this failure's code is ${r.code ?? '(none)'})` };
    return r;
  });
  for (const [id, listed] of expected) {
    const { reason } = entryOf(listed);
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
      code: 'stale',
      detail: `stale expected-failure entry: ${problem}; remove it from ${source} (reason given: ${reason})`,
      durationMs: 0,
    });
  }
  return out;
}
