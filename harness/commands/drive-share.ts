// `svc-conformance drive share | unshare | shares | link | watch`: who else reads a drive. A share
// seals a node's key to a member's encryption key (looked up as `relay send` does) or to a link's
// fresh key, which the printed link string carries; `watch` follows the drive's event stream
// until the relay closes it (a member's, when its last share ends).
import { Option } from 'commander';
import type { Common, DriveKit } from './drive-kit.ts';
import { parsePositive } from './shared.ts';

type Obj = Record<string, unknown>;
const ROLES = ['read', 'write', 'admin', 'append', 'create'] as const;

export function registerShareCommands(kit: DriveKit): void {
  shareCommands(kit);
  linkCommand(kit);
  watchCommand(kit);
}

const printShare = (io: DriveKit['io'], s: Obj) =>
  io.stdout.write(
    `${String(s.id)}  ${String(s.role).padEnd(6)}  ${s.member ? String(s.member) : `link ${String(s.link)}`}  node ${String(s.node)}${s.expires ? `  until ${String(s.expires)}` : ''}\n`,
  );

/** A member's encryption key: given, or looked up in a test authority as `relay send` does. */
async function encryptionKeyOf(identity: string, flags: { authority?: string; encryptionKey?: string }): Promise<Uint8Array> {
  let text = flags.encryptionKey;
  if (text === undefined && flags.authority !== undefined) {
    const { AuthorityClient } = await import('../actors/authority/client.ts');
    text = (await new AuthorityClient(flags.authority).identity(identity))?.encryption_public_key;
    if (!text) throw new Error(`${identity} publishes no encryption key in the authority`);
  }
  if (text === undefined) throw new Error(`give --authority (where ${identity}'s encryption key is published) or --encryption-key x25519:<base64url>`);
  const key = Buffer.from(text.replace(/^x25519:/, ''), 'base64url');
  if (key.length !== 32) throw new Error(`${text} is not an X25519 public key`);
  return new Uint8Array(key);
}

function shareCommands({ drive, io, run, keyed, session, at }: DriveKit): void {
  keyed(drive.command('share').description("share a file or folder with an identity (its node key sealed to the member's encryption key)").argument('<drive-path>', 'what to share'))
    .requiredOption('--with <identity>', 'the member, homed on any relay')
    .addOption(new Option('--role <role>', 'what the member may do').choices(ROLES).default('read'))
    .option('--authority <admin-url>', "where the member's encryption key is looked up (a test authority)")
    .option('--encryption-key <key>', "the member's encryption key, x25519:<base64url> (instead of --authority)")
    .option('--expires <rfc3339>', 'when the share ends')
    .action((path: string, flags: Common & { with: string; role: (typeof ROLES)[number]; authority?: string; encryptionKey?: string; expires?: string }) =>
      run('share', async () => {
        const member = flags.with.toLowerCase();
        const encryption = await encryptionKeyOf(member, flags);
        const s = await session(flags);
        const node = await at(s, path);
        const { share } = await import('../actors/drive/objects.ts');
        const made = share(s.tree.profile, {
          drive: s.tree.drive,
          issuer: s.id!,
          node: node.keys,
          role: flags.role,
          member: { identity: member, encryption },
          ...(flags.expires ? { expires: flags.expires } : {}),
        });
        await s.tree.commit(`sharing ${path}`, made.body);
        io.stdout.write(`shared ${path} with ${member} (${flags.role}): share ${String((made.body.share as Obj).id)}\n`);
        return 0;
      })(),
    );

  keyed(drive.command('unshare').description('end a share (member or link); its member hears drive.revoked and its stream closes').argument('<share-id>', 'from `drive shares`')).action(
    (id: string, flags: Common) =>
      run('unshare', async () => {
        const s = await session(flags);
        await s.tree.unshare(id);
        io.stdout.write(`ended share ${id}\n`);
        return 0;
      })(),
  );

  keyed(drive.command('shares').description("list shares: the drive's (the owner: all; a member: its own), or those on a path and its folders").argument('[drive-path]', 'a file or folder')).action(
    (path: string | undefined, flags: Common) =>
      run('shares', async () => {
        const s = await session(flags, path !== undefined);
        let list: Obj[];
        if (path) {
          const { DriveRefused } = await import('../actors/drive/tree.ts');
          const node = await at(s, path);
          const r = await s.tree.client.node(s.tree.drive, s.tree.actor, node.node, '/shares');
          if (r.status !== 200) throw new DriveRefused(`the shares of ${path}`, r);
          list = (r.json() as { shares: Obj[] }).shares;
        } else list = await s.tree.shares();
        for (const x of list) printShare(io, x);
        if (list.length === 0) io.stdout.write('no shares\n');
        return 0;
      })(),
  );
}

