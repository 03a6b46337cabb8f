// Hostile input to the three reference servers, each started by its CLI with --quiet: oversized
// bodies answered (413, read by the client, never a reset), malformed percent escapes in path
// parameters and JSON nested thousands deep answered 400 (never 500), the bridge's cookie-bound
// routes with their cookies, and the error log kept under --quiet.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits } from '../../schemas/ts/limits.ts';
import { main } from '../../reference/cli.ts';
import type { RunningRp } from '../../reference/rp/app.ts';
import type { RunningBridge } from '../../reference/bridge/app.ts';
import type { RunningRelay } from '../../reference/relay/app.ts';
import { sessionCookieName, txCookieName } from '../../reference/bridge/flow.ts';
import { hashSecret, newSecret } from '../../reference/shared/secrets.ts';
import { cliLog } from '../../reference/shared/server.ts';
import { jsonTooDeep } from '../../reference/shared/body.ts';
import { harnessClients } from '../../harness/suites/bridge/launch.ts';
import { startRp } from '../../reference/rp/app.ts';
import { decodeObject } from '../../protocol/common/codec.ts';
import { approve, Browser, start, staticResolver } from './helpers.ts';

interface Server<R> {
  running: R;
  url: string;
  stderr: string[];
}

async function serve<R>(args: string[]): Promise<Server<R>> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io = { stdout: { write: (s: string) => stdout.push(s) }, stderr: { write: (s: string) => stderr.push(s) } };
  const started = await main([...args, '--port', '0', '--quiet'], io);
  if (!started.running) throw new Error(`${args[0]} did not start: ${stderr.join('')}`);
  const url = /\((http:\/\/[^)]+)\)/.exec(stdout.join(''))![1]!;
  return { running: started.running as R, url, stderr };
}

let dir: string;
let rp: Server<RunningRp>;
let bridge: Server<RunningBridge>;
let relay: Server<RunningRelay>;
let basic: { client_id: string; redirect_uri: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hostile-'));
  const { clients, file } = await harnessClients();
  basic = clients.basic;
  await writeFile(join(dir, 'clients.json'), JSON.stringify(file));
  rp = await serve(['rp', '--data-dir', ':memory:']);
  bridge = await serve(['bridge', '--data-dir', ':memory:', '--static-clients', join(dir, 'clients.json')]);
  relay = await serve(['relay', '--data-dir', join(dir, 'relay'), '--hosted-domains', 'relay.test']);
});

afterAll(async () => {
  await Promise.all([rp?.running.close(), bridge?.running.close(), relay?.running.close()]);
  await rm(dir, { recursive: true, force: true });
});

const TEN_MB = new Uint8Array(10 * 1024 * 1024).fill(0x61);
const deepJson = (levels: number) => `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`;

async function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array | ReadableStream<Uint8Array> } = {}) {
  const res = await fetch(url, { redirect: 'manual', ...init, ...(init.body instanceof ReadableStream ? { duplex: 'half' } : {}) } as never);
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * POSTs `size` bytes as a client that writes the whole request before reading (many do): the
 * status line it reads, or the error its writes met (EPIPE, ECONNRESET when the server closed early).
 */
function writeThenRead(base: string, path: string, size: number): Promise<string> {
  const u = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    let got = '';
    socket.on('data', (d) => (got += d));
    socket.on('error', (e) => resolve(`${(e as NodeJS.ErrnoException).code ?? e.message} after ${JSON.stringify(got.slice(0, 12))}`));
    socket.on('close', () => resolve(got.split('\r\n')[0]!));
    socket.write(`POST ${path} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: text/plain\r\ncontent-length: ${size}\r\nconnection: close\r\n\r\n`);
    const chunk = Buffer.alloc(65536, 0x61);
    let left = size;
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!socket.write(chunk.subarray(0, n))) return void socket.once('drain', pump);
      }
    };
    pump();
  });
}

