// `svc-conformance signer`: a signer for people testing their RP by hand: make a key, publish it
// to a running test authority, approve a request (encoded, deep link or reference link), or run a
// whole cross-device login against an RP's start URL.
import { readFile } from 'node:fs/promises';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { CommandContext } from '../actors/command-context.ts';
import type { ConsentView } from '../actors/signer/index.ts';
import { DEFAULT_SERVICE_NAME } from '../../protocol/common/profile.ts';

const EXAMPLES = `
Exit codes: 0 done; 1 refused (by this signer, with the rule id, or by the RP); 2 bad usage.

Examples:
  $ svc-conformance signer keygen --identity alice.id.test --out alice.json
  $ svc-conformance signer publish --key alice.json --authority http://127.0.88.1:8055
  $ svc-conformance signer approve --key alice.json --match 42 'http://127.0.0.1:8080/r/7KQ2M9XD'
  $ svc-conformance signer approve --key alice.json 'svc://auth?request=eyJ...'
  $ svc-conformance signer login --key alice.json --rp-start http://127.0.0.1:8080/login
`;

interface TlsFlags {
  ca?: string;
  dnsServer?: string;
  serviceName: string;
}

function withTls(cmd: Command): Command {
  return cmd
    .option('--ca <file>', "also trust this CA certificate (PEM) for HTTPS, e.g. the test authority's ca.pem")
    .option('--dns-server <ip:port>', 'resolve RP host names with this DNS server (e.g. the test authority)')
    .option('--service-name <name>', 'the profile name (svc, poweur, ...)', DEFAULT_SERVICE_NAME);
}

function matchCode(value: string): string {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('a match code is digits');
  return value.trim();
}

/** Runs an action and sets the exit code: 0 done, 1 refused, 2 usage. */
type Runner = (label: string, body: () => Promise<void>) => () => Promise<void>;

/** What each signer subcommand is given: the context, its parent command and the runner. */
interface SignerKit {
  ctx: CommandContext;
  signer: Command;
  io: CommandContext['io'];
  run: Runner;
}

export function registerSignerCommands(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const signer = ctx.configure(program.command('signer')).description('a signer for testing an RP by hand: keygen, publish, approve, login').addHelpText('after', EXAMPLES);
  /** Runs an action; SignerError and RP refusals exit 1, usage problems 2. */
  const run: Runner = (label: string, body: () => Promise<void>) => async () => {
    const { SignerError } = await import('../actors/signer/index.ts');
    try {
      await body();
      ctx.setCode(0);
    } catch (error) {
      if (error instanceof SignerError) {
        for (const p of error.problems) io.stderr.write(`svc-conformance signer ${label}: refused: ${p.detail} [${p.ruleId}${p.code ? `, ${p.code}` : ''}]\n`);
        ctx.setCode(1);
      } else if (error instanceof UsageError) {
        io.stderr.write(`svc-conformance signer ${label}: ${error.message}\n`);
        ctx.setCode(2);
      } else {
        io.stderr.write(`svc-conformance signer ${label}: ${(error as Error).message}\n`);
        ctx.setCode(1);
      }
    }
  };

  const kit: SignerKit = { ctx, signer, io, run };
  keygenCommand(kit);
  publishCommand(kit);
  approveCommand(kit);
  loginCommand(kit);
}

