// The relay's configuration (what `svc-reference relay` flags and the document's environment
// names set) and the context every handler gets.
import type { Pairings } from './pairings.ts';
import type { Profile } from '../../protocol/common/profile.ts';
import type { Resolver } from '../../protocol/signin/resolver.ts';
import type { RelayStore } from './store.ts';
import type { Auth } from './auth.ts';
import type { EventHub } from './events.ts';
import type { RateLimits } from './rate-limits.ts';
import type { DnsProviders } from './dns-providers.ts';
import type { S3Location } from './drive/s3-chunks.ts';
import type { RelayState } from './state.ts';
import type { DriveSeams } from './drive/roles.ts';
import type { RelaySeams } from './seams.ts';

/** Deliberate faults for the suite's negative tests (only with SVC_REFERENCE_ALLOW_BREAKAGE=1). */
export const BREAKAGES = [
  'verify-after-store',
  'ack-unsigned',
  'challenge-reuse',
  'challenge-race',
  'neither-local',
  'spool-memory',
  'id-drop',
  'revoked-proof',
  'surrogate-500',
  'spool-forever',
  'proof-expiry-ignored',
  'sessions-persisted',
  'events-replay',
  'pairing-forever',
  'auth-request-untrusted',
  'relay-written-writable',
  'roster-unverified',
  'availability-unlimited',
  'availability-one-bucket',
  // the drive (reference/relay/drive/)
  'read-can-write',
  'share-no-inherit',
  'stale-base-accepted',
  'stale-remove-accepted',
  'chunk-by-hash',
  'revoked-stream-open',
  'link-verifier-ignored',
  'link-opens-ignored',
  'events-unfiltered',
  'commit-half-applied',
  'group-roster-ignored',
  'group-roster-stale',
  'group-members-refused',
  'drive-unauthenticated',
  'remote-members-refused',
  'changes-skip',
  'missing-lists-stored',
  'shares-empty',
  'node-shares-no-ancestors',
  'node-shares-parent-only',
  'consume-acks-by-message-cursor',
  'create-can-modify',
] as const;
export type Breakage = (typeof BREAKAGES)[number];

export interface RelayConfig {
  profile: Profile;
  /** Directory of relay.sqlite (identities, spool, devices); `:memory:` keeps them in the process. */
  dataDir: string;
  /** SVC_DATA was given: /health reports storage. */
  dataConfigured: boolean;
  /** `host:port` this relay is reached at (documents name it in `relay`). */
  relayAddress: string;
  hostedDomains: string[];
  registrationGate: 'open' | 'invite';
  inviteCodes: string[];
  /** Terms no hosted handle may contain (availability reason `blocked`), from --blocked-names. */
  blockedTerms?: string[];
  spoolTtlSeconds: number;
  /** A challenge's life: document 3's 60 s, shorter only for tests (--challenge-ttl). */
  challengeTtlSeconds: number;
  /** A pairing offer's life: document 3's 10 minutes, shorter only for tests (--pairing-ttl). */
  pairingTtlSeconds?: number;
  /** Test mode (--test-pages): the WebAuthn test page at /test/passkey. */
  testPages?: boolean;
  maxStreams: number;
  /** A drive's quota in bytes (--drive-quota; ra.drive.quota). */
  driveQuota?: number;
  /** Drive chunks in S3-compatible object storage (--drive-s3) instead of under dataDir. */
  driveS3?: S3Location;
  webStaticDir?: string;
  oauthBridgeUrl?: string;
  rate: { sender: number; global: number; ip: number; windowSeconds: number };
  /** postgres://... shared by every process of this relay (--database); absent: SQLite under dataDir. */
  database?: string;
  /** redis://HOST:PORT shared by every process of this relay (--shared-state); absent: this process's memory. */
  sharedState?: string;
  /** How long one Redis command may take (--shared-state-timeout); past it the request is a 503. */
  sharedStateTimeoutMs?: number;
  breakages: ReadonlySet<Breakage>;
  /** Access decisions a drive variant replaces (reference/variants/drive-matrix.ts; the harness's own tests only). */
  driveSeams?: Partial<DriveSeams>;
  /** Decisions a relay variant replaces (reference/variants/relay-seams.ts; the harness's own tests only). */
  relaySeams?: Partial<RelaySeams>;
  /** Follows only document 3 where the project decided (other codes, no detail, other cursor names). */
  documentOnly: boolean;
  version: string;
  buildTime: string | null;
  versionHash: string | null;
}

export interface RelayContext {
  config: RelayConfig;
  store: RelayStore;
  /** What document 3 keeps in memory (sessions, challenges, nonces, offers, buckets, event fan-out). */
  state: RelayState;
  auth: Auth;
  events: EventHub;
  /** Live pairing offers (in `state`). */
  pairings: Pairings;
  rate: RateLimits;
  resolver: Resolver;
  dns: DnsProviders;
  now: () => number;
  /** Log lines; internal errors are logged with level `error` (kept under --quiet). */
  log: (line: string, level?: 'error') => void;
  /** What else closes with the relay (the drive's streams). */
  closers: Array<() => void>;
}
