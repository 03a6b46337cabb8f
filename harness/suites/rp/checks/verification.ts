// Verification rules 1 to 7, authentication rules 2 and 3, the canonical string, the session proof
// and resolution, as black-box behaviour: each scenario starts its own transaction, delivers one
// approval of it that a rule must refuse (re-signed by the harness when the change is to a signed
// field, so only the rule under test can refuse it), checks the login did not complete, then
// delivers the genuine approval, which must still complete (bad input loses nothing, and a
// refused approval spends no nonce). Each scenario is judged twice: by the document's rule (a 4xx
// and no completion: MUST) and by this project's codes (exact status and `error` code,
// ns.delivery.reject-status and ns.errors.codes), so an RP with its own codes can list the second
// kind as expected failures without hiding the first.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { Profile } from '../../../../protocol/common/profile.ts';
import { canonicalString } from '../../../../protocol/common/canonical.ts';
import { signEd25519, publicKeyFromSeed } from '../../../../protocol/common/ed25519.ts';
import { decodeBase64Any, encodeBase64url } from '../../../../protocol/common/base64.ts';
import { formatKey } from '../../../../protocol/common/keys.ts';
import { formatRfc3339, parseRfc3339 } from '../../../../protocol/common/time.ts';
import type { SessionKey } from '../../../../protocol/signin/signer.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import type { Exchange } from '../../../actors/http.ts';
import { rules as catalogue, type RuleId } from '../../../../schemas/ts/rules.ts';
import { once, rpCheck, type Expect } from '../check.ts';
import { CheckSkip, Session, StartRefused, accepted, envelopeOf, errorCode, isoShift, said, sessionFor, sign, type RpTarget, type Started, type TestIdentity } from '../driver.ts';

export interface MutationContext {
  s: Session;
  profile: Profile;
  started: Started;
  request: Record<string, unknown>;
  who: TestIdentity;
  genuine: Record<string, unknown>;
}

export interface Scenario {
  /** Check name part: `rp/verify/<name>` and `rp/codes/<name>`. */
  name: string;
  title: string;
  /**
   * The rules the refusal (or acceptance) decides: document rules, judged by rp/verify/<name>
   * with any 4xx; or only project decisions (binding/*), judged by rp/codes/<name> alone.
   */
  rules: RuleId[];
  /** Rules the scenario passes through without deciding them. */
  context?: RuleId[];
  /** Expected answer under this project's decisions; undefined for an acceptance scenario. */
  expect?: { status: number; codes: string[] };
  /** Start options the scenario needs (skipped when the RP cannot honour them). */
  start?: { action?: string; scopes?: string[]; statement?: string };
  /** The approval to deliver (an object, or text sent as the bare body). */
  build: (m: MutationContext) => Promise<Record<string, unknown> | string> | Record<string, unknown> | string;
  /** Acceptance scenario: the built approval must complete the login itself. */
  accept?: boolean;
  /** The matrix cells (spec/facets/rp.yaml) its document check fills, on the delivery endpoint. */
  cells?: Array<{ rule: RuleId; facet: string; value: string }>;
}

export interface ScenarioResult {
  status: number;
  envelope: ReturnType<typeof envelopeOf>;
  /** What the RP answered to the mutated delivery, for failure texts. */
  answer: string;
  /** Its `error` code, if any. */
  code?: string;
  /** Poll status right after the mutated delivery. */
  after: string;
  /** How long the RP took to refuse (ms). */
  refusedInMs?: number;
  /** Problem with completing the login by the genuine approval afterwards (or by the approval itself when accepting). */
  genuineProblem?: string;
  exchanges: Exchange[];
  notes: string[];
}

// ---- signing helpers for mutations ----

/** Re-signs `response` as is (its canonical string, whatever its fields say) with `seed`. */
export function resign(profile: Profile, response: Record<string, unknown>, seed: Uint8Array): Record<string, unknown> {
  const out = { ...response };
  out.signature = encodeBase64url(signEd25519(seed, canonicalString(profile, 'signin', out)));
  return out;
}

/** Signs a changed canonical string (for canonical-form rules): `edit` gets the correct lines. */
export function signLines(profile: Profile, response: Record<string, unknown>, seed: Uint8Array, edit: (lines: string[]) => string): Record<string, unknown> {
  const lines = canonicalString(profile, 'signin', response).split('\n');
  return { ...response, signature: encodeBase64url(signEd25519(seed, edit(lines))) };
}

