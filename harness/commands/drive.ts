// `svc-conformance drive`: an identity's end-to-end encrypted drive by hand (document 3, Drive
// API), as its owner, a member homed on any relay, or a guest holding a link. Stateless beyond the
// key file: every run opens the drive from what it holds (harness/actors/drive/tree.ts).
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from '../actors/command-context.ts';
import type { Opened } from '../actors/drive/tree.ts';
import type { Common, DriveKit, Session } from './drive-kit.ts';
import { registerShareCommands } from './drive-share.ts';
import { DEFAULT_SERVICE_NAME } from '../../protocol/common/profile.ts';

const EXAMPLES = `
Paths are slash-separated names from the drive's root (the owner) or from the shared node (a
member; --share picks one when it holds several). --drive names another identity's drive.

Exit codes: 0 done; 1 the relay refused (its status and error are printed) or the drive holds no
such path; 2 bad usage.

Examples (two relays and a test authority on loopback, see docs/drive.md):
  $ svc-conformance drive put notes.txt docs/notes.txt --parents --key alice.json --relay http://127.0.0.1:8441
  $ svc-conformance drive ls docs --key alice.json --relay http://127.0.0.1:8441
  $ svc-conformance drive get docs/notes.txt --out copy.txt --key alice.json --relay http://127.0.0.1:8441
  $ svc-conformance drive share docs --with bob.b.relay.test --role read --authority http://127.0.88.1:8055 --key alice.json --relay http://127.0.0.1:8441
  $ svc-conformance drive get notes.txt --drive alice.a.relay.test --key bob.json --relay http://127.0.0.1:8441
  $ svc-conformance drive link docs/notes.txt --password 'open sesame' --downloads 3 --key alice.json --relay http://127.0.0.1:8441
  $ svc-conformance drive get --link 'http://127.0.0.1:8441/drive/alice.a.relay.test/links/…#…' --password 'open sesame' --out notes.txt
  $ svc-conformance drive watch --drive alice.a.relay.test --key bob.json --relay http://127.0.0.1:8441
  $ svc-conformance drive unshare 3f2a… --key alice.json --relay http://127.0.0.1:8441
`;

export function registerDriveCommands(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const drive = ctx
    .configure(program.command('drive'))
    .description("an end-to-end encrypted drive by hand: put, get, ls, mkdir, share, link, watch (as its owner, a member or a link's guest)")
    .addHelpText('after', EXAMPLES);
  const run = (label: string, body: () => Promise<number>) => async () => {
    const { DriveRefused } = await import('../actors/drive/tree.ts');
    const { LinkRefused } = await import('../actors/drive/link.ts');
    try {
      ctx.setCode(await body());
    } catch (error) {
      io.stderr.write(`svc-conformance drive ${label}: ${(error as Error).message}\n`);
      ctx.setCode(error instanceof DriveRefused || error instanceof LinkRefused ? 1 : 2);
    }
  };
  const kit: DriveKit = { drive, io, run, keyed, session, at, httpClient };
  putCommand(kit);
  getCommand(kit);
  lsCommand(kit);
  mkdirCommand(kit);
  registerShareCommands(kit);
}

/** The options every keyed drive command takes. */
function keyed(cmd: Command, keyRequired = true): Command {
  return (keyRequired ? cmd.requiredOption('--key <file>', 'your key file (from `relay keygen`)') : cmd.option('--key <file>', 'your key file (from `relay keygen`)'))
    .option('--relay <url>', "the drive's relay (where its identity is hosted)")
    .option('--drive <identity>', "whose drive (default: the key file's own)")
    .option('--share <id>', 'a member holding several shares of the drive: the one paths start from')
    .option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME);
}

async function httpClient(relay: string, serviceName: string) {
  const { DriveClient } = await import('../actors/drive/client.ts');
  const { HttpClient } = await import('../actors/http.ts');
  const { profileFor } = await import('../../protocol/common/profile.ts');
  return new DriveClient(profileFor(serviceName), relay.replace(/\/$/, ''), new HttpClient({ timeoutMs: 30_000, maxBodyBytes: 8 * 1024 * 1024 }));
}

