// Messages accepted per second by the reference relay (started as a user starts it, durable
// spool: SQLite WAL, synchronous=FULL, group-committed; a 202 is on disk) against its floor in the
// same run: bare h3 on node's HTTP server checking one Ed25519 signature per request
// (./peers/h3-verify.ts). Target (issue 29): ratio 1.5 or better (0.5 before). Also the pickup latency p50 and
// p99: from POST /messages to the recipient's SSE `message` event.
//
// Load: ./loadgen.ts, keep-alive sockets, requests serialized before the clock starts. Messages
// come from 64 senders (so no per-sender bucket is the bottleneck; the relay's buckets are raised
// by flags) to one local recipient, each sealed and signed by the harness's client.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { startAuthority } from '../harness/actors/authority/index.ts';
import { message, newRelayIdentity, openEvents, signedRequestHeaders, type RelayIdentity } from '../harness/actors/relay/index.ts';
import type { ReferenceChild } from '../harness/run/spawn.ts';
import { encodeBase64url } from '../protocol/common/base64.ts';
import { defaultProfile as profile } from '../protocol/common/profile.ts';
import { runLoad, serialize } from './loadgen.ts';
import type { BenchRow } from './verifier.ts';
import { spawnBenchRelay } from './engines.ts';
import { cpuWatch, describeCpu, verdict } from './cpu.ts';

const N = Number(process.env.BENCH_MESSAGES ?? 6000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SENDERS = 64;
const LATENCY_SAMPLES = 200;
const PEER = fileURLToPath(new URL('./peers/h3-verify.ts', import.meta.url));

export async function benchRelay(): Promise<BenchRow[]> {
  const authority = await startAuthority({ profile, ttl: 300 });
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-relay-'));
  let relay: ReferenceChild | undefined;
  try {
    relay = await spawnBenchRelay(authority, ['--data-dir', dir, '--rate-sender', '10000000', '--rate-global', '10000000']);
    const address = new URL(relay.url).host;
    const publish = (id: RelayIdentity) =>
      authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay: address, cacheControl: 'max-age=300' });
    const recipient = newRelayIdentity(`inbox-${Date.now().toString(36)}.id.test`);
    const senders = Array.from({ length: SENDERS }, (_, i) => newRelayIdentity(`s${i}-${Date.now().toString(36)}.id.test`));
    await Promise.all([recipient, ...senders].map(publish));
    const bodies = Array.from({ length: N }, (_, i) => JSON.stringify(message(profile, senders[i % SENDERS]!, recipient.identity, recipient.encryption.publicKey, `bench ${i}`, { id: `b_${i}` })));
    // Warm-up: every sender resolved once (the relay caches the documents it fetched).
    const warm = await runLoad(
      relay.url,
      senders.map((s, i) =>
        serialize(address, {
          method: 'POST',
          path: '/messages',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(message(profile, s, recipient.identity, recipient.encryption.publicKey, 'warm', { id: `w_${i}` })),
        }),
      ),
      8,
    );
    if ((warm.statuses.get(202) ?? 0) !== SENDERS) throw new Error(`warm-up refused: ${warm.firstFailure}`);
    const requests = bodies.map((body) => serialize(address, { method: 'POST', path: '/messages', headers: { 'content-type': 'application/json' }, body }));
    const watch = cpuWatch({ relay: relay.proc.pid });
    const load = await runLoad(relay.url, requests, CONCURRENCY);
    const cpu = watch();
    const ok = load.statuses.get(202) ?? 0;
    if (ok !== N) throw new Error(`${N - ok} of ${N} messages refused (${JSON.stringify([...load.statuses])}): ${load.firstFailure}`);
    const relayRate = ok / load.seconds;
    const latency = await pickupLatency(relay.url, address, senders[0]!, recipient);
    const peerRate = await peerRateFor(bodies);
    return [
      { name: 'bare h3 + one Ed25519 verify per request (same run)', opsPerSecond: peerRate },
      { name: `relay POST /messages accepted, durable spool (${CONCURRENCY} concurrent)`, opsPerSecond: relayRate, ratio: relayRate / peerRate, target: 1.5 },
      { name: `    CPU: ${describeCpu(cpu)}`, opsPerSecond: Number.NaN, note: true },
      { name: `    ${verdict(cpu, ['relay'])}`, opsPerSecond: Number.NaN, note: true },
      { name: '  pickup latency p50 (ms): POST /messages to SSE message', opsPerSecond: Number.NaN, value: latency.p50 },
      { name: '  pickup latency p99 (ms)', opsPerSecond: Number.NaN, value: latency.p99 },
    ];
  } finally {
    await relay?.stop();
    await authority.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One message at a time, each timed from its POST to the `message` event on the recipient's stream. */
async function pickupLatency(url: string, _address: string, from: RelayIdentity, to: RelayIdentity): Promise<{ p50: number; p99: number }> {
  const path = `/events/${to.identity}`;
  const stream = await openEvents(`${url}${path}`, signedRequestHeaders(profile, { identity: to.identity, seed: to.seed, method: 'GET', path }));
  if (stream.status !== 200) throw new Error(`GET /events answered ${stream.status}`);
  const samples: number[] = [];
  try {
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const m = message(profile, from, to.identity, to.encryption.publicKey, `latency ${i}`, { id: `l_${i}` });
      const seen = stream.events.length;
      const t0 = performance.now();
      const arrived = stream.next((e) => (e.data as { message_id?: string }).message_id === m.id, 5000, seen);
      const res = await request(`${url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
      await res.body.text();
      if (res.statusCode !== 202) throw new Error(`latency message refused: ${res.statusCode}`);
      await arrived;
      samples.push(performance.now() - t0);
    }
  } finally {
    await stream.close();
  }
  samples.sort((a, b) => a - b);
  const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))]!;
  return { p50: pct(50), p99: pct(99) };
}

/** The peer's rate on bodies of the same size, each signed for it over its own bytes. */
async function peerRateFor(bodies: readonly string[]): Promise<number> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const peer = await startPeer(encodeBase64url(raw));
  try {
    const { host } = new URL(peer.url);
    const requests = bodies.map((b) => {
      const { signature: _s, ...rest } = JSON.parse(b) as Record<string, unknown>;
      void _s;
      const body = JSON.stringify({ ...rest, signature: nodeSign(null, Buffer.from(JSON.stringify(rest)), privateKey).toString('base64url') });
      return serialize(host, { method: 'POST', path: '/messages', headers: { 'content-type': 'application/json' }, body });
    });
    await runLoad(peer.url, requests.slice(0, 200), 8);
    const load = await runLoad(peer.url, requests, CONCURRENCY);
    const ok = load.statuses.get(202) ?? 0;
    if (ok !== requests.length) throw new Error(`the peer refused ${requests.length - ok}: ${load.firstFailure}`);
    return ok / load.seconds;
  } finally {
    peer.proc.kill('SIGKILL');
  }
}

export function startPeer(publicKey: string): Promise<{ url: string; proc: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', PEER], { env: { ...process.env, BENCH_PUBLIC_KEY: publicKey }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /bench-peer-ready (\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, proc });
    });
    proc.once('exit', (code) => reject(new Error(`the h3 peer exited (${code})`)));
  });
}
