// ns.delivery.never-500: random methods, paths, queries, headers and bodies to every endpoint,
// and random single-field mutations of valid approvals, never produce a 5xx (503 is reserved for
// an unreachable nonce cache, which this memory-store RP never has). Every error is the envelope.
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRp, type RunningRp } from '../../reference/rp/app.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import { encodeObject } from '../../protocol/common/codec.ts';
import { signApproval } from '../../protocol/signin/signer.ts';
import { defaultProfile } from '../../protocol/common/profile.ts';
import { Browser, identity, seed, start, staticResolver } from './helpers.ts';

let rp: RunningRp;
const logs: string[] = [];
beforeAll(async () => {
  rp = await startRp({ dataDir: ':memory:' }, { resolver: staticResolver(), nonces: new MemoryNonceStore(), log: (l) => logs.push(l) });
});
afterAll(() => rp.close());

const seedOption = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {};
const runs = Number(process.env.FUZZ_RUNS ?? 150);

const PATHS = ['/', '/login', '/svc/response', '/svc/poll', '/svc/resume', '/svc/context', '/r/ABCDEFGH', '/r/', '/.well-known/svc.json', '/assets/rp.js', '/logout', '/nope'];
const printable = fc.string({ unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~'.split('')), maxLength: 40 });
const pathArb = fc.oneof(
  fc.constantFrom(...PATHS),
  fc.tuple(fc.constantFrom(...PATHS), printable).map(([p, s]) => p + encodeURI(s).replace(/[#?]/g, '')),
  fc.constantFrom('/r/%', '/svc/%ZZ', '/r/%E0%A4%A', '//svc/response', '/svc/response/', '/r/' + 'A'.repeat(5000)),
);
const queryArb = fc.option(fc.dictionary(fc.constantFrom('code', 'request_id', 'response', 'x', 'poll_secret'), printable, { maxKeys: 3 }), { nil: undefined });
const headerArb = fc.record(
  {
    'content-type': fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '', 'garbage'),
    accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/json;q=0', 'text/html;q=0.1, application/json;q=0.9', ';;;,', 'application/*'),
    cookie: fc.oneof(
      printable.filter((s) => !s.includes(';') || true),
      fc.constant('svc_binding=' + 'A'.repeat(43)),
      fc.constant('svc_rp_session=x; svc_binding='),
    ),
    'user-agent': printable,
    origin: fc.constantFrom('https://evil.example', 'null'),
  },
  { requiredKeys: [] },
);
const bodyArb = fc.oneof(
  fc.constant(undefined),
  printable,
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record({
      response: fc.oneof(
        printable,
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
      match: fc.oneof(fc.constant('42'), printable, fc.constant(7) as fc.Arbitrary<unknown>),
    })
    .map((v) => JSON.stringify(v)),
  fc.record({ poll_secret: fc.oneof(printable, fc.jsonValue()) }).map((v) => JSON.stringify(v)),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('base64url')),
);
const methodArb = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH');

async function send(method: string, path: string, query: Record<string, string> | undefined, headers: Record<string, string>, body: string | Buffer | undefined) {
  const qs = query ? '?' + new URLSearchParams(query).toString() : '';
  const res = await request(`${rp.url}${path}${qs}`, { method: method as 'GET', headers, body: method === 'GET' || method === 'HEAD' ? undefined : body });
  const text = await res.body.text();
  return { status: res.statusCode, text, type: String(res.headers['content-type'] ?? '') };
}

describe('never a 5xx (ns.delivery.never-500)', () => {
  it('random requests to every endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, pathArb, queryArb, headerArb, bodyArb, async (method, path, query, headers, body) => {
        const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''));
        const r = await send(method, path, query, clean, body);
        expect(r.status, `${method} ${path} -> ${r.status} ${r.text.slice(0, 200)}`).toBeLessThan(500);
        if (r.status >= 400 && r.type.includes('application/json') && method !== 'HEAD') {
          const envelope = JSON.parse(r.text);
          expect(typeof envelope.error).toBe('string');
          expect(typeof envelope.detail).toBe('string');
        }
      }),
      { numRuns: runs, ...seedOption },
    );
    expect(logs.filter((l) => l.startsWith('internal error'))).toEqual([]);
  });

  it('random single-field mutations of a valid approval are refused with a 4xx, never completing a login', async () => {
    const FIELDS = ['svc_auth', 'request_id', 'audience', 'nonce', 'issued_at', 'expires_at', 'action', 'statement', 'scopes', 'identity', 'key_id', 'signature', 'session_proof', 'extra'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIELDS), fc.jsonValue(), fc.boolean(), async (field, value, withMatch) => {
        const b = new Browser();
        const { result, request: req } = await start(b, rp.url);
        const approval = signApproval(defaultProfile, req, { identity, seed });
        if (JSON.stringify(approval[field]) === JSON.stringify(value)) return;
        const mutated = { ...approval, [field]: value };
        const body = withMatch ? JSON.stringify({ response: encodeObject(mutated), match: result.match_code }) : encodeObject(mutated);
        const r = await send('POST', '/svc/response', undefined, { 'content-type': withMatch ? 'application/json' : 'text/plain' }, body);
        // Unknown fields are unsigned and ignored; the protocol verifier reads `session_proof: null`
        // as no proof (the identity key signed it), so neither mutation changes the approval.
        if (field === 'extra' || (field === 'session_proof' && value === null)) {
          expect(r.status).toBe(200);
          return;
        }
        expect(r.status, `${field}=${JSON.stringify(value)} -> ${r.text}`).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
        expect(JSON.parse(r.text).rule).toMatch(/^ns\./);
      }),
      { numRuns: Math.ceil(runs / 2), ...seedOption },
    );
  });
});
