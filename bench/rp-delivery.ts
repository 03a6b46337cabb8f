// Approvals delivered and verified per second over HTTP on the reference RP, started as a user
// starts it (`svc-reference rp`, its own process, SQLite stores, resolving through the test
// authority over real DNS and HTTPS), against raw node:crypto Ed25519 verifications per second of
// the same signing strings in this run. Also the p50 and p99 delivery latency.
// Target (issue 3, item 6): ratio 0.5 or better on loopback.
//
// The identity document is served with `Cache-Control: max-age=300` and DNS answers carry a TTL,
// as a production identity host would, so the RP may reuse a resolution between deliveries; a
// transaction is started per approval before the clock starts (that is the login page's cost,
// not delivery's).
import { createPublicKey, verify } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startAuthority } from '../harness/actors/authority/index.ts';
import { decodeObject, encodeObject } from '../protocol/common/codec.ts';
import { canonicalString } from '../protocol/common/canonical.ts';
import { decodeBase64Any } from '../protocol/common/base64.ts';
import { publicKeyFromSeed } from '../protocol/common/ed25519.ts';
import { defaultProfile as profile } from '../protocol/common/profile.ts';
import { signApproval } from '../protocol/signin/signer.ts';
import { spawnReferenceRp, type RpChild } from '../harness/suites/rp/launch.ts';
import type { BenchRow } from './verifier.ts';

const N = 3000;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

export async function benchRpDelivery(): Promise<BenchRow[]> {
  const authority = await startAuthority({ profile, ttl: 300 });
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-rp-'));
  let rp: RpChild | undefined;
  try {
    const { identity, seed } = await authority.newIdentity();
    await authority.publish({ identity, seed, cacheControl: 'max-age=300' });
    rp = await spawnReferenceRp(['--port', '0', '--data-dir', dataDir, '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--quiet']);
    const origin = rp.origin;
    const pool = new Pool(origin, { connections: CONCURRENCY, pipelining: 1 });
    try {
      // Transactions and approvals first: neither is delivery's cost.
      const approvals: { body: string; path: string }[] = [];
      const signed: Record<string, unknown>[] = [];
      for (let i = 0; i < N; i++) {
        const res = await pool.request({ method: 'POST', path: '/login', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: '{}' });
        const start = (await res.body.json()) as { request: string };
        const decoded = decodeObject(start.request);
        if (res.statusCode !== 201 || !decoded.ok) throw new Error(`the start contract answered ${res.statusCode} ${JSON.stringify(start)}`);
        const request = decoded.value;
        const approval = signApproval(profile, request, { identity, seed });
        signed.push(approval);
        approvals.push({ body: encodeObject(approval), path: new URL(request.response_uri as string).pathname });
      }
      // One warm-up delivery resolves the identity (and fills the RP's resolution cache).
      const first = approvals.shift()!;
      const warm = await pool.request({ method: 'POST', path: first.path, headers: { 'content-type': 'text/plain' }, body: first.body });
      if (warm.statusCode !== 200) throw new Error(`warm-up delivery refused: ${warm.statusCode} ${await warm.body.text()}`);
      await warm.body.dump();

      const latencies: number[] = [];
      let next = 0;
      const cpu0 = process.cpuUsage();
      const rpCpu0 = await cpuSeconds(rp.proc.pid);
      const t0 = process.hrtime.bigint();
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < approvals.length) {
          const a = approvals[next++]!;
          const t = process.hrtime.bigint();
          const res = await pool.request({ method: 'POST', path: a.path, headers: { 'content-type': 'text/plain' }, body: a.body });
          const text = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`delivery refused: ${res.statusCode} ${text}`);
          latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
      }));
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const deliveries = approvals.length / seconds;
      const cpu = process.cpuUsage(cpu0);
      const loadCpu = (cpu.user + cpu.system) / 1e6;
      const rpCpu = (await cpuSeconds(rp.proc.pid)) - rpCpu0;

      const raw = rawVerifiesPerSecond(signed, publicKeyFromSeed(seed));
      latencies.sort((a, b) => a - b);
      const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
      return [
        { name: 'raw node:crypto Ed25519 verify (same run)', opsPerSecond: raw },
        { name: `RP deliveries over HTTP (${CONCURRENCY} concurrent, sqlite)`, opsPerSecond: deliveries, ratio: deliveries / raw, target: 0.5 },
        { name: 'RP delivery latency p50 (ms)', opsPerSecond: Number.NaN, value: pct(50) },
        { name: 'RP delivery latency p99 (ms)', opsPerSecond: Number.NaN, value: pct(99) },
        // Where the CPU went: two cores are shared by the load generator (this process) and the RP.
        { name: 'RP CPU per delivery (us)', opsPerSecond: Number.NaN, value: (rpCpu / approvals.length) * 1e6 },
        { name: 'load generator CPU per delivery (us)', opsPerSecond: Number.NaN, value: (loadCpu / approvals.length) * 1e6 },
      ];
    } finally {
      await pool.close();
    }
  } finally {
    await rp?.stop();
    await authority.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The raw peer: the same signing strings and signatures, one prepared KeyObject, best of 5. */
function rawVerifiesPerSecond(approvals: readonly Record<string, unknown>[], publicKey: Uint8Array): number {
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]), format: 'der', type: 'spki' });
  const pairs = approvals.map((a) => [Buffer.from(canonicalString(profile, 'signin', a)), Buffer.from(decodeBase64Any(a.signature as string)!)] as const);
  let best = 0;
  for (let round = 0; round < 5; round++) {
    const t = process.hrtime.bigint();
    for (const [msg, sig] of pairs) if (!verify(null, msg, key, sig)) throw new Error('raw verify failed');
    best = Math.max(best, pairs.length / (Number(process.hrtime.bigint() - t) / 1e9));
  }
  return best;
}

/** User plus system CPU seconds of a process so far (Linux /proc; NaN elsewhere). */
async function cpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

