// `svc-reference bridge`: the reference OpenID Connect bridge of document 2. Flags, with the
// document's configuration names (OAUTH_*) as environment defaults, then it prints one line,
// `svc-reference bridge listening on <issuer> (<bound url>)`, and runs until SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { normalizeIdInput } from '../../protocol/bridge/id-input.ts';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_SERVICE_NAME, ProfileError } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { NonceStoreSpecError } from '../stores/index.ts';
import { DEFAULT_RESOLVER_TIMEOUT_MS } from '../resolve/network.ts';
import { hostPort, httpUrl, nonceStore, port, positive, readTls, serviceName, type ReferenceIO, type ServerDefinition, type Started } from '../servers.ts';
import { cliLog } from '../shared/server.ts';
import { ClientFileError } from './clients.ts';
import { BREAKAGES, type Breakage, type BridgeConfig } from './context.ts';
import { pushKeyFile, type PushConfig } from './push.ts';

interface BridgeFlags {
  issuer?: string;
  port: number;
  host: string;
  dataDir: string;
  database?: string;
  nonceStore: string;
  dnsServer?: string;
  ca?: string;
  serviceName: string;
  resolverTimeout: number;
  resumeTtl: number;
  codeTtl: number;
  txTtl: number;
  txExtension: number;
  txCap: number;
  accessTokenTtl: number;
  name: string;
  clientRegistration: BridgeConfig['clientRegistration'];
  urlClients: BridgeConfig['urlClients'];
  urlClientTestAddress?: string[];
  identifyLimit: number;
  authorizeLimit: number;
  registrationAllowlist?: string;
  subjectType: BridgeConfig['subjectType'];
  staticClients?: string;
  defaultSigner?: string;
  launcherUrl: string;
  metricsAddr?: string;
  testOperatorToken?: string;
  pushIdentity?: string;
  pushHome?: string;
  pushCli?: string;
  pushInterval: number;
  break: string[];
  variant?: string;
  quiet?: boolean;
  tlsCert?: string;
  tlsKey?: string;
}

export const DEFAULT_BRIDGE_NAME = 'svc reference bridge';
const ALLOW_BREAKAGE = 'SVC_REFERENCE_ALLOW_BREAKAGE';

