// The rule matrix: every facet of spec/facets/ (schemas/ts/facets.ts) spread into its cells, one
// per value and operation, each filled by the checks that claim it (`cells` on a check), or
// given a reason in the facet's `unfilled`, or EMPTY. A claim is checked against the facet it
// names; a wrong one is listed, never silently dropped.
import type { Cell, Check, RuleEntry } from '../run/model.ts';
import { ruleMatches } from '../run/select.ts';

/** What the matrix needs of a facet (schemas/ts/facets.ts's Facet fits). */
export interface FacetLike {
  rule: string;
  kind: string;
  facet: string;
  cite: string;
  area: string;
  operations: readonly string[];
  values: readonly string[];
  /** Its cells, as the generator derived them (schemas/ts/facets.ts); each value at each operation when absent. */
  cells?: ReadonlyArray<{ value: string; operation?: string }>;
  unfilled?: ReadonlyArray<{ value: string; operation?: string; reason: string }>;
}

export interface MatrixCell {
  rule: string;
  doc: number;
  facet: string;
  kind: string;
  value: string;
  /** Absent for a facet outside HTTP (no operations). */
  operation?: string;
  /** The checks claiming it, sorted. */
  checks: string[];
  /** The facet's reason for leaving it unfilled ("unobservable: ..." or "not applicable: ..."). */
  unfilled?: string;
}

export interface InvalidClaim {
  check: string;
  cell: Cell;
  problem: string;
}

export interface Matrix {
  facets: FacetLike[];
  cells: MatrixCell[];
  invalid: InvalidClaim[];
  /** Per document: its observable document MUST rules that have no facet yet, and are not said to be judged on one case. */
  unfaceted: Record<string, string[]>;
  /** Per document: the behaviour rules judged on one case, with why (spec/facets/ `one_case`). */
  oneCase: Record<string, Array<{ rule: string; reason: string }>>;
}

/** A behaviour rule judged on one case (spec/facets/ `one_case`). */
export interface OneCaseLike {
  rule: string;
  reason: string;
}

export interface MatrixFilter {
  doc?: number;
  rules?: string[];
}

export type ClaimingCheck = Pick<Check, 'id' | 'rules' | 'cells'>;

/** `rule/facet/value@operation`: a cell's name in messages and reports. */
export function cellName(c: { rule: string; facet: string; value: string; operation?: string | undefined }): string {
  return `${c.rule}/${c.facet}/${c.value}${c.operation !== undefined ? `@${c.operation}` : ''}`;
}

/** A facet's name across rules: `rule/facet`. */
export function facetId(f: { rule: string; facet: string }): string {
  return `${f.rule}/${f.facet}`;
}

/** The cells a facet derives: as generated, else one per value, and per operation when it lists any. */
export function facetCells(f: FacetLike): Array<{ value: string; operation?: string }> {
  if (f.cells !== undefined) return f.cells.map((c) => ({ ...c }));
  const ops: Array<string | undefined> = f.operations.length > 0 ? [...f.operations] : [undefined];
  return f.values.flatMap((value) => ops.map((operation) => (operation !== undefined ? { value, operation } : { value })));
}

/** The reason a facet gives for leaving a cell unfilled, if it does. */
export function unfilledReason(f: FacetLike, value: string, operation: string | undefined): string | undefined {
  return f.unfilled?.find((u) => u.value === value && (u.operation === undefined || u.operation === operation))?.reason;
}

/** Why a check's claim names no cell of the matrix; undefined when it does. */
export function claimProblem(check: ClaimingCheck, cell: Cell, facets: readonly FacetLike[]): string | undefined {
  if (!check.rules.includes(cell.rule)) return `${cell.rule} is not among the rules the check decides (${check.rules.join(', ') || 'none'})`;
  const facet = facets.find((f) => f.rule === cell.rule && f.facet === cell.facet);
  if (!facet) {
    const known = facets.filter((f) => f.rule === cell.rule).map((f) => f.facet);
    return `${cell.rule} has no facet ${cell.facet} in spec/facets/ (${known.length > 0 ? `it has ${known.join(', ')}` : 'it has none'})`;
  }
  if (!facet.values.includes(cell.value)) return `${cell.value} is not a value of ${facetId(facet)} (${facet.values.join(', ')})`;
  if (facet.operations.length === 0) return cell.operation !== undefined ? `${facetId(facet)} applies to no operation, and the claim names ${cell.operation}` : undefined;
  if (cell.operation === undefined) return `the claim names no operation; ${facetId(facet)} applies to ${facet.operations.join(', ')}`;
  if (!facet.operations.includes(cell.operation)) return `${cell.operation} is not an operation of ${facetId(facet)} (${facet.operations.join(', ')})`;
  if (!facetCells(facet).some((c) => c.value === cell.value && c.operation === cell.operation)) return `${cell.value} is not tried at ${cell.operation} in ${facetId(facet)} (its tried_at)`;
  const reason = unfilledReason(facet, cell.value, cell.operation);
  if (reason !== undefined) return `the facet lists this cell as unfilled (${reason}): remove it from \`unfilled\``;
  return undefined;
}

