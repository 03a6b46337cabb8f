// Helpers for the rp suite tests: run the CLI in-process, read its reports, and build deliberately
// broken RPs from the reference RP (tests may import reference/; the harness never does).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../harness/cli.ts';
import type { RunReport } from '../../harness/run/model.ts';
import type { Authority } from '../../harness/actors/authority/index.ts';
import { createVerifier, type Verifier } from '../../protocol/signin/verifier.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import { normalizeOrigin } from '../../protocol/common/url.ts';
import { startRp, type RunningRp, type StartRpOptions } from '../../reference/rp/app.ts';
import { hashSecret } from '../../reference/rp/secrets.ts';
import { NetworkResolver } from '../../reference/resolve/network.ts';
import { MemoryOutput } from '../harness/fakes.ts';
import { closedPort } from '../../harness/suites/rp/launch.ts';
import { RP_WIRE } from '../../reference/variants/rp.ts';
import { brokenVerifier, VERIFIER_VARIANTS } from '../../reference/variants/verifier.ts';

export interface CliRun {
  code: number;
  out: string;
  err: string;
  report: RunReport;
  junit: string;
  /** Failed or errored checks that gate the run (profile checks only with --profile). */
  failed: string[];
  /** Profile checks that failed without gating (differences from the project's decisions). */
  differ: string[];
}

