import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { main } from '../../harness/cli.ts';
import { listChecks } from '../../harness/matrix/checks.ts';
import { matrixOutput, matrixSources, type MatrixSources } from '../../harness/matrix/command.ts';
import { renderMarkdown } from '../../harness/matrix/render.ts';
import { buildMatrix, isEmpty, type FacetLike } from '../../harness/matrix/matrix.ts';
import { provenSummary } from '../../harness/matrix/proven.ts';
import { consoleReporter } from '../../harness/report/console.ts';
import { computeCoverage } from '../../harness/run/coverage.ts';
import type { Check, CheckResult, RuleEntry } from '../../harness/run/model.ts';
import { readProofs, type Proof } from '../../harness/run/proofs.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { limitSources } from '../../schemas/ts/limits.ts';
import { rules as catalogueRules } from '../../schemas/ts/rules.ts';
import { crossCheckFacets, crossCheckOneCase, facetValues, operationIds, type FacetInput } from '../../scripts/lib/facets.ts';
import { makeAjv } from '../../protocol/common/schema.ts';
import { fail, io, pass } from './fakes.ts';

const ROOT = new URL('../../', import.meta.url);

const rules: RuleEntry[] = [
  { id: 'ns.t.who', level: 'MUST', doc: 1, section: 's', title: 'Only the owner' },
  { id: 'ns.t.once', level: 'MUST', doc: 1, section: 's', title: 'Spent once' },
  { id: 'ns.t.plain', level: 'MUST', doc: 1, section: 's', title: 'A rule without facets' },
  { id: 'ns.t.hidden', level: 'MUST', doc: 1, section: 's', title: 'Unobservable', unobservable: 'inside the RP' },
  { id: 'ns.t.project', level: 'MUST', doc: 1, section: 's', title: 'Ours', origin: 'project' },
];

const who: FacetLike = {
  rule: 'ns.t.who',
  kind: 'who',
  facet: 'who',
  cite: 'Only the owner may.',
  area: 'test',
  operations: ['postDelivery', 'pollTransaction'],
  values: ['owner', 'stranger', 'revoked'],
  unfilled: [{ value: 'revoked', reason: 'not applicable: the RP has no revocation' }],
};
const once: FacetLike = { rule: 'ns.t.once', kind: 'once', facet: 'once', cite: 'A nonce is spent once.', area: 'test', operations: [], values: ['replay', 'race'] };

function claiming(id: string, ruleIds: string[], cells: Check['cells']): Check {
  return { id, title: id, suite: 'rp', rules: ruleIds, level: 'MUST', ...(cells ? { cells } : {}), run: () => ({ status: 'passed' }) };
}

const checks: Check[] = [
  claiming('rp/owner', ['ns.t.who'], [{ rule: 'ns.t.who', facet: 'who', value: 'owner', operation: 'postDelivery' }]),
  claiming('rp/replay', ['ns.t.once'], [{ rule: 'ns.t.once', facet: 'once', value: 'replay' }]),
  claiming(
    'rp/wrong',
    ['ns.t.once'],
    [
      { rule: 'ns.t.who', facet: 'who', value: 'stranger', operation: 'postDelivery' },
      { rule: 'ns.t.once', facet: 'twice', value: 'replay' },
      { rule: 'ns.t.once', facet: 'once', value: 'reuse' },
      { rule: 'ns.t.once', facet: 'once', value: 'race', operation: 'postDelivery' },
    ],
  ),
  claiming(
    'rp/no-op',
    ['ns.t.who'],
    [
      { rule: 'ns.t.who', facet: 'who', value: 'stranger' },
      { rule: 'ns.t.who', facet: 'who', value: 'stranger', operation: 'getContext' },
      { rule: 'ns.t.who', facet: 'who', value: 'revoked', operation: 'postDelivery' },
    ],
  ),
];

