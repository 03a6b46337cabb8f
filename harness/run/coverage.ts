// Rule coverage: which rules of the documents in scope at least one executed check decides.
// Only a check's `rules` count (its `context` is what it merely touches), and skipped or errored
// checks cover nothing: a rule counts only once a verdict was reached on it. Per document the
// rules fall in three sets: covered, unobservable over the wire (the reason lives in
// spec/rules/), and uncovered; the project's own decisions about the document are counted
// apart, as the profile's coverage. A covered rule is also proven when a broken variant failed a
// check citing it (proofs.ts).
import type { CheckResult, Coverage, DocumentCoverage, RuleEntry } from './model.ts';

export function computeCoverage(catalogue: readonly RuleEntry[], results: readonly CheckResult[], docs?: readonly number[], proven: ReadonlySet<string> = new Set()): Coverage {
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
  const documents: Record<string, DocumentCoverage> = {};
  for (const doc of scope) {
    const mine = rules.filter((r) => r.doc === doc);
    const decided = mine.filter((r) => r.origin !== 'project');
    const project = mine.filter((r) => r.origin === 'project');
    documents[String(doc)] = {
      covered: decided.filter((r) => r.covered_by.length > 0).map((r) => r.id),
      proven: decided.filter((r) => r.covered_by.length > 0 && proven.has(r.id)).map((r) => r.id),
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
