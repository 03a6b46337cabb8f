// `svc-reference rp`: the reference relying party of document 1. Its flags, help and start; it
// prints one line, `svc-reference rp listening on <origin> (<bound url>)` (tests and the harness
// parse it), then runs until SIGINT/SIGTERM. With --workers N it is the primary of N cluster
// workers (./cluster.ts) and prints the same one line once all of them listen.
import { InvalidArgumentError, type Command } from 'commander';
import { limits } from '../../schemas/ts/limits.ts';
import { DEFAULT_SERVICE_NAME, ProfileError } from '../../protocol/common/profile.ts';
import { NonceStoreSpecError } from '../stores/index.ts';
import { DEFAULT_RESOLVER_TIMEOUT_MS } from '../resolve/network.ts';
import { hostPort, httpUrl, nonceStore, origin, port, positive, readTls, serviceName, upTo, type ReferenceIO, type ServerDefinition, type Started } from '../servers.ts';
import { isDevelopmentHost, splitUrl } from '../../protocol/common/url.ts';
import type { RunningRp, StartRpOptions } from './app.ts';
import { DEFAULT_NAME, DEFAULT_SIGNER_URL } from './config.ts';
import { inWorker, reportListening, startWorkers } from './cluster.ts';
import { POSTGRES_URL } from './database.ts';
import { IN_MEMORY } from '../stores/sqlite.ts';
import { cliLog } from '../shared/server.ts';

/** The environment variable --database defaults to (a PaaS-style URL in the environment). */
export const DATABASE_ENV = 'RP_DATABASE';
const env = (name: string): string | undefined => process.env[name] || undefined;

interface RpFlags {
  port: number;
  host: string;
  origin?: string;
  dataDir: string;
  database?: string;
  nonceStore: string;
  dnsServer?: string;
  ca?: string;
  signerUrl: string;
  name: string;
  serviceName: string;
  resolverTimeout: number;
  resumeTtl: number;
  requestWindow: number;
  contact?: string;
  quiet?: boolean;
  workers: number;
  tlsCert?: string;
  tlsKey?: string;
}

/**
 * --origin, the audience of every request: http only on a development host
 * (ns.request.audience-http-dev, ns.auth.5); a production RP publishes over TLS.
 */
const rpOrigin = (v: string): string => {
  const o = origin(v);
  if (o.startsWith('http:') && !isDevelopmentHost(splitUrl(o)!.host)) throw new InvalidArgumentError('http only on a development host (localhost, 127.0.0.0/8, ::1); otherwise https');
  return o;
};

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
--data-dir :memory: keeps everything in this process. --workers N runs N such processes on one
port (node:cluster), one per core is the useful most; they need the shared sqlite or redis stores.
With --database postgres://... (or ${DATABASE_ENV}) they live in PostgreSQL instead, same tables,
nonces too unless --nonce-store redis://...: processes on any machines started with the same
database and --origin form one RP (behind one load balancer, no affinity needed).

Resolution: https://<id>/.well-known/svc/id.json, then DNS TXT _svc.<id>; with --dns-server both the
TXT and the A lookups go to that server, and --ca adds a CA to trust for the HTTPS fetch (this is
how the RP is pointed at a test authority: svc-conformance authority prints both).

Examples:
  svc-reference rp --port 8080
  svc-reference rp --port 8443 --origin https://rp.example.net --data-dir /var/lib/svc-rp
  svc-reference rp --port 8443 --origin https://rp.example.net:8443 --tls-cert rp.pem --tls-key rp-key.pem
  svc-reference rp --nonce-store redis://127.0.0.1:6379 --data-dir ./data/rp
  svc-reference rp --origin https://rp.example.net --database postgres://rp:secret@db.internal:5432/rp
  svc-reference rp --dns-server 127.0.88.1:53 --ca ./authority/ca.pem
