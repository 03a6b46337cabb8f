// The facets of spec/facets/ (one file per area, spec/meta/facets.schema.json): each entry checked
// against the catalogues it names (rules, OpenAPI operations, limits), its cell values derived
// once here per kind, and written as schemas/ts/facets.ts and schemas/json/facets.json.
import type { Output } from './outputs.ts';

/** One entry as the YAML states it (its kind's own fields kept as they are). */
export interface FacetInput {
  rule: string;
  kind: 'who' | 'binding' | 'window' | 'limit' | 'once' | 'order' | 'normalization' | 'lifecycle';
  name?: string;
  cite: string;
  operations: string[];
  unfilled?: Array<{ value: string; operation?: string; reason: string }>;
  limit?: string;
  allowed?: string[];
  refused?: string[];
  parts?: string[];
  forms?: string[];
  ends?: string[];
  tried_at?: Record<string, string[]>;
  [field: string]: unknown;
}

/** A cell of a facet: a value, at an operation unless the facet applies to none. */
export interface FacetCellInput {
  value: string;
  operation?: string;
}

/** An entry with what the generator derives: its area (file), its key in a cell, its values and cells. */
export type FacetEntry = FacetInput & { area: string; facet: string; values: string[]; cells: FacetCellInput[] };

/** The values a facet's cells take, per kind (the descriptions in spec/meta/facets.schema.json). */
export function facetValues(f: FacetInput): string[] {
  switch (f.kind) {
    case 'who':
      return [...(f.allowed ?? []), ...(f.refused ?? [])];
    case 'binding':
      return [...(f.parts ?? [])];
    case 'window':
      return ['inside', 'outside'];
    case 'limit':
      return ['at', 'past', 'other-scope'];
    case 'once':
      return ['replay', 'race'];
    case 'order':
      return ['both-faults'];
    case 'normalization':
      return [...(f.forms ?? []), 'near-miss'];
    case 'lifecycle':
      return [...(f.ends ?? [])];
  }
}

/**
 * The cells of a facet: each value at each operation, except a lifecycle use that `tried_at` ties
 * to its own operations (reading a node after an unshare is tried at driveNode, not driveEvents).
 */
export function facetCellsOf(f: FacetInput): FacetCellInput[] {
  const ops = (value: string): Array<string | undefined> => {
    const own = f.kind === 'lifecycle' ? f.tried_at?.[value] : undefined;
    if (own !== undefined) return own;
    return f.operations.length > 0 ? f.operations : [undefined];
  };
  return facetValues(f).flatMap((value) => ops(value).map((operation) => (operation !== undefined ? { value, operation } : { value })));
}

const COMMON = ['rule', 'kind', 'name', 'cite', 'operations', 'unfilled', 'note'];
const OWN: Record<FacetInput['kind'], string[]> = {
  who: ['allowed', 'refused'],
  binding: ['credential', 'parts'],
  window: ['limit', 'duration', 'from'],
  limit: ['limit', 'count', 'scope', 'past'],
  once: ['secret', 'spent_by'],
  order: ['first', 'then'],
  normalization: ['subject', 'forms'],
  lifecycle: ['event', 'ends', 'tried_at'],
};

/**
 * Fields the schema lets through but no kind reads (it does not close an entry's properties, so a
 * misspelt `unfiled` or `limt` would pass): said aloud rather than refused, so facet files written
 * against the schema as it was keep generating.
 */
export function ignoredFields(f: FacetInput): string[] {
  return Object.keys(f).filter((k) => !COMMON.includes(k) && !OWN[f.kind].includes(k));
}

/** A behaviour rule judged on one case, and why (spec/facets/*.yaml `one_case`). */
export interface OneCaseInput {
  rule: string;
  reason: string;
}

export type OneCaseEntry = OneCaseInput & { area: string };

/** Every `one_case` entry, each a known rule named once, and never a rule that has facets. */
export function crossCheckOneCase(areas: Array<{ area: string; one_case?: OneCaseInput[] }>, rules: ReadonlySet<string>, faceted: readonly FacetEntry[]): OneCaseEntry[] {
  const seen = new Map<string, string>();
  const withFacets = new Set(faceted.map((f) => f.rule));
  return areas.flatMap(({ area, one_case }) =>
    (one_case ?? []).map((o) => {
      const where = `spec/facets/${area}.yaml: one_case ${o.rule}`;
      if (!rules.has(o.rule)) throw new Error(`${where}: unknown rule`);
      if (withFacets.has(o.rule)) throw new Error(`${where}: the rule has facets; a rule is either spread over its facets or judged on one case`);
      const first = seen.get(o.rule);
      if (first !== undefined) throw new Error(`${where}: already named in spec/facets/${first}.yaml`);
      seen.set(o.rule, area);
      return { ...o, area };
    }),
  );
}

export interface FacetCatalogues {
  rules: ReadonlySet<string>;
  operations: ReadonlySet<string>;
  limits: ReadonlySet<string>;
}