const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/** The same signature with S replaced by S + L (a non-canonical S, ns.ed25519.strict). */
export function nonCanonicalS(signature: string): string {
  const bytes = decodeBase64Any(signature)!;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(bytes[i]!);
  s += L;
  const out = Uint8Array.from(bytes);
  for (let i = 32; i < 64; i++) {
    out[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return encodeBase64url(out);
}

function flipBit(signature: string, bit: number): string {
  const bytes = Uint8Array.from(decodeBase64Any(signature)!);
  bytes[bit >> 3]! ^= 1 << (bit & 7);
  return encodeBase64url(bytes);
}

const now = () => Date.now();
const skew = limits.clock_skew_seconds;
const win = limits.window_max_seconds;

/** The request with fields changed, then signed by `who` (so the signature is valid over the change). */
function signedWith(m: MutationContext, changes: Record<string, unknown>, remove: string[] = []): Record<string, unknown> {
  const request: Record<string, unknown> = { ...m.request, ...changes };
  for (const f of remove) delete request[f];
  return sign(m.profile, request, m.who);
}

function without(m: MutationContext, field: string, resigned = true): Record<string, unknown> {
  const r = { ...m.genuine };
  delete r[field];
  if (!resigned || field === 'signature') return r;
  try {
    return resign(m.profile, r, m.who.seed);
  } catch {
    return r; // the canonical string needs the field: the old signature stays
  }
}

function session(m: MutationContext, opts?: Parameters<typeof sessionFor>[2]): SessionKey {
  return sessionFor(m.profile, m.who, opts);
}

function sessionApproval(m: MutationContext, key: SessionKey, proofEdit?: (p: Record<string, string>) => Record<string, unknown>): Record<string, unknown> {
  const approval = sign(m.profile, m.request, m.who, key);
  if (proofEdit) approval.session_proof = proofEdit({ ...key.proof });
  return approval;
}

/** A session proof re-signed by the identity key over whatever its fields now say. */
function reproof(m: MutationContext, proof: Record<string, unknown>, seed = m.who.seed): Record<string, unknown> {
  let text: string;
  try {
    text = canonicalString(m.profile, 'session-registration', { identity: m.who.identity, ...proof });
  } catch {
    return proof;
  }
  return { ...proof, identity_signature: encodeBase64url(signEd25519(seed, text)) };
}

const S_PREFIX = vocabulary.key_ids.session_prefix;
/**
 * A refusal by rules 1-4 needs no lookup; anything slower waited for the hanging authority. Well
 * under a lookup timeout (the reference's is 5 s under the harness), with room for a loaded machine.
 */
const ORDER_MAX_MS = 2000;

/** An expected refusal: its status and the codes the project gives it. */
const R = (status: number, ...codes: string[]) => ({ status, codes });
const foreignOrigin = 'https://rp.attacker.example';

// ---- acceptance (ns.auth.2, canonical string, encodings) ----
function acceptIdentityKeyScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/identity-key',
    title: 'an approval signed by the identity key completes the login',
    rules: ['ns.auth.2', 'ns.verify.6', 'ns.verify.7', 'ns.canonical.format', 'ns.canonical.lines', 'ns.response.fields', 'ns.response.key-id'],
    context: ['ns.resolve.chain', 'ns.identity-document.format'],
    accept: true,
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'identity-key' }],
    build: (m) => m.genuine,
  };
}

function acceptSessionKeyScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/session-key',
    title: 'an approval signed by a session key with its proof completes the login, with the same scopes and window',
    rules: [
      'ns.auth.2',
      'ns.auth.2.same-scope-window',
      'ns.session-proof.fields',
      'ns.session-proof.signed-lines',
      'ns.session-proof.signature',
      'ns.session-proof.validation',
      'ns.response.session-proof-presence',
    ],
    context: ['ns.response.key-id'],
    start: { scopes: [...vocabulary.scopes.values] },
    accept: true,
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'session-key' }],
    build: (m) => sessionApproval(m, session(m)),
  };
}

function acceptLoginOnlyScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/login-only',
    title: 'a login-only approval (empty scopes line) without a statement completes the login',
    rules: ['ns.canonical.statement-empty', 'ns.canonical.scopes-joined', 'ns.request.scopes-login-only'],
    start: { scopes: [], statement: '' },
    accept: true,
    build: (m) => m.genuine,
  };
}

function acceptScopesScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/scopes',
    title: 'an approval with several scopes (sorted, joined with a comma) completes the login',
    rules: ['ns.canonical.scopes-joined', 'ns.request.scope-vocabulary'],
    context: ['ns.request.scopes'],
    start: { scopes: [...vocabulary.scopes.values].reverse() },
    accept: true,
    build: (m) => m.genuine,
  };
}

function acceptSignatureStandardBase64Scenario(_profile: Profile): Scenario {
  return {
    name: 'accept/signature-standard-base64',
    title: 'a signature in padded standard base64 is accepted (any base64 variant)',
    rules: ['ns.response.signature'],
    accept: true,
    build: (m) => ({ ...m.genuine, signature: Buffer.from(decodeBase64Any(m.genuine.signature as string)!).toString('base64') }),
  };
}

function acceptIdentityCaseScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/identity-case',
    title: 'an identity sent in upper case with spaces is lowercased and trimmed (signed lowercased)',
    rules: ['ns.response.identity'],
    context: ['ns.canonical.lines'],
    accept: true,
    cells: [
      { rule: 'ns.response.identity', facet: 'normalization', value: 'upper-case' },
      { rule: 'ns.response.identity', facet: 'normalization', value: 'surrounding-spaces' },
    ],
    build: (m) => ({ ...m.genuine, identity: `  ${m.who.identity.toUpperCase()} ` }),
  };
}

function acceptRotatedInsideGraceScenario(_profile: Profile): Scenario {
  return {
    name: 'accept/rotated-inside-grace',
    title: 'after a key rotation, an approval by the previous key inside its grace window is accepted',
    rules: ['ns.verify.7'],
    context: ['ns.identity-document.previous-keys', 'ns.resolve.chain'],
    accept: true,
    cells: [{ rule: 'ns.verify.7', facet: 'rotation-grace', value: 'inside' }],
    build: async (m) => {
      const next = new Uint8Array(randomBytes(32));
      await m.s.target.authority.publish({
        identity: m.who.identity,
        seed: next,
        previousKeys: [{ publicKey: formatKey(publicKeyFromSeed(m.who.seed)), validUntil: formatRfc3339(now() + 600_000) }],
      });
      return m.genuine;
    },
  };
}