export function buildMatrix(facets: readonly FacetLike[], rules: readonly RuleEntry[], checks: readonly ClaimingCheck[], filter: MatrixFilter = {}, oneCaseRules: readonly OneCaseLike[] = []): Matrix {
  const byId = new Map(rules.map((r) => [r.id, r]));
  const inScope = (rule: string): boolean => {
    const doc = byId.get(rule)?.doc;
    return (filter.doc === undefined || doc === filter.doc) && (filter.rules === undefined || filter.rules.length === 0 || filter.rules.some((f) => ruleMatches(f, rule)));
  };
  const claims = new Map<string, Set<string>>();
  const invalid: InvalidClaim[] = [];
  for (const check of checks) {
    for (const cell of check.cells ?? []) {
      const problem = claimProblem(check, cell, facets);
      if (problem !== undefined) {
        // A claim on a rule the catalogue does not know belongs to no document: always shown.
        if (!byId.has(cell.rule) || inScope(cell.rule)) invalid.push({ check: check.id, cell: { ...cell }, problem });
        continue;
      }
      const key = cellName(cell);
      const set = claims.get(key) ?? new Set<string>();
      set.add(check.id);
      claims.set(key, set);
    }
  }
  const selected = [...facets].filter((f) => inScope(f.rule)).sort((a, b) => a.rule.localeCompare(b.rule) || a.facet.localeCompare(b.facet));
  const cells: MatrixCell[] = selected.flatMap((f) =>
    facetCells(f).map(({ value, operation }) => {
      const reason = unfilledReason(f, value, operation);
      return {
        rule: f.rule,
        doc: byId.get(f.rule)?.doc ?? 0,
        facet: f.facet,
        kind: f.kind,
        value,
        ...(operation !== undefined ? { operation } : {}),
        checks: [...(claims.get(cellName({ rule: f.rule, facet: f.facet, value, operation })) ?? [])].sort(),
        ...(reason !== undefined ? { unfilled: reason } : {}),
      };
    }),
  );
  const faceted = new Set(facets.map((f) => f.rule));
  const single = new Map(oneCaseRules.map((o) => [o.rule, o.reason]));
  const unfaceted: Record<string, string[]> = {};
  const oneCase: Record<string, Array<{ rule: string; reason: string }>> = {};
  for (const r of rules) {
    if (faceted.has(r.id) || !inScope(r.id)) continue;
    const reason = single.get(r.id);
    if (reason !== undefined) (oneCase[String(r.doc)] ??= []).push({ rule: r.id, reason });
    else if (isBehaviourRule(r)) (unfaceted[String(r.doc)] ??= []).push(r.id);
  }
  for (const list of Object.values(unfaceted)) list.sort();
  for (const list of Object.values(oneCase)) list.sort((a, b) => a.rule.localeCompare(b.rule));
  invalid.sort((a, b) => a.check.localeCompare(b.check) || cellName(a.cell).localeCompare(cellName(b.cell)));
  return { facets: selected, cells, invalid, unfaceted, oneCase };
}

/** The rules the matrix is for: document rules (not project decisions), MUST, observable over the wire. */
export function isBehaviourRule(r: RuleEntry): boolean {
  return r.level === 'MUST' && r.origin !== 'project' && r.unobservable === undefined;
}

/** A cell nothing fills and no reason explains. */
export function isEmpty(c: MatrixCell): boolean {
  return c.checks.length === 0 && c.unfilled === undefined;
}
