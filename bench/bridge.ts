// `/token` redemptions per second on the reference bridge, started as a user starts it
// (`svc-reference bridge`, its own process, SQLite under a data dir: durable storage), against
// node-oidc-provider's `/token` with the same client authentication (client_secret_basic), PKCE
// and key size (RSA 2048, RS256 ID tokens) in its own process, and against raw RS256 signatures
// per second on this machine, all in the same run, printed as ratios.
// Targets (issue 29; 1.0 and 0.5 before): 2.0 or better against oidc-provider; 1.0 or better against
// raw RS256 on one thread (so the bridge must sign on more than its event loop's thread).
//
// Codes are minted before the clock starts: one real sign-in (the harness signer approving)
// leaves a session and a stored consent, and every further `/authorize` from that browser then
// answers a code at once (ob.sso.reuse). The load comes from ./loadgen.ts; every answer must be
// 200, each one a real redemption of its own code.
import { defaultProfile as profile } from '../protocol/common/profile.ts';
import { startBridgeReference } from '../harness/suites/bridge/launch.ts';
import { BridgeSession } from '../harness/suites/bridge/driver.ts';
import { newPkce } from '../harness/actors/oidc/client.ts';
import { runLoad } from './loadgen.ts';
import { rawRs256PerSecond, startOidcProviderPeer, tokenRequests, type CodeSource } from './token-load.ts';
import type { BenchRow } from './verifier.ts';
import { cpuWatch, describeCpu, verdict, type CpuReport } from './cpu.ts';

const N = Number(process.env.BENCH_CODES ?? 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

/** Redemptions per second, and the CPU of `name` (the server's pid) and the load generator meanwhile. */
async function redeemAll(source: CodeSource, name: string, pid: number | undefined): Promise<{ rate: number; cpu: CpuReport }> {
  const requests = tokenRequests(source);
  const watch = cpuWatch({ [name]: pid });
  const result = await runLoad(source.url, requests, CONCURRENCY);
  const cpu = watch();
  const ok = result.statuses.get(200) ?? 0;
  if (ok !== source.codes.length) throw new Error(`${source.url}/token answered ${JSON.stringify([...result.statuses])}: ${result.firstFailure ?? ''}`);
  return { rate: ok / result.seconds, cpu };
}

/** N codes from the reference bridge through its SSO path, all for one PKCE verifier. */
async function mintBridgeCodes(session: BridgeSession): Promise<{ codes: string[]; verifier: string }> {
  const first = await session.signIn();
  const pkce = newPkce();
  const codes: string[] = [];
  const redirect = session.credentials('basic').redirect_uri;
  const mintOne = async () => {
    const res = await session.openAuthorize(first.user.browser, session.params('basic', pkce, 'bench', 'n'));
    const code = session.authorizationResponse(res.location, redirect)?.code;
    if (code === undefined) throw new Error(`/authorize gave no code from the session: ${res.status} ${res.location ?? ''}`);
    codes.push(code);
  };
  for (let i = 0; i < N; i += 16) await Promise.all(Array.from({ length: Math.min(16, N - i) }, mintOne));
  return { codes, verifier: pkce.verifier };
}

export async function benchBridgeToken(): Promise<BenchRow[]> {
  // The codes are minted through /authorize from one address before the clock starts: the
  // per-IP limit on /authorize is raised for that (the measured route, /token, has none).
  const run = await startBridgeReference({ profile, processes: 1, extraArgs: ['--authorize-limit', String(N * 2)] });
  let bridge: { rate: number; cpu: CpuReport };
  try {
    const session = new BridgeSession(run.target);
    try {
      const { codes, verifier } = await mintBridgeCodes(session);
      const c = run.target.clients.basic;
      bridge = await redeemAll(
        { url: run.bridge.url, tokenPath: '/token', codes, verifier, client: { client_id: c.client_id, client_secret: c.client_secret!, redirect_uris: [c.redirect_uri] } },
        'bridge',
        run.bridge.proc.pid,
      );
    } finally {
      await session.close();
    }
  } finally {
    await run.stop();
  }
  const peerSource = await startOidcProviderPeer(N);
  let peer: { rate: number; cpu: CpuReport };
  try {
    peer = await redeemAll(peerSource, 'oidc-provider', peerSource.proc.pid);
  } finally {
    await peerSource.stop();
  }
  const raw = rawRs256PerSecond();
  return [
    { name: 'bridge /token vs node-oidc-provider /token', opsPerSecond: bridge.rate, ratio: bridge.rate / peer.rate, target: 2.0 },
    { name: `    CPU: ${describeCpu(bridge.cpu)}`, opsPerSecond: Number.NaN, note: true },
    { name: `    ${verdict(bridge.cpu, ['bridge'])}`, opsPerSecond: Number.NaN, note: true },
    { name: 'node-oidc-provider /token (client_secret_basic, RS256)', opsPerSecond: peer.rate },
    { name: `    CPU: ${describeCpu(peer.cpu)}`, opsPerSecond: Number.NaN, note: true },
    { name: 'bridge /token vs raw RS256 signatures', opsPerSecond: bridge.rate, ratio: bridge.rate / raw, target: 1.0 },
    { name: 'raw RS256 signatures (RSA 2048, one thread)', opsPerSecond: raw },
  ];
}