async function makeSigner(flags: TlsFlags) {
  const { Signer } = await import('../actors/signer/index.ts');
  const { profileFor } = await import('../../protocol/common/profile.ts');
  let ca: string | undefined;
  if (flags.ca) {
    try {
      ca = await readFile(flags.ca, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read --ca ${flags.ca}: ${(error as Error).message}`);
    }
  }
  return new Signer({ profile: profileFor(flags.serviceName), ...(ca ? { ca } : {}), ...(flags.dnsServer ? { dnsServer: flags.dnsServer } : {}) });
}

async function loadKey(file: string) {
  const { readKeyFile } = await import('../actors/signer/index.ts');
  try {
    return await readKeyFile(file);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function keygenCommand({ ctx, signer, io, run }: SignerKit): void {
  ctx
    .configure(signer.command('keygen'))
    .description('make an Ed25519 identity key and write the key file (JSON: identity, seed, public_key)')
    .requiredOption('--identity <name>', 'the service ID (a DNS name such as alice.id.test)')
    .option('--out <file>', 'write the key file here (default: print it)')
    .option('--force', 'overwrite an existing --out file')
    .option('--service-name <name>', 'the profile name, for the TXT record shown', DEFAULT_SERVICE_NAME)
    .action((flags: { identity: string; out?: string; force?: boolean; serviceName: string }) =>
      run('keygen', async () => {
        const { newKey, keyFileOf, writeKeyFile } = await import('../actors/signer/index.ts');
        const { profileFor } = await import('../../protocol/common/profile.ts');
        let key;
        try {
          key = newKey(flags.identity);
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
        const file = keyFileOf(key);
        const ids = profileFor(flags.serviceName).ids;
        if (flags.out) {
          if (
            !flags.force &&
            (await access(flags.out).then(
              () => true,
              () => false,
            ))
          )
            throw new UsageError(`${flags.out} exists (use --force to overwrite)`);
          await writeKeyFile(flags.out, key);
          io.stdout.write(`wrote ${flags.out} for ${key.identity}\n`);
        } else io.stdout.write(`${JSON.stringify(file, null, 2)}\n`);
        io.stdout.write(`public key ${file.public_key}\nDNS: ${ids.dns_txt_label}.${key.identity} TXT "${ids.txt_pubkey_prefix}${file.public_key.slice(file.public_key.indexOf(':') + 1)}"\n`);
      })(),
    );
}

function publishCommand({ ctx, signer, io, run }: SignerKit): void {
  ctx
    .configure(signer.command('publish'))
    .description("publish a key file's identity to a running test authority (DNS TXT and the signed HTTPS document)")
    .requiredOption('--key <file>', 'the key file (from signer keygen)')
    .requiredOption('--authority <admin-url>', "the authority's admin API, e.g. http://127.0.88.1:8055")
    .option('--no-dns', 'do not serve the TXT record')
    .option('--no-https', 'do not serve the identity document')
    .action((flags: { key: string; authority: string; dns: boolean; https: boolean }) =>
      run('publish', async () => {
        const key = await loadKey(flags.key);
        const { AuthorityClient } = await import('../actors/authority/client.ts');
        const client = new AuthorityClient(flags.authority);
        try {
          const info = await client.publish({ identity: key.identity, seed: key.seed, dns: flags.dns, https: flags.https });
          const about = await client.info();
          io.stdout.write(`published ${info.identity} (${info.public_key}) on ${about.address}: DNS ${info.dns ? 'on' : 'off'}, HTTPS ${info.https ? 'on' : 'off'}\n`);
        } finally {
          await client.close();
        }
      })(),
    );
}

function approveCommand({ ctx, signer, io, run }: SignerKit): void {
  withTls(
    ctx
      .configure(signer.command('approve'))
      .description("approve a sign-in request: shows the RP's trusted name, signs, delivers to response_uri and prints the receipt")
      .argument('<input>', 'the request: encoded text, a deep link (svc://auth?request=... or ?request_uri=...), a web-signer link (?auth=...) or a reference link')
      .requiredOption('--key <file>', 'the key file (from signer keygen)')
      .option('--match <nn>', 'the match code shown on the screen where the sign-in started (cross device)', matchCode)
      .option('--same-device', 'the sign-in started on this device: deliver without a match code and print resume_uri to open in that browser')
      .option('--session', 'sign with a fresh session key and its proof instead of the identity key'),
  ).action((input: string, flags: TlsFlags & { key: string; match?: string; sameDevice?: boolean; session?: boolean }) =>
    run('approve', async () => {
      const key = await loadKey(flags.key);
      const s = await makeSigner(flags);
      try {
        const result = await s.approve(input, {
          key,
          ...(flags.match !== undefined ? { match: flags.match } : {}),
          ...(flags.sameDevice ? { sameDevice: true } : {}),
          ...(flags.session ? { session: true } : {}),
          onConsent: (view) => io.stdout.write(describeConsent(view, key.identity)),
          askMatch: askMatchOnTty,
        });
        if (!result.delivery) {
          io.stdout.write(`the request has no response_uri: paste this approval into the RP:\n${result.encodedApproval}\n`);
          return;
        }
        io.stdout.write(`delivered to ${String(result.loaded.request.response_uri)}: ${result.delivery.status}\nreceipt ${JSON.stringify(result.receipt)}\n`);
        if (result.resumeUri) io.stdout.write(`same device: open this link in the browser where you started (it is on ${result.view.audience}):\n  ${result.resumeUri}\n`);
        else io.stdout.write(`approved as ${key.identity}: the page where you started completes the sign-in\n`);
      } finally {
        await s.close();
      }
    })(),
  );
}

function loginCommand({ ctx, signer, io, run }: SignerKit): void {
  withTls(
    ctx
      .configure(signer.command('login'))
      .description("a whole cross-device login: start it at the RP's start URL as the browser, approve with the match code, poll until completed")
      .requiredOption('--key <file>', 'the key file (from signer keygen)')
      .requiredOption('--rp-start <url>', "the RP's start URL (test start contract: POST, Accept: application/json), e.g. http://127.0.0.1:8080/login")
      .option('--session', 'sign with a fresh session key and its proof instead of the identity key')
      .option(
        '--timeout <seconds>',
        'give up polling after this long',
        (v: string) => {
          if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('must be a positive integer');
          return Number(v);
        },
        30,
      ),
  ).action((flags: TlsFlags & { key: string; rpStart: string; session?: boolean; timeout: number }) =>
    run('login', async () => {
      const key = await loadKey(flags.key);
      const s = await makeSigner(flags);
      const browser = s.browser();
      try {
        const started = await browser.start(flags.rpStart);
        io.stdout.write(`started a login at ${flags.rpStart}: match code ${started.matchCode}\n`);
        const input = started.requestUri ?? started.request;
        const result = await s.approve(input, {
          key,
          match: started.matchCode,
          ...(flags.session ? { session: true } : {}),
          onConsent: (view) => io.stdout.write(describeConsent(view, key.identity)),
        });
        io.stdout.write(`approved: receipt ${JSON.stringify(result.receipt)}\n`);
        const pollUri = result.metadata.poll_uri;
        if (typeof pollUri !== 'string') throw new Error('the RP publishes no poll_uri: the starting page cannot learn the outcome');
        const polled = await browser.pollUntil(pollUri, started.pollSecret, { timeoutMs: flags.timeout * 1000 });
        if (polled.status !== 'completed') throw new Error(`the login did not complete: poll answered ${polled.httpStatus} ${JSON.stringify(polled.body)}`);
        io.stdout.write(`signed in to ${result.view.name} as ${polled.identity ?? key.identity}\n`);
      } finally {
        await browser.close();
        await s.close();
      }
    })(),
  );
}

class UsageError extends Error {}

export function describeConsent(view: ConsentView, identity: string): string {
  const lines = [
    `${view.action} to ${view.name} (${view.host}) as ${identity}`,
    `  the name and host come from the RP's metadata at ${view.audience}`,
    `  scopes: ${view.scopes.length > 0 ? view.scopes.join(', ') : '(login only)'}`,
  ];
  if (view.statement !== undefined) lines.push(`  statement (from the request, not verified): ${JSON.stringify(view.statement)}`);
  if (view.domain !== undefined && view.domain !== view.host) lines.push(`  the request claims domain ${JSON.stringify(view.domain)} (not verified; the audience host is ${view.host})`);
  if (view.crossDevice) {
    lines.push('  This sign-in was started on another screen.');
    if (view.context) lines.push(`  started ${String(view.context.started_at ?? '?')} in ${String(view.context.browser ?? '?')}`);
    lines.push('  Cancel unless the match code is on a screen in front of you.');
  }
  return `${lines.join('\n')}\n`;
}

/** On a terminal, asks for the match code; otherwise gives none (and the signer refuses). */
async function askMatchOnTty(): Promise<string | undefined> {
  if (!process.stdin.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question('match code shown on the starting screen (empty to cancel): ')).trim();
    return answer === '' ? undefined : answer;
  } finally {
    rl.close();
  }
}