// ---- rule 1: shape and version ----
function rule1VersionScenario(profile: Profile): Scenario {
  return {
    name: '1/version',
    title: `${profile.ids.auth_field} "2" (re-signed) is refused`,
    rules: ['ns.verify.1', 'ns.version.1'],
    context: ['ns.request.version'],
    expect: R(400, 'unsupported_version'),
    build: (m) => signedWith(m, { [profile.ids.auth_field]: '2' }),
  };
}

function rule1MissingNonceScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-nonce',
    title: 'an approval without nonce is refused',
    rules: ['ns.verify.1'],
    context: ['ns.request.nonce', 'ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'nonce'),
  };
}

function rule1MissingRequestIdScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-request-id',
    title: 'an approval without request_id is refused',
    rules: ['ns.verify.1'],
    context: ['ns.request.request-id', 'ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'request_id'),
  };
}

function rule1MissingSignatureScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-signature',
    title: 'an approval without signature is refused',
    rules: ['ns.verify.1'],
    context: ['ns.response.signature', 'ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'signature'),
  };
}

function rule1MissingIdentityScenario(_profile: Profile): Scenario {
  return {
    name: '1/missing-identity',
    title: 'an approval without identity is refused',
    rules: ['ns.verify.1'],
    context: ['ns.response.fields'],
    expect: R(400, 'missing_field', 'malformed_response'),
    build: (m) => without(m, 'identity', false),
  };
}

function rule1InvalidIdentityScenario(profile: Profile): Scenario {
  return {
    name: '1/invalid-identity',
    title: 'an identity that is not a valid service name (re-signed) is refused',
    rules: ['ns.verify.1'],
    context: ['ns.response.identity'],
    expect: R(400, 'invalid_identity'),
    build: (m) => resign(profile, { ...m.genuine, identity: 'not_a valid name' }, m.who.seed),
  };
}

// ---- rule 2: audience ----
function rule2AudienceOtherOriginScenario(_profile: Profile): Scenario {
  return {
    name: '2/audience-other-origin',
    title: 'an approval for another origin (re-signed) is refused',
    rules: ['ns.verify.2'],
    context: ['ns.request.audience'],
    expect: R(400, 'audience_mismatch'),
    cells: [{ rule: 'ns.verify.2', facet: 'binding', value: 'audience' }],
    build: (m) => signedWith(m, { audience: foreignOrigin }),
  };
}

function rule2AudienceNotAnOriginScenario(_profile: Profile): Scenario {
  return {
    name: '2/audience-not-an-origin',
    title: 'an audience with a path (re-signed) is refused',
    rules: ['ns.verify.2'],
    context: ['ns.request.audience'],
    expect: R(400, 'invalid_audience', 'audience_mismatch'),
    cells: [{ rule: 'ns.verify.2', facet: 'normalization', value: 'near-miss' }],
    build: (m) => signedWith(m, { audience: `${m.request.audience as string}/login` }),
  };
}

function rule2AudienceOtherSchemeScenario(_profile: Profile): Scenario {
  return {
    name: '2/audience-other-scheme',
    title: 'the same host under the other scheme (re-signed) is refused',
    rules: ['ns.verify.2'],
    context: ['ns.request.audience-http-dev', 'ns.auth.5'],
    expect: R(400, 'audience_mismatch', 'insecure_audience'),
    cells: [{ rule: 'ns.verify.2', facet: 'normalization', value: 'near-miss' }],
    build: (m) =>
      signedWith(m, {
        audience: (m.request.audience as string).startsWith('https:') ? (m.request.audience as string).replace(/^https:/, 'http:') : (m.request.audience as string).replace(/^http:/, 'https:'),
      }),
  };
}

// ---- rule 3: action, statement, scopes ----
function rule3UnknownActionScenario(_profile: Profile): Scenario {
  return {
    name: '3/unknown-action',
    title: 'an unknown action (re-signed) is refused',
    rules: ['ns.verify.3'],
    context: ['ns.request.action'],
    expect: R(400, 'unknown_action'),
    build: (m) => signedWith(m, { action: 'delete' }),
  };
}

function rule3StatementTooLongScenario(_profile: Profile): Scenario {
  return {
    name: '3/statement-too-long',
    title: `a statement of ${limits.statement_max_bytes + 1} bytes (re-signed) is refused`,
    rules: ['ns.verify.3', 'ns.limits.statement'],
    context: ['ns.request.statement'],
    expect: R(400, 'invalid_statement'),
    build: (m) => signedWith(m, { statement: 'é'.repeat(Math.floor(limits.statement_max_bytes / 2)) + 'x' }),
  };
}

function rule3StatementLineBreakScenario(_profile: Profile): Scenario {
  return {
    name: '3/statement-line-break',
    title: 'a statement with a line feed (re-signed) is refused',
    rules: ['ns.verify.3'],
    context: ['ns.request.statement'],
    expect: R(400, 'invalid_statement'),
    build: (m) => signedWith(m, { statement: 'Sign in\nnow' }),
  };
}

function rule3ScopesUnsortedScenario(profile: Profile): Scenario {
  return {
    name: '3/scopes-unsorted',
    title: 'unsorted scopes (signed as sent) are refused, never re-sorted',
    rules: ['ns.verify.3'],
    context: ['ns.request.scopes'],
    expect: R(400, 'scopes_not_canonical'),
    build: (m) => resign(profile, { ...m.genuine, scopes: [...vocabulary.scopes.values].sort().reverse() }, m.who.seed),
  };
}

function rule3ScopesDuplicateScenario(profile: Profile): Scenario {
  return {
    name: '3/scopes-duplicate',
    title: 'duplicate scopes (signed as sent) are refused',
    rules: ['ns.verify.3'],
    context: ['ns.request.scopes'],
    expect: R(400, 'scopes_not_canonical'),
    build: (m) => resign(profile, { ...m.genuine, scopes: [vocabulary.scopes.values[0], vocabulary.scopes.values[0]] }, m.who.seed),
  };
}

