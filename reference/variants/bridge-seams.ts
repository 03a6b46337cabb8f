// The reference bridge broken one way each at a seam (hidden --break flags, only with
// SVC_REFERENCE_ALLOW_BREAKAGE=1), each breaking exactly one rule of document 2: a variant replaces
// decisions of the bridge's seams (reference/bridge/seams.ts), and the handlers keep only the
// reference's own code. The URL clients' variants are in url-clients.ts.
import type { RuleId } from '../../schemas/ts/rules.ts';
import { matchRedirect } from '../../protocol/bridge/redirect.ts';
import { parseDelivery } from '../signin/delivery.ts';
import type { BridgeSeams } from '../bridge/seams.ts';
import { EmbeddedJWK } from 'jose';
import { brokenVerifier, VERIFIER_VARIANTS } from './verifier.ts';

export interface BridgeSeamVariant {
  /** The one rule the variant breaks. */
  rule: RuleId;
  /** What it does, in a line. */
  what: string;
  /** The bug shows only over https, on a name (the suite judges it there). */
  tls?: true;
  seams: Partial<BridgeSeams>;
}

const always = () => true;
const never = () => false;

/** The reference's client assertion claims with one left unchecked, or the clock a day slow. */
const claimsWithout =
  (drop: 'issuer' | 'subject' | 'audience' | 'exp'): BridgeSeams['assertionClaims'] =>
  (clientId, audiences) => {
    const all = { issuer: clientId, subject: clientId, audience: audiences, maxTokenAge: 300 };
    if (drop === 'exp') return { ...all, clockTolerance: 86_400 };
    const { [drop]: _dropped, ...rest } = all;
    return rest;
  };