/** A transaction page's id and its binding cookie, from /authorize as a browser starts it. */
async function bridgeTransaction(): Promise<{ id: string; cookie: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: basic.client_id,
    redirect_uri: basic.redirect_uri,
    scope: 'openid',
    state: 'hostile',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const res = await fetch(`${bridge.url}/authorize?${q}`, { redirect: 'manual' });
  const location = res.headers.get('location') ?? '';
  const id = /\/t\/([A-Za-z0-9_-]{22})/.exec(location)?.[1];
  const name = txCookieName(bridge.running.app.context);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`));
  if (!id || !cookie) throw new Error(`no transaction from /authorize: ${res.status} ${location}`);
  return { id, cookie };
}

describe('an oversized body is answered with 413 the client reads (never a reset)', () => {
  it('RP: a 10 MB delivery, with Content-Length and chunked', async () => {
    const r = await send(`${rp.url}/svc/response`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: TEN_MB });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ error: 'body_too_large', rule: 'ns.delivery.body-cap' });
    const chunks = Array.from({ length: 40 }, () => new Uint8Array(256 * 1024).fill(0x61));
    const stream = new ReadableStream<Uint8Array>({ pull: (c) => void (chunks.length > 0 ? c.enqueue(chunks.pop()!) : c.close()) });
    const chunked = await send(`${rp.url}/svc/response`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: stream });
    expect(chunked.status).toBe(413);
    expect(chunked.json).toMatchObject({ rule: 'ns.delivery.body-cap' });
  });

  it('every server, to a client that writes the whole 10 MB before reading', async () => {
    for (const [base, path] of [
      [rp.url, '/svc/response'],
      [bridge.url, '/svc/callback'],
      [bridge.url, '/token'],
      [relay.url, '/messages'],
      [relay.url, '/acks'],
    ] as const) {
      expect(await writeThenRead(base, path, TEN_MB.length), path).toMatch(path === '/token' ? /^HTTP\/1\.1 400 / : /^HTTP\/1\.1 413 /);
    }
  });

  it('bridge: a 10 MB callback; relay: a 10 MB message and session', async () => {
    const cb = await send(`${bridge.url}/svc/callback`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: TEN_MB });
    expect(cb.status).toBe(413);
    expect(cb.json).toMatchObject({ rule: 'ns.delivery.body-cap' });
    for (const path of ['/messages', '/sessions']) {
      const r = await send(`${relay.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: path === '/messages' ? TEN_MB : new Uint8Array(limits.signed_request_body_max_bytes + 1),
      });
      expect(r.status, path).toBe(413);
      expect(r.json, path).toMatchObject({ error: 'payload_too_large', rule: 'ra.errors.payload-too-large' });
    }
  });
});

describe('the bridge cookie-bound routes with their cookies', () => {
  const big = `id=${'a'.repeat(limits.bridge_form_body_max_bytes + 1)}`;
  for (const op of ['identify', 'consent'] as const) {
    it(`/t/{id}/${op}: 413 for an oversized form, 400 for deep JSON, as a page or as JSON`, async () => {
      const { id, cookie } = await bridgeTransaction();
      const form = { 'content-type': 'application/x-www-form-urlencoded', cookie };
      const page = await send(`${bridge.url}/t/${id}/${op}`, { method: 'POST', headers: form, body: big });
      expect(page.status).toBe(413);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      const asJson = await send(`${bridge.url}/t/${id}/${op}`, { method: 'POST', headers: { ...form, accept: 'application/json' }, body: big });
      expect(asJson.status).toBe(413);
      expect(asJson.json).toMatchObject({ rule: 'ns.delivery.body-cap' });
      const deep = await send(`${bridge.url}/t/${id}/${op}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', cookie }, body: deepJson(5000) });
      expect(deep.status).toBe(400);
      expect(deep.json).toMatchObject({ error: 'invalid_request', rule: 'ob.robustness.never-500' });
    });
  }

  it('/account/revoke with a session cookie: 413 for an oversized form', async () => {
    const ctx = bridge.running.app.context;
    const secret = newSecret();
    await ctx.store.createSession(hashSecret(secret), { identity: 'alice.example.com', authTime: Date.now(), delegated: false, keyFingerprint: null, expiresAt: Date.now() + 3_600_000 });
    const r = await send(`${bridge.url}/account/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', cookie: `${sessionCookieName(ctx)}=${secret}` },
      body: `client_id=${'a'.repeat(limits.bridge_form_body_max_bytes)}`,
    });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ rule: 'ns.delivery.body-cap' });
  });
});

