// The proofs of `npm run sensitivity -- --write` (proofs.json beside this file): each broken
// variant of the reference, the rule it breaks, and the checks citing that rule that failed
// against it. A rule is proven when a variant breaking it failed a check citing it; a facet of a
// rule (spec/facets/) when one of those failing checks claims one of its cells
// (harness/matrix/proven.ts). The cells are joined at read time from the checks' current claims:
// a claim added to a check whose assertions did not change needs no rerun.
import { readFileSync } from 'node:fs';

export interface Proof {
  rule: string;
  suite: string;
  variant: string;
  /** The checks citing `rule` that failed against the variant, sorted. */
  checks: string[];
}

let loaded: readonly Proof[] | undefined;

/** The project's recorded proofs (read once). */
export function loadProofs(): readonly Proof[] {
  return (loaded ??= readProofs(new URL('./proofs.json', import.meta.url)));
}

/** The proofs a file records; none when it is missing or unreadable. */
export function readProofs(file: URL | string): Proof[] {
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as { proofs?: unknown };
    return Array.isArray(data.proofs) ? data.proofs.filter(isProof) : [];
  } catch {
    return [];
  }
}

function isProof(p: unknown): p is Proof {
  return p !== null && typeof p === 'object' && typeof (p as Proof).rule === 'string' && Array.isArray((p as Proof).checks);
}

export function provenRules(proofs: readonly Proof[] = loadProofs()): ReadonlySet<string> {
  return new Set(proofs.map((p) => p.rule));
}
