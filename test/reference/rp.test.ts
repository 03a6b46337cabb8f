// The reference RP in-process on a real port, driven over HTTP: document 1's transaction table,
// the delivery statuses of rp.openapi.yaml, and the rule id every rejection names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRp, type RunningRp } from '../../reference/rp/app.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import { encodeObject } from '../../protocol/common/codec.ts';
import { signApproval } from '../../protocol/signin/signer.ts';
import { profileFor, defaultProfile } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { approve, Browser, deliver, identity, otherCode, poll, seed, start, staticResolver } from './helpers.ts';

let rp: RunningRp;
let clock = Date.parse('2026-03-01T10:00:00Z');
const now = () => clock;
let base: string;

beforeAll(async () => {
  rp = await startRp({ dataDir: ':memory:' }, { resolver: staticResolver(), now });
  base = rp.url;
});
afterAll(() => rp.close());

describe('metadata', () => {
  it('is served in the hardened posture, same-origin, under 16 KiB, never a redirect', async () => {
    const r = await new Browser().send(`${base}/.well-known/svc.json`);
    expect(r.status).toBe(200);
    expect(r.text.length).toBeLessThan(limits.metadata_body_max_bytes);
    expect(r.json).toMatchObject({ svc_auth: '1', origin: rp.origin, response_uris: [`${rp.origin}/svc/response`], poll_uri: `${rp.origin}/svc/poll`, context_uri: `${rp.origin}/svc/context` });
    for (const u of [...r.json.response_uris, r.json.poll_uri, r.json.context_uri]) expect(new URL(u).origin).toBe(rp.origin);
  });
});

describe('start contract (POST /login)', () => {
  it('answers 201 with the request, its reference, the poll secret, the match code and the binding cookie', async () => {
    const b = new Browser();
    const { result, request } = await start(b, base);
    expect(result.match_code).toMatch(/^\d{2}$/);
    expect(result.request_uri).toMatch(new RegExp(`^${rp.origin}/r/[0-9A-HJKMNP-TV-Z]{8}$`));
    expect(Buffer.from(result.poll_secret, 'base64url').length * 8).toBeGreaterThanOrEqual(limits.poll_secret_min_bits);
    expect(b.cookies.get('svc_binding')).toBeDefined();
    expect(Buffer.from(b.cookies.get('svc_binding')!, 'base64url').length * 8).toBeGreaterThanOrEqual(limits.binding_cookie_min_bits);
    expect(request).toMatchObject({ svc_auth: '1', audience: rp.origin, action: 'signin', response_uri: `${rp.origin}/svc/response` });
    expect(Date.parse(request.expires_at as string) - Date.parse(request.issued_at as string)).toBe(limits.window_max_seconds * 1000);
    expect(Buffer.from(request.nonce as string, 'base64url').length).toBe(32);
  });

  it('honours action, scopes and statement, and refuses what it cannot honour', async () => {
    const { request } = await start(new Browser(), base, { action: 'link', scopes: ['profile:read', 'messages:send'], statement: 'Link your account' });
    expect(request).toMatchObject({ action: 'link', scopes: ['messages:send', 'profile:read'], statement: 'Link your account' });
    for (const bad of [{ scopes: ['files:write'] }, { action: 'delete' }, { statement: 'a\nb' }, { colour: 'red' }]) {
      const r = await new Browser().send(`${base}/login`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify(bad) });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ error: 'start_option_unsupported', rule: 'ns.start.options' });
    }
    const r = await new Browser().send(`${base}/login`, { method: 'POST', headers: { accept: 'application/json' }, body: '[1' });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('missing_field');
  });
});

