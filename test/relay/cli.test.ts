// docs/try-it.md's "two relays" and docs/walkthrough.md, as a user runs them: a test authority, two
// reference relays hosting their own domains, and `svc-conformance relay keygen | register | send |
// read`: Alice on relay A writes to Bob on relay B, and Bob reads the message, opened with his key.
// Then Alice's owner surface: a software passkey enrolls a wrapped copy of her key file and fetches
// it back, and pairing moves the key file to a second device.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../harness/cli.ts';
import { twoRelays } from './two-relays.ts';
import { MemoryOutput } from '../harness/fakes.ts';

const world = twoRelays('svc-relay-cli-');

let latest: MemoryOutput | undefined;
/** What the command started last has printed so far (a waiting `pair new`). */
const lastOut = () => latest?.text ?? '';

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} };
  latest = io.stdout;
  const code = await main(['node', 'svc-conformance', 'relay', ...args], io);
  return { code, out: io.stdout.text, err: io.stderr.text };
}

describe('svc-conformance relay, between two relays', () => {
  it('registers two hosted identities, sends from one relay to the other, and reads the message', async () => {
    const [a, b] = world.relays.map((r) => r.url) as [string, string];
    const alice = join(world.dir, 'alice.json');
    const bob = join(world.dir, 'bob.json');
    expect((await cli('keygen', '--identity', 'alice.a.relay.test', '--out', alice)).code).toBe(0);
    expect((await cli('keygen', '--identity', 'bob.b.relay.test', '--out', bob)).code).toBe(0);
    for (const [key, relay] of [
      [alice, a],
      [bob, b],
    ] as const) {
      const r = await cli('register', '--key', key, '--relay', relay, '--authority', world.authority.adminUrl);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/registered .* and published it in the authority/);
    }
    const sent = await cli('send', '--key', alice, '--relay', a, '--to', 'bob.b.relay.test', '--text', 'hello bob', '--authority', world.authority.adminUrl);
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

  it('enrolls a software passkey, fetches the key file back with it, and pairs a second device', async () => {
    const a = world.relays[0]!.url;
    const alice = join(world.dir, 'alice-owner.json');
    const passkey = join(world.dir, 'passkey.json');
    expect((await cli('keygen', '--identity', 'carol.a.relay.test', '--out', alice)).code).toBe(0);
    expect((await cli('register', '--key', alice, '--relay', a, '--authority', world.authority.adminUrl)).code).toBe(0);
    expect((await cli('passkey', 'new', '--alg', 'eddsa', '--out', passkey)).code).toBe(0);
    const enrolled = await cli('keystore', 'enroll', '--key', alice, '--passkey', passkey, '--relay', a, '--enrollment-id', 'laptop', '--label', 'my laptop');
    expect(enrolled.code, enrolled.err).toBe(0);
    expect((await cli('keystore', 'list', '--key', alice, '--relay', a)).out).toMatch(/^laptop {2}passkey\/prf {2}my laptop$/m);
    const restored = join(world.dir, 'restored.json');
    const fetched = await cli('keystore', 'fetch', '--identity', 'carol.a.relay.test', '--passkey', passkey, '--relay', a, '--out', restored);
    expect(fetched.code, fetched.err).toBe(0);
    const original = JSON.parse(await readFile(alice, 'utf8')) as Record<string, string>;
    expect(JSON.parse(await readFile(restored, 'utf8'))).toEqual(original);
    // The passkey's counter moved on: a second fetch signs with a higher one.
    expect((JSON.parse(await readFile(passkey, 'utf8')) as { counter: number }).counter).toBe(1);
    expect((await cli('keystore', 'fetch', '--identity', 'carol.a.relay.test', '--passkey', passkey, '--relay', a, '--out', restored)).code).toBe(0);
    const last = await cli('keystore', 'remove', '--key', alice, '--relay', a, '--enrollment-id', 'laptop');
    expect(last.code).toBe(1);
    expect(last.err).toMatch(/409.*last_enrollment/);
    expect((await cli('keystore', 'remove', '--key', alice, '--relay', a, '--enrollment-id', 'laptop', '--allow-last')).code).toBe(0);

    // Two terminals: the new device offers and waits; the approver reads the code it printed.
    const phone = join(world.dir, 'phone.json');
    const device = cli('pair', 'new', '--relay', a, '--identity', 'carol.a.relay.test', '--out', phone, '--timeout', '30');
    let code: string | undefined;
    for (let i = 0; i < 100 && code === undefined; i++) {
      await new Promise((done) => setTimeout(done, 100));
      code = /code ([0-9A-Z]{4}-[0-9A-Z]{4})/.exec(lastOut())?.[1];
    }
    expect(code).toBeDefined();
    const approver = await cli('pair', 'approve', '--key', alice, '--relay', a, '--code', code!.toLowerCase(), '--yes', '--timeout', '30');
    expect(approver.code, approver.err).toBe(0);
    const joined = await device;
    expect(joined.code, joined.err).toBe(0);
    const digits = (text: string) => /compare: (\d{6})/.exec(text)?.[1];
    expect(digits(joined.out)).toMatch(/^\d{6}$/);
    expect(digits(joined.out)).toBe(digits(approver.out));
    expect(JSON.parse(await readFile(phone, 'utf8'))).toEqual(original);
  }, 90_000);
});