describe('spec/facets/ in npm run generate', () => {
  const operations = new Set(
    readdirSync(new URL('spec/http/', ROOT))
      .filter((f) => f.endsWith('.openapi.yaml'))
      .flatMap((f) => operationIds(parseYaml(readFileSync(new URL(`spec/http/${f}`, ROOT), 'utf8')))),
  );
  const known = { rules: new Set(catalogueRules.map((r) => r.id)), operations, limits: new Set(limitSources.map((l) => l.id)) };
  const entry = (extra: Partial<FacetInput>): FacetInput => ({ rule: 'ns.auth.2', kind: 'window', cite: 'x', operations: ['postDelivery'], from: 'issued_at', ...extra });

  it('reads every operationId of spec/http', () => {
    expect(operations.has('postDelivery')).toBe(true);
    expect(operations.size).toBeGreaterThan(60);
  });

  it('derives each kind’s cell values and accepts a sound entry', () => {
    expect(facetValues({ ...entry({}), kind: 'who', allowed: ['owner'], refused: ['stranger'] })).toEqual(['owner', 'stranger']);
    expect(facetValues({ ...entry({}), kind: 'normalization', forms: ['upper'] })).toEqual(['upper', 'near-miss']);
    expect(facetValues(entry({}))).toEqual(['inside', 'outside']);
    const [e] = crossCheckFacets([{ area: 'a', facets: [entry({ name: 'expiry' })] }], known);
    expect(e).toMatchObject({ area: 'a', facet: 'expiry', values: ['inside', 'outside'] });
    expect(crossCheckFacets([], known)).toEqual([]);
  });

  it('refuses an unknown rule, operation or limit, and a facet named twice on a rule', () => {
    expect(() => crossCheckFacets([{ area: 'a', facets: [entry({ rule: 'ns.no.such' })] }], known)).toThrow(/unknown rule ns\.no\.such/);
    expect(() => crossCheckFacets([{ area: 'a', facets: [entry({ operations: ['noSuchOperation'] })] }], known)).toThrow(/noSuchOperation is no operationId/);
    expect(() => crossCheckFacets([{ area: 'a', facets: [entry({ limit: 'no_such_limit' })] }], known)).toThrow(/unknown limit no_such_limit/);
    expect(() =>
      crossCheckFacets(
        [
          { area: 'a', facets: [entry({})] },
          { area: 'b', facets: [entry({})] },
        ],
        known,
      ),
    ).toThrow(/already has a facet window \(in spec\/facets\/a\.yaml\)/);
    expect(() => crossCheckFacets([{ area: 'a', facets: [entry({ unfilled: [{ value: 'later', reason: 'unobservable: x' }] })] }], known)).toThrow(/unfilled value later/);
  });

  it('ties a lifecycle use to its own operations with tried_at, and refuses one that names no use or operation of the facet', () => {
    const life = entry({ rule: 'ns.auth.2', kind: 'lifecycle', event: 'revoked', ends: ['poll', 'deliver'], operations: ['pollTransaction', 'postDelivery'], tried_at: { poll: ['pollTransaction'] } });
    const [e] = crossCheckFacets([{ area: 'a', facets: [life] }], known);
    expect(e?.cells).toEqual([
      { value: 'poll', operation: 'pollTransaction' },
      { value: 'deliver', operation: 'pollTransaction' },
      { value: 'deliver', operation: 'postDelivery' },
    ]);
    expect(() => crossCheckFacets([{ area: 'a', facets: [{ ...life, tried_at: { fetch: ['postDelivery'] } }] }], known)).toThrow(/tried_at names fetch/);
    expect(() => crossCheckFacets([{ area: 'a', facets: [{ ...life, tried_at: { poll: ['getContext'] } }] }], known)).toThrow(/getContext is not one of its operations/);
    expect(() => crossCheckFacets([{ area: 'a', facets: [{ ...life, unfilled: [{ value: 'poll', operation: 'postDelivery', reason: 'unobservable: x' }] }] }], known)).toThrow(/not one of its cells/);
    const matrix = buildMatrix(
      [{ ...e!, facet: 'lifecycle', cells: e!.cells }],
      [{ id: 'ns.auth.2', level: 'MUST', doc: 1, section: 's', title: 't' }],
      [claiming('rp/off', ['ns.auth.2'], [{ rule: 'ns.auth.2', facet: 'lifecycle', value: 'poll', operation: 'postDelivery' }])],
    );
    expect(matrix.cells).toHaveLength(3);
    expect(matrix.invalid[0]?.problem).toMatch(/poll is not tried at postDelivery/);
  });

  it('the meta schema refuses an entry without its sentence, or a reason that says neither unobservable nor not applicable', () => {
    const validate = makeAjv().compile(JSON.parse(readFileSync(new URL('spec/meta/facets.schema.json', ROOT), 'utf8')));
    const ok = { rule: 'ns.verify.5', kind: 'once', cite: 'x', operations: ['postDelivery'], secret: 'the nonce', spent_by: 'verification' };
    expect(validate({ facets: [ok] })).toBe(true);
    const { cite: _cite, ...uncited } = ok;
    expect(validate({ facets: [uncited] })).toBe(false);
    expect(validate({ facets: [{ ...ok, unfilled: [{ value: 'race', reason: 'too hard' }] }] })).toBe(false);
  });

  it('says which fields no kind reads (a misspelt one passes the schema)', () => {
    const warnings: string[] = [];
    crossCheckFacets([{ area: 'a', facets: [entry({ unfiled: [], limit: 'window_max_seconds' })] }], known, (m) => warnings.push(m));
    expect(warnings).toEqual(['spec/facets/a.yaml: ns.auth.2 window: ignored field unfiled (not read for kind window)']);
  });
});

