// docs/try-it.md's "two relays", as a user runs it: a test authority, two reference relays
// hosting their own domains, and `svc-conformance relay keygen | register | send | read`: Alice on
// relay A writes to Bob on relay B, and Bob reads the message, opened with his key.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../harness/cli.ts';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { spawnReference, type ReferenceChild } from '../../harness/run/spawn.ts';
import { MemoryOutput } from '../harness/fakes.ts';

let authority: Authority;
let dir: string;
const relays: ReferenceChild[] = [];
beforeAll(async () => {
  authority = await startAuthority();
  dir = await mkdtemp(join(tmpdir(), 'svc-relay-cli-'));
  for (const [name, domain] of [
    ['a', 'a.relay.test'],
    ['b', 'b.relay.test'],
  ] as const) {
    relays.push(await spawnReference('relay', ['--port', '0', '--data-dir', join(dir, name), '--hosted-domains', domain, '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--quiet']));
  }
});
afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await authority?.close();
  await rm(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} };
  const code = await main(['node', 'svc-conformance', 'relay', ...args], io);
  return { code, out: io.stdout.text, err: io.stderr.text };
}

describe('svc-conformance relay, between two relays', () => {
  it('registers two hosted identities, sends from one relay to the other, and reads the message', async () => {
    const [a, b] = relays.map((r) => r.url) as [string, string];
    const alice = join(dir, 'alice.json');
    const bob = join(dir, 'bob.json');
    expect((await cli('keygen', '--identity', 'alice.a.relay.test', '--out', alice)).code).toBe(0);
    expect((await cli('keygen', '--identity', 'bob.b.relay.test', '--out', bob)).code).toBe(0);
    for (const [key, relay] of [
      [alice, a],
      [bob, b],
    ] as const) {
      const r = await cli('register', '--key', key, '--relay', relay, '--authority', authority.adminUrl);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/registered .* and published it in the authority/);
    }
    const sent = await cli('send', '--key', alice, '--relay', a, '--to', 'bob.b.relay.test', '--text', 'hello bob', '--authority', authority.adminUrl);
    expect(sent.code, sent.err).toBe(0);
    const read = await cli('read', '--key', bob, '--relay', b);
    expect(read.code, read.err).toBe(0);
    expect(read.out).toMatch(/from alice\.a\.relay\.test: hello bob/);
    expect((await cli('read', '--key', bob, '--relay', b)).out).toBe('no mail\n');
    // A second registration of the same identity is refused, and the CLI says what the relay answered.
    const again = await cli('register', '--key', alice, '--relay', a);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/409/);
  }, 60_000);
});
