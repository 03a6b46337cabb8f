// Rule coverage: which rules of the documents in scope at least one executed check cites.
// Skipped and errored checks cover nothing: a rule counts only once a verdict was reached on it.
import type { CheckResult, Coverage, RuleEntry } from './model.ts';

export function computeCoverage(
  catalogue: readonly RuleEntry[],
  results: readonly CheckResult[],
  docs?: readonly number[],
): Coverage {
  const scope = docs && docs.length > 0 ? [...new Set(docs)].sort((a, b) => a - b) : [...new Set(catalogue.map((r) => r.doc))].sort((a, b) => a - b);
  const known = new Set(catalogue.map((r) => r.id));
  const coveredBy = new Map<string, string[]>();
  const unknown = new Set<string>();
  for (const result of results) {
    for (const rule of result.rules) {
      if (!known.has(rule)) unknown.add(rule);
      if (result.status !== 'passed' && result.status !== 'failed') continue;
      const list = coveredBy.get(rule) ?? [];
      list.push(result.id);
      coveredBy.set(rule, list);
    }
  }
  const rules = catalogue
    .filter((r) => scope.includes(r.doc))
    .map((r) => ({ id: r.id, level: r.level, doc: r.doc, covered_by: coveredBy.get(r.id) ?? [] }));
  return {
    docs: scope,
    rules,
    covered: rules.filter((r) => r.covered_by.length > 0).map((r) => r.id),
    uncovered: rules.filter((r) => r.covered_by.length === 0).map((r) => r.id),
    unknown: [...unknown].sort(),
  };
}
