// The harness signer against a small local RP: metadata refusals with their rule ids, request
// loading and validation, same- and cross-device approvals, and the CLI commands via main().
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeRp, type FakeRp } from './fake-rp.ts';
import { Signer, SignerError, newKey, readKeyFile, type SignerKey } from '../../harness/actors/signer/index.ts';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { encodeObject } from '../../protocol/common/codec.ts';
import { publicKeyFromSeed } from '../../protocol/common/ed25519.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { main } from '../../harness/cli.ts';

let rp: FakeRp;
let signer: Signer;
let alice: SignerKey;
let dir: string;

beforeAll(async () => {
  rp = await startFakeRp();
  signer = new Signer({ timeoutMs: 3000 });
  alice = newKey('alice.example.test');
  rp.resolver.set(alice.identity, publicKeyFromSeed(alice.seed));
  dir = await mkdtemp(join(tmpdir(), 'signer-test-'));
});

afterAll(async () => {
  await signer?.close();
  await rp?.close();
  await rm(dir, { recursive: true, force: true });
});

function reset(): void {
  for (const k of Object.keys(rp.tamper)) delete (rp.tamper as Record<string, unknown>)[k];
}

async function refusal(p: Promise<unknown>): Promise<SignerError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SignerError);
  return e as SignerError;
}

function out() {
  let text = '';
  return {
    write: (s: string) => void (text += s),
    get text() {
      return text;
    },
  };
}

describe('metadata', () => {
  it('accepts the RP metadata', async () => {
    reset();
    const { metadata, origin } = await signer.fetchMetadata(rp.origin);
    expect([metadata.name, origin]).toEqual(['Fake RP', rp.origin]);
  });

  it('refuses a redirect, an oversize body, a foreign origin and off-origin URIs with their rules', async () => {
    reset();
    rp.tamper.metadataStatus = 302;
    rp.tamper.metadataLocation = 'https://elsewhere.test/.well-known/svc.json';
    expect((await refusal(signer.fetchMetadata(rp.origin))).ruleId).toBe('ns.metadata.no-redirects');
    reset();
    rp.tamper.metadata = (m) => ({ ...m, padding: 'x'.repeat(limits.metadata_body_max_bytes) });
    expect((await refusal(signer.fetchMetadata(rp.origin))).ruleId).toBe('ns.metadata.body-cap');
    reset();
    rp.tamper.metadata = (m) => ({ ...m, origin: 'https://guestbook.example.net' });
    expect((await refusal(signer.fetchMetadata(rp.origin))).ruleId).toBe('ns.metadata.origin');
    reset();
    rp.tamper.metadata = (m) => ({ ...m, response_uris: ['https://evil.test/svc/response'] });
    const e = await refusal(signer.fetchMetadata(rp.origin));
    expect(e.ruleId).toBe('ns.metadata.response-uris');
    expect(e.code).toBe('metadata_invalid');
    reset();
    rp.tamper.metadata = (m) => ({ ...m, poll_uri: 'https://evil.test/poll', app_id: 'wrong' });
    expect((await refusal(signer.fetchMetadata(rp.origin))).problems.map((p) => p.ruleId).sort()).toEqual(['ns.metadata.app-id', 'ns.metadata.poll-uri']);
    reset();
    rp.tamper.metadata = (m) => ({ ...m, svc_auth: '2' });
    expect((await refusal(signer.fetchMetadata(rp.origin))).ruleId).toBe('ns.metadata.version');
  });

  it('refuses http:// outside development hosts (ns.auth.5)', async () => {
    expect((await refusal(signer.fetchMetadata('http://guestbook.example.net'))).ruleId).toBe('ns.auth.5');
  });
});