/** ob.issuer.exact-url, ob.issuer.dotted-host: scheme and dotted host, no path or trailing slash. */
export function parseIssuer(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new TypeError(`--issuer ${value} is not a URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new TypeError('--issuer must be https (http only for local development)');
  if (`${u.protocol}//${u.host}` !== value) throw new TypeError(`--issuer must be exactly scheme://host[:port], no path, query or trailing slash (got ${value})`);
  if (!u.hostname.includes('.') || u.hostname === 'localhost') throw new TypeError('--issuer needs a dotted host (never a bare localhost)');
  return value;
}

const HELP = `
Endpoints: /.well-known/openid-configuration (and /.well-known/oauth-authorization-server),
/authorize, /token, /userinfo, /revoke, /introspect, /jwks.json, /.well-known/svc.json, /svc/callback,
/svc/resume, /svc/context, /r/{code}, /t/{id} (page and status poll; /identify, /consent, /retry,
/creating, /push), /login, /account, /developers, /health, /privacy, /security, /abuse.

Every OAUTH_* configuration name of document 2 is read from the environment and may be given as
the flag of the same name (flags win).

Examples:
  svc-reference bridge --issuer https://sso.example.net --port 8443 --static-clients clients.json
  svc-reference bridge --issuer https://sso.example.net:8443 --port 8443 --tls-cert sso.pem --tls-key sso-key.pem
  svc-reference bridge --port 9000 --dns-server 127.0.88.1:53 --ca .authority/ca.pem --static-clients clients.json
`;

const env = (name: string) => process.env[name];

export const bridgeServer: ServerDefinition = {
  name: 'bridge',
  summary: 'the OpenID Connect bridge of document 2',
  register(program: Command, io: ReferenceIO, setResult: (r: Started) => void): void {
    program
      .command('bridge')
      .description('Start the reference OpenID Connect bridge of document 2.')
      .option('--issuer <url>', 'the issuer: scheme and dotted host, no path (default http(s)://<host>:<bound port>)')
      .option('--tls-cert <file>', 'serve https with this certificate chain (PEM), with --tls-key (default: plain http)')
      .option('--tls-key <file>', 'the private key (PEM) of --tls-cert')
      .option('--port <n>', 'TCP port; 0 picks a free one', port, 9000)
      .option('--host <address>', 'address to bind', '127.0.0.1')
      .option('--data-dir <dir>', 'directory of bridge.sqlite (WAL); :memory: for one process', './data/bridge')
      .option('--database <url>', 'sqlite (default, under --data-dir) or postgres://USER:PASS@HOST:PORT/DB (several instances on one database)')
      .option('--nonce-store <store>', 'spent-nonce cache: sqlite, memory or redis://HOST:PORT', nonceStore, 'sqlite')
      .option('--dns-server <host:port>', 'ask this DNS server for TXT and A records (e.g. a test authority)', hostPort)
      .option('--ca <file>', 'PEM file of an extra CA to trust when fetching identity documents')
      .option('--service-name <name>', 'service name every identifier derives from', serviceName, DEFAULT_SERVICE_NAME)
      .option('--resolver-timeout <ms>', 'timeout of each DNS or HTTPS lookup', positive, DEFAULT_RESOLVER_TIMEOUT_MS)
      .option('--resume-ttl <seconds>', 'lifetime of a resume code', positive, limits.bridge_resume_code_ttl_seconds)
      .option('--tx-ttl <seconds>', 'lifetime of a sign-in transaction (shorter for tests, declared to the suite)', positive, limits.bridge_transaction_ttl_seconds)
      .option('--tx-extension <seconds>', 'how far POST /t/{id}/creating extends a transaction (shorter for tests, declared to the suite)', positive, limits.bridge_transaction_creating_ttl_seconds)
      .option('--tx-cap <seconds>', 'the longest a transaction lives from its start, extended or not (shorter for tests, declared to the suite)', positive, limits.bridge_transaction_max_ttl_seconds)
      .option('--code-ttl <seconds>', 'lifetime of an authorization code (shorter for tests, declared to the suite)', positive, limits.authorization_code_ttl_seconds)
      .option('--access-token-ttl <seconds>', 'lifetime of an access token (shorter for tests, declared to the suite)', positive, limits.access_token_ttl_seconds)
      .option('--name <name>', 'display name (metadata, pages, the fixed statement)', DEFAULT_BRIDGE_NAME)
      .addOption(new Option('--client-registration <mode>', 'OAUTH_CLIENT_REGISTRATION').choices(['open', 'allowlist', 'closed']).default(env('OAUTH_CLIENT_REGISTRATION') ?? 'open'))
      .option('--registration-allowlist <file>', 'with --client-registration allowlist: the IDs that may register applications, one per line (# comments)')
      .addOption(new Option('--url-clients <mode>', 'OAUTH_URL_CLIENTS').choices(['indieauth', 'on', 'off']).default(env('OAUTH_URL_CLIENTS') ?? 'indieauth'))
      .addOption(new Option('--subject-type <type>', 'OAUTH_SUBJECT_TYPE').choices(['pairwise', 'public']).default(env('OAUTH_SUBJECT_TYPE') ?? 'pairwise'))
      .option('--static-clients <file>', 'OAUTH_STATIC_CLIENTS: the static clients file', env('OAUTH_STATIC_CLIENTS'))
      .option('--default-signer <url>', 'OAUTH_DEFAULT_SIGNER: the operator web signer', env('OAUTH_DEFAULT_SIGNER'))
      .option('--launcher-url <url>', 'OAUTH_LAUNCHER_URL: where visitors create an ID; none hides the offer', env('OAUTH_LAUNCHER_URL') ?? 'none')
      .option('--metrics-addr <host:port>', 'OAUTH_METRICS_ADDR: HOST:PORT of the private listener serving /metrics (Prometheus text)', env('OAUTH_METRICS_ADDR'))
      .option('--url-client-test-address <ip>', "a private address URL client documents may still be fetched from (tests only: the test authority's address)", (v: string, p: string[] = []) => {
        if (isIP(v) === 0) throw new InvalidArgumentError('an IP address');
        return [...p, v];
      })
      .option('--push-identity <id>', "OAUTH_PUSH_IDENTITY: the bridge's own service ID; with --push-home and --push-cli the waiting page offers Send to my app", env('OAUTH_PUSH_IDENTITY'))
      .option('--push-home <dir>', 'OAUTH_PUSH_HOME: the directory holding key.json, the key of --push-identity (as `svc-conformance relay keygen` writes it)', env('OAUTH_PUSH_HOME'))
      .option(
        '--push-cli <command>',
        'OAUTH_PUSH_CLI: a shell command that sends one message; the bridge appends --key FILE --to ID --type sys.auth.request --expires-at TIME --text - and writes the body on stdin (e.g. "svc-conformance relay send --relay URL --authority URL")',
        env('OAUTH_PUSH_CLI'),
      )
      .addOption(
        new Option('--push-interval <seconds>', 'seconds between prompts (shorter for tests, declared to the suite)').argParser(positive).default(limits.push_prompt_interval_seconds).hideHelp(),
      )
      .option('--identify-limit <n>', 'POST /t/{id}/identify requests per client IP per minute', positive, limits.bridge_identify_per_ip_per_minute)
      .option('--authorize-limit <n>', '/authorize requests per client IP per minute', positive, limits.bridge_authorize_per_ip_per_minute)
      .option('--test-operator-token <token>', 'enables POST /operator/keys/rotate and /operator/clients/suspend with this bearer token (tests only)')
      .addOption(
        new Option('--break <what>', 'deliberately break one rule (suite tests only)')
          .argParser((v: string, p: string[]) => [...p, v])
          .default([])
          .hideHelp(),
      )
      .addOption(new Option('--variant <name>', 'document-only: other codes and statuses where the document names none (suite tests only)').choices(['document-only']).hideHelp())
      .option('--quiet', 'log nothing but the listening line and errors')
      .addHelpText('after', HELP)
      .action(async (flags: BridgeFlags) => setResult(await runBridge(flags, io)));
  },
};

/** One service ID per line, normalized as typed IDs are; blank lines and # comments skipped. */
function readAllowlist(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '')
    .map((l) => {
      const parsed = normalizeIdInput(l);
      if (!parsed.ok) throw new Error(`${JSON.stringify(l)} is not an ID (${parsed.reason})`);
      return parsed.id;
    });
}

