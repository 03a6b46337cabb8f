// The RP's configuration (what `svc-reference rp` flags set) and the context every handler gets.
import type { Profile } from '../../protocol/common/profile.ts';
import type { Site } from '../shared/pages.ts';
import { RP_STYLESHEET } from './pages/layout.ts';
import type { Verifier } from '../../protocol/signin/verifier.ts';
import type { TransactionStore } from './transactions.ts';
import type { SessionStore } from './sessions.ts';

export interface RpConfig {
  /** The RP's origin, the audience of its requests (normalized). */
  origin: string;
  /** Service name: every identifier (paths, cookies, deep link) derives from it. */
  serviceName: string;
  /** Trusted display name published in the metadata. */
  name: string;
  /** Web signer for the handoff link `{signerUrl}/app/?auth=...`. */
  signerUrl: string;
  /** Directory of rp.sqlite, or ':memory:' (unused with a PostgreSQL database). */
  dataDir: string;
  /** sqlite (under dataDir, the default) or postgres://USER:PASS@HOST:PORT/DB: several machines, one RP. */
  database?: string;
  /** sqlite | memory | redis://HOST:PORT */
  nonceStore: string;
  /** Abuse contact published in the metadata. */
  contactUri?: string;
  /** Lifetime of a resume code, seconds (default limits.resume_code_ttl_seconds; tests shorten it). */
  resumeTtlSeconds: number;
  /** A request's window, expires_at minus issued_at, seconds (default and most limits.window_max_seconds; tests shorten it). */
  requestWindowSeconds: number;
  /** The network resolver's options (ignored when a Resolver is injected). */
  resolver?: { dnsServer?: string; caFile?: string; timeoutMs?: number };
}

export const DEFAULT_SIGNER_URL = 'https://signer.example';
export const DEFAULT_NAME = 'svc reference RP';

/** The paths this RP serves, from the profile (ns.* paths are project decisions in rp.openapi.yaml). */
export interface RpPaths {
  metadata: string;
  login: string;
  response: string;
  poll: string;
  resume: string;
  context: string;
  reference: string; // prefix, e.g. '/r/'
  home: string;
}

export function pathsFor(profile: Profile): RpPaths {
  return {
    metadata: profile.ids.metadata_path,
    login: profile.ids.rp_start_path,
    response: profile.ids.rp_response_path,
    poll: profile.ids.rp_poll_path,
    resume: profile.ids.resume_path,
    context: profile.ids.context_path,
    reference: profile.ids.rp_reference_path,
    home: '/',
  };
}

export interface RpContext {
  config: RpConfig;
  profile: Profile;
  paths: RpPaths;
  /** What its pages share (name, stylesheet, where a failed sign-in restarts). */
  site: Site;
  /** True when the origin is https: cookies get `__Host-` and Secure. */
  secure: boolean;
  transactions: TransactionStore;
  sessions: SessionStore;
  verify: Verifier;
  now: () => number;
  /** Log lines; internal errors are logged with level `error` (kept under --quiet). */
  log: (line: string, level?: 'error') => void;
}

export const url = (ctx: RpContext, path: string): string => ctx.config.origin + path;

export function siteOf(config: RpConfig, paths: RpPaths): Site {
  return { name: config.name, stylesheet: RP_STYLESHEET, retry: { href: paths.login, label: 'Start a new sign-in' } };
}