function rule3ScopeForeignScenario(profile: Profile): Scenario {
  return {
    name: '3/scope-foreign',
    title: 'a scope outside the RP namespace (re-signed) is refused',
    rules: ['ns.verify.3', 'ns.request.scope-namespace'],
    context: ['ns.request.scope-namespace-form', 'ns.request.scope-vocabulary'],
    expect: R(400, 'scope_not_allowed'),
    build: (m) => resign(profile, { ...m.genuine, scopes: ['dav:rw:apps/notes'] }, m.who.seed),
  };
}

function rule3ScopesTooManyScenario(profile: Profile): Scenario {
  return {
    name: '3/scopes-too-many',
    title: `${limits.scopes_max + 1} scopes (re-signed) are refused`,
    rules: ['ns.verify.3', 'ns.limits.scopes'],
    context: ['ns.request.scopes'],
    expect: R(400, 'scopes_not_canonical', 'scope_not_allowed'),
    build: (m) => resign(profile, { ...m.genuine, scopes: Array.from({ length: limits.scopes_max + 1 }, (_, i) => vocabulary.scopes.values[i < (limits.scopes_max + 1) / 2 ? 0 : 1]!) }, m.who.seed),
  };
}

// ---- rule 4: window ----
function rule4ExpiredScenario(_profile: Profile): Scenario {
  return {
    name: '4/expired',
    title: 'an approval past its expires_at (re-signed) is refused and the transaction does not complete',
    rules: ['ns.verify.4', 'ns.transaction.expiry'],
    context: ['ns.request.timestamps'],
    expect: R(400, 'expired'),
    cells: [{ rule: 'ns.verify.4', facet: 'expiry', value: 'outside' }],
    build: (m) => signedWith(m, { issued_at: formatRfc3339(now() - (win - 30) * 1000), expires_at: formatRfc3339(now() - 30_000) }),
  };
}

function rule4WindowTooLongScenario(_profile: Profile): Scenario {
  return {
    name: '4/window-too-long',
    title: `a window of ${win + 1} s (re-signed) is refused`,
    rules: ['ns.verify.4', 'ns.limits.window'],
    context: ['ns.request.window'],
    expect: R(400, 'window_too_long'),
    cells: [{ rule: 'ns.verify.4', facet: 'span', value: 'outside' }],
    build: (m) => signedWith(m, { expires_at: isoShift(m.request.issued_at, win + 1) }),
  };
}

function rule4IssuedInFutureScenario(_profile: Profile): Scenario {
  return {
    name: '4/issued-in-future',
    title: `issued_at ${skew + 60} s ahead (re-signed) is refused`,
    rules: ['ns.verify.4', 'ns.limits.clock-skew'],
    expect: R(400, 'issued_in_future'),
    cells: [{ rule: 'ns.verify.4', facet: 'skew', value: 'outside' }],
    build: (m) => signedWith(m, { issued_at: formatRfc3339(now() + (skew + 60) * 1000), expires_at: formatRfc3339(now() + (skew + 120) * 1000) }),
  };
}

function rule4NotRfc3339Scenario(_profile: Profile): Scenario {
  return {
    name: '4/not-rfc3339',
    title: 'an issued_at that is not RFC 3339 (re-signed) is refused',
    rules: ['ns.verify.4', 'ns.request.timestamps'],
    expect: R(400, 'invalid_timestamp'),
    build: (m) => signedWith(m, { issued_at: (m.request.issued_at as string).replace('T', ' ') }),
  };
}

function rule4ExpiresBeforeIssuedScenario(_profile: Profile): Scenario {
  return {
    name: '4/expires-before-issued',
    title: 'expires_at before issued_at (re-signed) is refused',
    rules: ['ns.verify.4'],
    expect: R(400, 'window_invalid', 'invalid_timestamp'),
    build: (m) => signedWith(m, { issued_at: m.request.expires_at, expires_at: m.request.issued_at }),
  };
}

// ---- binding to the issued request (project) ----
function bindingWindowNotCopiedScenario(_profile: Profile): Scenario {
  return {
    name: 'binding/window-not-copied',
    title: 'an approval whose window differs from the request (re-signed) is refused',
    rules: ['ns.delivery.request-binding'],
    context: ['ns.response.window-copied'],
    expect: R(400, 'request_mismatch'),
    build: (m) => signedWith(m, { issued_at: isoShift(m.request.issued_at, 1) }),
  };
}

function bindingNonceChangedScenario(_profile: Profile): Scenario {
  return {
    name: 'binding/nonce-changed',
    title: 'an approval with another nonce (re-signed) is refused',
    rules: ['ns.delivery.request-binding'],
    context: ['ns.request.nonce'],
    expect: R(400, 'request_mismatch'),
    build: (m) => signedWith(m, { nonce: encodeBase64url(randomBytes(24)) }),
  };
}

function rule7StatementEditedScenario(_profile: Profile): Scenario {
  return {
    name: '7/statement-edited',
    title: 'a statement edited after signing is refused',
    rules: ['ns.verify.7'],
    context: ['ns.canonical.lines'],
    expect: R(400, 'request_mismatch', 'signature_invalid'),
    start: { statement: 'Sign in to the conformance test' },
    cells: [{ rule: 'ns.verify.7', facet: 'binding', value: 'statement' }],
    build: (m) => ({ ...m.genuine, statement: 'Transfer everything' }),
  };
}

