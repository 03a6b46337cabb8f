// `svc-conformance relay passkey | keystore | pair`: the owner's side of a relay by hand. A
// software passkey (the harness's authenticator, kept in a file) enrolls a wrapped copy of a key
// file in the relay's keystore and fetches it back with a WebAuthn assertion; pairing moves a key
// file to a second device, the two terminals showing the same six digits.
import { readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { Option } from 'commander';
import type { RelayKit } from './relay-kit.ts';
import { DEFAULT_SERVICE_NAME } from '../../protocol/common/profile.ts';

const ALGS = { es256: -7, eddsa: -8, rs256: -257 } as const;
const POLL_MS = 1000;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const grouped = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

async function loadPasskey(file: string) {
  const { SoftwareAuthenticator } = await import('../actors/relay/authenticator.ts');
  return SoftwareAuthenticator.load(JSON.parse(await readFile(file, 'utf8')) as Parameters<typeof SoftwareAuthenticator.load>[0]);
}

const savePasskey = async (file: string, passkey: Awaited<ReturnType<typeof loadPasskey>>) => writeFile(file, `${JSON.stringify(passkey.save(), null, 2)}\n`, { mode: 0o600 });

/** The key file's secrets, as the keystore wraps them and pairing seals them. */
const secretsOf = (id: import('../actors/relay/index.ts').RelayIdentity) => ({
  seed: Buffer.from(id.seed).toString('base64url'),
  encryption_private_key: Buffer.from(id.encryption.privateKey).toString('base64url'),
});

async function writeKey(file: string, identity: string, secrets: { seed: string; encryption_private_key: string }): Promise<void> {
  await writeFile(file, `${JSON.stringify({ identity, ...secrets }, null, 2)}\n`, { mode: 0o600 });
}

export function registerOwnerCommands(kit: RelayKit): void {
  passkeyCommand(kit);
  keystoreCommands(kit);
  pairCommands(kit);
  systemCommand(kit);
}

function systemCommand({ relay, io, run, load, client, refused }: RelayKit): void {
  relay
    .command('system')
    .description("read, write or delete one of the identity's system documents (GET/PUT/DELETE .../system/:path, challenge-signed)")
    .argument('<action>', 'get, put or delete')
    .argument('<path>', 'the document, e.g. relay/inbox-policy.json or public/profile.json')
    .requiredOption('--key <file>', "the identity's key file")
    .requiredOption('--relay <url>', 'the relay hosting the identity')
    .option('--json <text>', 'put: the document')
    .option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME)
    .action((action: string, path: string, flags: { key: string; relay: string; json?: string; serviceName: string }) =>
      run('system', async () => {
        const methods: Record<string, 'GET' | 'PUT' | 'DELETE'> = { get: 'GET', put: 'PUT', delete: 'DELETE' };
        const method = methods[action];
        if (!method || (method === 'PUT') !== (flags.json !== undefined)) throw new Error('give get, put --json TEXT, or delete');
        const id = await load(flags.key);
        const r = await (await client(flags.relay, flags.serviceName)).systemFile(id, method, path, flags.json);
        if (r.status < 200 || r.status >= 300) return refused(`system ${action}`, r);
        io.stdout.write(method === 'GET' ? `${r.text()}\n` : `${action === 'put' ? 'wrote' : 'deleted'} ${path}\n`);
        return 0;
      })(),
    );
}

function passkeyCommand({ relay, io, run }: RelayKit): void {
  relay
    .command('passkey')
    .description('a software passkey kept in a file (for the keystore): `relay passkey new`')
    .command('new')
    .description('write a new software passkey: a WebAuthn credential with a PRF secret, and its signature counter')
    .requiredOption('--out <file>', 'where to write it (JSON; keep it private)')
    .addOption(new Option('--alg <alg>', 'its COSE algorithm').choices(Object.keys(ALGS)).default('es256'))
    .action((flags: { out: string; alg: keyof typeof ALGS }) =>
      run('passkey new', async () => {
        const { SoftwareAuthenticator } = await import('../actors/relay/authenticator.ts');
        const passkey = new SoftwareAuthenticator(ALGS[flags.alg]);
        await savePasskey(flags.out, passkey);
        io.stdout.write(`wrote ${flags.out}: a passkey (${flags.alg.toUpperCase()}), credential ${passkey.credentialId}\n`);
        return 0;
      })(),
    );
}