async function runBridge(flags: BridgeFlags, io: ReferenceIO): Promise<Started> {
  const fail = (why: string): Started => {
    io.stderr.write(`svc-reference bridge: ${why}\n`);
    return { code: 2 };
  };
  const breakage = new Set<Breakage>();
  for (const b of flags.break) {
    if (!(BREAKAGES as readonly string[]).includes(b)) return fail(`--break ${b}: one of ${BREAKAGES.join(', ')}`);
    if (process.env[ALLOW_BREAKAGE] !== '1') return fail(`--break needs ${ALLOW_BREAKAGE}=1 (it exists only for the suite's own tests)`);
    breakage.add(b as Breakage);
  }
  if (flags.variant !== undefined && process.env[ALLOW_BREAKAGE] !== '1') return fail(`--variant needs ${ALLOW_BREAKAGE}=1 (it exists only for the suite's own tests)`);
  if (flags.database !== undefined && flags.database !== 'sqlite' && !/^postgres(ql)?:\/\/\S+$/.test(flags.database)) return fail('--database: sqlite or postgres://USER:PASS@HOST:PORT/DB');
  let allowlist: string[] | undefined;
  if (flags.registrationAllowlist !== undefined) {
    try {
      allowlist = readAllowlist(flags.registrationAllowlist);
    } catch (error) {
      return fail(`--registration-allowlist: ${(error as Error).message}`);
    }
  }
  const pushFlags = [flags.pushIdentity, flags.pushHome, flags.pushCli];
  if (pushFlags.some((v) => v !== undefined) && pushFlags.some((v) => v === undefined)) return fail('push to the app needs all three of --push-identity, --push-home and --push-cli (OAUTH_PUSH_*)');
  let push: PushConfig | undefined;
  if (flags.pushIdentity !== undefined && flags.pushHome !== undefined && flags.pushCli !== undefined) {
    const parsed = normalizeIdInput(flags.pushIdentity);
    if (!parsed.ok) return fail(`--push-identity ${flags.pushIdentity} is not an ID (${parsed.reason})`);
    push = { identity: parsed.id, home: flags.pushHome, cli: flags.pushCli, intervalSeconds: flags.pushInterval };
    try {
      const key = JSON.parse(readFileSync(pushKeyFile(push), 'utf8')) as { identity?: unknown };
      if (key.identity !== parsed.id) return fail(`${pushKeyFile(push)} is the key of ${String(key.identity)}, not of --push-identity ${parsed.id}`);
    } catch (error) {
      return fail(`--push-home: cannot read ${pushKeyFile(push)}: ${(error as Error).message}`);
    }
  }
  let issuer = '';
  try {
    if (flags.issuer !== undefined) issuer = parseIssuer(flags.issuer);
    if (flags.launcherUrl !== 'none') httpUrl(flags.launcherUrl);
  } catch (error) {
    return fail((error as Error).message);
  }
  const config: BridgeConfig = {
    issuer,
    serviceName: flags.serviceName,
    name: flags.name,
    dataDir: flags.dataDir,
    ...(flags.database !== undefined && flags.database !== 'sqlite' ? { database: flags.database } : {}),
    nonceStore: flags.nonceStore,
    subjectType: flags.subjectType,
    clientRegistration: flags.clientRegistration,
    urlClients: flags.urlClients,
    rateLimits: { identifyPerMinute: flags.identifyLimit, authorizePerMinute: flags.authorizeLimit },
    ...(allowlist !== undefined ? { registrationAllowlist: allowlist } : {}),
    ...(flags.urlClientTestAddress !== undefined ? { urlClientTestAddresses: flags.urlClientTestAddress } : {}),
    launcherUrl: flags.launcherUrl.replace(/\/+$/, ''),
    resumeTtlSeconds: flags.resumeTtl,
    codeTtlSeconds: flags.codeTtl,
    txTtlSeconds: flags.txTtl,
    txExtensionSeconds: flags.txExtension,
    txCapSeconds: flags.txCap,
    accessTokenTtlSeconds: flags.accessTokenTtl,
    breakage,
    // The --break flags (the suite's own tests) replace decisions at the bridge's seams.
    ...(breakage.size > 0 ? { seams: (await import('../variants/bridge-seams.ts')).seamsOfBreaks(breakage) } : {}),
    documentOnly: flags.variant === 'document-only',
    resolver: { timeoutMs: flags.resolverTimeout, ...(flags.dnsServer !== undefined ? { dnsServer: flags.dnsServer } : {}), ...(flags.ca !== undefined ? { caFile: flags.ca } : {}) },
    ...(flags.staticClients !== undefined ? { staticClientsFile: flags.staticClients } : {}),
    ...(flags.defaultSigner !== undefined ? { defaultSigner: flags.defaultSigner.replace(/\/+$/, '') } : {}),
    ...(flags.metricsAddr !== undefined ? { metricsAddr: flags.metricsAddr } : {}),
    ...(flags.testOperatorToken !== undefined ? { operatorToken: flags.testOperatorToken } : {}),
    ...(push ? { push } : {}),
  };
  try {
    const tls = readTls(flags.tlsCert, flags.tlsKey);
    const { startBridge } = await import('./app.ts');
    const running = await startBridge(config, { port: flags.port, host: flags.host, ...(tls ? { tls } : {}) }, { log: cliLog(io.stderr, flags.quiet === true) });
    io.stdout.write(`svc-reference bridge listening on ${running.issuer} (${running.url})\n`);
    return { code: 0, running };
  } catch (error) {
    const known = error instanceof ProfileError || error instanceof NonceStoreSpecError || error instanceof ClientFileError || error instanceof TypeError;
    return fail(`${known ? '' : 'cannot start: '}${(error as Error).message}`);
  }
}