describe('the matrix', () => {
  const matrix = buildMatrix([who, once], rules, checks);
  const cell = (rule: string, value: string, operation?: string) => matrix.cells.find((c) => c.rule === rule && c.value === value && c.operation === operation);

  it('finds a claimed cell, an unfilled reason and an EMPTY cell', () => {
    expect(cell('ns.t.who', 'owner', 'postDelivery')?.checks).toEqual(['rp/owner']);
    expect(cell('ns.t.who', 'revoked', 'pollTransaction')?.unfilled).toMatch(/^not applicable/);
    expect(isEmpty(cell('ns.t.who', 'stranger', 'pollTransaction')!)).toBe(true);
    expect(cell('ns.t.once', 'replay')?.checks).toEqual(['rp/replay']);
    expect(matrix.cells).toHaveLength(3 * 2 + 2);
  });

  it('lists every invalid claim with its problem, and fills nothing with it', () => {
    const problems = matrix.invalid.map((i) => `${i.check} ${i.cell.facet}/${i.cell.value}@${i.cell.operation ?? ''}: ${i.problem}`);
    expect(problems).toEqual([
      expect.stringMatching(/^rp\/no-op who\/revoked@postDelivery: the facet lists this cell as unfilled/),
      expect.stringMatching(/^rp\/no-op who\/stranger@: the claim names no operation/),
      expect.stringMatching(/^rp\/no-op who\/stranger@getContext: getContext is not an operation/),
      expect.stringMatching(/^rp\/wrong once\/race@postDelivery: .*applies to no operation/),
      expect.stringMatching(/^rp\/wrong once\/reuse@: reuse is not a value/),
      expect.stringMatching(/^rp\/wrong twice\/replay@: ns\.t\.once has no facet twice/),
      expect.stringMatching(/^rp\/wrong who\/stranger@postDelivery: ns\.t\.who is not among the rules the check decides/),
    ]);
    expect(isEmpty(cell('ns.t.who', 'stranger', 'postDelivery')!)).toBe(true);
  });

  it('lists the observable document MUST rules without facets', () => {
    expect(matrix.unfaceted).toEqual({ '1': ['ns.t.plain'] });
    expect(matrix.oneCase).toEqual({});
  });

  it('counts a rule judged on one case apart, with its reason, and refuses one that also has facets', () => {
    const single = buildMatrix([who, once], rules, checks, {}, [{ rule: 'ns.t.plain', reason: 'the shape of one field' }]);
    expect(single.unfaceted).toEqual({});
    expect(single.oneCase).toEqual({ '1': [{ rule: 'ns.t.plain', reason: 'the shape of one field' }] });
    expect(renderMarkdown(single, rules, false)).toMatch(/## Rules judged on one case[\s\S]*`ns\.t\.plain`: A rule without facets\. the shape of one field/);
    const [faceted] = crossCheckFacets([{ area: 'a', facets: [{ rule: 'ns.auth.2', kind: 'window', cite: 'x', operations: ['postDelivery'], from: 'issued_at' }] }], {
      rules: new Set(['ns.auth.2']),
      operations: new Set(['postDelivery']),
      limits: new Set(),
    });
    expect(() => crossCheckOneCase([{ area: 'a', one_case: [{ rule: 'ns.auth.2', reason: 'one field only' }] }], new Set(['ns.auth.2']), [faceted!])).toThrow(
      /either spread over its facets or judged on one case/,
    );
    expect(() => crossCheckOneCase([{ area: 'a', one_case: [{ rule: 'ns.no.such', reason: 'one field only' }] }], new Set(['ns.auth.2']), [])).toThrow(/unknown rule/);
  });

  it('prints the selection, and --strict fails on EMPTY cells and invalid claims', async () => {
    const sources = async (): Promise<MatrixSources> => ({ facets: [who, once], rules, checks });
    const out = io();
    expect(await main(['node', 'svc-conformance', 'matrix', '--rule', 'ns.t.who', '--empty', '--strict'], out, { matrixSources: sources })).toBe(1);
    expect(out.stdout.text).toMatch(/stranger\s+postDelivery\s+EMPTY/);
    expect(out.stdout.text).not.toMatch(/owner\s+postDelivery/);
    const json = io();
    expect(await main(['node', 'svc-conformance', 'matrix', '--rule', 'ns.t.once', '--format', 'json'], json, { matrixSources: sources })).toBe(0);
    const parsed = JSON.parse(json.stdout.text) as { cells: Array<{ value: string; checks: string[] }>; invalid: unknown[] };
    expect(parsed.cells.map((c) => [c.value, c.checks])).toEqual([
      ['replay', ['rp/replay']],
      ['race', []],
    ]);
    expect(parsed.invalid).toHaveLength(3);
    const md = matrixOutput(await sources(), { rule: [], format: 'md' }).text;
    expect(md).toContain('| stranger | pollTransaction | **EMPTY** |');
    expect(md).toContain('- `ns.t.plain`: A rule without facets');
  });
});

describe('the project’s matrix', () => {
  it('lists every suite’s checks without a server, opening no socket', async () => {
    // Per kind of handle, how many are open: a socket or a DNS lookup started while building shows here.
    const network = (): Record<string, number> => {
      const counts: Record<string, number> = {};
      for (const r of process.getActiveResourcesInfo()) if (/TCP|UDP|GetAddrInfo|Pipe/.test(r)) counts[r] = (counts[r] ?? 0) + 1;
      return counts;
    };
    const before = network();
    const listed = await listChecks();
    expect(network()).toEqual(before);
    expect(new Set(listed.map((c) => c.suite))).toEqual(new Set(['vectors', 'rp', 'bridge', 'relay', 'drive']));
    expect(new Set(listed.map((c) => c.id)).size).toBe(listed.length);
  });

  it('docs/matrix.md is fresh (npm run matrix)', async () => {
    const { text, matrix } = matrixOutput(await matrixSources(), { rule: [], format: 'md' });
    expect(readFileSync(new URL('docs/matrix.md', ROOT), 'utf8')).toBe(text);
    expect(matrix.invalid).toEqual([]);
  });
});

describe('proven across the matrix', () => {
  const result = (id: string, status: 'passed' | 'failed', ruleIds: string[], cells: Check['cells'] = []): CheckResult => ({
    id,
    title: id,
    suite: 'rp',
    rules: ruleIds,
    level: 'MUST',
    gating: true,
    status,
    detail: '',
    durationMs: 1,
    ...(cells.length > 0 ? { cells } : {}),
  });
  const second: FacetLike = { ...who, facet: 'stale', kind: 'lifecycle', values: ['poll'], operations: ['pollTransaction'], unfilled: [] };
  const results = [
    result('rp/owner', 'passed', ['ns.t.who'], [{ rule: 'ns.t.who', facet: 'who', value: 'owner', operation: 'postDelivery' }]),
    result('rp/poll', 'passed', ['ns.t.who'], [{ rule: 'ns.t.who', facet: 'stale', value: 'poll', operation: 'pollTransaction' }]),
    result('rp/replay', 'passed', ['ns.t.once', 'ns.t.who'], [{ rule: 'ns.t.once', facet: 'once', value: 'replay' }]),
    result('rp/plain', 'passed', ['ns.t.plain']),
  ];

  it('counts a facet proven when a failing check of a variant breaking its rule claims one of its cells', () => {
    // rp/replay failed under a variant breaking ns.t.who: it claims no cell of ns.t.who, and proves nothing of ns.t.once.
    const proofs: Proof[] = [
      { rule: 'ns.t.who', suite: 'rp', variant: 'a', checks: ['rp/owner', 'rp/replay'] },
      { rule: 'ns.t.plain', suite: 'rp', variant: 'b', checks: ['rp/plain'] },
    ];
    const doc = computeCoverage(rules, results, [1], new Set(proofs.map((p) => p.rule)), { facets: [who, second, once], proofs }).documents['1']!;
    expect(doc.facets).toEqual({ observable: ['ns.t.who/who', 'ns.t.who/stale', 'ns.t.once/once'], proven: ['ns.t.who/who'] });
    // ns.t.who has a proof, but its facet `stale` has none: not proven; ns.t.plain keeps the old meaning.
    expect(doc.proven).toEqual(['ns.t.plain']);
    const all: Proof[] = [...proofs, { rule: 'ns.t.who', suite: 'rp', variant: 'c', checks: ['rp/poll'] }];
    const summary = provenSummary(rules, [who, second, once], all, results);
    expect(summary.documents['1']).toEqual({ rules: { proven: 2, observable: 3 }, facets: { proven: 2, observable: 3 } });
  });

  it('reads a hand-made proofs file in the recorded format, skipping malformed entries', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'svc-proofs-')), 'proofs.json');
    await writeFile(file, JSON.stringify({ generated_by: 'hand', proofs: [{ rule: 'ns.t.who', suite: 'rp', variant: 'a', checks: ['rp/owner'] }, { rule: 'ns.t.once' }] }));
    expect(readProofs(file)).toEqual([{ rule: 'ns.t.who', suite: 'rp', variant: 'a', checks: ['rp/owner'] }]);
    expect(readProofs(join(tmpdir(), 'no-such-proofs.json'))).toEqual([]);
  });

  it('prints facets proven / observable in the coverage table', async () => {
    const out = io();
    const proofs: Proof[] = [{ rule: 'ns.t.who', suite: 'rp', variant: 'a', checks: ['rp/owner'] }];
    const fixed = (id: string, ok: boolean, cells: Check['cells']): Check => ({ ...claiming(id, ['ns.t.who'], cells), run: ok ? pass : () => fail() });
    await runChecks([fixed('rp/owner', true, [{ rule: 'ns.t.who', facet: 'who', value: 'owner', operation: 'postDelivery' }])], {
      seed: 1,
      rules,
      coverageDocs: [1],
      proven: new Set(['ns.t.who']),
      matrix: { facets: [who, once], proofs },
      reporters: [consoleReporter({ stdout: out.stdout, stderr: out.stderr, verbose: true, quiet: false, rules })],
    });
    expect(out.stdout.text).toMatch(/facets proven/);
    expect(out.stdout.text).toMatch(/doc 1\s+1\/4\s+1\/4\s+1\/2/);
    expect(out.stdout.text).toMatch(/facets no variant proved:\n\s+ns\.t\.once\/once/);
  });
});
