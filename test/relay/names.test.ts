// The hosted-handle policy at registration as well as in availability: an operator's blocked terms
// (--blocked-names) and the reserved labels are refused with 400 name_unavailable and the reason
// availability gives; an ordinary handle registers. /health says `degraded` (still 200) while the
// storage cannot be written.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileFor } from '../../protocol/common/profile.ts';
import { HttpClient } from '../../harness/actors/http.ts';
import { RelayClient, newRelayIdentity } from '../../harness/actors/relay/index.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';

const DOMAIN = 'names.relay.test';
let dir: string;
let relay: ReferenceChild;
let client: RelayClient;
const http = new HttpClient({ timeoutMs: 10_000 });
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-relay-names-'));
  await writeFile(join(dir, 'blocked.txt'), '# terms no handle may contain\nbadword\n');
  relay = await spawnReference('relay', ['--port', '0', '--data-dir', join(dir, 'data'), '--hosted-domains', DOMAIN, '--blocked-names', join(dir, 'blocked.txt'), '--quiet']);
  client = new RelayClient(profileFor(), relay.url, http);
});
afterAll(async () => {
  await http.close();
  await relay?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the hosted-handle policy', () => {
  it('answers blocked and reserved in availability, and refuses both at registration', async () => {
    const address = new URL(relay.url).host;
    const avail = async (handle: string) => (await client.get(`/hosted/availability?handle=${handle}`)).json() as Record<string, unknown>;
    expect(await avail('mybadwordx')).toMatchObject({ available: false, reason: 'blocked' });
    for (const [handle, reason] of [
      ['mybadwordx', 'blocked'],
      ['www', 'reserved'],
      ['ab', 'too_short'],
    ] as const) {
      const r = await client.register(newRelayIdentity(`${handle}.${DOMAIN}`), address);
      expect(r.status, handle).toBe(400);
      expect(r.json()).toMatchObject({ error: 'name_unavailable', reason, rule: 'ra.errors.name-unavailable' });
    }
    expect((await client.register(newRelayIdentity(`goodname.${DOMAIN}`), address)).status).toBe(201);
    expect(await avail('goodname')).toMatchObject({ available: false, reason: 'taken' });
  });
});

describe('relay health', () => {
  it('answers 200 degraded with storage.writable false while the database cannot be written, and ok after', async () => {
    const health = async () => {
      const r = await client.get('/health');
      return { status: r.status, body: r.json() as Record<string, unknown> };
    };
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok', storage: { configured: true, writable: true } } });
    // Another process holds the write lock: the relay cannot write its storage.
    const other = new Database(join(dir, 'data', 'relay.sqlite'));
    other.exec('BEGIN EXCLUSIVE');
    try {
      expect(await health()).toMatchObject({ status: 200, body: { status: 'degraded', storage: { writable: false } } });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } });
  }, 30_000);
});
