// A relay of two processes behind the round-robin front (harness/suites/relay/cluster.ts: one
// Redis for the shared state, PostgreSQL for the durable state) loses nothing
// it accepted when one process is killed with SIGKILL mid-load and never restarted: senders keep
// going through the front (which skips the dead process), and then every recipient's inbox, read
// through the front, holds each message that got a 202 exactly once, and no refused message.
// Only messages whose answer was lost with the killed process may appear besides the 202s. The
// counts are printed. (That a challenge issued by one process is spent once across both is
// test/relay/shared-state.test.ts's.)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { message, newRelayIdentity, signedRequestHeaders, type RelayIdentity } from '../../harness/actors/relay/index.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';
import { startRelayCluster, type RelayCluster } from '../../harness/suites/relay/cluster.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { throwawayDatabase, type ThrowawayDb } from '../bridge/postgres.ts';
import { startRedis, type RedisServer } from '../rp/helpers.ts';

const SENDERS = 6;
const RECIPIENTS = 3;
const WORKERS = 24;
/** Messages accepted before the kill, and again after it. */
const PER_PHASE = 300;

let authority: Authority;
let redis: RedisServer;
let db: ThrowawayDb;
let dir: string;
let cluster: RelayCluster | undefined;
const spawned: ReferenceChild[] = [];

beforeAll(async () => {
  [authority, redis, dir] = await Promise.all([startAuthority({ profile }), startRedis(), mkdtemp(join(tmpdir(), 'svc-cluster-kill-'))]);
  db = throwawayDatabase('svc_relay');
  cluster = await startRelayCluster({
    serviceName: profile.name,
    processes: 2,
    args: ['--data-dir', dir, '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--rate-sender', '1000000', '--rate-global', '1000000', '--quiet'],
    redis: redis.url,
    database: db.url,
    spawn: (args) => spawnReference('relay', args, { onSpawn: (c) => spawned.push(c) }),
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  await Promise.all(spawned.map((c) => c.stop()));
  await redis?.stop();
  await authority?.close();
  db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function identity(role: string, i: number): Promise<RelayIdentity> {
  const id = newRelayIdentity(`${role}${i}-${Date.now().toString(36)}.id.test`);
  const relay = `${cluster!.front.host}:${cluster!.front.port}`;
  await authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay });
  return id;
}

describe('a relay of two processes behind the front, one killed mid-load', () => {
  it('delivers every accepted message exactly once through the surviving process', async () => {
    const c = cluster!;
    const senders = await Promise.all(Array.from({ length: SENDERS }, (_, i) => identity('sender', i)));
    const recipients = await Promise.all(Array.from({ length: RECIPIENTS }, (_, i) => identity('recipient', i)));
    const agent = new Agent({ connections: WORKERS });
    const accepted = new Set<string>();
    const refused = new Set<string>();
    const unanswered = new Set<string>();
    const after = { accepted: 0, unanswered: 0 };
    let n = 0;
    let killed = false;
    let done = false;
    const worker = async () => {
      while (!done) {
        const i = n++;
        const from = senders[i % SENDERS]!;
        const to = recipients[i % RECIPIENTS]!;
        const m = message(profile, from, to.identity, to.encryption.publicKey, `load ${i}`, { id: `m_${i}` });
        // Every tenth is badly signed: refused, it must never be delivered.
        const bad = i % 10 === 9;
        const body = bad ? { ...m, signature: Buffer.alloc(64, 1).toString('base64') } : m;
        try {
          const res = await request(`${c.url}/messages`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher: agent });
          await res.body.text();
          if (res.statusCode === 202 && !bad) {
            accepted.add(String(m.id));
            if (killed) after.accepted++;
          } else if (bad && res.statusCode === 401) refused.add(String(m.id));
          else throw new Error(`message ${i}: ${res.statusCode}`);
        } catch (error) {
          // Only a request carried by the killed process may go unanswered.
          if (!killed) throw error;
          unanswered.add(String(m.id));
          after.unanswered++;
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, worker));
    // Counted, not timed: a loaded machine still kills mid-load and keeps sending after it.
    const until = async (ok: () => boolean) => {
      while (!ok()) await new Promise((r) => setTimeout(r, 20));
    };
    await until(() => accepted.size >= PER_PHASE);
    const victim = c.processes()[0]!;
    killed = true;
    victim.proc.kill('SIGKILL');
    await new Promise((r) => victim.proc.once('exit', r));
    const atKill = accepted.size;
    // Sending goes on through the front, which skips the dead process.
    await until(() => after.accepted >= PER_PHASE);
    done = true;
    await load;
    await agent.close();

    const delivered = new Map<string, number>();
    for (const to of recipients) {
      const path = `/messages/${to.identity}`;
      const res = await request(`${c.url}${path}`, { headers: signedRequestHeaders(profile, { identity: to.identity, seed: to.seed, method: 'GET', path }) });
      expect(res.statusCode).toBe(200);
      for (const m of ((await res.body.json()) as { messages: Array<{ id: string }> }).messages) delivered.set(m.id, (delivered.get(m.id) ?? 0) + 1);
    }
    const lost = [...accepted].filter((id) => !delivered.has(id));
    const twice = [...delivered].filter(([, k]) => k > 1).map(([id]) => id);
    const stray = [...delivered.keys()].filter((id) => !accepted.has(id) && !unanswered.has(id));
    const refusedDelivered = [...refused].filter((id) => delivered.has(id));
    const routed = [...c.front.routed()].map(([b, k]) => `${b}: ${k}`).join(', ');
    process.stdout.write(
      `cluster kill: ${accepted.size} accepted (202; ${atKill} before the SIGKILL, ${after.accepted} after it through the front), ${refused.size} refused (401; ${refusedDelivered.length} delivered), ` +
        `${unanswered.size} unanswered with the killed process (${[...unanswered].filter((id) => delivered.has(id)).length} of them committed), ` +
        `${[...delivered.values()].reduce((a, b) => a + b, 0)} delivered to ${RECIPIENTS} recipients from ${SENDERS} senders: ${lost.length} lost, ${twice.length} duplicated, ${stray.length} stray; ` +
        `connections per process: ${routed}; durable state on PostgreSQL\n`,
    );
    expect(lost).toEqual([]);
    expect(twice).toEqual([]);
    expect(stray).toEqual([]);
    expect(refusedDelivered).toEqual([]);
  }, 120_000);
});
