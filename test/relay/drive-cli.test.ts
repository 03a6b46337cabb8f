// docs/drive.md as a user runs it: a test authority, two reference relays, and `svc-conformance
// drive`: Alice on relay A puts, lists and gets a file back; shares a folder with Bob (homed on
// relay B), who reads it from her drive; a password link opens for a guest with no key file; and
// the unshare closes Bob's event stream and refuses his next read; with a write share he writes.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../harness/cli.ts';
import { twoRelays } from './two-relays.ts';
import { MemoryOutput } from '../harness/fakes.ts';

const world = twoRelays('svc-drive-cli-');

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} };
  const code = await main(['node', 'svc-conformance', ...args], io);
  return { code, out: io.stdout.text, err: io.stderr.text };
}

describe('svc-conformance drive, between two relays', () => {
  it('puts, lists and gets as the owner; shares with a member on another relay; opens a password link; unshares', async () => {
    const [a, b] = world.relays.map((r) => r.url) as [string, string];
    const [alice, bob] = [join(world.dir, 'alice.json'), join(world.dir, 'bob.json')];
    for (const [key, identity, relay] of [
      [alice, 'alice.a.relay.test', a],
      [bob, 'bob.b.relay.test', b],
    ] as const) {
      expect((await cli('relay', 'keygen', '--identity', identity, '--out', key)).code).toBe(0);
      const r = await cli('relay', 'register', '--key', key, '--relay', relay, '--authority', world.authority.adminUrl);
      expect(r.code, r.err).toBe(0);
    }
    const asAlice = ['--key', alice, '--relay', a];
    const asBob = ['--key', bob, '--relay', a, '--drive', 'alice.a.relay.test'];

    // Two chunks and a bit: the read walks every chunk of every page.
    const content = randomBytes(2 * 1024 * 1024 + 123);
    const local = join(world.dir, 'report.bin');
    await writeFile(local, content);
    const put = await cli('drive', 'put', local, 'docs/report.bin', '--parents', ...asAlice);
    expect(put.code, put.err).toBe(0);
    expect(put.out).toMatch(/^wrote docs\/report\.bin \(2097275 bytes/);
    expect((await cli('drive', 'put', local, 'nowhere/x.bin', ...asAlice)).code).toBe(1);

    const ls = await cli('drive', 'ls', ...asAlice);
    expect(ls.code, ls.err).toBe(0);
    expect(ls.out).toMatch(/^folder {2}[0-9a-f]{32} {2}docs\/$/m);
    expect((await cli('drive', 'ls', 'docs', ...asAlice)).out).toMatch(/^file {4}[0-9a-f]{32} {2}report\.bin$/m);

    const back = join(world.dir, 'back.bin');
    const got = await cli('drive', 'get', 'docs/report.bin', '--out', back, ...asAlice);
    expect(got.code, got.err).toBe(0);
    expect(Buffer.compare(await readFile(back), content)).toBe(0);

    // A second put replaces the file with a new version on its head.
    const notes = join(world.dir, 'notes.txt');
    await writeFile(notes, 'first draft\n');
    expect((await cli('drive', 'put', notes, 'docs/', ...asAlice)).out).toMatch(/^wrote docs\/notes\.txt/);
    await writeFile(notes, 'second draft\n');
    expect((await cli('drive', 'put', notes, 'docs/notes.txt', ...asAlice)).out).toMatch(/^replaced docs\/notes\.txt/);
    expect((await cli('drive', 'get', 'docs/notes.txt', ...asAlice)).out).toBe('second draft\n');

    expect((await cli('drive', 'mkdir', 'docs/inner', ...asAlice)).code).toBe(0);
    expect((await cli('drive', 'mkdir', 'docs/inner', ...asAlice)).code).toBe(1);

    // Bob, homed on relay B, holds nothing yet.
    expect((await cli('drive', 'get', 'notes.txt', ...asBob)).code).toBe(1);
    const shared = await cli('drive', 'share', 'docs', '--with', 'bob.b.relay.test', '--role', 'read', '--authority', world.authority.adminUrl, ...asAlice);
    expect(shared.code, shared.err).toBe(0);
    const shareId = /share ([0-9a-f]{32})/.exec(shared.out)?.[1];
    expect(shareId).toBeDefined();
    expect((await cli('drive', 'shares', 'docs/notes.txt', ...asAlice)).out).toContain(`${shareId!}  read    bob.b.relay.test`);

    const bobLs = await cli('drive', 'ls', ...asBob);
    expect(bobLs.out).toMatch(/report\.bin$/m);
    const bobGot = await cli('drive', 'get', 'notes.txt', ...asBob);
    expect(bobGot.code, bobGot.err).toBe(0);
    expect(bobGot.out).toBe('second draft\n');
    // Read only: Bob's write is refused by the relay.
    const bobPut = await cli('drive', 'put', notes, 'notes.txt', ...asBob);
    expect(bobPut.code).toBe(1);
    expect(bobPut.err).toMatch(/403/);

    // A guest with the link string and the password, and no key file.
    const linked = await cli('drive', 'link', 'docs/report.bin', '--password', 'open sesame', '--downloads', '10', ...asAlice);
    expect(linked.code, linked.err).toBe(0);
    const link = linked.out.trim();
    expect(link).toMatch(new RegExp(`^${a}/drive/alice\\.a\\.relay\\.test/links/[0-9a-f]{32}#[A-Za-z0-9_-]{43}$`));
    const wrong = await cli('drive', 'get', '--link', link, '--password', 'guess', '--out', join(world.dir, 'no.bin'));
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/403/);
    expect((await cli('drive', 'get', '--link', link, '--out', join(world.dir, 'no.bin'))).code).toBe(2);
    const guest = join(world.dir, 'guest.bin');
    const opened = await cli('drive', 'get', '--link', link, '--password', 'open sesame', '--out', guest);
    expect(opened.code, opened.err).toBe(0);
    expect(Buffer.compare(await readFile(guest), content)).toBe(0);

    // Bob watches; Alice ends his share: he hears drive.revoked, his stream ends, his read is refused.
    const watching = cli('drive', 'watch', '--timeout', '20', ...asBob);
    await new Promise((done) => setTimeout(done, 500));
    await writeFile(notes, 'third draft\n');
    expect((await cli('drive', 'put', notes, 'docs/notes.txt', ...asAlice)).code).toBe(0);
    const ended = await cli('drive', 'unshare', shareId!, ...asAlice);
    expect(ended.code, ended.err).toBe(0);
    const watched = await watching;
    expect(watched.code, watched.err).toBe(0);
    expect(watched.out).toMatch(/drive\.changed seq \d+ replace node/);
    expect(watched.out).toMatch(new RegExp(`drive\\.revoked share ${shareId!}\\nthe relay closed the stream\\n$`));
    const refused = await cli('drive', 'get', 'notes.txt', ...asBob);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/holds no share/);

    // A write share: Bob, still homed on relay B, writes into Alice's folder and she reads his file.
    expect((await cli('drive', 'mkdir', 'inbox', ...asAlice)).code).toBe(0);
    expect((await cli('drive', 'share', 'inbox', '--with', 'bob.b.relay.test', '--role', 'write', '--authority', world.authority.adminUrl, ...asAlice)).code).toBe(0);
    const reply = join(world.dir, 'reply.txt');
    await writeFile(reply, 'from bob\n');
    const wrote = await cli('drive', 'put', reply, 'replies/', '--parents', ...asBob);
    expect(wrote.code, wrote.err).toBe(0);
    expect((await cli('drive', 'get', 'inbox/replies/reply.txt', ...asAlice)).out).toBe('from bob\n');
  }, 120_000);
});
