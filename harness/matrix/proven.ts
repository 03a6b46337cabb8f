// "Proven" across the matrix (issue 25): a facet is proven when a check claiming one of its
// cells failed under a variant that breaks the facet's rule (harness/run/proofs.ts); a facet is
// observable when one of its cells is not marked unfilled (unobservable, or not applicable: a
// cell no check can fill is a cell no variant can prove). A rule with observable facets is
// proven only when each of them is.
import type { Proof } from '../run/proofs.ts';
import { claimProblem, facetCells, facetId, unfilledReason, type ClaimingCheck, type FacetLike } from './matrix.ts';

export function isObservableFacet(f: FacetLike): boolean {
  return facetCells(f).some((c) => unfilledReason(f, c.value, c.operation) === undefined);
}

/** The ids (`rule/facet`) of the facets the proofs prove, given the checks and the cells they claim. */
export function provenFacets(facets: readonly FacetLike[], proofs: readonly Proof[], checks: readonly ClaimingCheck[]): Set<string> {
  const byId = new Map(checks.map((c) => [c.id, c]));
  const proven = new Set<string>();
  for (const proof of proofs) {
    for (const id of proof.checks) {
      const check = byId.get(id);
      for (const cell of check?.cells ?? []) {
        if (cell.rule !== proof.rule || claimProblem(check!, cell, facets) !== undefined) continue;
        proven.add(facetId(cell));
      }
    }
  }
  return proven;
}

/** Whether a rule's facets (if it has observable ones) are all proven; true for a rule without. */
export function facetsAllProven(rule: string, facets: readonly FacetLike[], proven: ReadonlySet<string>): boolean {
  return facets.filter((f) => f.rule === rule && isObservableFacet(f)).every((f) => proven.has(facetId(f)));
}

export interface ProvenFigures {
  /** Per document: its observable MUST document rules, and its document rules' observable facets, proven of all. */
  documents: Record<string, { rules: { proven: number; observable: number }; facets: { proven: number; observable: number } }>;
  /** Project decisions a variant proved. */
  project: number;
}

type RuleLike = { id: string; doc: number; level: string; origin?: string; unobservable?: string };

/** `npm run sensitivity`'s figures from a set of proofs and the checks' current claims. */
export function provenSummary(rules: readonly RuleLike[], facets: readonly FacetLike[], proofs: readonly Proof[], checks: readonly ClaimingCheck[]): ProvenFigures {
  const byRule = new Set(proofs.map((p) => p.rule));
  const facetsProven = provenFacets(facets, proofs, checks);
  const documents: ProvenFigures['documents'] = {};
  for (const doc of [...new Set(rules.map((r) => r.doc))].sort((a, b) => a - b)) {
    const documentRules = rules.filter((r) => r.doc === doc && r.origin !== 'project');
    const observable = documentRules.filter((r) => r.level === 'MUST' && r.unobservable === undefined);
    const ids = new Set(documentRules.map((r) => r.id));
    const mine = facets.filter((f) => ids.has(f.rule) && isObservableFacet(f));
    documents[String(doc)] = {
      rules: { proven: observable.filter((r) => byRule.has(r.id) && facetsAllProven(r.id, facets, facetsProven)).length, observable: observable.length },
      facets: { proven: mine.filter((f) => facetsProven.has(facetId(f))).length, observable: mine.length },
    };
  }
  return { documents, project: rules.filter((r) => r.origin === 'project' && byRule.has(r.id)).length };
}