/** Opens the drive as the key file's identity: the owner from its root, a member from its share. */
async function session(flags: Common, pick = true): Promise<Session> {
  if (!flags.key || !flags.relay) throw new Error('give --key and --relay (or --link)');
  const { readRelayKey } = await import('../actors/relay/keyfile.ts');
  const { DriveTree } = await import('../actors/drive/tree.ts');
  const id = await readRelayKey(flags.key);
  const name = (flags.drive ?? id.identity).toLowerCase();
  const tree = new DriveTree(await httpClient(flags.relay, flags.serviceName), name, { identity: id.identity, seed: id.seed });
  if (name === id.identity) {
    const root = await tree.ownerRoot(id.encryption.privateKey);
    return { tree, id, owner: true, ...(root ? { start: root } : {}) };
  }
  if (!pick) return { tree, id, owner: false };
  const mine = (await tree.shares()).filter((s) => s.member === id.identity && (flags.share === undefined || s.id === flags.share));
  if (mine.length !== 1) {
    const { DriveRefused } = await import('../actors/drive/tree.ts');
    if (mine.length === 0) throw new DriveRefused(`${id.identity} holds no ${flags.share ? `share ${flags.share}` : 'share'} of ${name}'s drive`);
    throw new Error(`${id.identity} holds ${mine.length} shares of ${name}'s drive; pick one with --share (${mine.map((s) => String(s.id)).join(', ')})`);
  }
  return { tree, id, owner: false, start: await tree.fromShare(mine[0]!, id.encryption.privateKey) };
}

/** Opens the drive as a link's guest: the link's node, its key from the link string. */
async function linkSession(text: string, password: string | undefined, serviceName: string): Promise<Session> {
  const { parseLink, openLink } = await import('../actors/drive/link.ts');
  const { DriveTree } = await import('../actors/drive/tree.ts');
  const ref = parseLink(text);
  if (!ref) throw new Error(`${text} is not a drive link (<relay>/drive/<identity>/links/<id>#<key>)`);
  const client = await httpClient(ref.relay, serviceName);
  const opened = await openLink(client, ref, password);
  const tree = new DriveTree(client, ref.drive, opened.actor);
  const [s] = await tree.shares();
  if (!s) throw new Error('the link lists no share');
  return { tree, owner: false, start: await tree.fromShare(s, opened.linkKey) };
}

/** The node at `path`, or the start; the session's start is required. */
async function at(s: Session, path: string | undefined): Promise<Opened> {
  if (!s.start) {
    const { DriveRefused } = await import('../actors/drive/tree.ts');
    throw new DriveRefused(`${s.tree.drive}'s drive is empty (no root yet): put or mkdir something first`);
  }
  return path ? s.tree.resolve(s.start, path) : s.start;
}

/** The folder `path` names, creating it (and with `parents` the folders above it) when absent. */
async function folderAt(s: Session, path: string, parents: boolean): Promise<Opened> {
  const { DriveRefused } = await import('../actors/drive/tree.ts');
  const absent = (name: string) => new DriveRefused(`no folder ${name} (give --parents to create the folders on the way)`);
  // The owner's first write makes the root, unless it is refused anyway.
  if (!s.start && s.owner && split(path).name !== '' && !parents) throw absent(path.split('/').find(Boolean)!);
  const start = s.start ?? (s.owner ? await s.tree.createRoot(s.id!, s.id!.encryption.publicKey) : await at(s, undefined));
  s.start = start;
  const { found, missing } = await s.tree.walk(start, path);
  let folder = found[found.length - 1]!;
  if (folder.kind !== 'folder') throw new DriveRefused(`${folder.name} is a file, not a folder`);
  if (missing.length > 0 && !parents) throw absent(missing[0]!);
  for (const name of missing) folder = await s.tree.mkdir(s.id!, folder, name);
  return folder;
}

const split = (path: string): { dir: string; name: string } => {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  return { dir: parts.slice(0, -1).join('/'), name: parts[parts.length - 1] ?? '' };
};

