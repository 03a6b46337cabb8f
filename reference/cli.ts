// svc-reference: the reference servers. `rp` starts the reference relying party and prints one
// line, `svc-reference rp listening on <origin> (<bound url>)`, then runs until SIGINT/SIGTERM.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { profileFor, ProfileError } from '../protocol/common/profile.ts';
import { normalizeOrigin } from '../protocol/common/url.ts';
import { startRp, type RunningRp, type StartRpOptions } from './rp/app.ts';
import { DEFAULT_NAME, DEFAULT_SIGNER_URL } from './rp/config.ts';
import { parseNonceStoreSpec, NonceStoreSpecError } from './stores/index.ts';
import { DEFAULT_RESOLVER_TIMEOUT_MS } from './resolve/network.ts';

export interface ReferenceIO {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Stops a running server like SIGINT does (tests). */
  signal?: AbortSignal;
}

interface RpFlags {
  port: number;
  host: string;
  origin?: string;
  dataDir: string;
  nonceStore: string;
  dnsServer?: string;
  ca?: string;
  signerUrl: string;
  name: string;
  serviceName: string;
  resolverTimeout: number;
  contact?: string;
  quiet?: boolean;
}

const arg = <T>(fn: () => T): T => {
  try {
    return fn();
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};
const port = (v: string) => arg(() => {
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error('a port is 0 to 65535');
  return Number(v);
});
const positive = (v: string) => arg(() => {
  if (!/^\d+$/.test(v) || Number(v) === 0) throw new Error('expected a positive integer');
  return Number(v);
});
const origin = (v: string) => arg(() => {
  const o = normalizeOrigin(v);
  if (!o) throw new Error('expected an origin: scheme://host[:port], no path');
  return o;
});
const hostPort = (v: string) => arg(() => {
  if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]+)(:\d{1,5})?$/.test(v)) throw new Error('expected HOST:PORT');
  return v;
});
const nonceStore = (v: string) => arg(() => {
  parseNonceStoreSpec(v);
  return v;
});
const serviceName = (v: string) => arg(() => profileFor(v).name);
const httpUrl = (v: string) => arg(() => {
  const u = new URL(v);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('expected an http(s) URL');
  return v.replace(/\/+$/, '');
});

const RP_HELP = `
Endpoints (paths follow the service name; shown for svc):
  GET  /.well-known/svc.json    RP metadata (publishes response_uris)
  GET  /login                   sign-in page: QR code, match code, deep link, web signer, paste box
  POST /login                   test start contract (Accept: application/json) -> 201 {request, request_uri, poll_secret, match_code}
  GET  /r/{code}                request by reference (JSON for signers, a page for browsers)
  POST /svc/response            delivery of the approval (text/plain or application/json)
  GET  /svc/resume?code=...     same-device return (needs the binding cookie)
  POST /svc/poll                {poll_secret} -> {status, identity?}
  GET  /svc/context?request_id= the initiator context
  GET  /                        "Signed in as <identity>"

Stores: transactions, sessions and (with --nonce-store sqlite) spent nonces live in
<data-dir>/rp.sqlite (WAL). Processes started with the same --data-dir and --origin form one RP.
--data-dir :memory: keeps everything in this process.

Resolution: https://<id>/.well-known/svc/id.json, then DNS TXT _svc.<id>; with --dns-server both the
TXT and the A lookups go to that server, and --ca adds a CA to trust for the HTTPS fetch (this is
how the RP is pointed at a test authority: svc-conformance authority prints both).

Examples:
  svc-reference rp --port 8080
  svc-reference rp --port 8443 --origin https://rp.example.net --data-dir /var/lib/svc-rp
  svc-reference rp --nonce-store redis://127.0.0.1:6379 --data-dir ./data/rp
  svc-reference rp --dns-server 127.0.88.1:53 --ca ./authority/ca.pem
`;

