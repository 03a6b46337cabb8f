// `svc-conformance relay`: the relay client by hand, for people trying a relay: make a key (signing
// and encryption), register it as a hosted identity (and publish it in a test authority, as a DNS
// provider would), send a sealed message, and read (and open) the mail waiting.
import type { Command } from 'commander';
import type { CommandContext } from '../actors/command-context.ts';
import type { RelayKit } from './relay-kit.ts';
import { registerOwnerCommands } from './relay-owner.ts';
import { DEFAULT_SERVICE_NAME } from '../../protocol/common/profile.ts';

const EXAMPLES = `
Exit codes: 0 done; 1 the relay refused (its status and error are printed); 2 bad usage.

Examples (two relays and a test authority on loopback, see docs/try-it.md):
  $ svc-conformance relay keygen --identity alice.a.relay.test --out alice.json
  $ svc-conformance relay register --key alice.json --relay http://127.0.0.1:8441 --authority http://127.0.88.1:8055
  $ svc-conformance relay send --key alice.json --relay http://127.0.0.1:8441 --to bob.b.relay.test --text 'hello bob' --authority http://127.0.88.1:8055
  $ svc-conformance relay read --key bob.json --relay http://127.0.0.1:8442

The owner's side (see docs/walkthrough.md):
  $ svc-conformance relay passkey new --out passkey.json
  $ svc-conformance relay keystore enroll --key alice.json --passkey passkey.json --relay http://127.0.0.1:8441
  $ svc-conformance relay keystore fetch --identity alice.a.relay.test --passkey passkey.json --relay http://127.0.0.1:8441 --out restored.json
  $ svc-conformance relay pair new --relay http://127.0.0.1:8441 --identity alice.a.relay.test --out phone.json
  $ svc-conformance relay pair approve --key alice.json --relay http://127.0.0.1:8441 --code XXXX-XXXX
  $ svc-conformance relay system put relay/inbox-policy.json --key alice.json --relay http://127.0.0.1:8441 --json '{"version":1,"mode":"open"}'
`;

const loadKey = async (file: string) => (await import('../actors/relay/keyfile.ts')).readRelayKey(file);

export function registerRelayCommands(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const relay = ctx.configure(program.command('relay')).description('a relay client by hand: keygen, register, send, read; passkey, keystore, pair').addHelpText('after', EXAMPLES);
  const run = (label: string, body: () => Promise<number>) => async () => {
    try {
      ctx.setCode(await body());
    } catch (error) {
      io.stderr.write(`svc-conformance relay ${label}: ${(error as Error).message}\n`);
      ctx.setCode(2);
    }
  };
  const client = async (url: string, service: string) => {
    const { RelayClient } = await import('../actors/relay/index.ts');
    const { HttpClient } = await import('../actors/http.ts');
    const { profileFor } = await import('../../protocol/common/profile.ts');
    return new RelayClient(profileFor(service), url.replace(/\/$/, ''), new HttpClient({ timeoutMs: 20_000 }));
  };
  const refused = (what: string, r: { status: number; text(): string }) => {
    io.stderr.write(`svc-conformance relay ${what}: the relay answered ${r.status} ${r.text().slice(0, 300)}\n`);
    return 1;
  };

  const kit: RelayKit = { relay, io, run, load: loadKey, client, refused };
  keygenCommand(kit);
  registerCommand(kit);
  sendCommand(kit);
  readCommand(kit);
  registerOwnerCommands(kit);
}

function keygenCommand({ relay, io, run }: RelayKit): void {
  relay
    .command('keygen')
    .description('write a new identity key file: an Ed25519 signing seed and an X25519 encryption key')
    .requiredOption('--identity <name>', 'the service ID, e.g. alice.a.relay.test')
    .requiredOption('--out <file>', 'where to write it (JSON; keep it private)')
    .action((flags: { identity: string; out: string }) =>
      run('keygen', async () => {
        const { newRelayIdentity } = await import('../actors/relay/index.ts');
        const { writeRelayKey } = await import('../actors/relay/keyfile.ts');
        const id = newRelayIdentity(flags.identity.toLowerCase());
        await writeRelayKey(flags.out, id);
        io.stdout.write(`wrote ${flags.out} for ${id.identity}\n`);
        return 0;
      })(),
    );
}

function registerCommand({ relay, io, run, load, client, refused }: RelayKit): void {
  relay
    .command('register')
    .description('register the key as a hosted identity at a relay (POST /identities); with --authority also publish it there')
    .requiredOption('--key <file>', 'key file from `relay keygen`')
    .requiredOption('--relay <url>', "the relay's base address")
    .option('--authority <admin-url>', 'a test authority to publish the identity in (DNS and document naming the relay)')
    .option('--invite <code>', 'an invite code, when the relay registers by invite')
    .option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME)
    .action((flags: { key: string; relay: string; authority?: string; invite?: string; serviceName: string }) =>
      run('register', async () => {
        const id = await load(flags.key);
        const c = await client(flags.relay, flags.serviceName);
        const banner = (await c.banner()).json() as { relay_address?: string };
        const address = banner.relay_address ?? new URL(flags.relay).host;
        const r = await c.register(id, address, flags.invite ? { invite_code: flags.invite } : {});
        if (r.status !== 201) return refused('register', r);
        if (flags.authority) {
          const { AuthorityClient } = await import('../actors/authority/client.ts');
          await new AuthorityClient(flags.authority).publish({
            identity: id.identity,
            seed: id.seed,
            encryptionPublicKey: `x25519:${Buffer.from(id.encryption.publicKey).toString('base64url')}`,
            relay: address,
          });
        }
        io.stdout.write(`registered ${id.identity} at ${address}${flags.authority ? ' and published it in the authority' : ''}\n`);
        return 0;
      })(),
    );
}