describe('a malformed percent escape in a path parameter is 400 in the envelope, never 500', () => {
  const bad = ['%E0%A4%A', '%zz', '%'];
  it('RP /r/{code}', async () => {
    for (const esc of bad) {
      const r = await send(`${rp.url}/r/${esc}`, { headers: { accept: 'application/json' } });
      expect(r.status, esc).toBe(400);
      expect(r.json, esc).toMatchObject({ error: 'invalid_request', rule: 'ns.delivery.never-500' });
    }
  });

  it('bridge /t/{id}, /t/{id}/status, /r/{code}, /developers/clients/{id}/{op}', async () => {
    for (const esc of bad) {
      for (const [method, path] of [
        ['GET', `/t/${esc}`],
        ['GET', `/t/${esc}/status`],
        ['POST', `/t/${esc}/identify`],
        ['GET', `/r/${esc}`],
        ['POST', `/developers/clients/${esc}/delete`],
      ] as const) {
        const r = await send(`${bridge.url}${path}`, { method, headers: { accept: 'application/json' } });
        expect(r.status, `${method} ${path}`).toBe(400);
        expect(r.json, path).toMatchObject({ error: 'invalid_request', rule: 'ob.robustness.never-500' });
      }
    }
  });

  it('relay /identities/{id}, /messages/{id}, /sessions/{id}, /devices/{id}', async () => {
    for (const esc of bad) {
      for (const [method, path] of [
        ['GET', `/identities/${esc}`],
        ['POST', `/identities/${esc}/rotate`],
        ['GET', `/messages/${esc}`],
        ['GET', `/events/${esc}`],
        ['DELETE', `/sessions/${esc}`],
        ['GET', `/devices/${esc}`],
      ] as const) {
        const r = await send(`${relay.url}${path}`, { method });
        expect(r.status, `${method} ${path}`).toBe(400);
        expect(r.json, path).toMatchObject({ error: 'invalid_request', rule: 'ra.errors.invalid-request' });
      }
    }
  });
});

describe('JSON nested thousands deep is 400 on every server', () => {
  it('is judged by one linear scan at the limit in spec/limits', () => {
    expect(jsonTooDeep(deepJson(limits.json_depth_max - 1))).toBe(false);
    expect(jsonTooDeep(deepJson(limits.json_depth_max))).toBe(true);
    expect(jsonTooDeep(`{"a":"${'['.repeat(500)}"}`)).toBe(false); // brackets in a string
    expect(jsonTooDeep(`{"a":"\\"${'['.repeat(500)}"}`)).toBe(false); // after an escaped quote
    expect(jsonTooDeep('a'.repeat(10) + '['.repeat(500))).toBe(false); // not JSON: not judged
  });

  it('RP, bridge and relay refuse it with their rule', async () => {
    const body = deepJson(1500);
    const cases: Array<[string, string, string]> = [
      [rp.url, '/login', 'ns.errors.malformed-body'],
      [rp.url, '/svc/poll', 'ns.errors.malformed-body'],
      [rp.url, '/svc/response', 'ns.errors.malformed-body'],
      [bridge.url, '/svc/callback', 'ns.errors.malformed-body'],
      [relay.url, '/messages', 'ra.errors.invalid-request'],
      [relay.url, '/acks', 'ra.errors.invalid-request'],
      [relay.url, '/sessions', 'ra.errors.invalid-request'],
      [relay.url, '/identities', 'ra.errors.invalid-request'],
    ];
    for (const [base, path, rule] of cases) {
      const r = await send(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body });
      expect(r.status, path).toBe(400);
      expect(r.json, path).toMatchObject({ rule });
    }
    const token = await send(`${bridge.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(token.status).toBe(400);
    expect(token.json).toMatchObject({ error: 'invalid_request', rule: 'ob.errors.oauth-body' });
  });
});

describe('a body that is not UTF-8 is refused, never read with replacement characters', () => {
  it('relay: 400 with its rule, from the one JSON parser (reference/shared/json.ts)', async () => {
    const body = new Uint8Array([...Buffer.from('{"identity":"a.example","x":"'), 0xff, 0xfe, ...Buffer.from('"}')]);
    for (const path of ['/messages', '/acks', '/sessions', '/identities']) {
      const r = await send(`${relay.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body });
      expect(r.status, path).toBe(400);
      expect(r.json, path).toMatchObject({ rule: 'ra.errors.invalid-request' });
    }
  });
});

