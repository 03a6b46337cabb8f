// The bridge's seams: the few decisions a broken variant (reference/variants/bridge-matrix.ts)
// replaces where a bug cannot be written on the wire, because the wire never sees the client's
// record or the code's (a code's expiry, its PKCE challenge, whether a client needs PKCE, the
// transaction's browser binding, the nonce a code carries). The reference's own answers are these defaults;
// a variant's replacements come only with SVC_REFERENCE_ALLOW_BREAKAGE=1 (see wire.ts).
import { createLocalJWKSet } from 'jose';
import { verifierMatches } from '../../protocol/bridge/pkce.ts';
import { sameHash } from '../shared/secrets.ts';
import type { AssertionSeams, Client } from './client.ts';
import type { BridgeTx } from './store.ts';
import type { DeliveryBody } from '../signin/delivery.ts';
import type { Verifier } from '../../protocol/signin/verifier.ts';
import type { Resolver } from '../../protocol/signin/resolver.ts';
import type { Profile } from '../../protocol/common/profile.ts';

export interface BridgeSeams {
  /** Whether a code that expires at `expiresAt` (ms) is expired at `now` (ob.code.format). */
  codeExpired(now: number, expiresAt: number): boolean;
  /** Whether an access token that expires at `expiresAt` (ms) is expired at `now` (ob.token.access-token). */
  tokenExpired(now: number, expiresAt: number): boolean;
  /** Whether `/authorize` requires a PKCE challenge of this client (ob.authorize.pkce-required). */
  pkceRequired(client: Client): boolean;
  /** Whether the presented verifier answers the code's challenge, for the client redeeming it (ob.code.wrong-verifier). */
  pkceMatches(client: Client, verifier: string | null, challenge: string): boolean;
  /** Whether the browser opening a resume link holds its transaction's cookie: its hash, undefined without one (ob.transaction.resume-binding). */
  resumeBrowserMatches(cookieHash: string | undefined, bindingHash: string): boolean;
  /** The nonce the ID token carries, for the client redeeming a code whose request sent `nonce` (ob.token.id-token). */
  idTokenNonce(client: Client, nonce: string | null): string | null;
}

const OWN_SEAMS: Omit<BridgeSeams, keyof BreakSeams> = {
  codeExpired: (now, expiresAt) => now > expiresAt,
  tokenExpired: (now, expiresAt) => now > expiresAt,
  pkceRequired: () => true,
  pkceMatches: (_client, verifier, challenge) => verifierMatches(verifier, challenge),
  resumeBrowserMatches: (cookieHash, bindingHash) => cookieHash !== undefined && sameHash(cookieHash, bindingHash),
  idTokenNonce: (_client, nonce) => nonce,
};

// ---- The --break seams (issue 28, item 3) -------------------------------------------------------
// The decisions the bridge's --break variants (reference/variants/bridge-seams.ts) replace, so the
// handlers keep only the reference's own code and never ask whether a flag is on.