function bindingUnknownTransactionScenario(_profile: Profile): Scenario {
  return {
    name: 'binding/unknown-transaction',
    title: 'an approval for a request_id this RP never issued (re-signed) is refused',
    rules: ['ns.delivery.unknown-transaction'],
    expect: R(409, 'unknown_transaction'),
    build: (m) => signedWith(m, { request_id: `never-${encodeBase64url(randomBytes(12))}` }),
  };
}

// ---- rules 6 and 7 ----
function rule6UnknownIdentityScenario(profile: Profile): Scenario {
  return {
    name: '6/unknown-identity',
    title: 'an approval by an identity nobody publishes is refused',
    rules: ['ns.verify.6'],
    context: ['ns.resolve.chain'],
    expect: R(401, 'resolution_failed'),
    build: (m) => sign(profile, m.request, { identity: `nobody-${randomBytes(5).toString('hex')}.${m.who.identity.split('.').slice(1).join('.')}`, seed: new Uint8Array(randomBytes(32)) }),
  };
}

function rule6DnsHttpsDisagreeScenario(profile: Profile): Scenario {
  return {
    name: '6/dns-https-disagree',
    title: 'when DNS and the identity document name different keys the approval is refused (fail closed)',
    rules: ['ns.verify.6'],
    context: ['ns.resolve.chain'],
    expect: R(401, 'key_mismatch'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { dnsKey: true });
      return sign(profile, m.request, other);
    },
  };
}

function rule6RecordsDroppedScenario(profile: Profile): Scenario {
  return {
    name: '6/records-dropped',
    title: 'an approval by an identity whose records were dropped is refused',
    rules: ['ns.verify.6'],
    context: ['ns.resolve.chain'],
    expect: R(401, 'resolution_failed'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.drop(other.identity, 'both');
      return sign(profile, m.request, other);
    },
  };
}

function resolveDocumentBadSignatureScenario(profile: Profile): Scenario {
  return {
    name: 'resolve/document-bad-signature',
    title: 'an identity document whose signature does not verify fails resolution (no fall back to DNS)',
    rules: ['ns.resolve.document-signature'],
    context: ['ns.verify.6', 'ns.resolve.chain', 'ns.identity-document.format'],
    expect: R(401, 'resolution_failed', 'key_mismatch'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { badSignature: true });
      return sign(profile, m.request, other);
    },
  };
}

function rule6AuthorityTimeoutScenario(profile: Profile): Scenario {
  return {
    name: '6/authority-timeout',
    title: 'an authority that never answers makes the approval refused, not completed',
    rules: ['ns.verify.6'],
    expect: R(401, 'resolution_failed'),
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { timeout: 'both' });
      return sign(profile, m.request, other);
    },
  };
}

function rule7WrongKeyScenario(profile: Profile): Scenario {
  return {
    name: '7/wrong-key',
    title: "an approval signed by another key than the identity's is refused",
    rules: ['ns.verify.7', 'ns.auth.2'],
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'other-key' }],
    build: (m) => resign(profile, m.genuine, new Uint8Array(randomBytes(32))),
  };
}

function rule7BitFlipScenario(_profile: Profile): Scenario {
  return {
    name: '7/bit-flip',
    title: 'an approval with one signature bit changed is refused',
    rules: ['ns.verify.7'],
    context: ['ns.response.signature'],
    expect: R(401, 'signature_invalid'),
    build: (m) => ({ ...m.genuine, signature: flipBit(m.genuine.signature as string, 77) }),
  };
}

function strictNonCanonicalSScenario(_profile: Profile): Scenario {
  return {
    name: 'strict/non-canonical-s',
    title: 'a signature with S + L (non-canonical S) is refused (strict Ed25519)',
    rules: ['ns.ed25519.strict'],
    context: ['ns.verify.7'],
    expect: R(401, 'signature_invalid'),
    build: (m) => ({ ...m.genuine, signature: nonCanonicalS(m.genuine.signature as string) }),
  };
}

function rule7CanonicalTrailingLfScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-trailing-lf',
    title: 'a signature over the canonical string plus a trailing line feed is refused',
    rules: ['ns.verify.7', 'ns.canonical.format'],
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => `${l.join('\n')}\n`),
  };
}

function rule7CanonicalCrlfScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-crlf',
    title: 'a signature over the lines joined with CR LF is refused',
    rules: ['ns.verify.7', 'ns.canonical.format'],
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => l.join('\r\n')),
  };
}

function rule7CanonicalLinesSwappedScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-lines-swapped',
    title: 'a signature over the lines with audience and nonce swapped is refused',
    rules: ['ns.verify.7', 'ns.canonical.lines'],
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => [...l.slice(0, 4), l[5]!, l[4]!, ...l.slice(6)].join('\n')),
  };
}

function rule7CanonicalStatementOmittedScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-statement-omitted',
    title: 'a signature that drops the empty statement line is refused',
    rules: ['ns.verify.7', 'ns.canonical.statement-empty'],
    start: { statement: '' },
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => [...l.slice(0, 9), ...l.slice(10)].join('\n')),
  };
}

function rule7CanonicalScopesUnsortedScenario(profile: Profile): Scenario {
  return {
    name: '7/canonical-scopes-unsorted',
    title: 'a signature over the scopes line in another order is refused',
    rules: ['ns.verify.7', 'ns.canonical.scopes-joined'],
    start: { scopes: [...vocabulary.scopes.values] },
    expect: R(401, 'signature_invalid'),
    build: (m) => signLines(profile, m.genuine, m.who.seed, (l) => [...l.slice(0, 10), l[10]!.split(',').reverse().join(', '), ...l.slice(11)].join('\n')),
  };
}