export async function runCli(args: string[]): Promise<CliRun> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-rp-test-'));
  const json = join(dir, 'report.json');
  const xml = join(dir, 'report.xml');
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} };
  const code = await main(['node', 'svc-conformance', ...args, '--report', `json=${json}`, '--report', `junit=${xml}`], io);
  let report: RunReport;
  let junit: string;
  try {
    report = JSON.parse(await readFile(json, 'utf8')) as RunReport;
    junit = await readFile(xml, 'utf8');
  } catch {
    throw new Error(`no report (exit ${code}):\n${io.stderr.text}\n${io.stdout.text}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const bad = report.results.filter((r) => r.status === 'failed' || r.status === 'error');
  const failed = bad
    .filter((r) => r.gating !== false)
    .map((r) => r.id)
    .sort();
  const differ = bad
    .filter((r) => r.gating === false)
    .map((r) => r.id)
    .sort();
  return { code, out: io.stdout.text, err: io.stderr.text, report, junit, failed, differ };
}

/** The resume-code lifetime the test RPs use and declare (--rp-resume-lifetime), so the expiry check waits seconds, not a minute. */
export const TEST_RESUME_TTL_S = 2;
/** The request window of a test RP's short-window instance (--rp-short-window). */
export const TEST_REQUEST_WINDOW_S = 2;

/** `run` against a test RP: the rp suite with a fixed seed, few property runs and the test resume lifetime. */
export function suiteArgs(origin: string, authority: Authority, extra: string[] = []): string[] {
  return ['run', '--suite', 'rp', '--rp', origin, '--authority', authority.adminUrl, '--runs', '15', '--seed', '7', '--rp-resume-lifetime', String(TEST_RESUME_TTL_S), ...extra];
}

/** `rp`, which now also closes `also` (a companion RP, a resolver) after itself. */
function closingToo(rp: RunningRp, also: { close(): Promise<void> }): RunningRp {
  const close = rp.close;
  rp.close = async () => {
    await close();
    await also.close();
  };
  return rp;
}

/** What the reference RP needs to resolve through the test authority. */
function resolverOf(authority: Authority) {
  // 3 s: long enough that a loaded CI machine (two test files at once) resolves in time.
  return { dnsServer: authority.dnsServer, caFile: authority.caFile, timeoutMs: 3000 };
}

/** The name a test RP serves https on (`tls`): the authority resolves it to 127.0.0.1 and certifies it. */
export const RP_TLS_NAME = 'rp.svc-tls.test';

/** Where a test RP serves https on RP_TLS_NAME: its port chosen first (the origin names it), the authority's certificate. */
async function onTlsName(authority: Authority): Promise<StartRpOptions> {
  const tls = await authority.serverName(RP_TLS_NAME, '127.0.0.1');
  const port = await closedPort();
  return { host: '127.0.0.1', port, origin: `https://${RP_TLS_NAME}:${port}`, tls };
}

/** The correct reference RP over https on RP_TLS_NAME. */
export async function tlsRp(authority: Authority): Promise<RunningRp> {
  return startRp({ resolver: resolverOf(authority), resumeTtlSeconds: TEST_RESUME_TTL_S, ...(await onTlsName(authority)) });
}

export type Breakage =
  | 'resume-without-cookie'
  | 'no-nonce-no-guard'
  | 'no-audience-rule'
  | 'refusal-ends-transaction'
  | 'nonce-before-signature'
  | 'approve-twice'
  | 'approve-race'
  | 'nonce-fail-open'
  | 'http-origin'
  /** A wire variant of reference/variants/rp.ts. */
  | `wire:${string}`
  /** A verifier variant of reference/variants/verifier.ts. */
  | `verifier:${string}`;

/**
 * The reference RP, broken one way:
 * - resume-without-cookie: resume requests get the starting browser's binding cookie injected,
 *   so a resume code works in any browser;
 * - no-nonce-no-guard: nonces are never spent, and an approved transaction is approved again;
 * - no-audience-rule: approvals for any origin verify (the audience is neither checked nor bound);
 * - refusal-ends-transaction: any refused delivery ends its transaction (seen in an outside RP);
 * - approve-twice: an approved transaction is approved again (nonces are still spent);
 * - approve-race: the approval's compare-and-set is not read, so of approvals racing on one
 *   transaction (by different identities, so different nonces) each gets a receipt;
 * - nonce-fail-open: a second instance (given as --rp-broken-store) whose nonce store is down
 *   accepts approvals as if every nonce were fresh;
 * - nonce-before-signature: the nonce is spent before resolution and signature, and never given
 *   back, so a delivery with a bad signature burns the genuine approval (seen in an outside RP);
 * - http-origin: the RP past its CLI's --origin guard, published over plain http on a production
 *   name, RP_TLS_NAME (ns.request.audience-http-dev, ns.auth.5): its requests carry an http audience.
 * With `tls` the RP serves https on RP_TLS_NAME (the sensitivity runner's `tls` variants).
 */
export async function brokenRp(kind: Breakage, authority: Authority, options: { tls?: boolean } = {}): Promise<RunningRp & { args?: string[] }> {
  const memory = new MemoryNonceStore();
  const nonces =
    kind === 'no-nonce-no-guard'
      ? { claim: async () => true, release: async () => undefined }
      : kind === 'nonce-before-signature'
        ? { claim: (key: string, until: number) => memory.claim(key, until), release: async () => undefined }
        : undefined;
  const named = options.tls || kind === 'http-origin' ? await onTlsName(authority) : {};
  const place = kind === 'http-origin' ? { host: named.host, port: named.port, origin: named.origin!.replace(/^https:/, 'http:') } : named;
  const rp = await startRp({ resolver: resolverOf(authority), resumeTtlSeconds: TEST_RESUME_TTL_S, ...place }, nonces ? { nonces } : {});
  const ctx = rp.app.context;
  if (kind.startsWith('wire:')) {
    const variant = RP_WIRE[kind.slice('wire:'.length)];
    if (!variant) throw new Error(`no wire variant ${kind}`);
    const fetch = rp.app.fetch;
    rp.app.fetch = (req) => variant.wire(req, fetch);
    // The same variant on an instance whose requests live seconds: the expiry checks reach it
    // with --rp-short-window instead of skipping.
    const short = await startRp({ resolver: resolverOf(authority), resumeTtlSeconds: TEST_RESUME_TTL_S, requestWindowSeconds: TEST_REQUEST_WINDOW_S });
    const shortFetch = short.app.fetch;
    short.app.fetch = (req) => variant.wire(req, shortFetch);
    return Object.assign(closingToo(rp, short), { args: ['--rp-short-window', short.origin] });
  }
  if (kind.startsWith('verifier:')) {
    const variant = VERIFIER_VARIANTS[kind.slice('verifier:'.length)];
    if (!variant) throw new Error(`no verifier variant ${kind}`);
    const resolver = new NetworkResolver({ profile: ctx.profile, ...resolverOf(authority) });
    ctx.verify = brokenVerifier(ctx.verify, variant.break, resolver, ctx.profile);
    closingToo(rp, resolver);
  }
  if (kind === 'resume-without-cookie') {
    const cookies = new Map<string, string>();
    const fetch = rp.app.fetch;
    const cookieName = ctx.profile.ids.binding_cookie.replace(/^__Host-/, '');
    rp.app.fetch = async (req: Request) => {
      const url = new URL(req.url);
      if (url.pathname === ctx.paths.resume && url.searchParams.get('code')) {
        const tx = await ctx.transactions.byResumeHash(hashSecret(url.searchParams.get('code')!));
        const cookie = tx ? cookies.get(tx.requestId) : undefined;
        if (cookie) {
          const headers = new Headers(req.headers);
          headers.set('cookie', `${cookieName}=${cookie}`);
          return fetch(new Request(req.url, { method: req.method, headers }));
        }
      }
      const res = await fetch(req);
      if (url.pathname === ctx.paths.login && req.method === 'POST' && res.status === 201) {
        const body = (await res.clone().json()) as { request: string };
        const request = JSON.parse(Buffer.from(body.request, 'base64url').toString('utf8')) as { request_id: string };
        const set = res.headers.get('set-cookie') ?? '';
        const value = new RegExp(`${cookieName}=([^;]+)`).exec(set)?.[1];
        if (value) cookies.set(request.request_id, value);
      }
      return res;
    };
  }
  if (kind === 'no-nonce-no-guard' || kind === 'approve-twice') {
    const store = ctx.transactions;
    const byRequestId = store.byRequestId.bind(store);
    const forDelivery = store.forDelivery.bind(store);
    const approve = store.approve.bind(store);
    store.forDelivery = async (id: string) => {
      const tx = await forDelivery(id);
      if (tx?.state.startsWith('approved')) tx.state = 'pending';
      return tx;
    };
    // Approvals of one turn share a group commit, so a reset made before queueing can lose to
    // another approval of the same batch: a lost compare-and-set resets and approves again.
    store.approve = async (id, to, identity, resume) => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const tx = await byRequestId(id);
        if (tx && tx.state !== 'pending') await store.move(id, tx.state, 'pending');
        if (await approve(id, to, identity, resume)) return true;
      }
      return false;
    };
  }
  if (kind === 'approve-race') {
    const store = ctx.transactions;
    const approve = store.approve.bind(store);
    store.approve = async (id, to, identity, resume) => (await approve(id, to, identity, resume), true);
  }
  if (kind === 'refusal-ends-transaction') {
    const original = ctx.verify;
    const end = async (response: unknown) => {
      const id = (response as { request_id?: unknown } | null)?.request_id;
      if (typeof id === 'string') await ctx.transactions.move(id, 'pending', 'ended');
    };
    ctx.verify = async (response, beforeNonce) => {
      try {
        const verdict = await original(response, beforeNonce);
        if (!verdict.ok) await end(response);
        return verdict;
      } catch (error) {
        await end(response);
        throw error;
      }
    };
  }
  if (kind === 'no-audience-rule') {
    const origin = ctx.config.origin;
    const resolver = new NetworkResolver({ profile: ctx.profile, ...resolverOf(authority) });
    const nonces = new MemoryNonceStore();
    const verifiers = new Map<string, Verifier>();
    const original = ctx.verify;
    ctx.verify = (response, beforeNonce) => {
      const audience = normalizeOrigin((response as { audience?: unknown } | null)?.audience);
      if (audience === undefined || audience === origin) return original(response, beforeNonce);
      let v = verifiers.get(audience);
      if (!v) verifiers.set(audience, (v = createVerifier({ profile: ctx.profile, origin: audience, resolver, nonces })));
      return v(response, beforeNonce && ((r) => beforeNonce({ ...r, audience: origin })));
    };
    closingToo(rp, resolver);
  }
  if (kind === 'nonce-fail-open') {
    // Beside the healthy RP, an instance whose nonce store is down and that goes on as if every
    // nonce were fresh (ns.nonce.fail-closed): the suite reaches it with --rp-broken-store.
    const down = await startRp({ resolver: resolverOf(authority), resumeTtlSeconds: TEST_RESUME_TTL_S }, { nonces: { claim: async () => true, release: async () => undefined } });
    return Object.assign(closingToo(rp, down), { args: ['--rp-broken-store', down.origin] });
  }
  return rp;
}

