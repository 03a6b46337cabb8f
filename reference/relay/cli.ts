// `svc-reference relay`: the reference relay of document 3 (identities, authentication, messaging,
// the keystore, pairing, system files, the drive). Flags, each also the
// document's environment name where it has one; it prints one line,
// `svc-reference relay listening on <origin> (<bound url>)`, then runs until SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_SERVICE_NAME, profileFor } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { DEFAULT_RESOLVER_TIMEOUT_MS } from '../resolve/network.ts';
import { hostPort, httpUrl, port, positive, serviceName, type ReferenceIO, type ServerDefinition, type Started } from '../servers.ts';
import { cliLog } from '../shared/server.ts';
import { BREAKAGES, type Breakage } from './config.ts';
import { s3Location, type S3Location } from './drive/s3-chunks.ts';
import { SHARED_STATE_TIMEOUT_MS } from './state-redis.ts';
import { POSTGRES_URL } from '../stores/postgres.ts';

interface RelayFlags {
  port: number;
  host: string;
  address?: string;
  relayAddress?: string;
  dataDir?: string;
  hostedDomains?: string;
  blockedNames?: string;
  registrationGate: string;
  inviteCode: string[];
  spoolTtl?: number;
  challengeTtl: number;
  pairingTtl: number;
  testPages?: boolean;
  maxStreams?: number;
  driveQuota?: number;
  driveS3?: string;
  webStaticDir?: string;
  oauthBridgeUrl?: string;
  rateSender: number;
  rateGlobal: number;
  rateIp: number;
  rateWindow: number;
  sharedState?: string;
  sharedStateTimeout: number;
  database?: string;
  dnsServer?: string;
  ca?: string;
  serviceName: string;
  resolverTimeout: number;
  quiet?: boolean;
  break: string[];
  variant?: string;
}

/** Set by the tests that drive deliberately broken relays; refused otherwise. */
const BREAKAGE_ENV = 'SVC_REFERENCE_ALLOW_BREAKAGE';

const RELAY_HELP = `
Endpoints (spec/http/relay.openapi.yaml; identifiers follow the service name, shown for svc):
  POST /messages, /acks               envelopes (202; 400 413 403 429 401 in the document's order)
  GET  /messages/:id[?since=N]        pickup: drain on read, or read from a cursor; POST .../consume
  GET  /events/:id                    Server-Sent Events: ready, message; keepalive every 25 s
  GET  /auth/challenge?identity=      a single-use challenge (60 s)
  POST /sessions, DELETE /sessions/:id   session keys (24 h at most, memory only)
  GET  /devices/:id, POST /devices/:id/revoke
  POST /identities                    hosted (HOSTED_DOMAINS) or DNS (dns_provider: cloudflare, desec)
  GET  /identities/:id, POST .../rotate, POST .../export (tar.gz)
  PUT  /identities/:id/keystore       enroll (identity-signed); POST .../keystore/list (metadata)
  POST /identities/:id/keystore/fetch the wrapped copies, for a WebAuthn assertion (ES256, EdDSA, RS256)
  DELETE /identities/:id/keystore/:enrollment   (recovery master: actor_assertion; 409 last_enrollment)
  /drive/:id/...                      the end-to-end encrypted drive: root, chunks/missing, chunks/:hash,
                                      commit (409 with head), changes, nodes, shares, events, links;
                                      owner and members by challenge (a group's member adds
                                      X-Svc-Group-Roster), link holders by X-Svc-Link
  GET, PUT, DELETE /identities/:id/system/<public|relay>/<name>.json   system documents (owner-only,
                                      validated; ETag, If-Match): profile, capabilities, group-roster,
                                      contacts, inbox-policy; GET relay-written/<identity|usage>.json
  GET  /groups/:group/epoch           public: a group identity's roster epoch, 0 for others
  POST /identities/:id/enroll/offer   pairing v2: offer (new device), then /:code/fetch (approver,
       .../:code/reveal, .../:code/deliver, GET and DELETE .../:code   enroll-fetch), reveal (bearer), deliver
                                      (enroll-deliver), poll for the sealed seed once, abandon
  GET  /hosted/availability?handle=   GET /, /health, /.well-known/svc/id.json, capabilities.json and the
                                      public documents, e.g. profile.json, group-roster.json (Host-routed)

Storage: <data-dir>/relay.sqlite (WAL, synchronous=FULL: every 202 is on disk, so it survives
kill -9; keystore enrollments and drive metadata too), or with --database the same tables in
PostgreSQL (a 202 follows its COMMIT); drive chunks under <data-dir>/drive,
content-addressed and fsynced, or with --drive-s3 in an S3 bucket (keys from DRIVE_S3_ACCESS_KEY
and DRIVE_S3_SECRET_KEY): chunks/missing then answers presigned PUT URLs for chunks whose md5 the
client names, and chunk reads redirect (307) to presigned GETs. Sessions, challenges, nonces,
pairing offers and rate-limit buckets are in memory: a restart forgets them. With --shared-state
they are in Redis instead, shared by several relay processes on one --data-dir (or one
--database, on any machines) and one --relay-address (event streams hear mail accepted by any of them); restarting the Redis server,
not one process, is then the relay's restart (ra.sessions.cluster-restart).

Examples:
  svc-reference relay --port 8443 --data-dir ./data/relay --hosted-domains relay.example.test
  HOSTED_DOMAINS=a.test SPOOL_TTL=86400 svc-reference relay --dns-server 127.0.88.1:53 --ca .authority/ca.pem
`;