function linkCommand({ drive, io, run, keyed, session, at }: DriveKit): void {
  keyed(drive.command('link').description('make a link: anyone holding the printed string reads the file or folder (its key travels after #)').argument('<drive-path>', 'what to share'))
    .option('--password <password>', 'also ask for this password (the relay checks its argon2id verifier)')
    .option('--downloads <n>', 'how many downloads of the file the link allows (each read of its first chunk spends one)', parsePositive)
    .option('--pow <bits>', 'ask each guest for a proof of work of this many bits', parsePositive)
    .option('--expires <rfc3339>', 'when the link ends')
    .action((path: string, flags: Common & { password?: string; downloads?: number; pow?: number; expires?: string }) =>
      run('link', async () => {
        const s = await session(flags);
        const node = await at(s, path);
        const { randomBytes } = await import('node:crypto');
        const { hex16, share } = await import('../actors/drive/objects.ts');
        const { linkSecrets } = await import('../impl/noble-drive.ts');
        const { formatLink } = await import('../actors/drive/link.ts');
        let password: { salt: Uint8Array; verifierHash: string; key: Uint8Array } | undefined;
        if (flags.password !== undefined) {
          const salt = new Uint8Array(randomBytes(16));
          password = { salt, ...(await linkSecrets(flags.password, salt)) };
        }
        const link = hex16();
        const made = share(s.tree.profile, {
          drive: s.tree.drive,
          issuer: s.id!,
          node: node.keys,
          role: 'read',
          link,
          ...(flags.downloads ? { caps: { downloads: flags.downloads } } : {}),
          ...(password ? { password } : {}),
          ...(flags.pow ? { pow: flags.pow } : {}),
          ...(flags.expires ? { expires: flags.expires } : {}),
        });
        await s.tree.commit(`linking ${path}`, made.body);
        io.stdout.write(`${formatLink({ relay: s.tree.client.url, drive: s.tree.drive, link, key: made.linkKey! })}\n`);
        io.stderr.write(`share ${String((made.body.share as Obj).id)} (drive unshare ends the link)\n`);
        return 0;
      })(),
    );
}

function watchCommand({ drive, io, run, keyed, httpClient }: DriveKit): void {
  keyed(drive.command('watch').description("print the drive's events (drive.changed, drive.revoked) until the relay closes the stream"))
    .option('--timeout <s>', 'stop after this many seconds', parsePositive)
    .action((flags: Common & { timeout?: number }) =>
      run('watch', async () => {
        if (!flags.key || !flags.relay) throw new Error('give --key and --relay');
        const { readRelayKey } = await import('../actors/relay/keyfile.ts');
        const { untilInterrupted } = await import('../actors/command-context.ts');
        const id = await readRelayKey(flags.key);
        const client = await httpClient(flags.relay, flags.serviceName);
        const name = (flags.drive ?? id.identity).toLowerCase();
        const stream = await client.events(name, { identity: id.identity, seed: id.seed });
        if (stream.status !== 200) {
          io.stderr.write(`svc-conformance drive watch: the relay answered ${stream.status} ${(stream.body ?? '').slice(0, 300)}\n`);
          return 1;
        }
        io.stdout.write(`watching ${name}'s drive as ${id.identity}\n`);
        const stop = new AbortController();
        const interrupted = untilInterrupted(AbortSignal.any([stop.signal, ...(io.signal ? [io.signal] : [])])).then(() => 'stopped');
        const timer = flags.timeout ? setTimeout(() => stop.abort(), flags.timeout * 1000) : undefined;
        try {
          for (let seen = 0; ; seen++) {
            const next = stream
              .next(() => true, 2 ** 31 - 1, seen)
              .then(
                (e) => e,
                () => undefined,
              );
            const e = await Promise.race([next, interrupted]);
            if (typeof e === 'string') {
              io.stdout.write('stopped\n');
              return 0;
            }
            if (e === undefined) break;
            io.stdout.write(`${eventLine(e.event, e.data as Obj)}\n`);
          }
          io.stdout.write('the relay closed the stream\n');
          return 0;
        } finally {
          if (timer) clearTimeout(timer);
          stop.abort();
          await stream.close();
        }
      })(),
    );
}

function eventLine(event: string, data: Obj): string {
  const d = (data.drive ?? {}) as Obj;
  if (event === 'drive.changed') return `${String(data.timestamp)} drive.changed seq ${String(d.seq)} ${String(d.operation)} node ${String(d.node)}${d.share ? ` share ${String(d.share)}` : ''}`;
  if (event === 'drive.revoked') return `${String(data.timestamp)} drive.revoked share ${String(d.share)}`;
  return `${String(data.timestamp ?? '')} ${event}`.trim();
}
