// The bridge suite in the registry: its `run` flags (shortcuts for the targets file's `bridge`
// role), the BridgeTarget built from them, and `--reference` (the reference bridge as a child
// process, with an in-process test authority and the harness's clients in a static file).
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CLUSTER_PROCESSES, clusterOf } from '../../run/cluster.ts';
import { ConfigError } from '../../run/exit.ts';
import type { BridgeRole } from '../../targets/file.ts';
import type { ExternalInput, PreparedSuite, ReferenceInput, SuiteDefinition } from '../suite.ts';
import type { BridgeTarget } from './driver.ts';
import { expectedFailuresOf } from '../../run/expected.ts';

interface BridgeFlags {
  bridge?: string;
  bridgeClients?: string;
  bridgeRotateUrl?: string;
  bridgeRotateToken?: string;
  bridgeSuspendUrl?: string;
  bridgeSuspendToken?: string;
  bridgeUrlClients?: 'indieauth' | 'on' | 'off';
  bridgeCodeLifetime?: number;
  bridgeTransactionLifetime?: number;
  bridgeTransactionExtension?: number;
  bridgeTransactionCap?: number;
  bridgeResumeLifetime?: number;
  bridgeAccessTokenLifetime?: number;
  bridgePushUserRelay?: string;
  bridgePushInterval?: number;
  bridgeDatabase?: string;
  bridgeProcesses?: number;
  requestTimeout?: number;
  profile?: boolean;
}

const DEFAULT_REQUEST_TIMEOUT_S = 20;