describe('requests', () => {
  const base = () => {
    const now = Date.now();
    return {
      svc_auth: '1',
      request_id: 'r1',
      audience: rp.origin,
      nonce: 'n'.repeat(22),
      issued_at: formatRfc3339(now),
      expires_at: formatRfc3339(now + 120_000),
      action: 'signin',
      response_uri: `${rp.origin}/svc/response`,
    };
  };

  it('loads encoded text, raw JSON, padded base64url, deep links and handoff links', async () => {
    const r = base();
    const enc = encodeObject(r);
    for (const input of [enc, JSON.stringify(r), `${enc}${'='.repeat((4 - (enc.length % 4)) % 4)}`, `svc://auth?request=${enc}`, `https://signer.example/app/?auth=${enc}`]) {
      const loaded = await signer.loadRequest(input);
      expect([loaded.request.request_id, loaded.byReference]).toEqual(['r1', false]);
    }
  });

  it('loads a request by reference, same-origin, without a match code', async () => {
    reset();
    const browser = signer.browser();
    const started = await browser.start(`${rp.origin}/login`);
    for (const input of [started.requestUri!, `svc://auth?request_uri=${encodeURIComponent(started.requestUri!)}`]) {
      const loaded = await signer.loadRequest(input);
      expect(loaded.byReference).toBe(true);
      expect(loaded.referenceUri).toBe(started.requestUri);
    }
    rp.tamper.referenceBody = (b) => ({ ...b, match_code: '42' });
    expect((await refusal(signer.loadRequest(started.requestUri!))).ruleId).toBe('ns.reference.no-match-code');
    await browser.close();
    reset();
    rp.tamper.request = (r) => ({ ...r, audience: 'https://guestbook.example.net', response_uri: 'https://guestbook.example.net/svc/response' });
    const other = signer.browser();
    const s2 = await other.start(`${rp.origin}/login`);
    expect((await refusal(signer.loadRequest(s2.requestUri!))).ruleId).toBe('ns.reference.same-origin');
    await other.close();
    expect((await refusal(signer.loadRequest(`${rp.origin}/r/NOPE0000`))).ruleId).toBe('ns.reference.gone');
  });

  it('validates against the metadata with rule ids', async () => {
    reset();
    const { metadata } = await signer.fetchMetadata(rp.origin);
    expect(signer.validateRequest(base(), metadata)).toEqual([]);
    const ids = (r: Record<string, unknown>) => signer.validateRequest(r, metadata).map((p) => p.ruleId);
    expect(ids({ ...base(), response_uri: 'https://evil.test/svc/response' })).toEqual(['ns.auth.4']);
    expect(ids({ ...base(), response_uri: `${rp.origin}/other` })).toEqual(['ns.request.response-uri']);
    expect(ids({ ...base(), response_uri: `${rp.origin}/other` }).length).toBe(1);
    expect(signer.validateRequest({ ...base(), response_uri: `${rp.origin}/other` }, { ...metadata, response_uris: [] })).toEqual([]);
    expect(ids({ ...base(), expires_at: formatRfc3339(Date.now() + 600_000) })).toEqual(['ns.request.window']);
    expect(ids({ ...base(), action: 'delete' })).toEqual(['ns.request.action']);
    expect(ids({ ...base(), scopes: ['profile:read', 'messages:send'] })).toEqual(['ns.request.scopes']);
    expect(ids({ ...base(), scopes: ['dav:rw:apps/x'] })).toEqual(['ns.request.scope-namespace']);
    expect(ids({ ...base(), statement: 'two\nlines' })).toEqual(['ns.request.statement']);
    expect(ids({ ...base(), audience: 'https://guestbook.example.net', response_uri: 'https://guestbook.example.net/svc/response' })).toEqual(['ns.request.audience', 'ns.request.response-uri']);
    expect(ids({ ...base(), svc_auth: '2' })).toEqual(['ns.request.version']);
  });
});

describe('approve', () => {
  it('same device: delivers bare, checks the receipt and resumes in the starting browser', async () => {
    reset();
    const browser = signer.browser();
    const started = await browser.start(`${rp.origin}/login`);
    const result = await signer.approve(started.request, { key: alice, sameDevice: true, browser });
    expect(result.delivery?.status).toBe(200);
    expect(result.resumeUri).toMatch(/\/svc\/resume\?code=/);
    expect(result.resumed?.status).toBe(303);
    expect((await browser.poll(`${rp.origin}/svc/poll`, started.pollSecret)).status).toBe('completed');
    await browser.close();
  });

  it('cross device with a session key: match code, poll completes', async () => {
    reset();
    const browser = signer.browser();
    const started = await browser.start(`${rp.origin}/login`);
    const result = await signer.approve(started.requestUri!, { key: alice, match: started.matchCode, session: true });
    expect(result.approval.key_id).toMatch(/^session:/);
    expect(result.receipt).toEqual({ status: 'ok' });
    expect(result.view).toMatchObject({ name: 'Fake RP', crossDevice: true, byReference: true });
    expect(result.view.context?.browser).toBe('Test browser');
    const polled = await browser.pollUntil(`${rp.origin}/svc/poll`, started.pollSecret);
    expect([polled.status, polled.identity]).toEqual(['completed', alice.identity]);
    await browser.close();
  });

  it('refuses a reference without a match code, and a resume_uri off the audience', async () => {
    reset();
    const browser = signer.browser();
    const started = await browser.start(`${rp.origin}/login`);
    expect((await refusal(signer.approve(started.requestUri!, { key: alice }))).ruleId).toBe('ns.reference.match-required');
    rp.tamper.resumeUri = 'https://evil.test/svc/resume?code=x';
    expect((await refusal(signer.approve(started.request, { key: alice, sameDevice: true, browser }))).ruleId).toBe('ns.auth.6.resume-same-origin');
    await browser.close();
  });

  it('reports an RP refusal with its status', async () => {
    reset();
    const browser = signer.browser();
    const started = await browser.start(`${rp.origin}/login`);
    const stranger = newKey('mallory.example.test'); // not resolvable at the RP
    const e = await refusal(signer.approve(started.request, { key: stranger, sameDevice: true }));
    expect(e.ruleId).toBe('ns.delivery.reject-status');
    expect(e.message).toMatch(/401/);
    await browser.close();
  });
});