export interface BreakSeams extends AssertionSeams {
  /** Whether /authorize takes `asked`, given whether it matches a registered URI (ob.authorize.redirect-exact, ob.authorize.loopback). */
  redirectTaken(client: Client, asked: string, matched: boolean): boolean;
  /** Whether PKCE is checked at all, at /authorize and for a code issued without a challenge (ob.authorize.pkce-required). */
  pkceChecked(): boolean;
  /** Whether a code redeemed again revokes what it issued, rather than issuing another token (ob.code.replay-revokes). */
  replayRevokes(): boolean;
  /** Whether the authorization response with these parameters carries `iss` (ob.authorize.iss). */
  issSent(params: Record<string, string | undefined>): boolean;
  /** The claims consent releases, of those offered and those the user ticked (ob.consent.release). */
  released(offered: string[], ticked: string[]): string[];
  /** The typed ID as /t/{id}/identify reads it (ob.robustness.never-500). */
  typedId(input: string): string;
  /** Whether /token holds this form to the code's redirect_uri (ob.code.binding). */
  redirectBinds(form: URLSearchParams): boolean;
  /** The auth_time of a code issued from a session (ob.token.id-token). */
  sessionAuthTime(authTime: number, now: number): number;
  /** Whether a resume code finds this transaction resumable (ob.transaction.resume-binding). */
  resumable(tx: BridgeTx | undefined): tx is BridgeTx;
  /** Whether a resume code is past its lifetime (60 s, or the configured one; ob.transaction.resume-binding). */
  resumeExpired(now: number, expiresAt: number): boolean;
  /** Whether this resume spends the transaction (moves it to resumed), and what the move clears (ob.transaction.resume-binding). */
  resumeSpends(tx: BridgeTx): boolean;
  resumeClears(): Record<string, null>;
  /** An approval read from the callback's URL, `search` its query (ob.transaction.no-response-in-url). */
  approvalInUrl(search: string): DeliveryBody | undefined;
  /** A transaction's lifetime in seconds, given the configured one (ob.transaction.expiry). */
  txTtlSeconds(configured: number | undefined): number | undefined;
  /** Whether POST /t/{id}/creating extends the transaction (ob.transaction.creating). */
  creatingExtends(): boolean;
  /** The instant a transaction's cap counts from, given its start (ob.transaction.creating): the start. */
  capFrom(start: number, now: number): number;
  /** Whether an ID entered in this state moves the transaction on (ob.transaction.identify: from `identify`, and while a request waits, the project's retry). */
  identifies(status: BridgeTx['status']): boolean;
  /** Whether introspection tells `caller` about a token of `owner` (ob.introspect.owner). */
  introspects(owner: string, caller: string): boolean;
  /** The issuer when none is configured, from the bound address (ob.issuer.dotted-host). */
  boundIssuer(bound: string): string;
  /** A cookie's name as set and read (ob.cookies.host-prefix). */
  cookieName(name: string): string;
  /** The state a transaction holds of the request's (ob.transaction.create). */
  heldState(state: string): string;
  /** Whether a verification error fails the transaction (ob.transaction.failed). */
  failsTransaction(): boolean;
  /** The native verifier the bridge uses (ob.native.verifier). */
  nativeVerifier(verify: Verifier, resolver: Resolver, profile: Profile): Verifier;
  /** Whether a first-party client skips consent for these wanted claims (ob.consent.first-party). */
  firstPartySkips(wanted: readonly string[]): boolean;
  /** The consent view's names of the client and the return host (ob.consent.screen). */
  consentNames<T extends { client_name: string; host: string }>(consent: T): T;
  /** Claims released beside the ID's (ob.token.claims). */
  extraClaims(identity: string): Record<string, string>;
  /** The profile URL projection of an ID (ob.id-input.projections). */
  profileUrl(identity: string): string;
  /** Whether `sub` is the ID itself, given whether public subjects are configured (ob.subject.sector). */
  subjectPublic(configured: boolean): boolean;
  /** How long a retired signing key stays in the key set, in ms (ob.keys.rotation). */
  retiredKeptMs(ms: number): number;
  /** The push prompts' cap and wait (ob.push.limits). */
  pushLimits(max: number, intervalMs: number): { max: number; intervalMs: number };
  /** Fields a push prompt carries beside its own (ob.push.no-match-code). */
  promptExtras(matchCode: string | null): Record<string, string>;
  /** A push prompt's message type (ob.push.message). */
  promptType(type: string): string | undefined;
}

const BREAK_SEAMS: BreakSeams = {
  redirectTaken: (_client, _asked, matched) => matched,
  pkceChecked: () => true,
  replayRevokes: () => true,
  issSent: () => true,
  released: (offered, ticked) => offered.filter((c) => ticked.includes(c)),
  typedId: (input) => input,
  redirectBinds: () => true,
  sessionAuthTime: (authTime) => authTime,
  resumable: (tx): tx is BridgeTx => tx?.status === 'authenticated',
  resumeExpired: (now, expiresAt) => now > expiresAt,
  resumeSpends: () => true,
  resumeClears: () => ({ resume_hash: null }),
  approvalInUrl: () => undefined,
  txTtlSeconds: (configured) => configured,
  creatingExtends: () => true,
  capFrom: (start) => start,
  identifies: (status) => status === 'identify' || status === 'awaiting_signature',
  introspects: (owner, caller) => owner === caller,
  boundIssuer: (bound) => bound,
  cookieName: (name) => name,
  heldState: (state) => state,
  failsTransaction: () => true,
  nativeVerifier: (verify) => verify,
  firstPartySkips: (wanted) => wanted.length === 0,
  consentNames: (consent) => consent,
  extraClaims: () => ({}),
  profileUrl: (identity) => `https://${identity}/`,
  subjectPublic: (configured) => configured,
  retiredKeptMs: (ms) => ms,
  pushLimits: (max, intervalMs) => ({ max, intervalMs }),
  promptExtras: () => ({}),
  promptType: (type) => type,
  assertionKeys: (jwks) => createLocalJWKSet(jwks),
  assertionClaims: (clientId, audiences) => ({ issuer: clientId, subject: clientId, audience: audiences, maxTokenAge: 300 }),
  assertionSpends: () => true,
};

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merges the --break seams into BridgeSeams
export interface BridgeSeams extends BreakSeams {}

export const REFERENCE_SEAMS: BridgeSeams = { ...OWN_SEAMS, ...BREAK_SEAMS };
