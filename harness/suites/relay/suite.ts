// The relay suite in the registry: its `run` flags (shortcuts for the targets file's `relay` role),
// the RelayTarget built from them, and `--reference` (two reference relays as child processes with
// an in-process test authority, the first one restartable).
import { InvalidArgumentError, type Command } from 'commander';
import { clusterOf, RELAY_ENGINES } from '../../run/cluster.ts';
import { ConfigError } from '../../run/exit.ts';
import type { RelayRole } from '../../targets/file.ts';
import type { ExternalInput, PreparedSuite, ReferenceInput, SuiteDefinition } from '../suite.ts';
import type { RelayDeclared, RelayTarget } from './driver.ts';
import type { RelayReferenceRun } from './launch.ts';
import { expectedFailuresOf } from '../../run/expected.ts';

interface RelayFlags {
  relay?: string;
  relayPeer?: string;
  relaySpoolTtl?: number;
  relayChallengeTtl?: number;
  relayPairingTtl?: number;
  relayMaxStreams?: number;
  relaySenderLimit?: number;
  relayAvailabilityLimit?: number;
  relayInviteCode?: string;
  relayPeerOpenRegistration?: boolean;
  relayOauthBridgeUrl?: string;
  requestTimeout?: number;
  profile?: boolean;
}

