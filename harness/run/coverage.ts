// Rule coverage: which rules of the documents in scope at least one executed check decides.
// Only a check's `rules` count (its `context` is what it merely touches), and skipped or errored
// checks cover nothing: a rule counts only once a verdict was reached on it. Per document the
// rules fall in three sets: covered, unobservable over the wire (the reason lives in
// spec/rules/), and uncovered; the project's own decisions about the document are counted
// apart, as the profile's coverage. A covered rule is also proven when a broken variant failed a
// check citing it (proofs.ts); a rule with facets (spec/facets/) only when each of its observable
// facets is proven too: a check of this run claiming one of its cells failed under a variant
// breaking the rule (harness/matrix/proven.ts).
import { facetId, type FacetLike } from '../matrix/matrix.ts';
import { facetsAllProven, isObservableFacet, provenFacets } from '../matrix/proven.ts';
import type { CheckResult, Coverage, DocumentCoverage, RuleEntry } from './model.ts';
import type { Proof } from './proofs.ts';

/** The facets of the rules and the variants' proofs, for the facet figures. */
export interface MatrixInput {
  facets: readonly FacetLike[];
  proofs: readonly Proof[];
}

export function computeCoverage(
  catalogue: readonly RuleEntry[],
  results: readonly CheckResult[],
  docs?: readonly number[],
  proven: ReadonlySet<string> = new Set(),
  matrix: MatrixInput = { facets: [], proofs: [] },
): Coverage {
  const scope = docs && docs.length > 0 ? [...new Set(docs)].sort((a, b) => a - b) : [...new Set(catalogue.map((r) => r.doc))].sort((a, b) => a - b);
  const known = new Set(catalogue.map((r) => r.id));
  const coveredBy = new Map<string, string[]>();
  const unknown = new Set<string>();
  for (const result of results) {
    for (const rule of [...result.rules, ...(result.context ?? [])]) if (!known.has(rule)) unknown.add(rule);
    if (result.status !== 'passed' && result.status !== 'failed') continue;
    for (const rule of result.rules) {
      const list = coveredBy.get(rule) ?? [];
      list.push(result.id);
      coveredBy.set(rule, list);
    }
  }
  const rules = catalogue
    .filter((r) => scope.includes(r.doc))
    .map((r) => ({
      id: r.id,
      level: r.level,
      doc: r.doc,
      ...(r.origin ? { origin: r.origin } : {}),
      covered_by: coveredBy.get(r.id) ?? [],
      ...(r.unobservable ? { unobservable: r.unobservable } : {}),
    }));
  // Only checks that reached a verdict in this run prove a facet, as only they cover a rule.
  const decisive = results.filter((r) => r.status === 'passed' || r.status === 'failed');
  const facetsProven = provenFacets(matrix.facets, matrix.proofs, decisive);
  const documents: Record<string, DocumentCoverage> = {};
  for (const doc of scope) {
    const mine = rules.filter((r) => r.doc === doc);
    const decided = mine.filter((r) => r.origin !== 'project');
    const project = mine.filter((r) => r.origin === 'project');
    const decidedIds = new Set(decided.map((r) => r.id));
    const observable = matrix.facets.filter((f) => decidedIds.has(f.rule) && isObservableFacet(f)).map(facetId);
    documents[String(doc)] = {
      covered: decided.filter((r) => r.covered_by.length > 0).map((r) => r.id),
      proven: decided.filter((r) => r.covered_by.length > 0 && proven.has(r.id) && facetsAllProven(r.id, matrix.facets, facetsProven)).map((r) => r.id),
      facets: { observable, proven: observable.filter((id) => facetsProven.has(id)) },
      unobservable: decided.filter((r) => r.covered_by.length === 0 && r.unobservable).map((r) => ({ id: r.id, reason: r.unobservable! })),
      uncovered: decided.filter((r) => r.covered_by.length === 0 && !r.unobservable).map((r) => r.id),
      profile: {
        covered: project.filter((r) => r.covered_by.length > 0).map((r) => r.id),
        uncovered: project.filter((r) => r.covered_by.length === 0).map((r) => r.id),
      },
    };
  }
  const all = Object.values(documents);
  return {
    docs: scope,
    rules,
    documents,
    covered: all.flatMap((d) => d.covered),
    uncovered: all.flatMap((d) => d.uncovered),
    unknown: [...unknown].sort(),
  };
}
