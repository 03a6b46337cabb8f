// Helpers for the rp suite tests: run the CLI in-process, read its reports, and build deliberately
// broken RPs from the reference RP (tests may import reference/; the harness never does).
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { main } from '../../harness/cli.ts';
import type { RunReport } from '../../harness/run/model.ts';
import type { Authority } from '../../harness/actors/authority/index.ts';
import { createVerifier, type Verifier } from '../../protocol/signin/verifier.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import { normalizeOrigin } from '../../protocol/common/url.ts';
import { startRp, type RunningRp } from '../../reference/rp/app.ts';
import { hashSecret } from '../../reference/rp/secrets.ts';
import { NetworkResolver } from '../../reference/resolve/network.ts';
import { MemoryOutput } from '../harness/fakes.ts';
import { closedPort } from '../../harness/suites/rp/launch.ts';

export interface CliRun {
  code: number;
  out: string;
  err: string;
  report: RunReport;
  junit: string;
  failed: string[];
}

export async function runCli(args: string[]): Promise<CliRun> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-rp-test-'));
  const json = join(dir, 'report.json');
  const xml = join(dir, 'report.xml');
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} };
  const code = await main(['node', 'svc-conformance', ...args, '--report', `json=${json}`, '--report', `junit=${xml}`], io);
  let report: RunReport;
  try {
    report = JSON.parse(await readFile(json, 'utf8')) as RunReport;
  } catch {
    throw new Error(`no report (exit ${code}):\n${io.stderr.text}\n${io.stdout.text}`);
  }
  const junit = await readFile(xml, 'utf8');
  const failed = report.results.filter((r) => r.status === 'failed' || r.status === 'error').map((r) => r.id).sort();
  return { code, out: io.stdout.text, err: io.stderr.text, report, junit, failed };
}

/** What the reference RP needs to resolve through the test authority. */
function resolverOf(authority: Authority) {
  return { dnsServer: authority.dnsServer, caFile: authority.caFile, timeoutMs: 1500 };
}

export type Breakage = 'resume-without-cookie' | 'no-nonce-no-guard' | 'no-audience-rule';

/**
 * The reference RP, broken one way:
 * - resume-without-cookie: resume requests get the starting browser's binding cookie injected,
 *   so a resume code works in any browser;
 * - no-nonce-no-guard: nonces are never spent, and an approved transaction is approved again;
 * - no-audience-rule: approvals for any origin verify (the audience is neither checked nor bound).
 */
export async function brokenRp(kind: Breakage, authority: Authority): Promise<RunningRp> {
  const nonces = kind === 'no-nonce-no-guard' ? { claim: async () => true, release: async () => undefined } : undefined;
  const rp = await startRp({ resolver: resolverOf(authority) }, nonces ? { nonces } : {});
  const ctx = rp.app.context;
  if (kind === 'resume-without-cookie') {
    const cookies = new Map<string, string>();
    const fetch = rp.app.fetch;
    const cookieName = ctx.profile.ids.binding_cookie.replace(/^__Host-/, '');
    rp.app.fetch = async (req: Request) => {
      const url = new URL(req.url);
      if (url.pathname === ctx.paths.resume && url.searchParams.get('code')) {
        const tx = ctx.transactions.byResumeHash(hashSecret(url.searchParams.get('code')!));
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
  if (kind === 'no-nonce-no-guard') {
    const store = ctx.transactions;
    const byRequestId = store.byRequestId.bind(store);
    const approve = store.approve.bind(store);
    store.byRequestId = (id: string) => {
      const tx = byRequestId(id);
      if (tx && tx.state.startsWith('approved')) tx.state = 'pending';
      return tx;
    };
    store.approve = (id, to, identity, resume) => {
      const tx = byRequestId(id);
      if (tx && tx.state !== 'pending') store.move(id, tx.state, 'pending');
      return approve(id, to, identity, resume);
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
    const close = rp.close;
    rp.close = async () => {
      await close();
      await resolver.close();
    };
  }
  return rp;
}

// ---- redis-server for the Redis store tests ----

export const REDIS_SERVER = '/usr/bin/redis-server';

export interface RedisServer {
  port: number;
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await closedPort();
  const proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (await canConnect(port)) break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`redis-server did not start on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    proc,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