/** Every entry of every area, in file order, each checked against the catalogues; throws on the first wrong one. */
export function crossCheckFacets(areas: Array<{ area: string; facets: FacetInput[] }>, known: FacetCatalogues, warn: (message: string) => void = () => undefined): FacetEntry[] {
  const out: FacetEntry[] = [];
  const keys = new Map<string, string>();
  for (const { area, facets } of areas) {
    for (const f of facets) {
      const facet = f.name ?? f.kind;
      const where = `spec/facets/${area}.yaml: ${f.rule} ${facet}`;
      if (!known.rules.has(f.rule)) throw new Error(`${where}: unknown rule ${f.rule}`);
      const ignored = ignoredFields(f);
      if (ignored.length > 0) warn(`${where}: ignored field${ignored.length > 1 ? 's' : ''} ${ignored.join(', ')} (not read for kind ${f.kind})`);
      for (const op of f.operations) if (!known.operations.has(op)) throw new Error(`${where}: operation ${op} is no operationId of spec/http/*.openapi.yaml`);
      if (f.limit !== undefined && !known.limits.has(f.limit)) throw new Error(`${where}: unknown limit ${f.limit} (spec/limits/)`);
      // A cell names its facet by key alone, so the key is unique per rule (across areas too).
      const key = `${f.rule}/${facet}`;
      const first = keys.get(key);
      if (first !== undefined) throw new Error(`${where}: ${f.rule} already has a facet ${facet} (in spec/facets/${first}.yaml); give one a distinct \`name\``);
      keys.set(key, area);
      const values = facetValues(f);
      const twice = values.find((v, i) => values.indexOf(v) !== i);
      if (twice !== undefined) throw new Error(`${where}: value ${twice} appears twice`);
      for (const [use, ops] of Object.entries(f.tried_at ?? {})) {
        if (!values.includes(use)) throw new Error(`${where}: tried_at names ${use}, which is not one of its ends (${values.join(', ')})`);
        for (const op of ops) if (!f.operations.includes(op)) throw new Error(`${where}: tried_at ${use}: ${op} is not one of its operations`);
      }
      const cells = facetCellsOf(f);
      for (const u of f.unfilled ?? []) {
        if (!values.includes(u.value)) throw new Error(`${where}: unfilled value ${u.value} is not one of its values (${values.join(', ')})`);
        if (u.operation !== undefined && !cells.some((c) => c.value === u.value && c.operation === u.operation))
          throw new Error(`${where}: unfilled ${u.value} at ${u.operation} is not one of its cells`);
      }
      out.push({ ...f, area, facet, values, cells });
    }
  }
  return out;
}

/** Every operationId of an OpenAPI document (any method under any path). */
export function operationIds(openapi: unknown): string[] {
  const paths = (openapi as { paths?: Record<string, Record<string, { operationId?: unknown }>> } | null)?.paths ?? {};
  return Object.values(paths).flatMap((item) => Object.values(item ?? {}).flatMap((op) => (op !== null && typeof op === 'object' && typeof op.operationId === 'string' ? [op.operationId] : [])));
}

const TYPES = `export type FacetKind = 'who' | 'binding' | 'window' | 'limit' | 'once' | 'order' | 'normalization' | 'lifecycle';

interface FacetBase {
  rule: RuleId;
  kind: FacetKind;
  name?: string;
  /** The document's sentence, quoted. */
  cite: string;
  /** OpenAPI operationIds of spec/http/; none for a facet outside HTTP. */
  operations: readonly string[];
  /** Cells no check fills, with why ("unobservable: ..." or "not applicable: ..."); every operation's when none is named. */
  unfilled?: ReadonlyArray<{ value: string; operation?: string; reason: string }>;
  note?: string;
  /** The file it comes from: spec/facets/<area>.yaml. */
  area: string;
  /** What a cell calls it: its name, else its kind. */
  facet: string;
  /** The values of its cells, derived from its kind (see Cell in harness/run/model.ts). */
  values: readonly string[];
  /** Its cells: each value at each operation, or where a lifecycle's \`tried_at\` says. */
  cells: ReadonlyArray<{ value: string; operation?: string }>;
}

export type Facet = FacetBase &
  (
    | { kind: 'who'; allowed?: readonly string[]; refused: readonly string[] }
    | { kind: 'binding'; credential: string; parts: readonly string[] }
    | { kind: 'window'; limit?: LimitId; duration?: string; from: string }
    | { kind: 'limit'; limit?: LimitId; count?: string; scope: string; past?: { status?: number; code?: string } }
    | { kind: 'once'; secret: string; spent_by: string }
    | { kind: 'order'; first: string; then: string }
    | { kind: 'normalization'; subject: string; forms: readonly string[] }
    | { kind: 'lifecycle'; event: string; ends: readonly string[]; tried_at?: Readonly<Record<string, readonly string[]>> }
  );
`;

export function facetOutputs(entries: FacetEntry[], oneCase: OneCaseEntry[], header: string): Output[] {
  return [
    {
      path: 'schemas/ts/facets.ts',
      content: `${header}
import type { LimitId } from './limits.ts';
import type { RuleId } from './rules.ts';

${TYPES}
export const facets: readonly Facet[] = ${JSON.stringify(entries, null, 2)};

/** Behaviour rules judged on one case, each with why (spec/facets/ \`one_case\`). */
export const oneCase: ReadonlyArray<{ rule: RuleId; reason: string; area: string }> = ${JSON.stringify(oneCase, null, 2)};
`,
    },
    { path: 'schemas/json/facets.json', content: `${JSON.stringify({ facets: entries, one_case: oneCase }, null, 2)}\n` },
  ];
}
