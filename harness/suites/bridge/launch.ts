// `run --reference --suite bridge`: an in-process test authority, the harness's clients written
// as a static clients file (ob.contract.clients: secrets stored as SHA-256 only), and the
// reference bridge as a child process spawned from its bin (the harness never imports
// reference/), with the test-only rotation hook on. Everything stops on `stop()` and the
// temporary directory is removed.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import type { Profile } from '../../../protocol/common/profile.ts';
import { closedPort, REFERENCE_RESOLVER_TIMEOUT_MS, spawnReference, stopChild, type ReferenceChild } from '../../run/spawn.ts';
import { startAuthority, type Authority } from '../../actors/authority/index.ts';
import type { ClientCredentials } from '../../actors/oidc/client.ts';
import type { BridgeTarget } from './driver.ts';
import { startPushRelays } from './push-launch.ts';

export interface BridgeReferenceOptions {
  profile: Profile;
  log?: (line: string) => void;
  /** Extra arguments for the bridge (tests: hidden --break flags). */
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** `postgres://...`: every process on this database (default: SQLite in one temporary data dir). */
  database?: string;
  /** Bridge processes sharing the database (default 1); the rotation hook goes to the last one. */
  processes?: number;
  /** A shorter authorization code lifetime, passed as --code-ttl and declared to the suite (suite runs). */
  codeTtlS?: number;
  /** A shorter access token lifetime, passed as --access-token-ttl and declared to the suite (suite runs). */
  accessTokenTtlS?: number;
  /** A shorter transaction lifetime, passed as --tx-ttl and declared to the suite (suite runs). */
  txTtlS?: number;
  /** A shorter extension by /t/{id}/creating and cap from the start, passed as --tx-extension and --tx-cap and declared. */
  txExtensionS?: number;
  txCapS?: number;
  /** A shorter resume code lifetime, passed as --resume-ttl and declared to the suite (suite runs). */
  resumeTtlS?: number;
  /** Push to the app through two reference relays, prompts this many seconds apart (declared to the suite). */
  pushIntervalS?: number;
  /** Serve https on REFERENCE_TLS_NAME with the authority's certificate (the issuer https://<name>:<port>). */
  tls?: boolean;
}

export interface BridgeReferenceRun {
  target: BridgeTarget;
  authority: Authority;
  bridge: ReferenceChild;
  /** Every process, the first one the issuer. */
  processes: ReferenceChild[];
  /** The SQLite data directory (unused with a database URL) and the static clients file. */
  dataDir: string;
  clientsFile: string;
  /** The arguments every process got (the test authority, the clients, the operator token). */
  args: string[];
  stop(): Promise<void>;
}

/** The reference's authorization code lifetime in suite runs, declared to the suite so the expiry check waits seconds, not a minute. */
export const REFERENCE_CODE_TTL_S = 5;
/** The reference's transaction lifetime in suite runs: long enough for every sign-in flow of the suite (the push checks extend theirs). */
export const REFERENCE_TX_TTL_S = 10;
/** The reference's extension by /t/{id}/creating and its cap from the start in suite runs (document 2: 30 minutes, one hour): the cap check waits half a minute. */
export const REFERENCE_TX_EXTENSION_S = 20;
export const REFERENCE_TX_CAP_S = 30;
/** The reference's resume code lifetime in suite runs (document 2: 60 s), so the window check opens one just past it in seconds; shorter than the transaction's. */
export const REFERENCE_RESUME_TTL_S = 6;
/** The reference's access token lifetime in suite runs: long enough for every check that reads with one, short enough that the window check waits seconds, not 10 minutes. */
export const REFERENCE_ACCESS_TOKEN_TTL_S = 15;
/** The reference's push interval in suite runs (the document's 15 s would make the push check a minute long). */
export const REFERENCE_PUSH_INTERVAL_S = 2;
/** Every shorter lifetime a suite run gives the reference bridge (and declares to the suite). */
export const REFERENCE_LIFETIMES = {
  codeTtlS: REFERENCE_CODE_TTL_S,
  txTtlS: REFERENCE_TX_TTL_S,
  txExtensionS: REFERENCE_TX_EXTENSION_S,
  txCapS: REFERENCE_TX_CAP_S,
  resumeTtlS: REFERENCE_RESUME_TTL_S,
  accessTokenTtlS: REFERENCE_ACCESS_TOKEN_TTL_S,
} as const;
/** The name a bridge started with `tls` serves https on: the authority resolves it to 127.0.0.1. */
export const REFERENCE_TLS_NAME = 'bridge.svc-tls.test';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('base64url');