describe('same device', () => {
  it('delivery without match -> receipt with resume_uri; resume in the same browser signs in (303 + session cookie)', async () => {
    const b = new Browser();
    const { result, request } = await start(b, base);
    const receipt = await deliver(base, '/svc/response', approve(request));
    expect(receipt.status).toBe(200);
    expect(receipt.headers.get('access-control-allow-origin')).toBe('*');
    expect(receipt.json.status).toBe('ok');
    expect(new URL(receipt.json.resume_uri).origin).toBe(rp.origin);
    // A poll before the resume reports approved and hands out nothing.
    const early = await poll(b, base, result.poll_secret);
    expect(early.json).toEqual({ status: 'approved' });
    expect(early.headers.getSetCookie()).toEqual([]);
    const resumed = await b.send(receipt.json.resume_uri);
    expect(resumed.status).toBe(303);
    expect(resumed.headers.get('location')).toBe('/');
    const home = await b.send(`${base}/`);
    expect(home.text).toContain(`data-testid="signed-in-identity">${identity}<`);
    expect((await poll(b, base, result.poll_secret)).json).toEqual({ status: 'completed', identity });
    // The code is single-use.
    const again = await b.send(receipt.json.resume_uri, { headers: { accept: 'application/json' } });
    expect(again.status).toBe(410);
    expect(again.json).toMatchObject({ error: 'resume_refused', rule: 'ns.limits.resume-code' });
  });

  it('resume without the binding cookie is refused (403), leaves the login unfinished and spends the code', async () => {
    const b = new Browser();
    const { result, request } = await start(b, base);
    const receipt = await deliver(base, '/svc/response', approve(request));
    const stranger = new Browser();
    const refused = await stranger.send(receipt.json.resume_uri, { headers: { accept: 'application/json' } });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: 'resume_refused', rule: 'ns.transaction.resume-refused' });
    expect(stranger.cookies.size).toBe(0);
    const late = await b.send(receipt.json.resume_uri, { headers: { accept: 'application/json' } });
    expect(late.status).toBe(410);
    expect((await poll(b, base, result.poll_secret)).json).toEqual({ status: 'ended' });
  });

  it('resume with a wrong binding cookie is refused as HTML for a browser', async () => {
    const b = new Browser();
    const { request } = await start(b, base);
    const receipt = await deliver(base, '/svc/response', approve(request));
    const other = new Browser();
    await start(other, base); // holds a binding cookie of another transaction
    const refused = await other.send(receipt.json.resume_uri);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toContain('text/html');
    expect(refused.text).toContain('resume_refused');
  });

  it('resume without a code or with a malformed one is 400; an unknown code is 410', async () => {
    const b = new Browser();
    for (const q of ['', '?code=', '?code=short', '?code=a&code=b']) {
      const r = await b.send(`${base}/svc/resume${q}`, { headers: { accept: 'application/json' } });
      expect(r.status, q).toBe(400);
    }
    const r = await b.send(`${base}/svc/resume?code=${'A'.repeat(43)}`, { headers: { accept: 'application/json' } });
    expect(r.status).toBe(410);
  });

  it('the resume code lives one minute', async () => {
    const b = new Browser();
    const { request } = await start(b, base);
    const receipt = await deliver(base, '/svc/response', approve(request));
    clock += (limits.resume_code_ttl_seconds + 1) * 1000;
    try {
      const r = await b.send(receipt.json.resume_uri, { headers: { accept: 'application/json' } });
      expect(r.status).toBe(410);
    } finally {
      clock -= (limits.resume_code_ttl_seconds + 1) * 1000;
    }
  });
});