`;

export const rpServer: ServerDefinition = {
  name: 'rp',
  summary: 'the relying party of document 1, native sign-in',
  register(program: Command, io: ReferenceIO, setResult: (r: Started) => void): void {
    program
      .command('rp')
      .description('Start the reference relying party (RP) of document 1, native sign-in.')
      .option('--port <n>', 'TCP port to listen on; 0 picks a free one', port, 8080)
      .option('--host <address>', 'address to bind', '127.0.0.1')
      .option('--origin <url>', "the RP's public origin, the audience of its requests; http only on a development host (default: http(s)://<host>:<bound port>)", rpOrigin)
      .option('--tls-cert <file>', 'serve https with this certificate chain (PEM), with --tls-key (default: plain http)')
      .option('--tls-key <file>', 'the private key (PEM) of --tls-cert')
      .option('--data-dir <dir>', 'directory of rp.sqlite (transactions, sessions, sqlite nonces); :memory: for one process', './data/rp')
      .option('--database <url>', `sqlite (default, under --data-dir) or postgres://USER:PASS@HOST:PORT/DB, shared by RP processes on several machines (${DATABASE_ENV})`, env(DATABASE_ENV))
      .option('--nonce-store <store>', 'spent-nonce cache: sqlite (in the database: --data-dir or --database), memory, or redis://HOST:PORT', nonceStore, 'sqlite')
      .option('--dns-server <host:port>', 'ask this DNS server for TXT and A records (e.g. a test authority)', hostPort)
      .option('--ca <file>', 'PEM file of an extra CA to trust when fetching identity documents')
      .option('--signer-url <url>', 'web signer for the handoff link <url>/app/?auth=...', httpUrl, DEFAULT_SIGNER_URL)
      .option('--name <name>', 'display name published in the metadata', DEFAULT_NAME)
      .option('--service-name <name>', 'service name every identifier derives from (paths, cookies, deep link)', serviceName, DEFAULT_SERVICE_NAME)
      .option('--resolver-timeout <ms>', 'timeout of each DNS or HTTPS lookup', positive, DEFAULT_RESOLVER_TIMEOUT_MS)
      .option('--resume-ttl <seconds>', 'lifetime of a resume code (shorter for tests)', positive, limits.resume_code_ttl_seconds)
      .option(
        '--request-window <seconds>',
        `a request's window, expires_at minus issued_at (at most ${limits.window_max_seconds}; shorter for tests)`,
        upTo(limits.window_max_seconds),
        limits.window_max_seconds,
      )
      .option('--contact <uri>', 'abuse contact_uri in the metadata (default mailto:abuse@<host>)')
      .option('--quiet', 'log nothing but the listening line and errors')
      .option('--workers <n>', 'worker processes sharing the port and --data-dir (node:cluster)', positive, 1)
      .addHelpText('after', RP_HELP)
      .action(async (flags: RpFlags, command: Command) => {
        // The arguments as given (commander keeps them, untyped): the workers run with the same.
        const rawArgs = (command.parent as { rawArgs?: string[] } | null)?.rawArgs ?? [];
        setResult(await runRp(flags, io, rawArgs));
      });
  },
};

async function runRp(flags: RpFlags, io: ReferenceIO, args: readonly string[]): Promise<Started> {
  if (flags.database !== undefined && flags.database !== 'sqlite' && !POSTGRES_URL.test(flags.database)) {
    io.stderr.write('svc-reference rp: --database must be sqlite or postgres://USER:PASS@HOST:PORT/DB\n');
    return { code: 2 };
  }
  if (flags.workers > 1 && !inWorker()) return runPrimary(flags, io, args);
  const options: StartRpOptions = {
    port: flags.port,
    host: flags.host,
    dataDir: flags.dataDir,
    ...(flags.database !== undefined && flags.database !== 'sqlite' ? { database: flags.database } : {}),
    nonceStore: flags.nonceStore,
    signerUrl: flags.signerUrl,
    name: flags.name,
    serviceName: flags.serviceName,
    resumeTtlSeconds: flags.resumeTtl,
    requestWindowSeconds: flags.requestWindow,
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
    const tls = readTls(flags.tlsCert, flags.tlsKey);
    if (tls) options.tls = tls;
    const { startRp } = await import('./app.ts');
    running = await startRp(options, { log: cliLog(io.stderr, flags.quiet === true) });
  } catch (error) {
    const known = error instanceof ProfileError || error instanceof NonceStoreSpecError || error instanceof TypeError;
    io.stderr.write(`svc-reference rp: ${known ? '' : 'cannot start: '}${(error as Error).message}\n`);
    return { code: 2 };
  }
  if (inWorker()) reportListening(running.origin, running.url);
  else io.stdout.write(`svc-reference rp listening on ${running.origin} (${running.url})\n`);
  return { code: 0, running };
}

/** --workers N: forks N workers with these same arguments; they share the port and the stores. */
async function runPrimary(flags: RpFlags, io: ReferenceIO, args: readonly string[]): Promise<Started> {
  // Per-process stores would split the RP: a nonce spent in one worker unspent in another.
  const postgres = flags.database !== undefined && flags.database !== 'sqlite';
  if ((flags.dataDir === IN_MEMORY && !postgres) || flags.nonceStore === 'memory') {
    io.stderr.write(`svc-reference rp: --workers ${flags.workers} needs stores the workers share: a --data-dir on disk or --database postgres://, and --nonce-store sqlite or redis\n`);
    return { code: 2 };
  }
  try {
    const running = await startWorkers(flags.workers, args, io);
    io.stdout.write(`svc-reference rp listening on ${running.origin} (${running.url})\n`);
    return { code: 0, running };
  } catch (error) {
    io.stderr.write(`svc-reference rp: cannot start: ${(error as Error).message}\n`);
    return { code: 2 };
  }
}