/** The harness's clients and the static clients file that registers them. */
export async function harnessClients(): Promise<{ clients: BridgeTarget['clients']; file: Record<string, unknown> }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomBytes(8).toString('base64url');
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const secret = () => randomBytes(32).toString('base64url');
  const entries: Array<[keyof BridgeTarget['clients'], ClientCredentials, Record<string, unknown>]> = [];
  const add = (role: keyof BridgeTarget['clients'], redirect: string, extra: Record<string, unknown>, cred: Partial<ClientCredentials> = {}) =>
    entries.push([role, { client_id: `harness-${role.replace('_', '-')}`, redirect_uri: redirect, ...cred }, extra]);
  for (const [role, host, extra] of [
    ['basic', 'app.bridge-test.example', {}],
    ['first_party', 'first.bridge-test.example', { first_party: true }],
    ['other_sector', 'other.bridge-test.example', {}],
    ['same_sector', 'app2.bridge-test.example', { sector_host: 'app.bridge-test.example' }],
    ['loopback_confidential', '127.0.0.1', {}],
    // The one client the suite suspends (ob.contract.suspend): none of the others' checks use it.
    ['suspendable', 'suspended.bridge-test.example', {}],
  ] as const) {
    const s = secret();
    add(role, `${host === '127.0.0.1' ? 'http' : 'https'}://${host}/cb`, { token_endpoint_auth_method: 'client_secret_basic', client_secret_sha256: sha256(s), ...extra }, { client_secret: s });
  }
  const post = secret();
  add('post', 'https://post.bridge-test.example/cb', { token_endpoint_auth_method: 'client_secret_post', client_secret_sha256: sha256(post) }, { client_secret: post });
  add('jwt', 'https://jwt.bridge-test.example/cb', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [publicJwk] } }, { private_jwk: privateJwk });
  add('public', 'http://127.0.0.1/cb', { token_endpoint_auth_method: 'none' });
  const clients = Object.fromEntries(entries.map(([role, cred]) => [role, cred])) as BridgeTarget['clients'];
  const file = {
    clients: entries.map(([role, cred, extra]) => ({ client_id: cred.client_id, client_name: `Harness ${role.replace('_', ' ')} app`, redirect_uris: [cred.redirect_uri], ...extra })),
  };
  return { clients, file };
}

