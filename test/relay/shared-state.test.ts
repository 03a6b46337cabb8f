// Two reference relay processes as one relay (--shared-state, ra.sessions.cluster-restart): both
// started as a user starts them, on one data directory, one --relay-address and one fresh
// redis-server run without persistence. A challenge issued by one is spent once across both; a
// session registered on one works on the other, and revoked on one is refused by the other; mail
// accepted by one wakes an event stream held by the other; a pairing offer made on one is
// carried through by the other; a sender's bucket is one bucket; a drive commit on one reaches a
// drive stream on the other; uploads of one chunk through both store it once. Restarting one
// process is not the relay's restart; flushing Redis is; and with Redis gone the relay fails
// closed (503).
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { DriveClient } from '../../harness/actors/drive/client.ts';
import { create, encryptContent, nodeKeys } from '../../harness/actors/drive/objects.ts';
import { HttpClient } from '../../harness/actors/http.ts';
import { challengeHeaders, message, newRelayIdentity, RelayClient, type RelayIdentity } from '../../harness/actors/relay/index.ts';
import { approverNonce, offer, openSealed, sealFor } from '../../harness/actors/relay/pairing.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { startRedis, type RedisServer } from '../rp/helpers.ts';

/** Both processes name this address: identities published with it are local to either. */
const ADDRESS = 'cluster.relay.test:8443';
const RATE_SENDER = 5;

let authority: Authority;
let redis: RedisServer;
let dir: string;
const relays: ReferenceChild[] = [];
const http = new HttpClient({ timeoutMs: 20_000 });
const at = (i: number) => new RelayClient(profile, relays[i]!.url, http);

const args = () => [
  '--port',
  '0',
  '--data-dir',
  dir,
  '--relay-address',
  ADDRESS,
  '--shared-state',
  redis.url,
  '--dns-server',
  authority.dnsServer,
  '--ca',
  authority.caFile,
  '--rate-sender',
  String(RATE_SENDER),
  '--drive-quota',
  String(8 * 1024 * 1024),
  '--quiet',
];

beforeAll(async () => {
  [authority, redis, dir] = await Promise.all([startAuthority({ profile }), startRedis(), mkdtemp(join(tmpdir(), 'svc-relay-shared-'))]);
  // One after the other: the first creates the database's tables.
  relays.push(await spawnReference('relay', args()));
  relays.push(await spawnReference('relay', args()));
}, 60_000);
afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await http.close();
  await redis?.stop();
  await authority?.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function identity(): Promise<RelayIdentity> {
  const id = newRelayIdentity(`c${Date.now().toString(36)}${n++}.id.test`);
  await authority.publish({ identity: id.identity, seed: id.seed, encryptionPublicKey: `x25519:${encodeBase64url(id.encryption.publicKey)}`, relay: ADDRESS });
  return id;
}

const mail = (from: RelayIdentity, to: RelayIdentity, text: string, options: Parameters<typeof message>[5] = {}) => message(profile, from, to.identity, to.encryption.publicKey, text, options);
const inboxPath = (id: RelayIdentity) => `/messages/${encodeURIComponent(id.identity)}`;