describe('cross device', () => {
  it('delivery with the right match -> receipt without resume_uri; the starting page completes by polling', async () => {
    const b = new Browser();
    const { result, request } = await start(b, base);
    expect((await poll(b, base, result.poll_secret)).json).toEqual({ status: 'pending' });
    const receipt = await deliver(base, '/svc/response', approve(request), result.match_code);
    expect(receipt.status).toBe(200);
    expect(receipt.json).toEqual({ status: 'ok' });
    const done = await poll(b, base, result.poll_secret);
    expect(done.json).toEqual({ status: 'completed', identity });
    expect(done.headers.getSetCookie().some((c) => c.startsWith('svc_rp_session='))).toBe(true);
    expect((await b.send(`${base}/`)).text).toContain(identity);
  });

  it('a wrong match code ends the transaction; the right one afterwards does not revive it', async () => {
    const b = new Browser();
    const { result, request } = await start(b, base);
    const wrong = await deliver(base, '/svc/response', approve(request), otherCode(result.match_code));
    expect(wrong.status).toBe(403);
    expect(wrong.json).toMatchObject({ error: 'match_mismatch', rule: 'ns.transaction.match-wrong' });
    const right = await deliver(base, '/svc/response', approve(request), result.match_code);
    expect(right.status).toBe(409);
    expect(right.json).toMatchObject({ error: 'already_approved', rule: 'ns.transaction.one-approval' });
    expect((await poll(b, base, result.poll_secret)).json).toEqual({ status: 'ended' });
  });

  it('the poll secret is the only handle: an unknown one is 404, a missing one 400', async () => {
    const b = new Browser();
    expect((await poll(b, base, 'A'.repeat(43))).status).toBe(404);
    const r = await b.send(`${base}/svc/poll`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('missing_field');
  });
});

describe('delivery rejections', () => {
  it('one approval per transaction: a replay is 409', async () => {
    const b = new Browser();
    const { request } = await start(b, base);
    const approval = approve(request);
    expect((await deliver(base, '/svc/response', approval)).status).toBe(200);
    const replay = await deliver(base, '/svc/response', approval);
    expect(replay.status).toBe(409);
    expect(['already_approved', 'nonce_replayed']).toContain(replay.json.error);
  });

  it('concurrent deliveries of one approval let exactly one through', async () => {
    const { request } = await start(new Browser(), base);
    const approval = approve(request);
    const replies = await Promise.all(Array.from({ length: 12 }, () => deliver(base, '/svc/response', approval)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(11);
  });

  it('maps verifier rules to statuses and names the rule', async () => {
    const { request } = await start(new Browser(), base);
    const sign = (over: Record<string, unknown>, who = { identity, seed }) => encodeObject(signApproval(defaultProfile, { ...request, ...over }, who));
    const cases: [string, string, number, string][] = [
      ['version', sign({ svc_auth: '2' }), 400, 'ns.verify.1'],
      ['audience', sign({ audience: 'https://evil.example' }), 400, 'ns.verify.2'],
      ['action', sign({ action: 'delete' }), 400, 'ns.verify.3'],
      ['statement', sign({ statement: 'x'.repeat(301) }), 400, 'ns.verify.3'],
      ['scopes', encodeObject({ ...signApproval(defaultProfile, request, { identity, seed }), scopes: ['profile:read', 'messages:send'] }), 400, 'ns.verify.3'],
      ['expired window', sign({ expires_at: '2020-01-01T00:00:00Z', issued_at: '2019-12-31T23:59:00Z' }), 400, 'ns.verify.4'],
      ['unknown identity', sign({}, { identity: 'bob.example.com', seed }), 401, 'ns.verify.6'],
      ['bad signature', encodeObject({ ...signApproval(defaultProfile, request, { identity, seed: new Uint8Array(32).fill(9) }) }), 401, 'ns.verify.7'],
      ['request mismatch', sign({ nonce: 'another-nonce-another-nonce' }), 400, 'ns.delivery.request-binding'],
      ['unknown transaction', sign({ request_id: 'req_never' }), 409, 'ns.delivery.unknown-transaction'],
    ];
    for (const [name, body, status, rule] of cases) {
      const r = await deliver(base, '/svc/response', body);
      expect({ name, status: r.status, rule: r.json?.rule }).toEqual({ name, status, rule });
      expect(r.json.error).toMatch(/^[a-z][a-z0-9_]*$/);
    }
    // None of those spent the nonce or ended the transaction: the real approval still goes through.
    expect((await deliver(base, '/svc/response', approve(request))).status).toBe(200);
  });

  it('accepts the delivery object, raw JSON and padded base64 forms', async () => {
    for (const form of ['object', 'raw', 'padded'] as const) {
      const { request } = await start(new Browser(), base);
      const approval = signApproval(defaultProfile, request, { identity, seed });
      const encoded = encodeObject(approval);
      const body = form === 'object' ? JSON.stringify({ response: encoded }) : form === 'raw' ? JSON.stringify(approval) : encoded + '='.repeat((4 - (encoded.length % 4)) % 4);
      const r = await new Browser().send(`${base}/svc/response`, { method: 'POST', headers: { 'content-type': form === 'padded' ? 'text/plain' : 'application/json' }, body });
      expect(r.status, form).toBe(200);
      expect(r.json.resume_uri).toBeDefined();
    }
  });

  it('refuses an approval in the URL, an over-large body (413) and malformed bodies, with CORS', async () => {
    const { request } = await start(new Browser(), base);
    const encoded = approve(request);
    const inUrl = await new Browser().send(`${base}/svc/response?response=${encoded}`, { method: 'POST', body: encoded });
    expect(inUrl.status).toBe(400);
    expect(inUrl.json).toMatchObject({ error: 'approval_in_url', rule: 'ns.auth.6.no-approval-in-url' });
    const big = await new Browser().send(`${base}/svc/response`, { method: 'POST', body: 'a'.repeat(limits.rp_delivery_body_max_bytes + 1) });
    expect(big.status).toBe(413);
    expect(big.json).toMatchObject({ error: 'body_too_large', rule: 'ns.delivery.body-cap' });
    for (const body of ['', 'not base64 !', '{"response": 5}', '{"response": "x", "match": "123"}', '[1,2]', '{']) {
      const r = await new Browser().send(`${base}/svc/response`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(r.status, body).toBe(400);
      expect(r.json.rule, body).toBe('ns.delivery.body');
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
    }
    const pre = await new Browser().send(`${base}/svc/response`, { method: 'OPTIONS' });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toBe('POST');
    expect(pre.headers.get('access-control-allow-headers')).toBe('Content-Type');
  });

  it('an expired transaction refuses its approval (rule 4) and its links answer 410', async () => {
    const b = new Browser();
    const { result, request } = await start(b, base);
    const approval = approve(request);
    clock += (limits.window_max_seconds + 1) * 1000;
    try {
      const r = await deliver(base, '/svc/response', approval);
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ error: 'expired', rule: 'ns.verify.4' });
      expect((await poll(b, base, result.poll_secret)).json).toEqual({ status: 'expired' });
      expect((await b.send(result.request_uri, { headers: { accept: 'application/json' } })).status).toBe(410);
      const ctx = await b.send(`${base}/svc/context?request_id=${request.request_id}`);
      expect(ctx.status).toBe(404);
    } finally {
      clock -= (limits.window_max_seconds + 1) * 1000;
    }
  });
});

describe('request by reference and context', () => {
  it('JSON for signers with CORS and never the match code; a page for browsers; 410 once used; 404 unknown', async () => {
    const b = new Browser();
    const { result, request } = await start(b, base);
    const asJson = await b.send(result.request_uri, { headers: { accept: 'application/json' } });
    expect(asJson.status).toBe(200);
    expect(asJson.json).toEqual({ request: result.request });
    expect(asJson.headers.get('access-control-allow-origin')).toBe('*');
    expect(asJson.text).not.toContain(`"${result.match_code}"`);
    const page = await b.send(result.request_uri, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).not.toContain('match-code');
    // Loose typing of the code is accepted (Crockford base32).
    const lower = await b.send(
      result.request_uri.replace(/\/r\/(.*)$/, (_m, c: string) => `/r/${c.toLowerCase()}`),
      { headers: { accept: 'application/json' } },
    );
    expect(lower.status).toBe(200);
    const context = await b.send(`${base}/svc/context?request_id=${request.request_id}`);
    expect(context.status).toBe(200);
    expect(Object.keys(context.json).sort()).toEqual(['browser', 'client', 'client_host', 'request_id', 'started_at']);
    expect(context.headers.get('access-control-allow-origin')).toBe('*');
    await deliver(base, '/svc/response', approve(request), result.match_code);
    expect((await b.send(result.request_uri, { headers: { accept: 'application/json' } })).status).toBe(410);
    expect((await b.send(`${base}/svc/context?request_id=${request.request_id}`)).status).toBe(404);
    const unknown = await b.send(`${base}/r/ZZZZZZZZ`, { headers: { accept: 'application/json' } });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: 'reference_gone', rule: 'ns.reference.gone' });
    expect((await b.send(`${base}/svc/context`)).status).toBe(400);
  });
});