function rule7RotatedOutsideGraceScenario(profile: Profile): Scenario {
  return {
    name: '7/rotated-outside-grace',
    title: 'after a key rotation, an approval by the previous key past its grace window is refused',
    rules: ['ns.verify.7'],
    context: ['ns.identity-document.previous-keys'],
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.verify.7', facet: 'rotation-grace', value: 'outside' }],
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.publish({
        identity: other.identity,
        seed: new Uint8Array(randomBytes(32)),
        previousKeys: [{ publicKey: formatKey(publicKeyFromSeed(other.seed)), validUntil: isoShift(m.request.issued_at, -60) }],
      });
      return sign(profile, m.request, other);
    },
  };
}

function rule7SessionWithoutProofScenario(_profile: Profile): Scenario {
  return {
    name: '7/session-without-proof',
    title: 'key_id naming a session without session_proof is refused',
    rules: ['ns.verify.7', 'ns.auth.2.session-proof', 'ns.response.session-proof-presence'],
    expect: R(401, 'session_proof_mismatch'),
    build: (m) => {
      const a = sessionApproval(m, session(m));
      delete a.session_proof;
      return a;
    },
  };
}

function rule7ProofWithIdentityKeyScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-with-identity-key',
    title: 'a session_proof with key_id identity is refused',
    rules: ['ns.verify.7', 'ns.auth.2.session-proof', 'ns.response.session-proof-presence'],
    expect: R(401, 'session_proof_mismatch'),
    build: (m) => ({ ...m.genuine, session_proof: session(m).proof }),
  };
}

function rule7KeyIdInvalidScenario(profile: Profile): Scenario {
  return {
    name: '7/key-id-invalid',
    title: 'a key_id that is neither identity nor a session (re-signed) is refused',
    rules: ['ns.verify.7', 'ns.response.key-id'],
    expect: R(401, 'invalid_key_id'),
    build: (m) => resign(profile, { ...m.genuine, key_id: 'device' }, m.who.seed),
  };
}

function rule7ProofMissingFieldScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-missing-field',
    title: 'a session proof without its nonce is refused',
    rules: ['ns.verify.7', 'ns.session-proof.fields'],
    context: ['ns.session-proof.validation'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) =>
      sessionApproval(m, session(m), (p) => {
        delete p.nonce;
        return p;
      }),
  };
}

function rule7ProofExpiredScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-expired',
    title: 'an expired session proof is refused',
    rules: ['ns.verify.7', 'ns.session-proof.validation'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) => sessionApproval(m, session(m, { issuedAt: now() - 7200_000, ttlSeconds: 3600 })),
  };
}

function rule7ProofTtlOverCapScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-ttl-over-cap',
    title: `a session proof whose TTL exceeds ${limits.session_ttl_max_seconds} s is refused`,
    rules: ['ns.verify.7', 'ns.session-proof.ttl', 'ns.limits.session-ttl'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) => sessionApproval(m, session(m, { ttlSeconds: limits.session_ttl_max_seconds + 3600 })),
  };
}

function rule7ProofBadKeyEncodingScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-bad-key-encoding',
    title: 'a session proof whose session_public_key is not 32 bytes is refused',
    rules: ['ns.verify.7', 'ns.session-proof.key-encoding'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) => sessionApproval(m, session(m), (p) => reproof(m, { ...p, session_public_key: encodeBase64url(randomBytes(31)) })),
  };
}

function rule7ProofWrongSignerScenario(_profile: Profile): Scenario {
  return {
    name: '7/proof-wrong-signer',
    title: 'a session proof signed by another key than the identity key is refused',
    rules: ['ns.verify.7', 'ns.session-proof.signature'],
    expect: R(401, 'session_proof_invalid'),
    build: (m) => sessionApproval(m, session(m, { proofSeed: new Uint8Array(randomBytes(32)) })),
  };
}

function rule7ProofWrongLinesScenario(profile: Profile): Scenario {
  return {
    name: '7/proof-wrong-lines',
    title: 'a session proof whose signed lines name another identity is refused',
    rules: ['ns.verify.7', 'ns.session-proof.signed-lines'],
    expect: R(401, 'session_proof_invalid'),
    cells: [{ rule: 'ns.session-proof.signed-lines', facet: 'binding', value: 'identity' }],
    build: (m) =>
      sessionApproval(m, session(m), (p) => ({
        ...p,
        identity_signature: encodeBase64url(signEd25519(m.who.seed, canonicalString(profile, 'session-registration', { ...p, identity: `x${m.who.identity}` }))),
      })),
  };
}

function rule7SessionKeyNotProvenScenario(profile: Profile): Scenario {
  return {
    name: '7/session-key-not-proven',
    title: 'an approval signed by a key other than the proven session key is refused',
    rules: ['ns.verify.7', 'ns.auth.2'],
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.auth.2', facet: 'who', value: 'unproven-session-key' }],
    build: (m) => {
      const key = session(m);
      return resign(profile, sign(profile, m.request, m.who, key), new Uint8Array(randomBytes(32)));
    },
  };
}

function orderAudienceBeforeResolutionScenario(profile: Profile): Scenario {
  return {
    name: 'order/audience-before-resolution',
    title: 'a misaddressed approval by an identity whose authority hangs is refused at once by rule 2 (no lookup)',
    rules: ['ns.auth.3', 'ns.verify.order', 'ns.verify.2'],
    expect: R(400, 'audience_mismatch'),
    cells: [{ rule: 'ns.verify.order', facet: 'audience-before-resolution', value: 'both-faults' }],
    build: async (m) => {
      const other = await m.s.identity();
      await m.s.target.authority.fault(other.identity, { timeout: 'both' });
      return sign(profile, { ...m.request, audience: foreignOrigin }, other);
    },
  };
}

