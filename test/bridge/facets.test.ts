// spec/facets/bridge.yaml: valid against spec/meta/facets.schema.json, each facet on a rule of
// spec/rules, on operations of spec/http/bridge.openapi.yaml, quoting document 2 word for word;
// and every cell a bridge check claims is a cell of a facet there, on a rule the check decides.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { makeAjv } from '../../protocol/common/schema.ts';
import { rules } from '../../schemas/ts/rules.ts';
import type { BridgeTarget } from '../../harness/suites/bridge/driver.ts';
import { codeMatrixChecks } from '../../harness/suites/bridge/checks/codes-matrix.ts';
import { clientMatrixChecks } from '../../harness/suites/bridge/checks/clients-matrix.ts';
import { tokenLifecycleChecks } from '../../harness/suites/bridge/checks/tokens-lifecycle.ts';
import { transactionMatrixChecks } from '../../harness/suites/bridge/checks/transactions-matrix.ts';
import { surfaceChecks } from '../../harness/suites/bridge/checks/surface.ts';
import { authorizeChecks } from '../../harness/suites/bridge/checks/authorize.ts';
import { tokenChecks } from '../../harness/suites/bridge/checks/tokens.ts';
import { idInputChecks } from '../../harness/suites/bridge/checks/id-input.ts';
import { urlClientChecks } from '../../harness/suites/bridge/checks/url-clients.ts';
import { gapChecks } from '../../harness/suites/bridge/checks/gaps.ts';
import { pushChecks } from '../../harness/suites/bridge/checks/push.ts';
import { profileFor } from '../../protocol/common/profile.ts';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(fileURLToPath(new URL(path, root)), 'utf8');

interface Facet {
  rule: string;
  kind: string;
  name?: string;
  cite: string;
  operations: string[];
  allowed?: string[];
  refused?: string[];
  parts?: string[];
  forms?: string[];
  ends?: string[];
  unfilled?: Array<{ value: string; operation?: string; reason: string }>;
}

const facets = (parse(read('spec/facets/bridge.yaml')) as { facets: Facet[] }).facets;
const document = read('../shared/spec-docs/2-oidc-bridge.md').replace(/\s+/g, ' ');
const operationIds = new Set([...read('spec/http/bridge.openapi.yaml').matchAll(/operationId:\s*(\w+)/g)].map((m) => m[1]!));

/** The values of a facet's cells (spec/meta/facets.schema.json, each kind's `cells`). */
function values(f: Facet): string[] {
  switch (f.kind) {
    case 'who':
      return [...(f.allowed ?? []), ...(f.refused ?? [])];
    case 'binding':
      return f.parts ?? [];
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
    default:
      return f.ends ?? [];
  }
}

/** A target with every client role, enough to build the checks and read their cells. */
const anyClient = (role: string) => ({ client_id: `c-${role}`, client_secret: 's', redirect_uri: role === 'public' ? 'http://127.0.0.1/cb' : `https://${role}.example/cb` });
const target = {
  profile: profileFor(),
  issuer: 'https://bridge.example',
  clients: Object.fromEntries(['basic', 'post', 'jwt', 'public', 'first_party', 'other_sector', 'same_sector', 'loopback_confidential', 'suspendable'].map((r) => [r, anyClient(r)])),
  authority: {},
  requestTimeoutMs: 1000,
} as unknown as BridgeTarget;

describe('spec/facets/bridge.yaml', () => {
  it('is valid against the facets schema', () => {
    const validate = makeAjv().compile(JSON.parse(read('spec/meta/facets.schema.json')) as object);
    expect(validate({ facets }), JSON.stringify(validate.errors)).toBe(true);
  });

  it('names rules of document 2 and operations of the bridge', () => {
    const known = new Map(rules.map((r) => [r.id, r.doc]));
    for (const f of facets) {
      expect(known.get(f.rule), f.rule).toBe(2);
      for (const op of f.operations) expect(operationIds.has(op), `${f.rule}: operation ${op}`).toBe(true);
    }
  });

  it('quotes document 2 (each part of a table row or an elided sentence)', () => {
    const misquoted = facets.flatMap((f) =>
      f.cite
        .split(/ \| | \.\.\. ?/)
        .filter((part) => !document.includes(part.trim()))
        .map((part) => `${f.rule} ${f.kind}: ${part}`),
    );
    expect(misquoted).toEqual([]);
  });

  it('leaves unfilled only cells that exist', () => {
    for (const f of facets) for (const u of f.unfilled ?? []) expect(values(f), `${f.rule} ${f.kind}`).toContain(u.value);
  });

  it('holds every cell a bridge check claims, on a rule it decides; every matrix check claims some', () => {
    const matrix = [...codeMatrixChecks(target), ...clientMatrixChecks(target), ...tokenLifecycleChecks(target), ...transactionMatrixChecks(target)];
    for (const check of matrix) expect(check.cells?.length ?? 0, check.id).toBeGreaterThan(0);
    const others = [...surfaceChecks(target), ...authorizeChecks(target), ...tokenChecks(target), ...idInputChecks(target), ...urlClientChecks(target), ...gapChecks(target), ...pushChecks(target)];
    for (const check of [...matrix, ...others]) {
      for (const cell of check.cells ?? []) {
        const where = `${check.id}: ${JSON.stringify(cell)}`;
        expect(check.rules, where).toContain(cell.rule);
        const facet = facets.find((f) => f.rule === cell.rule && (f.name ?? f.kind) === cell.facet);
        expect(facet, where).toBeDefined();
        expect(values(facet!), where).toContain(cell.value);
        if (cell.operation !== undefined) expect(facet!.operations, where).toContain(cell.operation);
      }
    }
  });
});