function keystoreCommands({ relay, io, run, load, client, refused }: RelayKit): void {
  const keystore = relay.command('keystore').description("the identity's keystore: wrapped copies of a key file, one per passkey");
  const common = (cmd: ReturnType<typeof keystore.command>) =>
    cmd.requiredOption('--relay <url>', 'the relay hosting the identity').option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME);

  common(keystore.command('enroll').description('wrap the key file for a passkey and enroll it (PUT .../keystore, signed by the identity key)'))
    .requiredOption('--key <file>', 'the key file to wrap (and to sign the enrollment with)')
    .requiredOption('--passkey <file>', 'the passkey from `relay passkey new`')
    .option('--enrollment-id <id>', 'the enrollment id (default: passkey- and the start of the credential id)')
    .option('--label <text>', 'a label the list shows')
    .action((flags: { key: string; passkey: string; relay: string; enrollmentId?: string; label?: string; serviceName: string }) =>
      run('keystore enroll', async () => {
        const id = await load(flags.key);
        const passkey = await loadPasskey(flags.passkey);
        const c = await client(flags.relay, flags.serviceName);
        const { wrapSecrets } = await import('../actors/relay/wrap.ts');
        const enrollmentId = flags.enrollmentId ?? `passkey-${passkey.credentialId.slice(0, 12).replace(/[^A-Za-z0-9_-]/g, '')}`;
        const r = await c.keystoreEnroll(id, {
          enrollment_id: enrollmentId,
          kind: 'passkey',
          wrap: 'prf',
          wrapped: wrapSecrets(c.profile, passkey, secretsOf(id)),
          ...passkey.credential(),
          ...(flags.label !== undefined ? { label: flags.label } : {}),
        });
        if (r.status < 200 || r.status >= 300) return refused('keystore enroll', r);
        io.stdout.write(`enrolled ${enrollmentId} for ${id.identity} (credential ${passkey.credentialId})\n`);
        return 0;
      })(),
    );

  common(keystore.command('list').description('the enrollments (POST .../keystore/list, signed by the identity key)'))
    .requiredOption('--key <file>', "the identity's key file")
    .action((flags: { key: string; relay: string; serviceName: string }) =>
      run('keystore list', async () => {
        const id = await load(flags.key);
        const r = await (await client(flags.relay, flags.serviceName)).keystoreList(id);
        if (r.status !== 200) return refused('keystore list', r);
        const list = ((r.json() as { enrollments?: Array<Record<string, unknown>> }).enrollments ?? []).map(
          (e) => `${String(e.enrollment_id)}  ${String(e.kind)}/${String(e.wrap)}${e.label ? `  ${String(e.label)}` : ''}`,
        );
        io.stdout.write(list.length > 0 ? `${list.join('\n')}\n` : 'no enrollments\n');
        return 0;
      })(),
    );

  common(keystore.command('fetch').description('fetch the wrapped copies with a passkey assertion (GET /auth/challenge, POST .../keystore/fetch) and unwrap the key file'))
    .requiredOption('--identity <id>', 'the identity whose keystore to read')
    .requiredOption('--passkey <file>', 'the enrolled passkey (its signature counter is updated)')
    .requiredOption('--out <file>', 'where to write the key file (JSON; keep it private)')
    .option('--rp-id <id>', 'the RP id the assertion names: the identity (default) or, when hosted, its registrable domain')
    .action((flags: { identity: string; passkey: string; relay: string; out: string; rpId?: string; serviceName: string }) =>
      run('keystore fetch', async () => {
        const identity = flags.identity.toLowerCase();
        const passkey = await loadPasskey(flags.passkey);
        const c = await client(flags.relay, flags.serviceName);
        // As a web app asks a browser: the challenge as TextEncoder's bytes of the issued string, and
        // rp_id only when one is chosen. A relay that takes neither gets the challenge as issued and
        // rp_id named (the project's earlier forms; document 3 states neither).
        let r: Awaited<ReturnType<typeof c.keystoreFetch>> | undefined;
        for (const form of ['utf8', 'issued'] as const) {
          const ch = await c.challenge(identity);
          if (ch.status !== 200) return refused('keystore fetch (GET /auth/challenge)', ch);
          const { challenge } = ch.json() as { challenge: string };
          const assertion = passkey.assert({ challenge, challengeForm: form, rpId: flags.rpId ?? identity });
          await savePasskey(flags.passkey, passkey);
          r = await c.keystoreFetch(identity, assertion, form === 'utf8' ? flags.rpId : (flags.rpId ?? identity));
          if (r.status !== 401) break;
        }
        if (r!.status !== 200) return refused('keystore fetch', r!);
        const { unwrapSecrets } = await import('../actors/relay/wrap.ts');
        const entries = (r!.json() as { entries?: Array<{ wrapped?: unknown }> }).entries ?? [];
        const secrets = entries.map((e) => unwrapSecrets(c.profile, passkey, e.wrapped)).find((s) => s !== undefined);
        if (!secrets) {
          io.stderr.write(`svc-conformance relay keystore fetch: none of the ${entries.length} entries unwraps with this passkey\n`);
          return 1;
        }
        await writeKey(flags.out, identity, secrets);
        io.stdout.write(`wrote ${flags.out} for ${identity} from its keystore\n`);
        return 0;
      })(),
    );

  common(keystore.command('remove').description('remove an enrollment (DELETE .../keystore/:enrollment, signed by the identity key)'))
    .requiredOption('--key <file>', "the identity's key file")
    .requiredOption('--enrollment-id <id>', 'the enrollment to remove')
    .option('--allow-last', 'allow removing the last enrollment (allow_last)')
    .action((flags: { key: string; relay: string; enrollmentId: string; allowLast?: boolean; serviceName: string }) =>
      run('keystore remove', async () => {
        const id = await load(flags.key);
        const r = await (await client(flags.relay, flags.serviceName)).keystoreRemove(id, flags.enrollmentId, flags.allowLast ? { allow_last: true } : {});
        if (r.status < 200 || r.status >= 300) return refused('keystore remove', r);
        io.stdout.write(`removed ${flags.enrollmentId}\n`);
        return 0;
      })(),
    );
}