export async function startBridgeReference(options: BridgeReferenceOptions): Promise<BridgeReferenceRun> {
  let authority: Authority | undefined;
  const children: ReferenceChild[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'svc-bridge-'));
  const stop = async () => {
    await Promise.all(children.map((c) => stopChild(c)));
    await authority?.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    authority = await startAuthority({ profile: options.profile });
    const { clients, file } = await harnessClients();
    const clientsFile = join(dir, 'clients.json');
    await writeFile(clientsFile, JSON.stringify(file, null, 2));
    // Hex, never base64url: the token travels as a command-line argument, where a leading '-' reads as a flag.
    const token = randomBytes(24).toString('hex');
    const push = options.pushIntervalS !== undefined ? await startPushRelays({ profile: options.profile, authority, dir, children, ...(options.log ? { log: options.log } : {}) }) : undefined;
    // Over TLS the issuer names the port, so it is chosen before the bridge listens.
    const tlsArgs: string[] = [];
    let tlsPort: number | undefined;
    if (options.tls) {
      const { cert, key } = await authority.serverName(REFERENCE_TLS_NAME, '127.0.0.1');
      await writeFile(join(dir, 'tls.pem'), cert);
      await writeFile(join(dir, 'tls-key.pem'), key, { mode: 0o600 });
      tlsArgs.push('--tls-cert', join(dir, 'tls.pem'), '--tls-key', join(dir, 'tls-key.pem'));
      tlsPort = await closedPort();
    }
    const args = [
      ...(push ? [...push.bridgeArgs, '--push-interval', String(options.pushIntervalS)] : []),
      ...(options.codeTtlS !== undefined ? ['--code-ttl', String(options.codeTtlS)] : []),
      ...(options.txTtlS !== undefined ? ['--tx-ttl', String(options.txTtlS)] : []),
      ...(options.txExtensionS !== undefined ? ['--tx-extension', String(options.txExtensionS)] : []),
      ...(options.txCapS !== undefined ? ['--tx-cap', String(options.txCapS)] : []),
      ...(options.resumeTtlS !== undefined ? ['--resume-ttl', String(options.resumeTtlS)] : []),
      ...(options.accessTokenTtlS !== undefined ? ['--access-token-ttl', String(options.accessTokenTtlS)] : []),
      '--port',
      '0',
      '--data-dir',
      join(dir, 'data'),
      ...(options.database ? ['--database', options.database] : []),
      '--static-clients',
      clientsFile,
      '--dns-server',
      authority.dnsServer,
      '--ca',
      authority.caFile,
      '--service-name',
      options.profile.name,
      '--resolver-timeout',
      String(REFERENCE_RESOLVER_TIMEOUT_MS),
      '--test-operator-token',
      token,
      // URL clients (ob.contract.url-clients): documents the suite hosts on the authority, whose
      // one address is exempt from the private-address rule. `on`: IndieAuth and OpenID both.
      '--url-clients',
      'on',
      '--url-client-test-address',
      authority.address,
      '--quiet',
      ...tlsArgs,
      ...(options.extraArgs ?? []),
    ];
    const bridges: ReferenceChild[] = [];
    const spawnOne = (more: string[]) =>
      spawnReference('bridge', [...args, ...more], {
        ...(options.log ? { log: options.log } : {}),
        ...(options.env ? { env: options.env } : {}),
        onSpawn: (c) => void (children.push(c), bridges.push(c)),
      });
    const bridge = await spawnOne(tlsPort !== undefined ? ['--port', String(tlsPort), '--issuer', `https://${REFERENCE_TLS_NAME}:${tlsPort}`] : []);
    // The others share the database and the issuer; the rotation hook on the last one shows the
    // key set is shared (the harness reads it through the first).
    for (let i = 1; i < (options.processes ?? 1); i++) await spawnOne(['--issuer', bridge.origin]);
    const last = bridges[bridges.length - 1]!;
    const target: BridgeTarget = {
      profile: options.profile,
      issuer: bridge.origin,
      clients,
      authority,
      // Over TLS its certificate names the issuer's host, not the bound address: the hook goes there.
      rotate: { url: `${tlsPort !== undefined ? bridge.origin : last.url}/operator/keys/rotate`, token },
      // The issuer's own process: its view of the suspension is immediate (the others' within a second).
      suspend: { url: `${bridge.origin}/operator/clients/suspend`, token },
      urlClients: 'on',
      requestTimeoutMs: 20_000,
      declared: {
        ...(options.codeTtlS !== undefined ? { codeLifetimeS: options.codeTtlS } : {}),
        ...(options.txTtlS !== undefined ? { transactionLifetimeS: options.txTtlS } : {}),
        ...(options.txExtensionS !== undefined ? { transactionExtensionS: options.txExtensionS } : {}),
        ...(options.txCapS !== undefined ? { transactionCapS: options.txCapS } : {}),
        ...(options.resumeTtlS !== undefined ? { resumeLifetimeS: options.resumeTtlS } : {}),
        ...(options.accessTokenTtlS !== undefined ? { accessTokenLifetimeS: options.accessTokenTtlS } : {}),
        ...(options.pushIntervalS !== undefined ? { pushIntervalS: options.pushIntervalS } : {}),
      },
      ...(push ? { push: { userRelay: push.userRelay } } : {}),
    };
    return { target, authority, bridge, processes: [...bridges], dataDir: join(dir, 'data'), clientsFile, args, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