function orderVersionBeforeSignatureScenario(profile: Profile): Scenario {
  return {
    name: 'order/version-before-signature',
    title: 'an approval failing rule 1 and rule 7 is refused by rule 1',
    rules: ['ns.auth.3', 'ns.verify.order', 'ns.verify.1'],
    expect: R(400, 'unsupported_version'),
    build: (m) => ({ ...m.genuine, [profile.ids.auth_field]: '2', signature: flipBit(m.genuine.signature as string, 3) }),
  };
}

export function scenarios(profile: Profile): Scenario[] {
  return [
    acceptIdentityKeyScenario(profile),
    acceptSessionKeyScenario(profile),
    acceptLoginOnlyScenario(profile),
    acceptScopesScenario(profile),
    acceptSignatureStandardBase64Scenario(profile),
    acceptIdentityCaseScenario(profile),
    acceptRotatedInsideGraceScenario(profile),
    rule1VersionScenario(profile),
    rule1MissingNonceScenario(profile),
    rule1MissingRequestIdScenario(profile),
    rule1MissingSignatureScenario(profile),
    rule1MissingIdentityScenario(profile),
    rule1InvalidIdentityScenario(profile),
    rule2AudienceOtherOriginScenario(profile),
    rule2AudienceNotAnOriginScenario(profile),
    rule2AudienceOtherSchemeScenario(profile),
    rule3UnknownActionScenario(profile),
    rule3StatementTooLongScenario(profile),
    rule3StatementLineBreakScenario(profile),
    rule3ScopesUnsortedScenario(profile),
    rule3ScopesDuplicateScenario(profile),
    rule3ScopeForeignScenario(profile),
    rule3ScopesTooManyScenario(profile),
    rule4ExpiredScenario(profile),
    rule4WindowTooLongScenario(profile),
    rule4IssuedInFutureScenario(profile),
    rule4NotRfc3339Scenario(profile),
    rule4ExpiresBeforeIssuedScenario(profile),
    bindingWindowNotCopiedScenario(profile),
    bindingNonceChangedScenario(profile),
    rule7StatementEditedScenario(profile),
    bindingUnknownTransactionScenario(profile),
    rule6UnknownIdentityScenario(profile),
    rule6DnsHttpsDisagreeScenario(profile),
    rule6RecordsDroppedScenario(profile),
    resolveDocumentBadSignatureScenario(profile),
    rule6AuthorityTimeoutScenario(profile),
    rule7WrongKeyScenario(profile),
    rule7BitFlipScenario(profile),
    strictNonCanonicalSScenario(profile),
    rule7CanonicalTrailingLfScenario(profile),
    rule7CanonicalCrlfScenario(profile),
    rule7CanonicalLinesSwappedScenario(profile),
    rule7CanonicalStatementOmittedScenario(profile),
    rule7CanonicalScopesUnsortedScenario(profile),
    rule7RotatedOutsideGraceScenario(profile),
    rule7SessionWithoutProofScenario(profile),
    rule7ProofWithIdentityKeyScenario(profile),
    rule7KeyIdInvalidScenario(profile),
    rule7ProofMissingFieldScenario(profile),
    rule7ProofExpiredScenario(profile),
    rule7ProofTtlOverCapScenario(profile),
    rule7ProofBadKeyEncodingScenario(profile),
    rule7ProofWrongSignerScenario(profile),
    rule7ProofWrongLinesScenario(profile),
    rule7SessionKeyNotProvenScenario(profile),
    orderAudienceBeforeResolutionScenario(profile),
    orderVersionBeforeSignatureScenario(profile),
  ];
}

/** Runs one scenario on its own transaction; never throws for RP behaviour (it is recorded). */
export async function runScenario(target: RpTarget, sc: Scenario, signal?: AbortSignal): Promise<ScenarioResult> {
  const s = new Session(target, signal);
  try {
    let started: Started;
    try {
      started = await s.start(sc.start);
    } catch (error) {
      if (sc.start && error instanceof StartRefused && error.unsupported) throw new CheckSkip(`the RP cannot honour the start options ${JSON.stringify(sc.start)} (ns.start.options)`);
      throw error;
    }
    if (sc.start?.scopes && JSON.stringify(started.request.scopes ?? []) !== JSON.stringify([...sc.start.scopes].sort())) {
      throw new CheckSkip(`the RP did not honour the start option scopes ${JSON.stringify(sc.start.scopes)}`);
    }
    const who = await s.identity();
    const genuine = sign(target.profile, started.request, who);
    const m: MutationContext = { s, profile: target.profile, started, request: started.request, who, genuine };
    const approval = await sc.build(m);
    if (sc.accept) {
      const done = await s.completeSameDevice(started, approval);
      const result: ScenarioResult = { status: done.ok ? 200 : 0, envelope: '', answer: '', after: done.ok ? 'completed' : '', exchanges: s.exchanges, notes: s.notes };
      if (!done.ok) result.genuineProblem = done.problem ?? 'did not complete';
      else if (done.identity !== undefined && done.identity !== who.identity) result.genuineProblem = `the poll names ${done.identity}, expected ${who.identity}`;
      return result;
    }
    const refused = await s.deliver(started.request, approval);
    const envelope = envelopeOf(refused);
    const code = errorCode(refused);
    const after = (await s.pollStatus(started.pollSecret)).status;
    const result: ScenarioResult = {
      status: refused.status,
      envelope,
      answer: said(refused),
      ...(code !== undefined ? { code } : {}),
      after,
      refusedInMs: refused.exchange.durationMs,
      exchanges: s.exchanges,
      notes: s.notes,
    };
    if (accepted(refused)) {
      result.genuineProblem = 'the mutated approval was accepted';
      return result;
    }
    const done = await s.completeSameDevice(started, genuine);
    if (!done.ok) {
      // Which rule broke: an approval of the same transaction by another identity has another nonce
      // key (ns.nonce.cache-key); when it completes, the refusal spent the genuine nonce, otherwise
      // the refusal ended the transaction.
      const other = await s.identity();
      const probe = await s.completeSameDevice(started, sign(target.profile, started.request, other));
      result.genuineProblem = probe.ok
        ? `after the refusal the genuine approval did not complete the login (${done.problem}), while another identity's approval of the same transaction did: the refused delivery spent the nonce`
        : `after the refusal the transaction no longer completes, with the genuine approval (${done.problem}) or another identity's: the refused delivery ended it`;
    }
    return result;
  } finally {
    await s.close();
  }
}