function putCommand({ drive, io, run }: DriveKit): void {
  keyed(
    drive
      .command('put')
      .description('encrypt a local file and write it to the drive: a new file, or a new version replacing the existing one')
      .argument('<local-file>', 'the file to upload')
      .argument('<drive-path>', 'where in the drive; a path ending in / (or naming a folder) keeps the local name'),
  )
    .option('--parents', 'create missing folders on the way')
    .action((local: string, path: string, flags: Common & { parents?: boolean }) =>
      run('put', async () => {
        const bytes = new Uint8Array(await readFile(local));
        const s = await session(flags);
        let { dir, name } = split(path);
        const start = s.start;
        const named = start && name ? await s.tree.walk(start, path) : undefined;
        if (path.endsWith('/') || name === '' || (named?.missing.length === 0 && named.found[named.found.length - 1]!.kind === 'folder')) {
          dir = [dir, name].filter(Boolean).join('/');
          name = basename(local);
        }
        const folder = await folderAt(s, dir, flags.parents ?? false);
        const existing = (await s.tree.children(folder)).find((c) => c.name === name.normalize('NFC'));
        const r = await s.tree.put(s.id!, folder, name, bytes, existing);
        io.stdout.write(`${r.replaced ? 'replaced' : 'wrote'} ${[dir, name].filter(Boolean).join('/')} (${bytes.length} bytes, node ${r.node}, version ${r.version})\n`);
        return 0;
      })(),
    );
}

function getCommand({ drive, io, run }: DriveKit): void {
  keyed(
    drive.command('get').description('read a file from the drive and decrypt it (as its owner, a member, or with --link a guest)').argument('[drive-path]', 'the file (a link to a file needs none)'),
    false,
  )
    .option('--out <file>', 'where to write it (default: standard output)')
    .option('--link <link>', 'a link string from `drive link` (no key file needed)')
    .option('--password <password>', "the link's password")
    .action((path: string | undefined, flags: Common & { out?: string; link?: string; password?: string }) =>
      run('get', async () => {
        const s = flags.link ? await linkSession(flags.link, flags.password, flags.serviceName) : await session(flags);
        const file = await at(s, path);
        const bytes = await s.tree.read(file);
        if (flags.out && flags.out !== '-') {
          await writeFile(flags.out, bytes);
          io.stdout.write(`wrote ${flags.out} (${bytes.length} bytes)\n`);
        } else io.stdout.write(Buffer.from(bytes).toString('utf8'));
        return 0;
      })(),
    );
}

function lsCommand({ drive, io, run }: DriveKit): void {
  keyed(drive.command('ls').description("list a folder's children with their opened names").argument('[drive-path]', 'the folder (default: the root, or the shared node)'), false)
    .option('--link <link>', 'a link string from `drive link`')
    .option('--password <password>', "the link's password")
    .action((path: string | undefined, flags: Common & { link?: string; password?: string }) =>
      run('ls', async () => {
        const s = flags.link ? await linkSession(flags.link, flags.password, flags.serviceName) : await session(flags);
        if (!s.start) {
          io.stdout.write('(empty drive)\n');
          return 0;
        }
        const node = await at(s, path);
        const entries = node.kind === 'folder' ? await s.tree.children(node) : [node];
        for (const e of entries.sort((a, b) => a.name.localeCompare(b.name)))
          io.stdout.write(`${e.kind === 'folder' ? 'folder' : 'file  '}  ${e.node}  ${e.name || '(shared file)'}${e.kind === 'folder' ? '/' : ''}\n`);
        if (entries.length === 0) io.stdout.write('(empty folder)\n');
        return 0;
      })(),
    );
}

function mkdirCommand({ drive, io, run }: DriveKit): void {
  keyed(drive.command('mkdir').description('create a folder').argument('<drive-path>', 'the new folder'))
    .option('--parents', 'create missing folders on the way, and accept one that exists')
    .action((path: string, flags: Common & { parents?: boolean }) =>
      run('mkdir', async () => {
        const s = await session(flags);
        const { dir, name } = split(path);
        if (!name) throw new Error('give the folder a name');
        const parent = await folderAt(s, dir, flags.parents ?? false);
        const there = (await s.tree.children(parent)).find((c) => c.name === name.normalize('NFC'));
        if (there && !(flags.parents && there.kind === 'folder')) {
          const { DriveRefused } = await import('../actors/drive/tree.ts');
          throw new DriveRefused(`${path} exists`);
        }
        const made = there ?? (await s.tree.mkdir(s.id!, parent, name));
        io.stdout.write(`${there ? 'exists' : 'made'} ${path}/ (node ${made.node})\n`);
        return 0;
      })(),
    );
}
