// The world of docs/try-it.md's "two relays", as the CLI tests use it: a test authority and two
// reference relays hosting a.relay.test (A) and b.relay.test (B), started before a file's tests
// and stopped after them, with a scratch directory for key files.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';

export interface TwoRelays {
  authority: Authority;
  dir: string;
  /** A, then B. */
  relays: ReferenceChild[];
}

export function twoRelays(prefix: string): TwoRelays {
  const world: TwoRelays = { authority: undefined as unknown as Authority, dir: '', relays: [] };
  beforeAll(async () => {
    world.authority = await startAuthority();
    world.dir = await mkdtemp(join(tmpdir(), prefix));
    for (const [name, domain] of [
      ['a', 'a.relay.test'],
      ['b', 'b.relay.test'],
    ] as const) {
      world.relays.push(
        await spawnReference('relay', [
          '--port',
          '0',
          '--data-dir',
          join(world.dir, name),
          '--hosted-domains',
          domain,
          '--dns-server',
          world.authority.dnsServer,
          '--ca',
          world.authority.caFile,
          '--quiet',
        ]),
      );
    }
  });
  afterAll(async () => {
    await Promise.all(world.relays.map((r) => r.stop()));
    await world.authority?.close();
    if (world.dir) await rm(world.dir, { recursive: true, force: true });
  });
  return world;
}