describe('CLI', () => {
  it('keygen writes a key file; approve and login run against an RP', async () => {
    reset();
    const keyFile = join(dir, 'alice.json');
    let o = out();
    expect(await main(['node', 'svc-conformance', 'signer', 'keygen', '--identity', 'Alice.Example.Test', '--out', keyFile], { stdout: o, stderr: out() })).toBe(0);
    const key = await readKeyFile(keyFile);
    expect(key.identity).toBe('alice.example.test');
    expect(JSON.parse(await readFile(keyFile, 'utf8')).public_key).toMatch(/^ed25519:/);
    rp.resolver.set(key.identity, publicKeyFromSeed(key.seed));

    const browser = signer.browser();
    const started = await browser.start(`${rp.origin}/login`);
    o = out();
    const err = out();
    expect(await main(['node', 'svc-conformance', 'signer', 'approve', '--key', keyFile, started.requestUri!], { stdout: o, stderr: err })).toBe(1);
    expect(err.text).toMatch(/ns\.reference\.match-required/);
    expect(o.text).toMatch(/signin to Fake RP \(127\.0\.0\.1:\d+\)/);
    expect(await main(['node', 'svc-conformance', 'signer', 'approve', '--key', keyFile, '--match', started.matchCode, started.requestUri!], { stdout: (o = out()), stderr: out() })).toBe(0);
    expect(o.text).toMatch(/receipt \{"status":"ok"\}/);
    await browser.close();

    o = out();
    expect(await main(['node', 'svc-conformance', 'signer', 'login', '--key', keyFile, '--rp-start', `${rp.origin}/login`], { stdout: o, stderr: out() })).toBe(0);
    expect(o.text).toMatch(/signed in to Fake RP as alice\.example\.test/);
  });

  it('publish sends a key file to a running authority; authority runs until aborted', async () => {
    const authority: Authority = await startAuthority({ dnsPort: 0, httpsPort: 0, adminPort: 0 });
    try {
      const keyFile = join(dir, 'bob.json');
      expect(await main(['node', 'svc-conformance', 'signer', 'keygen', '--identity', 'bob.id.test', '--out', keyFile], { stdout: out(), stderr: out() })).toBe(0);
      const o = out();
      expect(await main(['node', 'svc-conformance', 'signer', 'publish', '--key', keyFile, '--authority', authority.adminUrl], { stdout: o, stderr: out() })).toBe(0);
      expect(o.text).toMatch(/published bob\.id\.test/);
      expect((await authority.identity('bob.id.test'))?.https).toBe(true);
    } finally {
      await authority.close();
    }
    const stop = new AbortController();
    const o = out();
    const running = main(['node', 'svc-conformance', 'authority', '--address', '127.0.88.77', '--dns-port', '0', '--https-port', '0', '--admin-port', '0'], {
      stdout: o,
      stderr: out(),
      signal: stop.signal,
    });
    for (let i = 0; i < 50 && !o.text.includes('Press Ctrl-C'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(o.text).toMatch(/svc-reference rp --dns-server 127\.0\.88\.77:\d+ --ca \S+ca\.pem/);
    stop.abort();
    expect(await running).toBe(0);
  });

  it('help text lists every signer command', async () => {
    const o = out();
    await main(['node', 'svc-conformance', 'signer', '--help'], { stdout: o, stderr: out() });
    for (const c of ['keygen', 'publish', 'approve', 'login']) expect(o.text).toContain(c);
  });
});
