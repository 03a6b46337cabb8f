// `npm run bench -- relay --cluster` (issue 17, scale-out): messages accepted per second by
// (a) one relay process on SQLite, the default, and (b) two relay processes acting as one relay
// (one --relay-address, --shared-state in Redis, and the durable state in one PostgreSQL through
// --database, each process its own --data-dir for the rest), the load split
// between them by the client (its sockets alternate the two URLs). Same load as ./relay.ts: 64
// senders, signed envelopes serialized before the clock, 202s counted. The rows alternate
// (a, b, a, b, ...; BENCH_CLUSTER_ROUNDS pairs) so the machine's noise hits both; medians shown.
// Each row says what bounds it: CPU time of every process during the load (./cpu.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthority, type Authority } from '../harness/actors/authority/index.ts';
import { message, newRelayIdentity, type RelayIdentity } from '../harness/actors/relay/index.ts';
import type { ReferenceChild } from '../harness/run/spawn.ts';
import { encodeBase64url } from '../protocol/common/base64.ts';
import { defaultProfile as profile } from '../protocol/common/profile.ts';
import { cpuWatch, describeCpu, verdict, type CpuReport } from './cpu.ts';
import { isMissing, spawnBenchRelay, startPostgres, startRedis, type Engine } from './engines.ts';
import { runLoad, serialize } from './loadgen.ts';
import type { BenchRow } from './verifier.ts';

const N = Number(process.env.BENCH_MESSAGES ?? 6000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS ?? 3);
const SENDERS = 64;
/** Processes that do their work on one thread: node's event loop, redis-server. */
const SINGLE = ['relay', 'redis'];

/** Processes serving one --relay-address, with the identities that send to it and its recipient. */
interface Setup {
  label: string;
  address: string;
  urls: string[];
  pids: Record<string, number | undefined>;
  recipient: RelayIdentity;
  senders: RelayIdentity[];
}

let round = 0;

/** One timed load of N fresh envelopes, spread over the setup's URLs: accepted per second and the CPU it took. */
async function measure(s: Setup): Promise<{ rate: number; cpu: CpuReport }> {
  const tag = `r${round++}`;
  const requests = Array.from({ length: N }, (_, i) => {
    const body = JSON.stringify(message(profile, s.senders[i % SENDERS]!, s.recipient.identity, s.recipient.encryption.publicKey, `bench ${i}`, { id: `${tag}_${i}` }));
    return serialize(s.address, { method: 'POST', path: '/messages', headers: { 'content-type': 'application/json' }, body });
  });
  const stop = cpuWatch(s.pids);
  const load = await runLoad(s.urls, requests, CONCURRENCY);
  const cpu = stop();
  const ok = load.statuses.get(202) ?? 0;
  if (ok !== N) throw new Error(`${s.label}: ${N - ok} of ${N} messages refused (${JSON.stringify([...load.statuses])}): ${load.firstFailure}`);
  return { rate: ok / load.seconds, cpu };
}

/** Publishes a recipient and the senders at `address`, and has each process resolve every sender once (untimed). */
async function prepare(authority: Authority, label: string, address: string, relays: ReferenceChild[], pids: Record<string, number | undefined>): Promise<Setup> {
  const stamp = Date.now().toString(36);
  const publish = (id: RelayIdentity) =>
    authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay: address, cacheControl: 'max-age=300' });
  const recipient = newRelayIdentity(`inbox-${label.length}-${stamp}.id.test`);
  const senders = Array.from({ length: SENDERS }, (_, i) => newRelayIdentity(`s${i}-${relays.length}-${stamp}.id.test`));
  await Promise.all([recipient, ...senders].map(publish));
  for (const [r, relay] of relays.entries()) {
    const warm = senders.map((s, i) =>
      serialize(address, {
        method: 'POST',
        path: '/messages',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message(profile, s, recipient.identity, recipient.encryption.publicKey, 'warm', { id: `w${r}_${i}` })),
      }),
    );
    const load = await runLoad(relay.url, warm, 8);
    if ((load.statuses.get(202) ?? 0) !== SENDERS) throw new Error(`${label}: warm-up refused: ${load.firstFailure}`);
  }
  return { label, address, urls: relays.map((r) => r.url), pids, recipient, senders };
}

/** Relay CPU (all its processes) per accepted message, µs: steadier than the rate on a shared machine. */
const perMessage = (r: { rate: number; cpu: CpuReport }) =>
  (Object.entries(r.cpu.cores)
    .filter(([name]) => name.startsWith('relay'))
    .reduce((sum, [, c]) => sum + c, 0) /
    r.rate) *
  1e6;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The run closest to the median rate, for its CPU figures. */