const isProject = new Set(catalogue.filter((r) => r.origin === 'project').map((r) => r.id));
/** The profile's rules for the answer to a refused delivery. */
const CODES: RuleId[] = ['ns.delivery.reject-status', 'ns.errors.codes', 'ns.errors.envelope'];

/** A scenario's cells, each on the delivery endpoint where the approval is judged. */
function delivered(sc: Scenario): { cells?: Array<{ rule: RuleId; facet: string; value: string; operation: string }> } {
  return sc.cells ? { cells: sc.cells.map((c) => ({ ...c, operation: 'postDelivery' })) } : {};
}

/**
 * The checks of every scenario, sharing one run: rp/verify/<name> judges the document (any 4xx,
 * no completion, and the genuine approval still completes: a refusal by a verification rule spends
 * no nonce, ns.nonce.spend-on-success); rp/codes/<name> judges the project's status, code and
 * envelope. A scenario of project rules only (binding/*) has the profile check alone.
 */
export function verificationChecks(target: RpTarget, list: Scenario[], results: Map<string, () => Promise<ScenarioResult>>): Check[] {
  const checks: Check[] = [];
  for (const sc of list) {
    const run = once(() => runScenario(target, sc));
    results.set(sc.name, run);
    const id = sc.name.replace(/^(\d)\//, 'rule-$1/');
    if (sc.accept) {
      checks.push(
        rpCheck(target, {
          id: `rp/verify/${id}`,
          title: sc.title,
          rules: sc.rules,
          ...(sc.context ? { context: sc.context } : {}),
          ...delivered(sc),
          run: async (s, e) => {
            const r = await run();
            s.exchanges.push(...r.exchanges);
            e.that(r.genuineProblem === undefined, r.genuineProblem ?? '');
          },
        }),
      );
      continue;
    }
    const project = sc.rules.every((rule) => isProject.has(rule));
    /** Refused (any 4xx), not completed, and the genuine approval completes afterwards. */
    const refusedWithoutLoss = (r: ScenarioResult, e: Expect): void => {
      e.that(r.status >= 400 && r.status < 500, `expected a refusal (4xx), got ${r.answer}`, 'status');
      e.that(r.after !== 'completed', 'the login completed after the mutated approval', 'state');
      if (r.status < 200 || r.status >= 300) e.that(r.genuineProblem === undefined, r.genuineProblem ?? '');
    };
    if (!project) {
      checks.push(
        rpCheck(target, {
          id: `rp/verify/${id}`,
          title: sc.title,
          // A refusal by a verification rule spends no nonce: the genuine approval still completes.
          rules: [...sc.rules, 'ns.nonce.spend-on-success'],
          context: [...(sc.context ?? []), 'ns.transport.poll-shape'],
          ...delivered(sc),
          run: async (s, e) => {
            const r = await run();
            s.exchanges.push(...r.exchanges);
            refusedWithoutLoss(r, e);
            // Ordering (cheapest first): the identity's authority hangs, so a refusal that waited for
            // it looked the identity up before the cheap rule refused.
            if (sc.name.startsWith('order/') && r.refusedInMs !== undefined)
              e.that(r.refusedInMs < ORDER_MAX_MS, `the refusal took ${r.refusedInMs} ms: the RP resolved the identity (its authority hangs) before the cheaper rule refused`, 'timing');
          },
        }),
      );
    }
    checks.push(
      rpCheck(target, {
        id: `rp/codes/${id}`,
        title: `${sc.title}: status ${sc.expect!.status}, error ${sc.expect!.codes.join(' or ')}, in the envelope`,
        rules: project ? [...sc.rules, ...CODES] : CODES,
        context: project ? [...(sc.context ?? []), 'ns.transport.poll-shape'] : [...sc.rules, ...(sc.context ?? [])],
        run: async (s, e) => {
          const r = await run();
          s.exchanges.push(...r.exchanges);
          // A project-only scenario has no document check: the refusal itself is judged here.
          if (project) refusedWithoutLoss(r, e);
          e.that(r.status === sc.expect!.status, `expected status ${sc.expect!.status}, got ${r.answer}`, 'status');
          if (typeof r.envelope === 'string') e.fail(r.envelope, 'shape');
          else e.that(sc.expect!.codes.includes(r.envelope.error), `expected error ${sc.expect!.codes.join(' or ')}, got ${r.answer}`, 'code');
        },
      }),
    );
  }
  return checks;
}

export { parseRfc3339, S_PREFIX };
