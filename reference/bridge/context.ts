// The bridge's configuration (what `svc-reference bridge` flags and the OAUTH_* variables set) and
// the context every handler gets.
import type { Profile } from '../../protocol/common/profile.ts';
import type { Verifier } from '../../protocol/signin/verifier.ts';
import type { NonceStore } from '../../protocol/signin/nonce.ts';
import type { Resolver } from '../../protocol/signin/resolver.ts';
import type { Site } from '../shared/pages.ts';
import type { BridgeStore } from './store.ts';
import type { SigningKeys } from './keys.ts';
import type { ClientRegistry } from './clients.ts';
import { URL_CLIENT_BREAKAGES } from '../variants/url-clients.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { BRIDGE_SEAM_BREAKAGES } from '../variants/bridge-seams.ts';
import type { PushConfig } from './push.ts';
import type { Metrics } from './metrics.ts';
import type { ProfileReader } from './profiles.ts';
import type { BridgeSeams } from './seams.ts';

/**
 * Deliberate breakage for the suite's own tests (test/bridge/broken.test.ts): refused unless
 * SVC_REFERENCE_ALLOW_BREAKAGE=1. Each one disables exactly one rule, at a seam
 * (reference/variants/bridge-seams.ts, url-clients.ts).
 */
export const BREAKAGES = [...BRIDGE_SEAM_BREAKAGES, ...URL_CLIENT_BREAKAGES] as const;
export type Breakage = (typeof BREAKAGES)[number];

export interface BridgeConfig {
  /** The issuer: scheme and host, no path, no trailing slash (ob.issuer.exact-url). */
  issuer: string;
  serviceName: string;
  name: string;
  dataDir: string;
  /** undefined or `sqlite` (under dataDir), or a postgres:// URL. */
  database?: string;
  nonceStore: string;
  subjectType: 'pairwise' | 'public';
  clientRegistration: 'open' | 'allowlist' | 'closed';
  /** The IDs that may register applications when clientRegistration is `allowlist`. */
  registrationAllowlist?: string[];
  urlClients: 'indieauth' | 'on' | 'off';
  staticClientsFile?: string;
  defaultSigner?: string;
  launcherUrl: string;
  metricsAddr?: string;
  /** Bearer token of the test-only operator route POST /operator/keys/rotate (off when unset). */
  operatorToken?: string;
  resumeTtlSeconds: number;
  /** Authorization code lifetime (default the document's 60 s; shorter only for tests). */
  codeTtlSeconds?: number;
  /** Access token lifetime (default the document's 10 minutes; shorter only for tests). */
  accessTokenTtlSeconds?: number;
  /** Transaction lifetime (default the document's 10 minutes; shorter only for tests). */
  txTtlSeconds?: number;
  /** How far /t/{id}/creating extends a transaction, and its cap from the start (default the document's 30 minutes and one hour). */
  txExtensionSeconds?: number;
  txCapSeconds?: number;
  resolver?: { dnsServer?: string; caFile?: string; timeoutMs?: number };
  /** Requests per client IP per minute on /t/{id}/identify and /authorize (ob.errors.rate-limited). */
  rateLimits: { identifyPerMinute: number; authorizePerMinute: number };
  /** Push to the app (OAUTH_PUSH_*), when the bridge has its own service ID. */
  push?: PushConfig;
  /** Private addresses a URL client fetch may still connect to (tests only: a test authority's). */
  urlClientTestAddresses?: string[];
  breakage: ReadonlySet<Breakage>;
  /** The seams the --break flags replace (reference/variants/bridge-seams.ts); the reference's own otherwise. */
  seams?: Partial<BridgeSeams>;
  /**
   * The document-only variant (suite tests): other statuses, codes and bodies wherever document 2
   * names none, and no project discovery fields. Refused unless SVC_REFERENCE_ALLOW_BREAKAGE=1.
   */
  documentOnly?: boolean;
}

export interface BridgeContext {
  config: BridgeConfig;
  profile: Profile;
  site: Site;
  /** True when the issuer is https: cookies get `__Host-` and Secure. */
  secure: boolean;
  store: BridgeStore;
  keys: SigningKeys;
  clients: ClientRegistry;
  verify: Verifier;
  resolver: Resolver;
  /** Reads the public profile behind the `profile` scope's name and picture. */
  profiles: ProfileReader;
  nonces: NonceStore;
  pairwiseSecret: Buffer;
  metrics: Metrics;
  /** Decisions a broken variant may replace (seams.ts); the reference's own otherwise. */
  seams: BridgeSeams;
  now: () => number;
  /** Log lines; internal errors are logged with level `error` (kept under --quiet). */
  log: (line: string, level?: 'error') => void;
}

export const BRIDGE_STYLESHEET = '/bridge.css';

/** How far POST /t/{id}/creating extends a transaction, and the cap from its start (ob.transaction.creating), in ms. */
export const txExtensionMs = (c: Pick<BridgeConfig, 'txExtensionSeconds'>): number => (c.txExtensionSeconds ?? limits.bridge_transaction_creating_ttl_seconds) * 1000;
export const txCapMs = (c: Pick<BridgeConfig, 'txCapSeconds'>): number => (c.txCapSeconds ?? limits.bridge_transaction_max_ttl_seconds) * 1000;

export { PATHS } from './paths.ts';