const medianRun = (runs: Array<{ rate: number; cpu: CpuReport }>) => {
  const m = median(runs.map((r) => r.rate));
  return runs.find((r) => r.rate === m)!;
};

export async function benchRelayCluster(): Promise<BenchRow[]> {
  const authority = await startAuthority({ profile, ttl: 300 });
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-cluster-'));
  const children: ReferenceChild[] = [];
  const engines: Engine[] = [];
  const rows: BenchRow[] = [];
  try {
    const spawnRelay = (args: string[]) => spawnBenchRelay(authority, ['--rate-sender', '10000000', '--rate-global', '10000000', ...args], { onSpawn: (c) => children.push(c) });
    const one = await spawnRelay(['--data-dir', join(dir, 'single'), '--relay-address', 'single.relay.test:8443']);
    const single = await prepare(authority, 'one process', 'single.relay.test:8443', [one], { relay: one.proc.pid });
    const cluster = await startCluster(dir, spawnRelay, engines);
    const pair = isMissing(cluster) ? undefined : await prepare(authority, cluster.label, 'cluster.relay.test:8443', cluster.relays, cluster.pids);

    const runsA: Array<{ rate: number; cpu: CpuReport }> = [];
    const runsB: Array<{ rate: number; cpu: CpuReport }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      runsA.push(await measure(single));
      if (pair) runsB.push(await measure(pair));
    }
    const a = medianRun(runsA);
    const each = (runs: Array<{ rate: number }>) => runs.map((r) => Math.round(r.rate)).join(', ');
    rows.push(
      { name: `(a) relay, 1 process, SQLite (default), accepted/s, median of ${ROUNDS} [${each(runsA)}]`, opsPerSecond: a.rate },
      { name: `    CPU: ${describeCpu(a.cpu)}; relay CPU per message ${Math.round(median(runsA.map(perMessage)))} µs (median)`, opsPerSecond: Number.NaN, note: true },
      { name: `    ${verdict(a.cpu, SINGLE)}`, opsPerSecond: Number.NaN, note: true },
    );
    if (!pair || isMissing(cluster)) {
      rows.push({ name: `(b) 2 processes, shared state: SKIPPED, ${isMissing(cluster) ? cluster.missing : ''}`, opsPerSecond: Number.NaN, note: true });
      return rows;
    }
    const b = medianRun(runsB);
    rows.push(
      { name: `(b) relay, ${cluster.label}, accepted/s, median of ${ROUNDS} [${each(runsB)}]; ratio b/a`, opsPerSecond: b.rate, ratio: b.rate / a.rate },
      { name: `    CPU: ${describeCpu(b.cpu)}; relay CPU per message ${Math.round(median(runsB.map(perMessage)))} µs (median)`, opsPerSecond: Number.NaN, note: true },
      { name: `    ${verdict(b.cpu, SINGLE)}`, opsPerSecond: Number.NaN, note: true },
      { name: `    engines: ${engines.map((e) => e.version).join('; ')}; node ${process.version}`, opsPerSecond: Number.NaN, note: true },
    );
    return rows;
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    for (const e of engines) await e.stop();
    await authority.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Two relay processes on one relay address: Redis for the shared state, PostgreSQL for the durable state. */
async function startCluster(
  dir: string,
  spawnRelay: (args: string[]) => Promise<ReferenceChild>,
  engines: Engine[],
): Promise<{ label: string; relays: ReferenceChild[]; pids: Record<string, number | undefined> } | { missing: string }> {
  const redis = await startRedis();
  if (isMissing(redis)) return redis;
  engines.push(redis);
  const pids: Record<string, number | undefined> = { redis: redis.pid };
  const shared = ['--relay-address', 'cluster.relay.test:8443', '--shared-state', redis.url];
  const pg = await startPostgres();
  if (isMissing(pg)) return pg;
  engines.push(pg);
  pids.postgres = pg.pid;
  const label = '2 processes, PostgreSQL + Redis';
  const data = (i: number) => ['--data-dir', join(dir, `cluster-${i}`), '--database', pg.url];
  // One after the other: the first creates the database's tables.
  const relays: ReferenceChild[] = [];
  for (const i of [0, 1]) {
    const r = await spawnRelay([...data(i), ...shared]);
    relays.push(r);
    pids[`relay ${i + 1}`] = r.proc.pid;
  }
  return { label, relays, pids };
}