describe('login page', () => {
  it('starts a transaction: binding cookie, match code, QR SVG, deep link, web signer, no-store, CSP', async () => {
    const b = new Browser();
    const r = await b.send(`${base}/login`);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(b.cookies.get('svc_binding')).toBeDefined();
    expect(r.text).toMatch(/data-testid="match-code">\d{2}</);
    expect(r.text).toMatch(/<svg id="qr-svg" data-testid="qr-svg"/);
    expect(r.text).toMatch(/href="svc:\/\/auth\?request=[A-Za-z0-9_-]+"/);
    expect(r.text).toMatch(/href="https:\/\/signer\.example\/app\/\?auth=[A-Za-z0-9_-]+"/);
    expect(r.text).not.toMatch(/<script>/);
    const js = await b.send(`${base}/assets/rp.js`);
    expect(js.status).toBe(200);
  });

  it('sets a __Host- Secure cookie when the origin is https', async () => {
    const secure = await startRp({ dataDir: ':memory:', origin: 'https://rp.example.net' }, { resolver: staticResolver() });
    try {
      const r = await new Browser().send(`${secure.url}/login`, { method: 'POST', headers: { accept: 'application/json' } });
      const cookie = r.headers.getSetCookie()[0]!;
      expect(cookie).toMatch(/^__Host-svc_binding=[A-Za-z0-9_-]{43}; Path=\/; SameSite=Lax; HttpOnly; Secure/);
    } finally {
      await secure.close();
    }
  });
});

describe('another service name', () => {
  it('--service-name poweur serves /poweur/response, poweur cookies and the poweur metadata path', async () => {
    const poweur = profileFor('poweur');
    const other = await startRp({ dataDir: ':memory:', serviceName: 'poweur' }, { resolver: staticResolver(), nonces: new MemoryNonceStore() });
    try {
      const meta = await new Browser().send(`${other.url}/.well-known/poweur.json`);
      expect(meta.json).toMatchObject({ poweur_auth: '1', response_uris: [`${other.origin}/poweur/response`] });
      const b = new Browser();
      const { result, request } = await start(b, other.url);
      expect(b.cookies.has('poweur_binding')).toBe(true);
      expect(request.poweur_auth).toBe('1');
      const r = await deliver(other.url, '/poweur/response', approve(request, poweur), result.match_code);
      expect(r.status).toBe(200);
      expect((await poll(b, other.url, result.poll_secret, '/poweur/poll')).json).toEqual({ status: 'completed', identity });
    } finally {
      await other.close();
    }
  });
});
