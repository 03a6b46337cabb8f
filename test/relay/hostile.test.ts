// The reference relay against an attacker who holds valid keys: a well-signed message carrying a
// hostile unsigned field never costs the inbox anything; a challenge answered once is spent once
// under concurrent pickups; an id already waiting under other bytes is refused, never 202 and
// dropped; a revoked session stays revoked, also by its attached proof and across a restart; a
// drain deletes only what it returned while mail keeps arriving.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { HttpClient } from '../../harness/actors/http.ts';
import { challengeHeaders, message, newRelayIdentity, RelayClient, sessionProof, type RelayIdentity } from '../../harness/actors/relay/index.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';

let authority: Authority;
let dir: string;
let relay: ReferenceChild;
let port: string;
const http = new HttpClient({ timeoutMs: 20_000 });
const client = () => new RelayClient(profile, relay.url, http);

const args = (p: string) => ['--port', p, '--data-dir', dir, '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--rate-sender', '100000', '--rate-global', '100000', '--quiet'];

beforeAll(async () => {
  authority = await startAuthority({ profile });
  dir = await mkdtemp(join(tmpdir(), 'svc-relay-hostile-'));
  relay = await spawnReference('relay', args('0'));
  port = new URL(relay.url).port;
});
afterAll(async () => {
  await relay?.stop();
  await http.close();
  await authority?.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function identity(): Promise<RelayIdentity> {
  const id = newRelayIdentity(`h${Date.now().toString(36)}${n++}.id.test`);
  await authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay: new URL(relay.url).host });
  return id;
}

const mail = (from: RelayIdentity, to: RelayIdentity, text: string, options: Parameters<typeof message>[5] = {}) => message(profile, from, to.identity, to.encryption.publicKey, text, options);

async function inbox(id: RelayIdentity): Promise<{ messages: Array<Record<string, unknown>>; acks: unknown[]; text: string }> {
  const r = await client().pickup(id, { mode: 'signed-request' });
  expect(r.status, r.text()).toBe(200);
  return { ...(r.json() as { messages: Array<Record<string, unknown>>; acks: unknown[] }), text: r.text() };
}

/** Nested `depth` levels: {"x":{"x":...}} */
const nested = (depth: number) => `${'{"x":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('the reference relay under hostile, well-signed input', () => {
  it('keeps an inbox readable after a signed message with hostile unsigned fields, and refuses one nested too deep', async () => {
    const [a, b] = [await identity(), await identity()];
    const first = mail(a, b, 'before');
    expect((await client().send(first)).status).toBe(202);
    // Unsigned extras the canonical string does not cover: a lone surrogate escape, __proto__, a number JSON cannot keep, nesting just under the limit.
    const signed = JSON.stringify(mail(a, b, 'hostile'));
    const hostile = `${signed.slice(0, -1)},"note":"\\ud800","__proto__":{"polluted":true},"big":1e400,"deep":${nested(60)}}`;
    expect((await client().send(hostile)).status).toBe(202);
    const tooDeep = `${signed.slice(0, -1)},"id":"m_deep","deep":${nested(5000)}}`;
    const refused = await client().send(tooDeep);
    expect(refused.status).toBe(400);
    const got = await inbox(b);
    expect(got.messages.map((m) => m.id)).toEqual([first.id, JSON.parse(signed).id]);
    // Returned as received: the bytes the sender signed, never re-serialized.
    expect(got.text).toContain('"note":"\\ud800"');
    expect(got.text).toContain('"big":1e400');
    expect((await inbox(b)).messages).toEqual([]);
  });

  it('spends a challenge once under 8 concurrent answers, named or not', async () => {
    const a = await identity();
    for (const named of [true, false]) {
      const r = await client().challenge(a.identity);
      const challenge = (r.json() as { challenge: string }).challenge;
      const headers = challengeHeaders(profile, a.identity, challenge, a.seed, undefined, named);
      const answers = await Promise.all(Array.from({ length: 8 }, () => client().pickup(a, { mode: 'headers', headers })));
      expect(answers.map((x) => x.status).sort()).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
    }
  });

  it('refuses an id already waiting under other bytes with 409 id_conflict, keeps the first, and accepts a retry of the same bytes once', async () => {
    const [a, b, c] = [await identity(), await identity(), await identity()];
    const original = mail(a, b, 'the original', { id: 'm_shared_id' });
    expect((await client().send(original)).status).toBe(202);
    expect((await client().send(original)).status).toBe(202);
    const other = await client().send(mail(c, b, 'another sender, same id', { id: 'm_shared_id' }));
    expect(other.status).toBe(409);
    expect((other.json() as { error: string }).error).toBe('id_conflict');
    const again = await client().send(mail(a, b, 'the same sender, other bytes', { id: 'm_shared_id' }));
    expect(again.status).toBe(409);
    const got = await inbox(b);
    expect(got.messages).toHaveLength(1);
    expect(got.messages[0]!.sender).toBe(a.identity);
    expect(got.messages[0]!.payload).toBe(original.payload);
  });

  it('deletes only what a drain returned while mail keeps arriving', async () => {
    const [a, b] = [await identity(), await identity()];
    const sent = Array.from({ length: 60 }, (_, i) => mail(a, b, `m${i}`));
    const received: string[] = [];
    const sending = (async () => {
      for (const m of sent) expect((await client().send(m)).status).toBe(202);
    })();
    const draining = (async () => {
      for (let i = 0; i < 30; i++) received.push(...(await inbox(b)).messages.map((m) => String(m.id)));
    })();
    await Promise.all([sending, draining]);
    received.push(...(await inbox(b)).messages.map((m) => String(m.id)));
    expect(received.sort()).toEqual(sent.map((m) => String(m.id)).sort());
  });

  it('refuses a revoked session by its id and by its proof, also after a restart', async () => {
    const [a, b] = [await identity(), await identity()];
    const seed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
    const reg = await client().registerSession(a, seed);
    expect(reg.status, reg.text()).toBe(201);
    const sessionId = (reg.json() as { session_id: string }).session_id;
    const proof = sessionProof(profile, a, seed);
    expect((await client().send(mail(a, b, 'by id', { session: { seed, sessionId } }))).status).toBe(202);
    expect((await client().send(mail(a, b, 'by proof', { session: { seed, proof } }))).status).toBe(202);
    expect((await client().revokeSession(a, sessionId)).status).toBe(204);
    const byId = await client().send(mail(a, b, 'by id, revoked', { session: { seed, sessionId } }));
    expect([byId.status, (byId.json() as { error: string }).error]).toEqual([401, 'session_expired']);
    const byProof = await client().send(mail(a, b, 'by proof, revoked', { session: { seed, proof } }));
    expect([byProof.status, (byProof.json() as { error: string }).error]).toEqual([401, 'session_expired']);
    await relay.stop();
    relay = await spawnReference('relay', args(port));
    const afterRestart = await client().send(mail(a, b, 'by proof, after a restart', { session: { seed, proof } }));
    expect([afterRestart.status, (afterRestart.json() as { error: string }).error]).toEqual([401, 'session_expired']);
  });
});
