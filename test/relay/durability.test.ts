// Durability of the reference relay's spool: a relay under load is killed with SIGKILL; after a
// restart on the same data directory every message that got a 202 is delivered exactly once, no
// refused message ever appears, and only messages whose answer was lost with the crash (sent, no
// answer) may appear besides the 202s. The counts are printed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { message, newRelayIdentity, signedRequestHeaders, type RelayIdentity } from '../../harness/actors/relay/index.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';

let authority: Authority;
let dir: string;
const children: ReferenceChild[] = [];
beforeAll(async () => {
  authority = await startAuthority({ profile });
  dir = await mkdtemp(join(tmpdir(), 'svc-relay-durability-'));
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await authority?.close();
  await rm(dir, { recursive: true, force: true });
});

const relayArgs = (port: string) => [
  '--port',
  port,
  '--data-dir',
  dir,
  '--dns-server',
  authority.dnsServer,
  '--ca',
  authority.caFile,
  '--rate-sender',
  '1000000',
  '--rate-global',
  '1000000',
  '--quiet',
];

async function publish(id: RelayIdentity, relay: string): Promise<void> {
  await authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay });
}

describe('the reference relay keeps every 202 through kill -9', () => {
  it('delivers each accepted message exactly once after a crash mid-load', async () => {
    const first = await spawnReference('relay', relayArgs('0'));
    children.push(first);
    const port = new URL(first.url).port;
    const address = new URL(first.url).host;
    const a = newRelayIdentity(`sender-${Date.now().toString(36)}.id.test`);
    const b = newRelayIdentity(`recipient-${Date.now().toString(36)}.id.test`);
    await Promise.all([publish(a, address), publish(b, address)]);

    const agent = new Agent({ connections: 32 });
    const accepted = new Set<string>();
    const refusedIds = new Set<string>();
    const unanswered = new Set<string>();
    let n = 0;
    let killed = false;
    const post = async (body: Record<string, unknown>) => {
      const res = await request(`${first.url}/messages`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher: agent });
      await res.body.text();
      return res.statusCode;
    };
    const worker = async () => {
      while (!killed) {
        const i = n++;
        // Every tenth message is badly signed: refused, it must never be delivered.
        const m = message(profile, a, b.identity, b.encryption.publicKey, `load ${i}`, { id: `m_${i}` });
        const bad = i % 10 === 9;
        const body = bad ? { ...m, signature: Buffer.alloc(64, 1).toString('base64') } : m;
        try {
          const status = await post(body);
          if (status === 202) accepted.add(String(m.id));
          else if (bad && status === 401) refusedIds.add(String(m.id));
          else throw new Error(`message ${i}: ${status}`);
        } catch (error) {
          if (!killed) throw error;
          unanswered.add(String(m.id));
        }
      }
    };
    const load = Promise.all(Array.from({ length: 32 }, worker));
    // Killed mid-load once the relay has accepted a few hundred (not after a fixed time: a loaded
    // runner accepts fewer in it), or after 30 s at the latest.
    const since = Date.now();
    while (accepted.size < 300 && Date.now() - since < 30_000) await new Promise((r) => setTimeout(r, 50));
    killed = true;
    first.proc.kill('SIGKILL');
    await load;
    await agent.close().catch(() => undefined);
    if (first.proc.exitCode === null && first.proc.signalCode === null) await new Promise((r) => first.proc.once('exit', r));
    expect(accepted.size).toBeGreaterThan(100);

    const second = await spawnReference('relay', relayArgs(port));
    children.push(second);
    const path = `/messages/${b.identity}`;
    const headers = signedRequestHeaders(profile, { identity: b.identity, seed: b.seed, method: 'GET', path });
    const res = await request(`${second.url}${path}`, { headers });
    expect(res.statusCode).toBe(200);
    const picked = ((await res.body.json()) as { messages: Array<{ id: string }> }).messages.map((m) => m.id);
    const counts = new Map<string, number>();
    for (const id of picked) counts.set(id, (counts.get(id) ?? 0) + 1);
    const lost = [...accepted].filter((id) => !counts.has(id));
    const twice = [...counts].filter(([, c]) => c > 1).map(([id]) => id);
    const stray = picked.filter((id) => !accepted.has(id) && !unanswered.has(id));
    const refusedDelivered = picked.filter((id) => refusedIds.has(id));
    process.stdout.write(
      `durability: ${accepted.size} answered 202 before SIGKILL, ${picked.length} delivered after restart, ${lost.length} lost, ${twice.length} duplicated, ${refusedIds.size} refused (${refusedDelivered.length} delivered), ${unanswered.size} unanswered at the kill (${picked.filter((id) => unanswered.has(id)).length} of them committed)\n`,
    );
    expect(lost).toEqual([]);
    expect(twice).toEqual([]);
    expect(stray).toEqual([]);
    expect(refusedDelivered).toEqual([]);
  }, 120_000);
});