function sendCommand({ relay, io, run, load, client, refused }: RelayKit): void {
  relay
    .command('send')
    .description("seal a message for the recipient's encryption key, sign it and POST it to your relay")
    .requiredOption('--key <file>', "the sender's key file")
    .requiredOption('--relay <url>', "the sender's relay")
    .requiredOption('--to <identity>', 'the recipient')
    .requiredOption('--text <text>', 'the message; - reads it from stdin')
    .requiredOption('--authority <admin-url>', "where the recipient's encryption key is looked up (a test authority)")
    .option('--type <type>', 'the signed message type, e.g. sys.auth.request (a bridge pushing a sign-in prompt)')
    .option('--expires-at <rfc3339>', 'the signed expiry of the message')
    .option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME)
    .action((flags: { key: string; relay: string; to: string; text: string; authority: string; type?: string; expiresAt?: string; serviceName: string }) =>
      run('send', async () => {
        const id = await load(flags.key);
        const text = flags.text === '-' ? await readStdin() : flags.text;
        const { AuthorityClient } = await import('../actors/authority/client.ts');
        const info = await new AuthorityClient(flags.authority).identity(flags.to.toLowerCase());
        const enc = info?.encryption_public_key?.replace(/^x25519:/, '');
        if (!enc) throw new Error(`${flags.to} publishes no encryption key in the authority`);
        const c = await client(flags.relay, flags.serviceName);
        const { message } = await import('../actors/relay/index.ts');
        const m = message(c.profile, id, flags.to.toLowerCase(), new Uint8Array(Buffer.from(enc, 'base64url')), text, {
          ...(flags.type !== undefined ? { type: flags.type } : {}),
          ...(flags.expiresAt !== undefined ? { expiresAt: flags.expiresAt } : {}),
        });
        const r = await c.send(m);
        if (r.status !== 202) return refused('send', r);
        io.stdout.write(`sent ${String(m.id)} to ${flags.to} (202)\n`);
        return 0;
      })(),
    );
}

const AUTH_REQUEST = 'sys.auth.request';

/** A pushed sign-in prompt (document 2, Authentication 7) as the user's app would show it. */
function promptLine(text: string): string {
  try {
    const p = JSON.parse(text) as { request_uri?: string; app?: { name?: string; host?: string }; expires_at?: string };
    return `sign-in request for ${p.app?.name ?? 'an application'} at ${p.app?.host ?? '?'} (until ${p.expires_at ?? '?'})
  approve with: svc-conformance signer approve --key <your key file> --match <the code the sign-in page shows> ${p.request_uri ?? ''}`;
  } catch {
    return `a ${AUTH_REQUEST} that is not JSON: ${text.slice(0, 200)}`;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function readCommand({ relay, io, run, load, client, refused }: RelayKit): void {
  relay
    .command('read')
    .description('pick up the mail waiting (drained on read; signed request) and open each message')
    .requiredOption('--key <file>', 'your key file')
    .requiredOption('--relay <url>', 'your relay')
    .option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME)
    .action((flags: { key: string; relay: string; serviceName: string }) =>
      run('read', async () => {
        const id = await load(flags.key);
        const c = await client(flags.relay, flags.serviceName);
        const r = await c.pickup(id, { mode: 'signed-request' });
        if (r.status !== 200) return refused('read', r);
        const { openMessage } = await import('../impl/noble.ts');
        const body = r.json() as { messages: Array<Record<string, unknown>>; acks: Array<Record<string, unknown>> };
        for (const m of body.messages) {
          const enc = m.encryption as Record<string, string>;
          const text = openMessage(
            c.profile.ids.message_seal_domain,
            id.encryption.privateKey,
            Buffer.from(enc.ephemeral_public_key!, 'base64url'),
            Buffer.from(enc.nonce!, 'base64url'),
            Buffer.from(String(m.payload), 'base64url'),
          );
          const opened = text ? new TextDecoder().decode(text) : undefined;
          io.stdout.write(`${String(m.timestamp)} from ${String(m.sender)}: ${m.type === AUTH_REQUEST && opened ? promptLine(opened) : (opened ?? '(cannot be opened with this key)')}\n`);
        }
        for (const a of body.acks) io.stdout.write(`ack ${String(a.state)} for ${String(a.message_id)} from ${String(a.sender)}\n`);
        if (body.messages.length + body.acks.length === 0) io.stdout.write('no mail\n');
        return 0;
      })(),
    );
}