describe('a well-signed approval carrying a deeply nested unsigned field', () => {
  it('is refused with 400 before it is parsed (the encoded approval is JSON too)', async () => {
    const signing = await startRp({}, { resolver: staticResolver() });
    try {
      const { request } = await start(new Browser(), signing.url);
      const approval = decodeObject(approve(request));
      if (!approval.ok) throw new Error('the test approval does not decode');
      const text = JSON.stringify(approval.value);
      const encoded = Buffer.from(`${text.slice(0, -1)},"extra":${'['.repeat(5000)}${']'.repeat(5000)}}`).toString('base64url');
      const r = await send(`${signing.url}/svc/response`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: encoded });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ error: 'malformed_delivery', rule: 'ns.delivery.body' });
    } finally {
      await signing.close();
    }
  });
});

describe('--quiet drops request lines but keeps the error log', () => {
  it('cliLog keeps error lines only', () => {
    const lines: string[] = [];
    const log = cliLog({ write: (s: string) => lines.push(s) }, true);
    log('approved tx-1');
    log('internal error on GET /: boom', 'error');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/internal error on GET \/: boom/);
  });

  it('each server started with --quiet logs an internal error (and answers 500) and nothing else', async () => {
    const boom = () => {
      throw new Error('injected store failure');
    };
    // A store that fails is the one internal error a client cannot cause: injected here, then restored.
    const transactions = rp.running.app.context.transactions;
    const bridgeStore = bridge.running.app.context.store;
    const relayStore = relay.running.context.store;
    const saved = { byPollHash: transactions.byPollHash, tx: bridgeStore.tx, identity: relayStore.identity };
    try {
      transactions.byPollHash = boom;
      const r = await send(`${rp.url}/svc/poll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ poll_secret: newSecret() }) });
      expect(r.status).toBe(500);
      bridgeStore.tx = boom;
      expect((await send(`${bridge.url}/t/${'a'.repeat(22)}`)).status).toBe(500);
      relayStore.identity = boom;
      expect((await send(`${relay.url}/identities/alice.relay.test`)).status).toBe(500);
    } finally {
      Object.assign(transactions, { byPollHash: saved.byPollHash });
      Object.assign(bridgeStore, { tx: saved.tx });
      Object.assign(relayStore, { identity: saved.identity });
    }
    for (const [name, s] of [
      ['rp', rp],
      ['bridge', bridge],
      ['relay', relay],
    ] as const) {
      const log = s.stderr.join('');
      expect(log, name).toMatch(/internal error on .*injected store failure/);
      expect(
        log.split('\n').filter((l) => l !== '' && !/internal error|^\s+at |injected/.test(l)),
        name,
      ).toEqual([]);
    }
  });
});

// ---- a bounded storm of malformed requests to every operation of spec/http/*.openapi.yaml ----

/** mulberry32: a small seeded generator, so a failure replays with the same seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEGMENTS = ['%zz', '%E0%A4%A', '%', '%00', '%C0%AF', '%ED%A0%80', '%F0%9F%98%80', '..%2F..', 'a'.repeat(3000), 'alice.relay.test', 'AAAAAAAAAAAAAAAAAAAAAA', '%2e%2e', ''];
const QUERIES = ['', '?%zz=%E0', '?code=%', '?identity=%ff', '?since=-1', '?since=1e999', '?request_id[]=1', `?state=${'x'.repeat(5000)}`, '?client_id=%F0%9F&redirect_uri=%zz', '?handle=%00'];
const TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'garbage/garbage;;;=', undefined];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
const SIZES = [limits.rp_poll_body_max_bytes + 1, limits.bridge_form_body_max_bytes + 1, limits.rp_delivery_body_max_bytes + 1, limits.message_body_max_bytes + 1];

function body(pick: <T>(xs: readonly T[]) => T): string | Uint8Array | undefined {
  const bodies: Array<() => string | Uint8Array | undefined> = [
    () => undefined,
    () => deepJson(3000),
    () => `{"response":${deepJson(200)},"match":"123456"}`,
    () => new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0xc0, 0x22, 0x3a, 0x31, 0x7d]),
    () => pick(['{}', '[]', 'null', '"s"', '1e309', '{"__proto__":{"x":1}}', '{"poll_secret":[]}', '{"identity":{"a":1},"public_key":7}', '{"response":"%zz"}']),
    () => 'a=%zz&b=%E0&id=%&decision=approve&claims=%',
    () => `{"payload":"${'x'.repeat(pick(SIZES))}"}`,
    () => new Uint8Array(pick(SIZES)).fill(0x7b),
  ];
  return pick(bodies)();
}

function headers(pick: <T>(xs: readonly T[]) => T, type: string | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (type !== undefined) h['content-type'] = type;
  const extra = pick<Record<string, string>>([
    {},
    { accept: 'application/json' },
    { accept: 'text/html;q=0.1, application/json;q=0.1, */*;q=x' },
    { cookie: 'a=%zz; __Host-svc_tx=%E0; svc_session=' + 'x'.repeat(2000) },
    { authorization: 'Bearer %zz' },
    { authorization: 'Basic !!!' },
    { authorization: `Basic ${Buffer.from(':').toString('base64')}` },
    { 'x-big': 'a'.repeat(20_000) },
    { host: 'alice.relay.test' },
  ]);
  return { ...h, ...extra };
}

async function operations(file: string): Promise<Array<{ method: string; path: string }>> {
  const { parse } = await import('yaml');
  const { readFile } = await import('node:fs/promises');
  const doc = parse(await readFile(join(import.meta.dirname, '../../spec/http', file), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => METHODS.includes(m.toUpperCase()))
      .map((m) => ({ method: m.toUpperCase(), path })),
  );
}

/** What gets a request past an operation's front door: a live path segment and its cookies. */
interface Door {
  segment: string;
  cookie: string;
}

/**
 * `count` malformed requests to `base`, 8 at a time: the answers of 5xx (none expected). With a
 * `door`, half of them name its segment and carry its cookies (the bridge's cookie-bound routes).
 */
async function storm(base: string, file: string, count: number, seed: number, door?: Door): Promise<string[]> {
  const ops = await operations(file);
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const op = pick(ops);
      const method = random() < 0.8 ? op.method : pick(METHODS);
      const inside = door !== undefined && random() < 0.5;
      const path = op.path.replace(/\{[^}]+\}/g, () => (inside ? door.segment : pick(SEGMENTS))) + pick(QUERIES);
      const type = pick(TYPES);
      const b = method === 'GET' || method === 'HEAD' ? undefined : body(pick);
      try {
        const h = headers(pick, type);
        if (inside) h.cookie = door.cookie;
        const res = await fetch(`${base}${path}`, { method, headers: h, body: b, redirect: 'manual', signal: AbortSignal.timeout(10_000) } as never);
        const text = method === 'GET' && res.headers.get('content-type')?.startsWith('text/event-stream') ? (await res.body?.cancel(), '') : await res.text();
        if (res.status >= 500) failures.push(`${method} ${path.slice(0, 120)} -> ${res.status} ${text.slice(0, 200)}`);
      } catch (error) {
        failures.push(`${method} ${path.slice(0, 120)} -> ${(error as Error).message} ${(error as { cause?: Error }).cause?.message ?? ''}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return failures;
}

/** A live transaction with its binding cookie, and a signed-in session's cookie. */
async function bridgeDoor(): Promise<Door> {
  const { id, cookie } = await bridgeTransaction();
  const ctx = bridge.running.app.context;
  const secret = newSecret();
  await ctx.store.createSession(hashSecret(secret), { identity: 'alice.example.com', authTime: Date.now(), delegated: false, keyFingerprint: null, expiresAt: Date.now() + 3_600_000 });
  return { segment: id, cookie: `${cookie}; ${sessionCookieName(ctx)}=${secret}` };
}

/** A live reference code with the binding cookie of the browser that started it. */
async function rpDoor(): Promise<Door> {
  const browser = new Browser();
  const { result } = await start(browser, rp.url);
  return { segment: result.request_uri.split('/r/')[1]!, cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
}

describe('malformed requests to every operation never answer 5xx', () => {
  const count = Number(process.env.HOSTILE_REQUESTS ?? 300);
  const seed = Number(process.env.HOSTILE_SEED ?? 14);
  for (const [name, file] of [
    ['rp', 'rp.openapi.yaml'],
    ['bridge', 'bridge.openapi.yaml'],
    ['relay', 'relay.openapi.yaml'],
  ] as const) {
    it(`${name}: ${count} requests (seed ${seed}), then it still answers`, { timeout: 120_000 }, async () => {
      const s = { rp, bridge, relay }[name];
      expect(await storm(s.url, file, count, seed, name === 'bridge' ? await bridgeDoor() : name === 'rp' ? await rpDoor() : undefined)).toEqual([]);
      expect((await fetch(`${s.url}${name === 'rp' ? '/.well-known/svc.json' : '/health'}`)).status).toBe(200);
    });
  }
});