export const BRIDGE_SEAM_VARIANTS = {
  'assertion-embedded-key': {
    rule: 'ob.token.client-auth',
    what: "a client assertion is verified with the key its own header embeds (jwk), jose's EmbeddedJWK in place of the client's key set",
    seams: { assertionKeys: () => EmbeddedJWK },
  },
  'assertion-any-issuer': { rule: 'ob.token.client-auth', what: "a client assertion's iss is never compared with the client", seams: { assertionClaims: claimsWithout('issuer') } },
  'assertion-any-subject': { rule: 'ob.token.client-auth', what: "a client assertion's sub is never compared with the client", seams: { assertionClaims: claimsWithout('subject') } },
  'assertion-any-audience': { rule: 'ob.token.client-auth', what: "a client assertion's aud is never compared with the bridge", seams: { assertionClaims: claimsWithout('audience') } },
  'assertion-expired': { rule: 'ob.token.client-auth', what: 'a client assertion is taken up to a day past its exp', seams: { assertionClaims: claimsWithout('exp') } },
  'assertion-replay': { rule: 'ob.token.client-auth', what: "a client assertion's jti is never spent: the same assertion authenticates again", seams: { assertionSpends: never } },
  pkce: { rule: 'ob.authorize.pkce-required', what: 'PKCE is never checked, and a code issued without a challenge redeems without a verifier', seams: { pkceChecked: never } },
  'redirect-prefix': {
    rule: 'ob.authorize.redirect-exact',
    what: "a registered redirect URI's prefix matches too",
    seams: { redirectTaken: (client, asked, matched) => matched || client.redirectUris.some((r) => asked.startsWith(r)) },
  },
  'loopback-confidential': {
    rule: 'ob.authorize.loopback',
    what: 'any-port loopback matching extends to confidential clients',
    seams: { redirectTaken: (client, asked, matched) => matched || matchRedirect(asked, client.redirectUris, true) !== undefined },
  },
  'code-reuse': { rule: 'ob.code.replay-revokes', what: 'a code redeemed again issues another token and revokes nothing', seams: { replayRevokes: never } },
  iss: { rule: 'ob.authorize.iss', what: 'the authorization response never carries iss', seams: { issSent: never } },
  'prompt-none-iss': {
    rule: 'ob.authorize.iss',
    what: 'the prompt=none login_required error leaves iss out',
    seams: { issSent: (params) => params.error !== 'login_required' },
  },
  consent: { rule: 'ob.consent.release', what: 'consent releases every offered claim, ticked or not', seams: { released: (offered) => offered } },
  // The fuzz's own test: the ID made into a URL unguarded, so a typed ID that is no host throws.
  'identify-url-500': {
    rule: 'ob.robustness.never-500',
    what: 'a typed ID that is no host is answered 500',
    seams: {
      typedId: (input) => {
        new URL(`https://${input}/`);
        return input;
      },
    },
  },
  'token-redirect-omitted': {
    rule: 'ob.code.binding',
    what: 'a redemption without redirect_uri is let through',
    seams: { redirectBinds: (form) => form.has('redirect_uri') },
  },
  'session-auth-time': {
    rule: 'ob.token.id-token',
    what: 'a code issued from the session gets auth_time "now", not the proof\'s time',
    seams: { sessionAuthTime: (_authTime, now) => now },
  },
  'resume-reuse': {
    rule: 'ob.transaction.resume-binding',
    what: 'a used resume code still signs the browser in again',
    seams: {
      resumable: (tx): tx is NonNullable<typeof tx> => tx !== undefined && (tx.status === 'authenticated' || tx.identity !== null),
      resumeSpends: (tx) => tx.status === 'authenticated',
      resumeClears: () => ({}),
    },
  },
  'approval-in-url': {
    rule: 'ob.transaction.no-response-in-url',
    what: "an approval in the callback's `response` query parameter is verified",
    seams: {
      approvalInUrl: (search) => {
        const inUrl = new URLSearchParams(search).get('response');
        return inUrl === null ? undefined : parseDelivery(new TextEncoder().encode(inUrl));
      },
    },
  },
  'code-expiry': { rule: 'ob.code.format', what: 'an authorization code still redeems after its lifetime', seams: { codeExpired: never } },
  // "Each window just inside and just outside." (issue 25): the resume code's 60 seconds.
  'resume-code-immortal': { rule: 'ob.transaction.resume-binding', what: 'a resume code still continues the browser past its lifetime', seams: { resumeExpired: never } },
  // Document 2, Tokens: "Access token: opaque, lifetime 10 minutes". The bug: its expiry is stored
  // and never read, so a token reads /userinfo and introspects active for ever.
  'access-token-immortal': { rule: 'ob.token.access-token', what: 'an access token still reads /userinfo and introspects active after its lifetime', seams: { tokenExpired: never } },
  'tx-expiry': { rule: 'ob.transaction.expiry', what: 'transactions live a day', seams: { txTtlSeconds: () => 86_400 } },
  // A blind broken server (round 3, bridge-05, written without the suites): "The cap is computed from
  // `ctx.now()` instead of `bound.createdAt`, so it never binds".
  'creating-cap-from-now': {
    rule: 'ob.transaction.creating',
    what: "POST /t/{id}/creating caps the extension an hour from now, not from the transaction's start",
    seams: { capFrom: (_start, now) => now },
  },
  'creating-ignored': { rule: 'ob.transaction.creating', what: 'POST /t/{id}/creating answers 204 and extends nothing', seams: { creatingExtends: never } },
  'verifier-ignored': { rule: 'ob.code.wrong-verifier', what: 'any code_verifier (or none) redeems the code', seams: { pkceMatches: always } },
  'introspect-any': { rule: 'ob.introspect.owner', what: 'any authenticated client learns about any token', seams: { introspects: always } },
  'issuer-localhost': {
    rule: 'ob.issuer.dotted-host',
    what: 'the issuer taken from the bound address names localhost',
    seams: { boundIssuer: (bound) => bound.replace('//127.0.0.1:', '//localhost:') },
  },
  'cookies-unprefixed': {
    rule: 'ob.cookies.host-prefix',
    what: 'over https the cookies lose `__Host-` (still Secure, HttpOnly, Lax)',
    tls: true,
    seams: { cookieName: (name) => name.replace(/^__Host-/, '') },
  },
  'state-dropped': { rule: 'ob.transaction.create', what: "the transaction does not hold the request's state", seams: { heldState: () => '' } },
  'failed-stays-waiting': { rule: 'ob.transaction.failed', what: 'a verification error leaves the transaction waiting', seams: { failsTransaction: never } },
  'native-signature-ignored': {
    rule: 'ob.native.verifier',
    what: "the bridge's verifier skips the signature (rule 7 of document 1)",
    seams: { nativeVerifier: (verify, resolver, profile) => brokenVerifier(verify, VERIFIER_VARIANTS['ignore-signature']!.break, resolver, profile) },
  },
  'first-party-all': { rule: 'ob.consent.first-party', what: 'a first-party client skips consent for every scope', seams: { firstPartySkips: always } },
  'consent-unnamed': {
    rule: 'ob.consent.screen',
    what: 'the consent view names neither the client nor the return host',
    seams: { consentNames: (consent) => ({ ...consent, client_name: '', host: '' }) },
  },
  'email-released': { rule: 'ob.token.claims', what: 'an `email` claim is released beside svc_id', seams: { extraClaims: (identity) => ({ email: `me@${identity}` }) } },
  'id-url-no-slash': { rule: 'ob.id-input.projections', what: 'the profile URL projection loses its trailing slash', seams: { profileUrl: (identity) => `https://${identity}` } },
  'subject-public': { rule: 'ob.subject.sector', what: '`sub` is the service ID even when pairwise subjects are published', seams: { subjectPublic: always } },
  'retired-key-dropped': { rule: 'ob.keys.rotation', what: 'a retired signing key leaves the key set at once', seams: { retiredKeptMs: () => 0 } },
  'push-no-interval': { rule: 'ob.push.limits', what: 'push prompts go out without the wait', seams: { pushLimits: (max) => ({ max, intervalMs: 0 }) } },
  'push-no-cap': { rule: 'ob.push.limits', what: 'push prompts go out without the cap', seams: { pushLimits: (_max, intervalMs) => ({ max: Number.MAX_SAFE_INTEGER, intervalMs }) } },
  'push-match-code': {
    rule: 'ob.push.no-match-code',
    what: 'the push prompt carries the match code',
    seams: { promptExtras: (matchCode): Record<string, string> => (matchCode === null ? {} : { match_code: matchCode }) },
  },
  'push-untyped': { rule: 'ob.push.message', what: 'the prompt goes out as ordinary mail, without its type', seams: { promptType: () => undefined } },
} satisfies Record<string, BridgeSeamVariant>;

export type BridgeSeamBreak = keyof typeof BRIDGE_SEAM_VARIANTS;
export const BRIDGE_SEAM_BREAKAGES = Object.keys(BRIDGE_SEAM_VARIANTS) as BridgeSeamBreak[];

/** The seams the --break flags replace (only those; each default stays the reference's). */
export function seamsOfBreaks(breaks: Iterable<string>): Partial<BridgeSeams> {
  const chosen = [...breaks].flatMap((b) => (b in BRIDGE_SEAM_VARIANTS ? [BRIDGE_SEAM_VARIANTS[b as BridgeSeamBreak] as BridgeSeamVariant] : []));
  return Object.assign({}, ...chosen.map((v) => v.seams)) as Partial<BridgeSeams>;
}