const env = (name: string) => process.env[name];

/** A postgres:// URL (the relay's database), or a usage error. */
function postgresUrl(value: string): string {
  if (!POSTGRES_URL.test(value)) throw new InvalidArgumentError('expected postgres://USER:PASS@HOST:PORT/DB');
  return value;
}

/** A redis:// URL (the shared state), or a usage error. */
function redisUrl(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected redis://HOST:PORT');
  }
  if (u.protocol !== 'redis:' || u.hostname === '') throw new InvalidArgumentError('expected redis://HOST:PORT');
  return value;
}

export const relayServer: ServerDefinition = {
  name: 'relay',
  summary: 'the relay HTTP API of document 3 (identities, authentication, messaging)',
  register(program: Command, io: ReferenceIO, setResult: (r: Started) => void): void {
    const profileName = env('SVC_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME;
    const dataEnv = profileFor(profileName).ids.data_env;
    program
      .command('relay')
      .description('Start the reference relay of document 3.')
      .option('--port <n>', 'TCP port to listen on; 0 picks a free one', port, 8443)
      .option('--host <address>', 'address to bind', '127.0.0.1')
      .option('--address <host:port>', 'bind this HOST:PORT (overrides --host and --port)', hostPort)
      .option('--relay-address <host:port>', "this relay's public host[:port], named in documents' relay (default: the bound address)", hostPort)
      .option('--data-dir <dir>', `directory of relay.sqlite (${dataEnv}; default ./data/relay)`, env(dataEnv))
      .option('--hosted-domains <list>', 'comma-separated domains it hosts identities under (HOSTED_DOMAINS)', env('HOSTED_DOMAINS'))
      .option('--registration-gate <gate>', 'open or invite (REGISTRATION_GATE)', env('REGISTRATION_GATE') ?? 'open')
      .option('--blocked-names <file>', 'terms no hosted handle may contain, one per line (# comments): availability answers blocked, registration refuses')
      .option('--invite-code <code>', 'an invite code accepted under the invite gate (repeatable)', (v: string, p: string[]) => [...p, v], [] as string[])
      .option('--spool-ttl <seconds>', `how long undelivered mail is kept (SPOOL_TTL; default ${limits.spool_ttl_default_seconds})`, positive, env('SPOOL_TTL') ? Number(env('SPOOL_TTL')) : undefined)
      .option(
        '--max-streams <n>',
        `event streams per identity (MAX_STREAMS_PER_IDENTITY; default ${limits.max_streams_per_identity_default})`,
        positive,
        env('MAX_STREAMS_PER_IDENTITY') ? Number(env('MAX_STREAMS_PER_IDENTITY')) : undefined,
      )
      .option(
        '--drive-quota <bytes>',
        `each drive's quota of stored chunks (DRIVE_QUOTA; default ${limits.drive_quota_default_bytes})`,
        positive,
        env('DRIVE_QUOTA') ? Number(env('DRIVE_QUOTA')) : undefined,
      )
      .option('--drive-s3 <url>', 'keep drive chunks in an S3 bucket, http(s)://host:port/bucket (DRIVE_S3; keys: DRIVE_S3_ACCESS_KEY, DRIVE_S3_SECRET_KEY, DRIVE_S3_REGION)', env('DRIVE_S3'))
      .option('--web-static-dir <dir>', 'web signer files; fills endpoints.web_signer (WEB_STATIC_DIR)', env('WEB_STATIC_DIR'))
      .option('--oauth-bridge-url <url>', 'the OAuth bridge; fills endpoints.oauth_bridge and the indieauth-metadata Link (OAUTH_BRIDGE_URL)', httpUrl, env('OAUTH_BRIDGE_URL'))
      .option(
        '--challenge-ttl <seconds>',
        `a challenge's life (document 3 fixes ${limits.challenge_ttl_seconds}; shorter only for tests, declared to the suite)`,
        positive,
        limits.challenge_ttl_seconds,
      )
      .option(
        '--pairing-ttl <seconds>',
        `a pairing offer's life (document 3 fixes ${limits.pairing_offer_ttl_seconds}; shorter only for tests, declared to the suite)`,
        positive,
        limits.pairing_offer_ttl_seconds,
      )
      .option('--test-pages', 'tests only: serve the WebAuthn test page at /test/passkey')
      .option('--rate-sender <n>', 'envelopes per sender per window', positive, limits.relay_rate_sender_max)
      .option('--rate-global <n>', 'envelopes per relay per window', positive, limits.relay_rate_global_max)
      .option('--rate-ip <n>', 'units per IP per window (availability lookups)', positive, limits.relay_rate_ip_max)
      .option('--rate-window <seconds>', 'the rate-limit window', positive, limits.relay_rate_window_seconds)
      .option(
        '--database <url>',
        'keep identities, the spool, the keystore, system files, devices and drive metadata in PostgreSQL, postgres://USER:PASS@HOST:PORT/DB, shared by every process serving this --relay-address (RELAY_DATABASE; with --shared-state for several processes)',
        postgresUrl,
        env('RELAY_DATABASE'),
      )
      .option(
        '--shared-state <url>',
        'keep sessions, challenges, nonces, pairing offers, rate-limit buckets and event fan-out in Redis, redis://HOST:PORT, shared by every process serving this --relay-address (SHARED_STATE; the Redis server must run without persistence)',
        redisUrl,
        env('SHARED_STATE'),
      )
      .option('--shared-state-timeout <ms>', 'how long a Redis command may take before the request is answered 503 shared_state_unavailable', positive, SHARED_STATE_TIMEOUT_MS)
      .option('--dns-server <host:port>', 'ask this DNS server for TXT and A records (e.g. a test authority)', hostPort)
      .option('--ca <file>', 'PEM file of an extra CA to trust when fetching identity documents')
      .option('--service-name <name>', 'service name every identifier derives from', serviceName, profileName)
      .option('--resolver-timeout <ms>', 'timeout of each DNS or HTTPS lookup', positive, DEFAULT_RESOLVER_TIMEOUT_MS)
      .option('--quiet', 'log nothing but the listening line and errors')
      .addOption(
        new Option('--break <kind>', 'test only')
          .hideHelp()
          .argParser((v: string, p: string[]) => [...p, v])
          .default([] as string[]),
      )
      .addOption(new Option('--variant <name>', 'test only').hideHelp())
      .addHelpText('after', RELAY_HELP)
      .action(async (flags: RelayFlags) => setResult(await runRelay(flags, io)));
  },
};

async function runRelay(flags: RelayFlags, io: ReferenceIO): Promise<Started> {
  const fail = (why: string): Started => {
    io.stderr.write(`svc-reference relay: ${why}\n`);
    return { code: 2 };
  };
  if ((flags.break.length > 0 || flags.variant !== undefined) && process.env[BREAKAGE_ENV] !== '1') return fail(`--break and --variant are for the harness's own tests (set ${BREAKAGE_ENV}=1)`);
  const unknown = flags.break.filter((b) => !(BREAKAGES as readonly string[]).includes(b));
  if (unknown.length > 0) return fail(`unknown --break ${unknown.join(', ')} (known: ${BREAKAGES.join(', ')})`);
  if (flags.variant !== undefined && flags.variant !== 'document-only') return fail(`unknown --variant ${flags.variant}`);
  if (flags.registrationGate !== 'open' && flags.registrationGate !== 'invite') return fail('--registration-gate is open or invite');
  let blocked: string[] = [];
  try {
    if (flags.blockedNames !== undefined)
      blocked = readFileSync(flags.blockedNames, 'utf8')
        .split('\n')
        .map((l) => l.replace(/#.*/, '').trim().toLowerCase())
        .filter((l) => l !== '');
  } catch (error) {
    return fail(`--blocked-names: ${(error as Error).message}`);
  }
  if (blocked.some((t) => !/^[a-z0-9-]+$/.test(t))) return fail('--blocked-names: terms are a-z, 0-9 and hyphens');
  const hosted = (flags.hostedDomains ?? '')
    .split(',')
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean);
  let host = flags.host;
  let listenPort = flags.port;
  if (flags.address) {
    const m = /^(.*):(\d+)$/.exec(flags.address);
    if (m) {
      host = m[1]!.replace(/^\[|\]$/g, '');
      listenPort = Number(m[2]);
    } else host = flags.address;
  }
  let driveS3: S3Location | undefined;
  try {
    if (flags.driveS3 !== undefined) driveS3 = s3Location(flags.driveS3);
  } catch (error) {
    return fail((error as Error).message);
  }
  const log = cliLog(io.stderr, flags.quiet === true);
  try {
    // A drive variant named in the environment, or --break flags (the harness's own tests), replace decisions at the seams.
    const fromEnv = process.env.SVC_REFERENCE_WIRE?.startsWith('drive/') ? await (await import('../variants/drive-matrix.ts')).driveSeamsFromEnv() : undefined;
    const broken = flags.break.length > 0 ? (await import('../variants/relay-seams.ts')).seamsOfBreaks(flags.break) : undefined;
    const driveSeams = fromEnv || broken ? { ...fromEnv, ...broken?.drive } : undefined;
    // Each server's app is imported by its own start: a relay never loads the bridge's or the RP's.
    const { startRelay } = await import('./app.ts');
    const running = await startRelay({
      host,
      port: listenPort,
      log,
      resolver: { timeoutMs: flags.resolverTimeout, ...(flags.dnsServer ? { dnsServer: flags.dnsServer } : {}), ...(flags.ca ? { caFile: flags.ca } : {}) },
      config: {
        profile: profileFor(flags.serviceName),
        dataDir: flags.dataDir ?? './data/relay',
        dataConfigured: flags.dataDir !== undefined,
        ...(flags.relayAddress ? { relayAddress: flags.relayAddress } : {}),
        hostedDomains: hosted,
        registrationGate: flags.registrationGate,
        inviteCodes: flags.inviteCode,
        ...(blocked.length > 0 ? { blockedTerms: blocked } : {}),
        spoolTtlSeconds: flags.spoolTtl ?? limits.spool_ttl_default_seconds,
        challengeTtlSeconds: flags.challengeTtl,
        pairingTtlSeconds: flags.pairingTtl,
        ...(flags.testPages ? { testPages: true } : {}),
        maxStreams: flags.maxStreams ?? limits.max_streams_per_identity_default,
        ...(flags.driveQuota !== undefined ? { driveQuota: flags.driveQuota } : {}),
        ...(driveS3 ? { driveS3 } : {}),
        ...(flags.webStaticDir ? { webStaticDir: flags.webStaticDir } : {}),
        ...(flags.oauthBridgeUrl ? { oauthBridgeUrl: flags.oauthBridgeUrl } : {}),
        rate: { sender: flags.rateSender, global: flags.rateGlobal, ip: flags.rateIp, windowSeconds: flags.rateWindow },
        ...(flags.sharedState ? { sharedState: flags.sharedState, sharedStateTimeoutMs: flags.sharedStateTimeout } : {}),
        ...(flags.database ? { database: flags.database } : {}),
        breakages: new Set(flags.break as Breakage[]),
        ...(driveSeams ? { driveSeams } : {}),
        ...(broken ? { relaySeams: broken.relay } : {}),
        documentOnly: flags.variant === 'document-only',
        version: '0.1.0',
        buildTime: null,
        versionHash: null,
      },
    });
    io.stdout.write(`svc-reference relay listening on ${running.origin} (${running.url})\n`);
    return { code: 0, running };
  } catch (error) {
    return fail(`cannot start: ${(error as Error).message}`);
  }
}