export const bridgeSuiteDefinition: SuiteDefinition = {
  name: 'bridge',
  title: 'an OpenID Connect bridge of document 2',
  referenceFlags: ['bridgeDatabase', 'bridgeProcesses'],
  clusterEngines: ['database'],
  options(cmd: Command): void {
    cmd
      .option('--bridge <issuer>', 'bridge: the issuer of the bridge under test (discovery is read from here)')
      .option('--bridge-clients <file>', 'bridge: JSON file of the clients registered for the harness, as "bridge.clients" in the targets file')
      .option('--bridge-rotate-url <url>', 'bridge: operator hook that rotates the signing key when POSTed (enables the rotation check)')
      .option('--bridge-rotate-token <token>', 'bridge: bearer token for --bridge-rotate-url')
      .option('--bridge-suspend-url <url>', 'bridge: operator hook that suspends the "suspendable" client when POSTed with client_id (enables the suspension check)')
      .option('--bridge-suspend-token <token>', 'bridge: bearer token for --bridge-suspend-url')
      .addOption(
        new Option(
          '--bridge-url-clients <mode>',
          "bridge: its OAUTH_URL_CLIENTS mode; indieauth or on runs the URL client checks (the bridge must resolve through the authority and treat the authority's address as public)",
        ).choices(['indieauth', 'on', 'off']),
      )
      .option('--bridge-code-lifetime <s>', 'bridge: the authorization code lifetime it declares (bridge.declared.code_lifetime_s; default 60)', (v: string) => {
        if (!/^[1-9]\d*$/.test(v) || Number(v) > 60) throw new InvalidArgumentError('must be whole seconds from 1 to 60');
        return Number(v);
      })
      .option('--bridge-transaction-lifetime <s>', 'bridge: the transaction lifetime it declares (bridge.declared.transaction_lifetime_s; default 600)', (v: string) => {
        if (!/^[1-9]\d*$/.test(v) || Number(v) > 600) throw new InvalidArgumentError('must be whole seconds from 1 to 600');
        return Number(v);
      })
      .option(
        '--bridge-transaction-extension <s>',
        'bridge: how far POST /t/{id}/creating extends a transaction, as it declares (bridge.declared.transaction_extension_s; default 1800)',
        (v: string) => {
          if (!/^[1-9]\d*$/.test(v) || Number(v) > 1800) throw new InvalidArgumentError('must be whole seconds from 1 to 1800');
          return Number(v);
        },
      )
      .option('--bridge-transaction-cap <s>', 'bridge: the longest a transaction lives from its start, as it declares (bridge.declared.transaction_cap_s; default 3600)', (v: string) => {
        if (!/^[1-9]\d*$/.test(v) || Number(v) > 3600) throw new InvalidArgumentError('must be whole seconds from 1 to 3600');
        return Number(v);
      })
      .option('--bridge-resume-lifetime <s>', 'bridge: the resume code lifetime it declares (bridge.declared.resume_lifetime_s; default 60)', (v: string) => {
        if (!/^[1-9]\d*$/.test(v) || Number(v) > 60) throw new InvalidArgumentError('must be whole seconds from 1 to 60');
        return Number(v);
      })
      .option('--bridge-access-token-lifetime <s>', 'bridge: the access token lifetime it declares (bridge.declared.access_token_lifetime_s; default 600)', (v: string) => {
        if (!/^[1-9]\d*$/.test(v) || Number(v) > 600) throw new InvalidArgumentError('must be whole seconds from 1 to 600');
        return Number(v);
      })
      .option('--bridge-push-user-relay <url>', "bridge: a relay that registers the harness's push users (bridge.push.user_relay; enables the push checks)")
      .option('--bridge-push-interval <s>', 'bridge: the seconds between push prompts it declares (bridge.declared.push_interval_s; default 15)', (v: string) => {
        if (!/^[1-9]\d*$/.test(v) || Number(v) < 2 || Number(v) > 15) throw new InvalidArgumentError('must be whole seconds from 2 to 15');
        return Number(v);
      })
      .option('--bridge-database <url>', 'bridge with --reference: postgres://USER:PASS@HOST:PORT/DB instead of SQLite')
      .option('--bridge-processes <n>', 'bridge with --reference: bridge processes sharing the database (default 2)', (v: string) => {
        if (!/^[1-9]\d*$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
        return Number(v);
      });
  },

  async external({ flags, file, profile, authority }: ExternalInput): Promise<PreparedSuite | undefined> {
    const f = flags as BridgeFlags;
    const role = await roleOf(f, file.bridge);
    if (role === undefined) return undefined;
    if (!/^https?:\/\/[^/]+$/.test(role.issuer)) throw new ConfigError(`bridge issuer ${role.issuer} is not scheme://host`);
    const target: BridgeTarget = {
      profile,
      issuer: role.issuer,
      clients: role.clients as BridgeTarget['clients'],
      authority: await authority(),
      requestTimeoutMs: (f.requestTimeout ?? role.request_timeout_s ?? DEFAULT_REQUEST_TIMEOUT_S) * 1000,
      ...(role.rotate_url ? { rotate: { url: role.rotate_url, ...(role.rotate_token ? { token: role.rotate_token } : {}) } } : {}),
      ...(role.suspend_url ? { suspend: { url: role.suspend_url, ...(role.suspend_token ? { token: role.suspend_token } : {}) } } : {}),
      ...(role.url_clients ? { urlClients: role.url_clients } : {}),
      declared: {
        ...(role.declared?.code_lifetime_s !== undefined ? { codeLifetimeS: role.declared.code_lifetime_s } : {}),
        ...(role.declared?.transaction_lifetime_s !== undefined ? { transactionLifetimeS: role.declared.transaction_lifetime_s } : {}),
        ...(role.declared?.transaction_extension_s !== undefined ? { transactionExtensionS: role.declared.transaction_extension_s } : {}),
        ...(role.declared?.transaction_cap_s !== undefined ? { transactionCapS: role.declared.transaction_cap_s } : {}),
        ...(role.declared?.resume_lifetime_s !== undefined ? { resumeLifetimeS: role.declared.resume_lifetime_s } : {}),
        ...(role.declared?.access_token_lifetime_s !== undefined ? { accessTokenLifetimeS: role.declared.access_token_lifetime_s } : {}),
        ...(role.declared?.push_interval_s !== undefined ? { pushIntervalS: role.declared.push_interval_s } : {}),
      },
      ...(role.push ? { push: { userRelay: role.push.user_relay.replace(/\/$/, '') } } : {}),
    };
    return {
      suite: 'bridge',
      load: () => loadBridge(target),
      profileGates: f.profile ?? role.profile ?? false,
      ...(role.expected_failures ? { expectedFailures: expectedFailuresOf(role.expected_failures) } : {}),
      ...(role.check_timeout_s !== undefined ? { checkTimeoutMs: role.check_timeout_s * 1000 } : {}),
      config: { suite: 'bridge', reference: false, bridge: role.issuer, clients: Object.keys(role.clients) },
      stop: async () => undefined,
    };
  },

  async reference({ flags, profile, log }: ReferenceInput): Promise<PreparedSuite> {
    // --cluster: the bridge processes on the cluster's database unless --bridge-database names another.
    const cluster = clusterOf(flags, ['database']);
    const f = { ...(flags as BridgeFlags), ...(cluster && flags.bridgeDatabase === undefined ? { bridgeDatabase: cluster.database } : {}) };
    const { startBridgeReference, REFERENCE_LIFETIMES, REFERENCE_PUSH_INTERVAL_S } = await import('./launch.ts');
    if (f.bridgeDatabase !== undefined && !/^postgres(ql)?:\/\/\S+$/.test(f.bridgeDatabase)) throw new ConfigError(`--bridge-database ${f.bridgeDatabase}: expected postgres://USER:PASS@HOST:PORT/DB`);
    const run = await startBridgeReference({
      profile,
      ...REFERENCE_LIFETIMES,
      pushIntervalS: REFERENCE_PUSH_INTERVAL_S,
      processes: f.bridgeProcesses ?? (cluster ? CLUSTER_PROCESSES : 2),
      ...(f.bridgeDatabase ? { database: f.bridgeDatabase } : {}),
      ...(log ? { log } : {}),
    });
    const target: BridgeTarget = { ...run.target, ...(f.requestTimeout !== undefined ? { requestTimeoutMs: f.requestTimeout * 1000 } : {}) };
    return {
      suite: 'bridge',
      load: () => loadBridge(target),
      profileGates: true,
      config: {
        suite: 'bridge',
        reference: true,
        bridge: target.issuer,
        processes: run.processes.map((p) => p.url),
        database: f.bridgeDatabase ? 'postgres' : 'sqlite',
        authority: run.authority.adminUrl,
        ...(target.push ? { push_user_relay: target.push.userRelay } : {}),
      },
      banner: `reference bridge at ${target.issuer} (${run.processes.length} processes on ${f.bridgeDatabase ? 'PostgreSQL' : 'one SQLite data dir'}), authority ${run.authority.adminUrl} (DNS ${run.authority.dnsServer})`,
      stop: () => run.stop(),
    };
  },
};

async function loadBridge(target: BridgeTarget) {
  const { bridgeSuite } = await import('./index.ts');
  return bridgeSuite(target);
}

async function roleOf(f: BridgeFlags, fromFile: BridgeRole | undefined): Promise<BridgeRole | undefined> {
  const issuer = f.bridge ?? fromFile?.issuer;
  if (issuer === undefined) {
    if (f.bridgeClients !== undefined || f.bridgeRotateUrl !== undefined || f.bridgeUrlClients !== undefined)
      throw new ConfigError('the --bridge-* options describe a bridge: give its issuer with --bridge ISSUER (or "bridge.issuer" in the targets file)');
    return undefined;
  }
  const role: BridgeRole = fromFile ? { ...fromFile, issuer } : ({ issuer } as BridgeRole);
  if (f.bridgeClients !== undefined) {
    try {
      role.clients = JSON.parse(await readFile(f.bridgeClients, 'utf8')) as BridgeRole['clients'];
    } catch (error) {
      throw new ConfigError(`--bridge-clients ${f.bridgeClients}: ${(error as Error).message}`);
    }
  }
  if (!role.clients?.basic || !role.clients.public)
    throw new ConfigError('the bridge suite needs the harness clients registered at the bridge: at least "basic" and "public" (bridge.clients, or --bridge-clients FILE)');
  if (f.bridgeRotateUrl !== undefined) role.rotate_url = f.bridgeRotateUrl;
  if (f.bridgeRotateToken !== undefined) role.rotate_token = f.bridgeRotateToken;
  if (f.bridgeSuspendUrl !== undefined) role.suspend_url = f.bridgeSuspendUrl;
  if (f.bridgeSuspendToken !== undefined) role.suspend_token = f.bridgeSuspendToken;
  if (f.bridgeUrlClients !== undefined) role.url_clients = f.bridgeUrlClients;
  // Flags win over the file; what neither declares keeps the document's value (read where used).
  const declared: Partial<NonNullable<BridgeRole['declared']>> = { ...role.declared };
  if (f.bridgeCodeLifetime !== undefined) declared.code_lifetime_s = f.bridgeCodeLifetime;
  if (f.bridgeTransactionLifetime !== undefined) declared.transaction_lifetime_s = f.bridgeTransactionLifetime;
  if (f.bridgeTransactionExtension !== undefined) declared.transaction_extension_s = f.bridgeTransactionExtension;
  if (f.bridgeTransactionCap !== undefined) declared.transaction_cap_s = f.bridgeTransactionCap;
  if (f.bridgeResumeLifetime !== undefined) declared.resume_lifetime_s = f.bridgeResumeLifetime;
  if (f.bridgeAccessTokenLifetime !== undefined) declared.access_token_lifetime_s = f.bridgeAccessTokenLifetime;
  if (f.bridgePushInterval !== undefined) declared.push_interval_s = f.bridgePushInterval;
  role.declared = declared as BridgeRole['declared'];
  if (f.bridgePushUserRelay !== undefined) role.push = { user_relay: f.bridgePushUserRelay };
  return role;
}