export async function main(argv: string[], io: ReferenceIO = { stdout: process.stdout, stderr: process.stderr }): Promise<{ code: number; running?: RunningRp }> {
  let result: { code: number; running?: RunningRp } = { code: 0 };
  const program = new Command('svc-reference')
    .description('Reference servers of the svc protocols (document 1: the relying party).')
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) })
    .showHelpAfterError();
  program
    .command('rp')
    .description('Start the reference relying party (RP) of document 1, native sign-in.')
    .option('--port <n>', 'TCP port to listen on; 0 picks a free one', port, 8080)
    .option('--host <address>', 'address to bind', '127.0.0.1')
    .option('--origin <url>', "the RP's public origin, the audience of its requests (default: http://<host>:<bound port>)", origin)
    .option('--data-dir <dir>', 'directory of rp.sqlite (transactions, sessions, sqlite nonces); :memory: for one process', './data/rp')
    .option('--nonce-store <store>', 'spent-nonce cache: sqlite (shared through --data-dir), memory, or redis://HOST:PORT', nonceStore, 'sqlite')
    .option('--dns-server <host:port>', 'ask this DNS server for TXT and A records (e.g. a test authority)', hostPort)
    .option('--ca <file>', 'PEM file of an extra CA to trust when fetching identity documents')
    .option('--signer-url <url>', 'web signer for the handoff link <url>/app/?auth=...', httpUrl, DEFAULT_SIGNER_URL)
    .option('--name <name>', 'display name published in the metadata', DEFAULT_NAME)
    .option('--service-name <name>', 'service name every identifier derives from (paths, cookies, deep link)', serviceName, profileFor().name)
    .option('--resolver-timeout <ms>', 'timeout of each DNS or HTTPS lookup', positive, DEFAULT_RESOLVER_TIMEOUT_MS)
    .option('--contact <uri>', 'abuse contact_uri in the metadata (default mailto:abuse@<host>)')
    .option('--quiet', 'log nothing but the listening line and errors')
    .addHelpText('after', RP_HELP)
    .action(async (flags: RpFlags) => {
      result = await runRp(flags, io);
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return { code: error.exitCode === 0 ? 0 : 2 };
    io.stderr.write(`svc-reference: ${(error as Error).message}\n`);
    return { code: 2 };
  }
  if (argv.length === 0) {
    program.outputHelp();
    return { code: 2 };
  }
  return result;
}

async function runRp(flags: RpFlags, io: ReferenceIO): Promise<{ code: number; running?: RunningRp }> {
  const options: StartRpOptions = {
    port: flags.port,
    host: flags.host,
    dataDir: flags.dataDir,
    nonceStore: flags.nonceStore,
    signerUrl: flags.signerUrl,
    name: flags.name,
    serviceName: flags.serviceName,
    resolver: {
      timeoutMs: flags.resolverTimeout,
      ...(flags.dnsServer !== undefined ? { dnsServer: flags.dnsServer } : {}),
      ...(flags.ca !== undefined ? { caFile: flags.ca } : {}),
    },
  };
  if (flags.origin !== undefined) options.origin = flags.origin;
  if (flags.contact !== undefined) options.contactUri = flags.contact;
  let running: RunningRp;
  try {
    running = await startRp(options, { log: flags.quiet ? () => undefined : (line) => void io.stderr.write(`${new Date().toISOString()} ${line}\n`) });
  } catch (error) {
    const known = error instanceof ProfileError || error instanceof NonceStoreSpecError || error instanceof TypeError;
    io.stderr.write(`svc-reference rp: ${known ? '' : 'cannot start: '}${(error as Error).message}\n`);
    return { code: 2 };
  }
  io.stdout.write(`svc-reference rp listening on ${running.origin} (${running.url})\n`);
  return { code: 0, running };
}

/** Runs as the process entry point: serves until SIGINT/SIGTERM, then closes and exits. */
async function entry(): Promise<void> {
  const { code, running } = await main(process.argv.slice(2));
  if (!running) {
    process.exitCode = code;
    return;
  }
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    process.stderr.write(`svc-reference rp: ${signal}, closing\n`);
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`svc-reference rp: close failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

const invoked = process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invoked || process.env.SVC_REFERENCE_ENTRY === '1') await entry();

export { DEFAULT_NAME };