// ---- redis-server for the Redis store tests (test/setup/redis.ts) ----

export { startRedis, type RedisServer } from '../setup/redis.ts';

// ---- an RP that follows document 1 only ----

/** Where the document-only RP serves everything (none of the project's paths). */
export const DOC_ONLY_PATHS = { login: '/auth/begin', response: '/auth/deliver', poll: '/auth/status', resume: '/auth/continue', context: '/auth/whoami', reference: '/q/' };

/** The fields a response copies from its request. */
const COPIED = ['request_id', 'audience', 'nonce', 'issued_at', 'expires_at', 'action', 'statement', 'scopes'] as const;

/**
 * The reference RP reshaped to follow only document 1 and none of the project's decisions: its
 * own paths (published in its metadata, the project's paths answer 404), every rejection a 400
 * (`{"error":"nope"}` from the delivery endpoint, plain text elsewhere; no `detail`, no 413), no
 * request binding, and a context record with three of the five fields.
 */
export async function documentOnlyRp(authority: Authority): Promise<RunningRp & { short: RunningRp }> {
  const options = { resolver: resolverOf(authority), resumeTtlSeconds: TEST_RESUME_TTL_S };
  // Its twin whose requests live seconds (--rp-short-window), reshaped the same way.
  const [rp, short] = await Promise.all([startRp(options), startRp({ ...options, requestWindowSeconds: TEST_REQUEST_WINDOW_S })]);
  reshapeDocumentOnly(rp);
  reshapeDocumentOnly(short);
  return Object.assign(closingToo(rp, short), { short });
}

