// `run --reference --suite relay`: two reference relays on loopback, spawned from the bin as a user
// starts them (the harness never imports reference/), resolving through an in-process test
// authority. Relay A hosts `a.relay.test` behind the invite gate with a short spool lifetime and
// challenge life, a small stream cap and a bridge URL, all declared to the suite; relay B hosts `b.relay.test`
// openly. A can be restarted on the same port and data directory. With `restartable`, the
// durability checks restart R instead, a third relay with A's flags and a data directory of its
// own, while the rest of the suite runs on A.
// With `cluster` (run --reference --cluster), A is several processes behind a round-robin front
// sharing Redis and a data directory or PostgreSQL (cluster.ts), and both relays keep drive
// chunks in S3; B stays one process.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Profile } from '../../../protocol/common/profile.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { startAuthority, type Authority } from '../../actors/authority/index.ts';
import { CLUSTER_PROCESSES, isolatedSchema, type ClusterEngines } from '../../run/cluster.ts';
import { REFERENCE_RESOLVER_TIMEOUT_MS, spawnReference, type ReferenceChild } from '../../run/spawn.ts';
import { startRelayCluster, type RelayCluster } from './cluster.ts';
import type { RelayDeclared, RelayTarget } from './driver.ts';

/** What relay A runs with, declared to the suite. */
export const REFERENCE_DECLARED: Required<RelayDeclared> = {
  spoolTtlS: 12,
  challengeTtlS: 5,
  pairingTtlS: 10,
  maxStreams: 4,
  senderLimit: 120,
  // The project's per-IP bucket over the units a lookup costs (the relay runs with both defaults).
  availabilityLimit: Math.floor(limits.relay_rate_ip_max / limits.availability_charge_units),
  inviteCode: 'harness-invite',
  // Relay B runs with the open gate.
  peerOpenRegistration: true,
  oauthBridgeUrl: 'https://bridge.relay.test',
};

export interface RelayReferenceRun {
  target: RelayTarget;
  authority: Authority;
  /** Relay A's processes and front, when clustered. */
  cluster?: RelayCluster;
  stop(): Promise<void>;
}

export interface RelayReferenceOptions {
  profile: Profile;
  log?: (line: string) => void;
  /** More flags for both relays (tests: a variant or a breakage). */
  extraArgs?: string[];
  /** More flags for the first relay and for its peer, each its own (e.g. --database: two relays never share one). */
  ownArgs?: { a: string[]; b: string[] };
  env?: NodeJS.ProcessEnv;
  /** Relay A as a cluster on these engines (redis, and s3 and database when given). */
  cluster?: ClusterEngines;
  /** Start relay R for the restart checks (not with a cluster); without it they restart A, alone. */
  restartable?: boolean;
}

export async function startRelayReference(options: RelayReferenceOptions): Promise<RelayReferenceRun> {
  const dirs: string[] = [];
  const children: ReferenceChild[] = [];
  let cluster: RelayCluster | undefined;
  let dropSchema: (() => Promise<void>) | undefined;
  let authority: Authority | undefined;
  const killAll = () => {
    for (const c of [...children, ...(cluster?.processes() ?? [])]) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  };
  process.once('exit', killAll);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all([...children.map((c) => c.stop()), cluster?.stop()]);
    process.off('exit', killAll);
    await authority?.close().catch(() => undefined);
    await dropSchema?.().catch(() => undefined);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  };
  try {
    authority = await startAuthority({ profile: options.profile });
    const c = options.cluster;
    const s3 = c?.s3 ? ['--drive-s3', c.s3] : [];
    const env = { ...options.env, ...c?.s3Env };
    const common = [
      '--dns-server',
      authority.dnsServer,
      '--ca',
      authority.caFile,
      '--service-name',
      options.profile.name,
      '--resolver-timeout',
      String(REFERENCE_RESOLVER_TIMEOUT_MS),
      ...s3,
      ...(options.extraArgs ?? []),
    ];
    const spawnRelay = async (args: string[]) => {
      const child = await spawnReference('relay', args, { ...(options.log ? { log: options.log } : {}), env, onSpawn: (c) => children.push(c) });
      return child;
    };
    // R's directory only when R runs.
    const [dirA, dirB, dirR] = await Promise.all([...['a', 'b'], ...(options.restartable ? ['r'] : [])].map((name) => mkdtemp(join(tmpdir(), `svc-relay-${name}-`))));
    dirs.push(...[dirA!, dirB!, dirR].filter((x) => x !== undefined));
    const d = REFERENCE_DECLARED;
    // A's flags but its data directory: relay R (below) is A again, for the restart checks.
    const flagsA = [
      '--hosted-domains',
      'a.relay.test',
      '--registration-gate',
      'invite',
      '--invite-code',
      d.inviteCode,
      '--spool-ttl',
      String(d.spoolTtlS),
      '--challenge-ttl',
      String(d.challengeTtlS),
      '--pairing-ttl',
      String(d.pairingTtlS),
      '--max-streams',
      String(d.maxStreams),
      '--oauth-bridge-url',
      d.oauthBridgeUrl,
      ...common,
      ...(options.ownArgs?.a ?? []),
    ];
    const argsA = ['--data-dir', dirA!, ...flagsA];
    const argsR = dirR ? ['--data-dir', dirR, ...flagsA] : [];
    let a: ReferenceChild | undefined;
    let r: ReferenceChild | undefined;
    // Restarts a relay on its port and data directory.
    const restarted = async (child: ReferenceChild, args: string[]): Promise<ReferenceChild> => {
      const port = new URL(child.url).port;
      await child.stop();
      children.splice(children.indexOf(child), 1);
      return spawnRelay(['--port', port, ...args]);
    };
    const peer = spawnRelay(['--port', '0', '--data-dir', dirB!, '--hosted-domains', 'b.relay.test', ...common, ...(options.ownArgs?.b ?? [])]);
    peer.catch(() => undefined); // awaited below; stop() ends it if A fails first
    if (c?.redis) {
      const schema = c.database ? await isolatedSchema(c.database, 'relay') : undefined;
      if (schema) dropSchema = schema.drop;
      const database = schema?.url;
      const spawn = (args: string[]) => spawnRelay(args).then((child) => (children.splice(children.indexOf(child), 1), child));
      cluster = await startRelayCluster({ serviceName: options.profile.name, processes: CLUSTER_PROCESSES, args: argsA, redis: c.redis, ...(database ? { database } : {}), spawn });
    } else [a, r] = await Promise.all([spawnRelay(['--port', '0', ...argsA]), options.restartable ? spawnRelay(['--port', '0', ...argsR]) : undefined]);
    const b = await peer;
    const restart = cluster ? cluster.restart : async () => void (a = await restarted(a!, argsA));
    const url = cluster ? cluster.url : a!.url;
    const target: RelayTarget = { profile: options.profile, url, peerUrl: b.url, authority, requestTimeoutMs: 20_000, declared: { ...d }, restart };
    // The restart checks restart R, not A, so the rest of the suite runs on meanwhile.
    if (r) target.restartable = { url: r.url, restart: async () => void (r = await restarted(r!, argsR)) };
    return { target, authority, stop, ...(cluster ? { cluster } : {}) };
  } catch (error) {
    await stop();
    throw error;
  }
}
