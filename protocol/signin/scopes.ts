// Scopes (ns.request.scopes): normalized, de-duplicated, sorted; at most 16; vocabulary only.
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { limits } from '../../schemas/ts/limits.ts';

export const supportedScopes: ReadonlySet<string> = new Set(vocabulary.scopes.values);

export function normalizeScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes.map((s) => s.trim()))].sort();
}

export type ScopeProblem = 'not_a_list' | 'too_many' | 'unsupported' | 'not_canonical';

/** Why a response's scopes are refused by verification rule 3, or undefined when they pass. */
export function scopeProblem(scopes: unknown): { problem: ScopeProblem; detail: string } | undefined {
  if (scopes === undefined || scopes === null) return undefined;
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) return { problem: 'not_a_list', detail: 'scopes must be an array of strings' };
  if (scopes.length > limits.scopes_max) return { problem: 'too_many', detail: `${scopes.length} scopes; at most ${limits.scopes_max}` };
  const unsupported = scopes.find((s) => !supportedScopes.has(s.trim()));
  if (unsupported !== undefined) return { problem: 'unsupported', detail: `scope ${JSON.stringify(unsupported)} is not supported` };
  // Canonical is trimmed and strictly increasing in the sort's order (UTF-16 code units, as `<`):
  // judged in place, with no normalized copy unless it is to be shown.
  const canonical = scopes.every((s, i) => s === s.trim() && (i === 0 || scopes[i - 1]! < s));
  if (!canonical) return { problem: 'not_canonical', detail: `scopes must be sorted and unique (${normalizeScopes(scopes).join(',')}); they are never re-sorted` };
  return undefined;
}