const DEFAULT_REQUEST_TIMEOUT_S = 20;
const positive = (v: string) => {
  if (!/^[1-9]\d*$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
  return Number(v);
};
const baseUrl = (what: string, v: string): string => {
  if (!/^https?:\/\/[^/?#]+\/?$/.test(v)) throw new ConfigError(`${what} ${v} is not a base address (scheme://host[:port])`);
  return v.replace(/\/$/, '');
};

export const relaySuiteDefinition: SuiteDefinition = {
  name: 'relay',
  title: 'a relay of document 3 (identities, authentication, messaging)',
  referenceFlags: [],
  clusterEngines: RELAY_ENGINES,
  options(cmd: Command): void {
    cmd
      .option('--relay <url>', 'relay: base address of the relay under test')
      .option('--relay-peer <url>', 'relay: a second relay resolving through the same authority (enables the federation checks)')
      .option('--relay-spool-ttl <seconds>', 'relay: its SPOOL_TTL (the expiry check runs when it is at most 30 s)', positive)
      .option('--relay-challenge-ttl <seconds>', "relay: a challenge's life when shorter than document 3's 60 s (a test contract; the expiry check waits for it)", positive)
      .option('--relay-pairing-ttl <seconds>', "relay: a pairing offer's life when shorter than document 3's 10 minutes (a test contract; the expiry check waits for it)", positive)
      .option('--relay-max-streams <n>', "relay: its MAX_STREAMS_PER_IDENTITY (default the project's)", positive)
      .option('--relay-sender-limit <n>', "relay: its per-sender rate-limit bucket (default the project's)", positive)
      .option('--relay-availability-limit <n>', "relay: availability lookups one IP address may make in a window (default the project's)", positive)
      .option('--relay-invite-code <code>', 'relay: an invite code it accepts (when REGISTRATION_GATE=invite)')
      .option('--relay-peer-open-registration', 'relay: the peer registers hosted identities without an invite (the open gate is judged there)')
      .option('--relay-oauth-bridge-url <url>', 'relay: its OAUTH_BRIDGE_URL, when set');
  },

  async external({ flags, file, profile, authority }: ExternalInput): Promise<PreparedSuite | undefined> {
    const f = flags as RelayFlags;
    const role = roleOf(f, file.relay);
    if (role === undefined) return undefined;
    const d = role.declared ?? {};
    const declared: RelayDeclared = {
      ...(d.spool_ttl_s !== undefined ? { spoolTtlS: d.spool_ttl_s } : {}),
      ...(d.challenge_ttl_s !== undefined ? { challengeTtlS: d.challenge_ttl_s } : {}),
      ...(d.pairing_ttl_s !== undefined ? { pairingTtlS: d.pairing_ttl_s } : {}),
      ...(d.max_streams !== undefined ? { maxStreams: d.max_streams } : {}),
      ...(d.sender_limit !== undefined ? { senderLimit: d.sender_limit } : {}),
      ...(d.availability_limit !== undefined ? { availabilityLimit: d.availability_limit } : {}),
      ...(d.invite_code !== undefined ? { inviteCode: d.invite_code } : {}),
      ...(d.peer_open_registration !== undefined ? { peerOpenRegistration: d.peer_open_registration } : {}),
      ...(d.oauth_bridge_url !== undefined ? { oauthBridgeUrl: d.oauth_bridge_url } : {}),
    };
    const target: RelayTarget = {
      profile,
      url: baseUrl('relay URL', role.url),
      ...(role.peer_url ? { peerUrl: baseUrl('relay peer URL', role.peer_url) } : {}),
      authority: await authority(),
      requestTimeoutMs: (f.requestTimeout ?? role.request_timeout_s ?? DEFAULT_REQUEST_TIMEOUT_S) * 1000,
      declared,
    };
    return {
      suite: 'relay',
      load: () => loadRelay(target),
      profileGates: f.profile ?? role.profile ?? false,
      ...(role.expected_failures ? { expectedFailures: expectedFailuresOf(role.expected_failures) } : {}),
      ...(role.check_timeout_s !== undefined ? { checkTimeoutMs: role.check_timeout_s * 1000 } : {}),
      config: { suite: 'relay', reference: false, relay: target.url, peer: target.peerUrl ?? null, declared },
      stop: async () => undefined,
    };
  },

  async reference({ flags, profile, log }: ReferenceInput): Promise<PreparedSuite> {
    const f = flags as RelayFlags;
    const { startRelayReference } = await import('./launch.ts');
    const cluster = clusterOf(flags, RELAY_ENGINES);
    const run = await startRelayReference({ profile, ...(log ? { log } : {}), ...(cluster ? { cluster } : { restartable: true }) });
    const target: RelayTarget = { ...run.target, ...(f.requestTimeout !== undefined ? { requestTimeoutMs: f.requestTimeout * 1000 } : {}) };
    return {
      suite: 'relay',
      load: () => loadRelay(target),
      profileGates: true,
      config: { suite: 'relay', reference: true, relay: target.url, peer: target.peerUrl, declared: target.declared, authority: run.authority.adminUrl, ...clusterConfig(run) },
      banner: `reference relays at ${target.url}${clusterBanner(run)} and ${target.peerUrl} (spool TTL ${target.declared.spoolTtlS} s, restartable${target.restartable ? `; the restart checks on ${target.restartable.url}` : ''}), authority ${run.authority.adminUrl} (DNS ${run.authority.dnsServer})`,
      stop: () => run.stop(),
    };
  },
};

/** What the report's config says of a clustered relay A. */
export function clusterConfig(run: RelayReferenceRun): Record<string, unknown> {
  if (!run.cluster) return {};
  return { cluster: { front: run.cluster.url, processes: run.cluster.processes().map((p) => p.url), durable: 'postgres', shared_state: 'redis' } };
}

/** The banner's words for a clustered relay A. */
export function clusterBanner(run: RelayReferenceRun): string {
  if (!run.cluster) return '';
  const ps = run.cluster.processes();
  return ` (${ps.length} processes ${ps.map((p) => p.url).join(', ')} behind a round-robin front; Redis; PostgreSQL)`;
}

async function loadRelay(target: RelayTarget) {
  const { relaySuite } = await import('./index.ts');
  return relaySuite(target);
}

function roleOf(f: RelayFlags, fromFile: RelayRole | undefined): RelayRole | undefined {
  const url = f.relay ?? fromFile?.url;
  if (url === undefined) {
    const stray = (
      [
        'relayPeer',
        'relaySpoolTtl',
        'relayChallengeTtl',
        'relayPairingTtl',
        'relayMaxStreams',
        'relaySenderLimit',
        'relayAvailabilityLimit',
        'relayInviteCode',
        'relayPeerOpenRegistration',
        'relayOauthBridgeUrl',
      ] as const
    ).filter((k) => f[k] !== undefined);
    if (stray.length > 0) throw new ConfigError('the --relay-* options describe a relay: give its address with --relay URL (or "relay.url" in the targets file)');
    return undefined;
  }
  const declared = { ...(fromFile?.declared ?? {}) };
  if (f.relaySpoolTtl !== undefined) declared.spool_ttl_s = f.relaySpoolTtl;
  if (f.relayChallengeTtl !== undefined) declared.challenge_ttl_s = f.relayChallengeTtl;
  if (f.relayPairingTtl !== undefined) declared.pairing_ttl_s = f.relayPairingTtl;
  if (f.relayMaxStreams !== undefined) declared.max_streams = f.relayMaxStreams;
  if (f.relaySenderLimit !== undefined) declared.sender_limit = f.relaySenderLimit;
  if (f.relayAvailabilityLimit !== undefined) declared.availability_limit = f.relayAvailabilityLimit;
  if (f.relayInviteCode !== undefined) declared.invite_code = f.relayInviteCode;
  if (f.relayPeerOpenRegistration !== undefined) declared.peer_open_registration = f.relayPeerOpenRegistration;
  if (f.relayOauthBridgeUrl !== undefined) declared.oauth_bridge_url = f.relayOauthBridgeUrl;
  const peer = f.relayPeer ?? fromFile?.peer_url;
  return { ...(fromFile ?? {}), url, ...(peer ? { peer_url: peer } : {}), declared };
}