describe('two relay processes sharing their state in Redis', () => {
  it('runs the test Redis without persistence (sessions never reach a disk)', async () => {
    const c = new Redis(redis.url);
    try {
      expect(await c.config('GET', 'save')).toEqual(['save', '']);
      expect(await c.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
    } finally {
      c.disconnect();
    }
  });

  it('spends a challenge issued by one process once, answered at both at the same time', async () => {
    const a = await identity();
    // Issued by one, answered at the other: accepted there, and then spent at the issuer too.
    for (const [issuer, other] of [
      [0, 1],
      [1, 0],
    ] as const) {
      const r = await at(issuer).challenge(a.identity);
      const headers = challengeHeaders(profile, a.identity, (r.json() as { challenge: string }).challenge, a.seed);
      const there = await at(other).get(inboxPath(a), headers);
      expect(there.status, there.text()).toBe(200);
      const again = await at(issuer).get(inboxPath(a), headers);
      expect(again.status, again.text()).toBe(401);
    }
    for (const named of [true, false]) {
      for (let round = 0; round < 5; round++) {
        const r = await at(round % 2).challenge(a.identity);
        expect(r.status, r.text()).toBe(200);
        const headers = challengeHeaders(profile, a.identity, (r.json() as { challenge: string }).challenge, a.seed, undefined, named);
        const answers = await Promise.all([0, 1].map((i) => at(i).get(inboxPath(a), headers)));
        expect(answers.map((x) => x.status).sort(), `named ${named}, round ${round}: ${answers.map((x) => x.text()).join(' | ')}`).toEqual([200, 401]);
      }
    }
  });

  it('honours a session registered on one process at the other, and refuses it everywhere once revoked on one', async () => {
    const [a, b] = [await identity(), await identity()];
    const seed = new Uint8Array(randomBytes(32));
    const reg = await at(0).registerSession(a, seed);
    expect(reg.status, reg.text()).toBe(201);
    const sessionId = (reg.json() as { session_id: string }).session_id;
    const session = { seed, sessionId };
    expect((await at(1).send(mail(a, b, 'by the session, at B', { session }))).status).toBe(202);
    const pickup = await at(1).pickup(a, { mode: 'signed-request', seed, sessionId });
    expect(pickup.status, pickup.text()).toBe(200);
    const revoked = await at(0).revokeSession(a, sessionId);
    expect(revoked.status, revoked.text()).toBe(204);
    const after = await at(1).send(mail(a, b, 'by the revoked session, at B', { session }));
    expect(after.status).toBe(401);
    expect((after.json() as { error: string }).error).toBe('session_expired');
    expect((await at(1).pickup(a, { mode: 'signed-request', seed, sessionId })).status).toBe(401);
  });

  it('wakes an event stream held by one process with mail accepted by the other', async () => {
    const [a, b] = [await identity(), await identity()];
    const stream = await at(1).events(b);
    try {
      expect(stream.status, stream.body).toBe(200);
      await stream.next((e) => e.event === 'ready', 5000);
      const m = mail(a, b, 'accepted by A, announced by B');
      expect((await at(0).send(m)).status).toBe(202);
      const e = await stream.next((x) => x.event === 'message', 5000);
      expect((e.data as { message_id?: unknown }).message_id).toBe(m.id);
      // Once: the process that accepted it has no stream, and B tells its own stream once.
      await new Promise((r) => setTimeout(r, 200));
      expect(stream.events.filter((x) => x.event === 'message')).toHaveLength(1);
    } finally {
      await stream.close();
    }
  });

  it('carries a pairing offer made on one process through the other, and hands the sealed seed out once', async () => {
    const a = await identity();
    const o = await offer(at(0), a.identity, 'new laptop');
    expect(o.answer.status, o.answer.text()).toBe(201);
    const code = o.code!;
    const fetched = await at(1).enrollFetch(a, code, { approver_nonce: approverNonce(), mode: 'compare' });
    expect(fetched.status, fetched.text()).toBe(200);
    expect((fetched.json() as { commitment: string }).commitment).toBe(o.commitment);
    // A second approver at the other process is refused: the offer's state is shared.
    expect((await at(0).enrollFetch(a, code, { approver_nonce: approverNonce(), mode: 'compare' })).status).toBe(409);
    expect((await at(0).enrollReveal(a.identity, code, o.token, o.key)).status).toBe(200);
    const seed = new Uint8Array(randomBytes(32));
    expect((await at(1).enrollDeliver(a, code, sealFor(profile, o.key.ephemeral_public_key, seed))).status).toBe(200);
    const polls = await Promise.all([0, 1].map((i) => at(i).enrollPoll(a.identity, code, o.token)));
    expect(polls.map((p) => p.status).sort()).toEqual([200, 404]);
    const got = polls.find((p) => p.status === 200)!.json() as { sealed: string };
    expect(Buffer.from(openSealed(profile, o.secret, got.sealed)!)).toEqual(Buffer.from(seed));
  });

  it("charges one sender's bucket across both processes: the same count as one process", async () => {
    const [a, b] = [await identity(), await identity()];
    const statuses: number[] = [];
    for (let i = 0; i < RATE_SENDER + 3; i++) statuses.push((await at(i % 2).send(mail(a, b, `rate ${i}`))).status);
    expect(statuses).toEqual([...Array<number>(RATE_SENDER).fill(202), 429, 429, 429]);
  });

  it('tells a drive event stream held by one process of a commit made through the other', async () => {
    const owner = await identity();
    const actor = { identity: owner.identity, seed: owner.seed };
    const drive = (i: number) => new DriveClient(profile, relays[i]!.url, http);
    const root = nodeKeys();
    const commitAt = (i: number, body: Record<string, unknown>) => drive(i).commit(owner.identity, actor, body);
    const first = await commitAt(0, create(profile, { drive: owner.identity, author: owner, keys: root, kind: 'folder', at: {}, ownerEncryption: owner.encryption.publicKey }));
    expect(first.status, first.text()).toBe(200);
    const stream = await drive(1).events(owner.identity, actor);
    try {
      expect(stream.status, stream.body).toBe(200);
      await stream.next((e) => e.event === 'ready', 5000);
      const folder = nodeKeys();
      const r = await commitAt(
        0,
        create(profile, { drive: owner.identity, author: owner, keys: folder, kind: 'folder', at: { folder: root, name: 'made at A' }, ownerEncryption: owner.encryption.publicKey }),
      );
      expect(r.status, r.text()).toBe(200);
      const e = await stream.next((x) => x.event === 'drive.changed' && x.raw.includes(folder.node), 5000);
      expect((e.data as { drive?: { drive?: unknown } }).drive?.drive).toBe(owner.identity);
    } finally {
      await stream.close();
    }
  });

  it('stores a chunk uploaded side by side through both processes once: one 201, and its bytes held once against the quota', async () => {
    const owner = await identity();
    const actor = { identity: owner.identity, seed: owner.seed };
    const drive = (i: number) => new DriveClient(profile, relays[i]!.url, http);
    const root = nodeKeys();
    expect(
      (await drive(0).commit(owner.identity, actor, create(profile, { drive: owner.identity, author: owner, keys: root, kind: 'folder', at: {}, ownerEncryption: owner.encryption.publicKey }))).status,
    ).toBe(200);
    const chunk = (bytes: number) => encryptContent(profile, owner.identity, nodeKeys(undefined, true), new Uint8Array(randomBytes(bytes)), 1, bytes)[0]!;
    // Two 3 MiB chunks leave less than 2 MiB of the 8 MiB quota: room for a 1.25 MiB chunk once.
    for (const filler of [chunk(3 * 1024 * 1024), chunk(3 * 1024 * 1024)]) expect((await drive(0).putChunk(owner.identity, actor, filler)).status).toBe(201);
    const c = chunk(1.25 * 1024 * 1024);
    const answers = (await Promise.all([0, 1].map((i) => drive(i).putTogether(owner.identity, actor, c, 4)))).flat();
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const over = await drive(1).putChunk(owner.identity, actor, chunk(1.25 * 1024 * 1024));
    expect([over.status, (over.json() as { error?: string }).error]).toEqual([507, 'quota_exceeded']);
  }, 60_000);

  it('keeps sessions through the restart of one process, and forgets them when Redis is flushed', async () => {
    const [a, b] = [await identity(), await identity()];
    const seed = new Uint8Array(randomBytes(32));
    const reg = await at(0).registerSession(a, seed);
    expect(reg.status, reg.text()).toBe(201);
    const session = { seed, sessionId: (reg.json() as { session_id: string }).session_id };
    await relays[0]!.stop();
    relays[0] = await spawnReference('relay', args());
    expect((await at(0).send(mail(a, b, 'after one process restarted', { session }))).status).toBe(202);
    const c = new Redis(redis.url);
    try {
      await c.flushall();
    } finally {
      c.disconnect();
    }
    for (const i of [0, 1]) {
      const r = await at(i).send(mail(a, b, `after the flush, at ${i}`, { session }));
      expect(r.status).toBe(401);
      expect((r.json() as { error: string }).error).toBe('session_expired');
    }
  }, 60_000);

  it('fails closed with 503 shared_state_unavailable while Redis is away', async () => {
    const a = await identity();
    await redis.stop();
    for (const i of [0, 1]) {
      const r = await at(i).challenge(a.identity);
      expect(r.status, r.text()).toBe(503);
      expect((r.json() as { error: string }).error).toBe('shared_state_unavailable');
    }
  });
});
