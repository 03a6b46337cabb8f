// The drive suite in the registry. The drive is part of a relay: it takes the relay role (`--relay`,
// `--relay-peer` or the targets file's `relay`), and `--reference` starts its own pair of
// reference relays (a member homed on the second), with a small drive quota it declares.
import { clusterOf, RELAY_ENGINES } from '../../run/cluster.ts';
import type { ExternalInput, PreparedSuite, ReferenceInput, SuiteDefinition } from '../suite.ts';
import { clusterBanner, clusterConfig } from '../relay/suite.ts';
import type { RelayTarget } from '../relay/driver.ts';

/** The quota of the reference relays the suite starts: two largest chunks do not fit. */
export const REFERENCE_DRIVE_QUOTA = 8 * 1024 * 1024;

interface DriveFlags {
  relay?: string;
  relayPeer?: string;
  relayInviteCode?: string;
  relayMaxStreams?: number;
  requestTimeout?: number;
  profile?: boolean;
}

export const driveSuiteDefinition: SuiteDefinition = {
  name: 'drive',
  title: "a relay's end-to-end encrypted drive (document 3, Drive API)",
  referenceFlags: [],
  clusterEngines: RELAY_ENGINES,
  options(): void {
    // The relay suite's --relay, --relay-peer, --relay-invite-code and --relay-max-streams describe the drive's relay too.
  },

  async external({ flags, file, profile, authority }: ExternalInput): Promise<PreparedSuite | undefined> {
    const f = flags as DriveFlags;
    const url = f.relay ?? file.relay?.url;
    if (url === undefined) return undefined;
    const peer = f.relayPeer ?? file.relay?.peer_url;
    const target: RelayTarget = {
      profile,
      url: url.replace(/\/$/, ''),
      ...(peer ? { peerUrl: peer.replace(/\/$/, '') } : {}),
      authority: await authority(),
      requestTimeoutMs: (f.requestTimeout ?? file.relay?.request_timeout_s ?? 20) * 1000,
      declared: {
        ...((f.relayInviteCode ?? file.relay?.declared?.invite_code) !== undefined ? { inviteCode: (f.relayInviteCode ?? file.relay?.declared?.invite_code)! } : {}),
        ...((f.relayMaxStreams ?? file.relay?.declared?.max_streams) !== undefined ? { maxStreams: (f.relayMaxStreams ?? file.relay?.declared?.max_streams)! } : {}),
      },
    };
    return {
      suite: 'drive',
      load: () => loadDrive(target),
      profileGates: f.profile ?? file.relay?.profile ?? false,
      config: { suite: 'drive', reference: false, relay: target.url, peer: target.peerUrl ?? null },
      stop: async () => undefined,
    };
  },

  async reference({ flags, profile, log }: ReferenceInput): Promise<PreparedSuite> {
    const f = flags as DriveFlags;
    const { startRelayReference } = await import('../relay/launch.ts');
    const cluster = clusterOf(flags, RELAY_ENGINES);
    const run = await startRelayReference({ profile, ...(log ? { log } : {}), extraArgs: ['--drive-quota', String(REFERENCE_DRIVE_QUOTA)], ...(cluster ? { cluster } : {}) });
    const target: RelayTarget = { ...run.target, ...(f.requestTimeout !== undefined ? { requestTimeoutMs: f.requestTimeout * 1000 } : {}) };
    return {
      suite: 'drive',
      load: () => loadDrive(target),
      profileGates: true,
      config: { suite: 'drive', reference: true, relay: target.url, peer: target.peerUrl, quota: REFERENCE_DRIVE_QUOTA, ...clusterConfig(run), ...(cluster?.s3 ? { s3: cluster.s3 } : {}) },
      banner: `reference relays for the drive at ${target.url}${clusterBanner(run)} and ${target.peerUrl} (quota ${REFERENCE_DRIVE_QUOTA} bytes${cluster?.s3 ? `, chunks in ${cluster.s3}` : ''})`,
      stop: () => run.stop(),
    };
  },
};

async function loadDrive(target: RelayTarget) {
  const { driveSuite } = await import('./index.ts');
  return driveSuite(target);
}