function reshapeDocumentOnly(rp: RunningRp): void {
  const ctx = rp.app.context;
  const own = { ...ctx.paths };
  const V = DOC_ONLY_PATHS;
  ctx.paths = { ...ctx.paths, ...V };
  // No request binding: the transaction check sees the fields of the request it issued.
  const verify = ctx.verify;
  ctx.verify = (response, beforeNonce) =>
    verify(
      response,
      beforeNonce &&
        (async (r) => {
          const tx = await ctx.transactions.byRequestId(r.request_id as string);
          if (!tx) return beforeNonce(r);
          const bound: Record<string, unknown> = { ...r };
          for (const f of COPIED) {
            if (f in tx.request) bound[f] = tx.request[f];
            else delete bound[f];
          }
          return beforeNonce(bound);
        }),
    );
  const origin = ctx.config.origin;
  const metadata = {
    [ctx.profile.ids.auth_field]: '1',
    origin,
    name: 'document-only RP',
    response_uris: [`${origin}${V.response}`],
    poll_uri: `${origin}${V.poll}`,
    context_uri: `${origin}${V.context}`,
  };
  const inbound = (path: string): string | undefined => {
    if (path.startsWith(V.reference)) return own.reference + path.slice(V.reference.length);
    for (const k of ['login', 'response', 'poll', 'resume', 'context'] as const) if (path === V[k]) return own[k];
    for (const k of ['login', 'response', 'poll', 'resume', 'context'] as const) if (path === own[k]) return undefined;
    return path.startsWith(own.reference) ? undefined : path;
  };
  const fetch = rp.app.fetch;
  rp.app.fetch = async (req: Request) => {
    const url = new URL(req.url);
    if (url.pathname === ctx.profile.ids.metadata_path && req.method === 'GET') return Response.json(metadata);
    const path = inbound(url.pathname);
    if (path === undefined) return new Response('not here', { status: 404, headers: { 'content-type': 'text/plain' } });
    url.pathname = path;
    const init: RequestInit & { duplex?: string } = { method: req.method, headers: req.headers };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      init.body = req.body;
      init.duplex = 'half';
    }
    const res = await fetch(new Request(url, init));
    if (path === own.context && res.status === 200) {
      const record = (await res.json()) as Record<string, unknown>;
      return Response.json({ request_id: record.request_id, started_at: record.started_at, browser: record.browser });
    }
    // The document names statuses only for the reference link (404 or 410).
    if (res.status >= 400 && res.status < 500 && !path.startsWith(own.reference)) {
      if (path === own.response) return Response.json({ error: 'nope' }, { status: 400 });
      return new Response('no', { status: 400, headers: { 'content-type': 'text/plain' } });
    }
    return res;
  };
}