function pairCommands({ relay, io, run, load, client, refused }: RelayKit): void {
  const pair = relay.command('pair').description('move a key file to a new device (pairing v2): `pair new` on the new device, `pair approve` on one holding the key');
  const waitFor = async <T>(what: string, timeoutS: number, poll: () => Promise<T | undefined>): Promise<T> => {
    const until = Date.now() + timeoutS * 1000;
    for (;;) {
      const got = await poll();
      if (got !== undefined) return got;
      if (Date.now() > until) throw new Error(`gave up waiting for ${what} after ${timeoutS} s`);
      await sleep(POLL_MS);
    }
  };

  pair
    .command('new')
    .description('on the new device: offer, show the code, reveal once the approver is in, show the six digits, and write the key file it is sent')
    .requiredOption('--relay <url>', 'the relay hosting the identity')
    .requiredOption('--identity <id>', 'the identity to join')
    .requiredOption('--out <file>', 'where to write the key file (JSON; keep it private)')
    .option('--label <text>', 'how the approver sees this device', 'svc-conformance CLI')
    .option('--timeout <s>', 'how long to wait for the approver', (v: string) => Number(v), 600)
    .option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME)
    .action((flags: { relay: string; identity: string; out: string; label: string; timeout: number; serviceName: string }) =>
      run('pair new', async () => {
        const identity = flags.identity.toLowerCase();
        const c = await client(flags.relay, flags.serviceName);
        const { offer, sixDigits, openSealed } = await import('../actors/relay/pairing.ts');
        const o = await offer(c, identity, flags.label);
        if (o.code === undefined || o.token === undefined) return refused('pair new (offer)', o.answer);
        const [code, token] = [o.code, o.token];
        io.stdout.write(`code ${grouped(code)}: on a device holding ${identity}'s key run\n  svc-conformance relay pair approve --key <key file> --relay ${flags.relay} --code ${grouped(code)}\n`);
        const state = async () => {
          const r = await c.enrollPoll(identity, code, token);
          if (r.status !== 200) throw new Error(`the poll answered ${r.status} ${r.text().slice(0, 200)}`);
          return r.json() as { state?: string; approver_nonce?: string; sealed?: string };
        };
        const nonce = await waitFor('the approver', flags.timeout, async () => (await state()).approver_nonce);
        const revealed = await c.enrollReveal(identity, code, token, o.key);
        if (revealed.status < 200 || revealed.status >= 300) return refused('pair new (reveal)', revealed);
        io.stdout.write(`compare: ${sixDigits(c.profile, o, nonce)} (the approver shows the same six digits)\n`);
        const sealed = await waitFor('the approver to send the key', flags.timeout, async () => (await state()).sealed);
        const opened = openSealed(c.profile, o.secret, sealed);
        if (!opened) throw new Error('what the approver sent does not open with this device key');
        await writeKey(flags.out, identity, JSON.parse(new TextDecoder().decode(opened)) as { seed: string; encryption_private_key: string });
        io.stdout.write(`wrote ${flags.out} for ${identity}\n`);
        return 0;
      })(),
    );

  pair
    .command('approve')
    .description('on a device holding the key: join the offer, check the new device opened its commitment, compare the six digits, and send it the key file sealed')
    .requiredOption('--key <file>', "the identity's key file")
    .requiredOption('--relay <url>', 'the relay hosting the identity')
    .requiredOption('--code <code>', 'the code the new device shows (typed loosely)')
    .option('--yes', 'do not ask whether the six digits match')
    .option('--timeout <s>', 'how long to wait for the new device', (v: string) => Number(v), 600)
    .option('--service-name <name>', 'the profile name', DEFAULT_SERVICE_NAME)
    .action((flags: { key: string; relay: string; code: string; yes?: boolean; timeout: number; serviceName: string }) =>
      run('pair approve', async () => {
        const id = await load(flags.key);
        const c = await client(flags.relay, flags.serviceName);
        const { approverNonce, sixDigits, sealFor } = await import('../actors/relay/pairing.ts');
        const { pairingCommitment } = await import('../../protocol/common/canonical.ts');
        const { normalizeShortCode } = await import('../../protocol/signin/reference.ts');
        const code = normalizeShortCode(flags.code) ?? flags.code;
        const nonce = approverNonce();
        const fetchOffer = () => c.enrollFetch(id, code, { approver_nonce: nonce, mode: 'compare' });
        const first = await fetchOffer();
        if (first.status !== 200) return refused('pair approve (fetch)', first);
        const { commitment, label } = first.json() as { commitment: string; label?: string };
        io.stdout.write(`joined the offer of ${label ?? 'a new device'}; waiting for it to reveal its key\n`);
        const key = await waitFor('the new device', flags.timeout, async () => {
          const b = (await fetchOffer()).json() as { ephemeral_public_key?: string; commit_nonce?: string };
          return b.ephemeral_public_key && b.commit_nonce ? { ephemeral_public_key: b.ephemeral_public_key, commit_nonce: b.commit_nonce } : undefined;
        });
        // The approver checks the commitment itself: a relay swapping the key would be caught here.
        if (pairingCommitment(c.profile, key) !== commitment) throw new Error('the revealed key does not open the commitment: stop, this offer is not the new device');
        io.stdout.write(`compare: ${sixDigits(c.profile, { key, commitment }, nonce)} (the new device shows the same six digits)\n`);
        if (!flags.yes) {
          const rl = createInterface({ input: process.stdin, output: process.stdout });
          const yes = /^y(es)?$/i.test((await rl.question('Do the six digits match? [y/N] ')).trim());
          rl.close();
          if (!yes) {
            io.stdout.write('not sent\n');
            return 1;
          }
        }
        const sealed = sealFor(c.profile, key.ephemeral_public_key, new TextEncoder().encode(JSON.stringify(secretsOf(id))));
        const r = await c.enrollDeliver(id, code, sealed);
        if (r.status < 200 || r.status >= 300) return refused('pair approve (deliver)', r);
        io.stdout.write(`sent ${id.identity}'s key to the new device\n`);
        return 0;
      })(),
    );
}
