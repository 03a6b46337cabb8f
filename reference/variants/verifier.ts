// Verifier variants: the reference RP's verifier broken one way, for `npm run sensitivity`, by
// wrapping it in-process (the verifier itself is untouched). Four kinds:
// - ignore: one refusal (a code, optionally only for one sub-rule) becomes an acceptance;
// - refuse: a valid approval of one form is refused;
// - accept-also: a signature over a wrongly built signing string is accepted too;
// - resolve-first: the identity is resolved before the cheap rules run;
// - unbound, unbound-proof: one signed line is left unbound (rp-matrix.ts);
// - rewrite: the approval is normalized its own way before the verifier reads it.
import type { Profile } from '../../protocol/common/profile.ts';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { verifyEd25519 } from '../../protocol/common/ed25519.ts';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import type { Resolver } from '../../protocol/signin/resolver.ts';
import type { Verdict, Verifier } from '../../protocol/signin/verifier.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { RP_LIMIT_VERIFIER_VARIANTS, RP_MATRIX_VERIFIER_VARIANTS } from './rp-matrix.ts';

export type { Input, VerifierBreak, VerifierVariant } from './verifier-kit.ts';
import type { Input, VerifierBreak, VerifierVariant } from './verifier-kit.ts';

const SCOPES_LINE = 10;
const swaps = (l: string[]) => l.slice(1).map((_, i) => [...l.slice(0, i), l[i + 1]!, l[i]!, ...l.slice(i + 2)].join('\n'));
function permutations(items: string[]): string[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((x, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [x, ...rest]));
}

export const VERIFIER_VARIANTS: Record<string, VerifierVariant> = {
  'ignore-version': { rule: 'ns.version.1', what: 'approvals of another protocol version are accepted', break: { kind: 'ignore', code: 'unsupported_version' } },
  'ignore-identity': { rule: 'ns.verify.1', what: 'an identity that is not a service name is accepted', break: { kind: 'ignore', code: 'invalid_identity' } },
  'ignore-action': { rule: 'ns.verify.3', what: 'unknown actions are accepted', break: { kind: 'ignore', code: 'unknown_action' } },
  'ignore-statement': { rule: 'ns.limits.statement', what: 'statements of any length and content are accepted', break: { kind: 'ignore', code: 'invalid_statement' } },
  'ignore-scope-namespace': { rule: 'ns.request.scope-namespace', what: 'foreign scopes are accepted', break: { kind: 'ignore', code: 'scope_not_allowed', detail: 'is not supported' } },
  'ignore-scope-count': { rule: 'ns.limits.scopes', what: 'more than 16 scopes are accepted', break: { kind: 'ignore', code: 'scope_not_allowed', detail: 'scopes; at most' } },
  'ignore-expired': { rule: 'ns.verify.4', restates: ['ns.transaction.expiry'], what: 'expired approvals are accepted', break: { kind: 'ignore', code: 'expired' } },
  // The shared vectors pin "window over 5 minutes": a verifier that accepts one fails them too.
  // Rule 4 states the same span and skew (its span and skew windows in spec/facets/rp.yaml).
  'ignore-window': {
    rule: 'ns.limits.window',
    restates: ['ns.version.vectors', 'ns.verify.4'],
    what: 'windows longer than 5 minutes are accepted',
    break: { kind: 'ignore', code: 'window_too_long' },
  },
  'ignore-skew': { rule: 'ns.limits.clock-skew', restates: ['ns.verify.4'], what: 'approvals issued in the future are accepted', break: { kind: 'ignore', code: 'issued_in_future' } },
  'ignore-timestamp': { rule: 'ns.request.timestamps', what: 'timestamps that are not RFC 3339 are accepted', break: { kind: 'ignore', code: 'invalid_timestamp' } },
  'ignore-resolution': { rule: 'ns.verify.6', what: 'an identity that does not resolve is accepted', break: { kind: 'ignore', code: 'resolution_failed' } },
  'ignore-signature': { rule: 'ns.verify.7', what: 'signatures are not checked', break: { kind: 'ignore', code: 'signature_invalid' } },
  'ignore-proof-mismatch': {
    rule: 'ns.auth.2.session-proof',
    restates: ['ns.response.session-proof-presence'],
    what: 'key_id and the session proof need not agree',
    break: { kind: 'ignore', code: 'session_proof_mismatch' },
  },
  'ignore-proof-expired': {
    rule: 'ns.session-proof.validation',
    what: 'expired session proofs are accepted',
    break: { kind: 'ignore', code: 'session_proof_invalid', detail: '(ns.session-proof.validation)' },
  },
  'ignore-proof-fields': {
    rule: 'ns.session-proof.fields',
    what: 'session proofs missing a field are accepted',
    break: { kind: 'ignore', code: 'session_proof_invalid', detail: '(ns.session-proof.fields)' },
  },
  'ignore-proof-ttl': {
    rule: 'ns.session-proof.ttl',
    restates: ['ns.limits.session-ttl'],
    what: 'sessions longer than 24 hours are accepted',
    break: { kind: 'ignore', code: 'session_proof_invalid', detail: '(ns.session-proof.ttl)' },
  },
  'ignore-proof-key': {
    rule: 'ns.session-proof.key-encoding',
    what: 'a session key of another length is accepted',
    break: { kind: 'ignore', code: 'session_proof_invalid', detail: '(ns.session-proof.key-encoding)' },
  },
  'ignore-proof-signature': {
    rule: 'ns.session-proof.signature',
    what: "the proof's identity signature is not checked",
    break: { kind: 'ignore', code: 'session_proof_invalid', detail: '(ns.session-proof.signature)' },
  },
  'ignore-key-id': { rule: 'ns.response.key-id', what: 'any key_id is accepted', break: { kind: 'ignore', code: 'invalid_key_id' } },
  'refuse-identity-case': {
    rule: 'ns.response.identity',
    what: 'an identity with capitals is refused',
    break: { kind: 'refuse', code: 'invalid_identity', when: (r) => String(r.identity) !== String(r.identity).toLowerCase() },
  },
  'refuse-standard-base64': {
    rule: 'ns.response.signature',
    what: 'a signature in standard base64 is refused',
    break: { kind: 'refuse', code: 'signature_invalid', when: (r) => /[+/=]/.test(String(r.signature)) },
  },
  'refuse-login-only': {
    rule: 'ns.request.scopes-login-only',
    what: 'an approval without scopes is refused',
    break: { kind: 'refuse', code: 'scope_not_allowed', when: (r) => !Array.isArray(r.scopes) || r.scopes.length === 0 },
  },
  'refuse-scopes': {
    rule: 'ns.request.scope-vocabulary',
    what: 'an approval with scopes is refused',
    break: { kind: 'refuse', code: 'scope_not_allowed', when: (r) => Array.isArray(r.scopes) && r.scopes.length > 0 },
  },
  'refuse-extra-field': {
    rule: 'ns.response.fields',
    what: 'an approval must carry a field the document does not list (client_id), so every document approval is refused',
    break: { kind: 'refuse', code: 'missing_field', when: (r) => !('client_id' in r) },
  },
  'refuse-proof-lines': {
    rule: 'ns.session-proof.signed-lines',
    what: 'session proofs are checked over other lines than the document signs, so every document proof is refused',
    break: { kind: 'refuse', code: 'session_proof_invalid', when: (r) => r.session_proof !== undefined },
  },
  'refuse-session-scopes': {
    rule: 'ns.auth.2.same-scope-window',
    what: 'a session-signed approval may carry no scopes (a narrower grant than the identity key)',
    break: { kind: 'refuse', code: 'scope_not_allowed', when: (r) => r.key_id !== vocabulary.key_ids.identity && Array.isArray(r.scopes) && r.scopes.length > 0 },
  },
  'refuse-session-key': { rule: 'ns.auth.2', what: 'approvals by a session key are refused', break: { kind: 'refuse', code: 'invalid_key_id', when: (r) => r.key_id !== vocabulary.key_ids.identity } },
  'accept-trailing-lf': {
    rule: 'ns.canonical.format',
    what: 'a signature over the string with a trailing LF or CR LF joins verifies',
    break: { kind: 'accept-also', strings: (l) => [`${l.join('\n')}\n`, l.join('\r\n')] },
  },
  'accept-swapped-lines': { rule: 'ns.canonical.lines', what: 'a signature over the lines with two neighbours swapped verifies', break: { kind: 'accept-also', strings: swaps } },
  'accept-statement-dropped': {
    rule: 'ns.canonical.statement-empty',
    what: 'a signature over the lines without an empty statement line verifies',
    break: { kind: 'accept-also', strings: (l) => l.flatMap((x, i) => (x === '' ? [[...l.slice(0, i), ...l.slice(i + 1)].join('\n')] : [])) },
  },
  'accept-scopes-any-order': {
    rule: 'ns.canonical.scopes-joined',
    what: 'a signature over the scopes line in any order (joined by "," or ", ") verifies',
    break: {
      kind: 'accept-also',
      strings: (l) => {
        const scopes = l[SCOPES_LINE]?.split(',') ?? [];
        if (scopes.length < 2 || scopes.length > 6) return [];
        return permutations(scopes).flatMap((p) => [',', ', '].map((sep) => [...l.slice(0, SCOPES_LINE), p.join(sep), ...l.slice(SCOPES_LINE + 1)].join('\n')));
      },
    },
  },
  'resolve-first': { rule: 'ns.verify.order', restates: ['ns.auth.3'], what: 'the identity is resolved before the audience is checked', break: { kind: 'resolve-first' } },
  ...RP_MATRIX_VERIFIER_VARIANTS,
  ...RP_LIMIT_VERIFIER_VARIANTS,
};

/** The approval an ignoring verifier makes of what it should have refused. */
function accepted(r: Input): Verdict {
  const keyId = typeof r.key_id === 'string' ? r.key_id : vocabulary.key_ids.identity;
  const now = Date.now();
  return {
    ok: true,
    identity: String(r.identity).toLowerCase(),
    keyId,
    delegated: keyId.startsWith(vocabulary.key_ids.session_prefix),
    requestId: String(r.request_id),
    action: String(r.action),
    scopes: Array.isArray(r.scopes) ? (r.scopes as string[]) : [],
    issuedAt: parseRfc3339(r.issued_at) ?? now,
    expiresAt: parseRfc3339(r.expires_at) ?? now + 60_000,
  };
}

/** `verify` broken as `b` says; `resolver` and `profile` serve the accept-also and resolve-first kinds. */
export function brokenVerifier(verify: Verifier, b: VerifierBreak, resolver: Resolver, profile: Profile): Verifier {
  return async (input, beforeNonce) => {
    if (b.kind === 'rewrite') return verify(input !== null && typeof input === 'object' ? b.edit(input as Input) : input, beforeNonce);
    const r = (input ?? {}) as Input;
    if (b.kind === 'resolve-first' && typeof r.identity === 'string') await resolver.resolve(r.identity.toLowerCase()).catch(() => undefined);
    const verdict = await verify(input, beforeNonce);
    if (b.kind === 'refuse') return verdict.ok && b.when(r) ? { ok: false, rule: 7, ruleId: 'ns.verify.7', code: b.code, detail: 'refused by the broken verifier' } : verdict;
    if (verdict.ok) return verdict;
    if (b.kind === 'ignore') return verdict.code === b.code && (b.detail === undefined || verdict.detail.includes(b.detail)) && (b.when === undefined || b.when(r)) ? accepted(r) : verdict;
    if (b.kind === 'unbound' || b.kind === 'unbound-proof') return (await unboundAccepts(b, r, verdict, resolver, profile)) ? accepted(r) : verdict;
    if (b.kind !== 'accept-also' || verdict.code !== 'signature_invalid') return verdict;
    const signature = decodeBase64Any(String(r.signature));
    let lines: string[];
    try {
      lines = canonicalString(profile, 'signin', r).split('\n');
    } catch {
      return verdict;
    }
    const key = await resolver.resolve(String(r.identity).toLowerCase()).catch(() => undefined);
    if (!key || signature?.length !== 64) return verdict;
    return b.strings(lines).some((s) => verifyEd25519(key.publicKey, s, signature)) ? accepted(r) : verdict;
  };
}

/** Whether a verifier blind to one signed line (`b.field`) accepts `r`, which the verifier refused. */
async function unboundAccepts(b: Extract<VerifierBreak, { kind: 'unbound' | 'unbound-proof' }>, r: Input, verdict: Verdict, resolver: Resolver, profile: Profile): Promise<boolean> {
  if (verdict.ok) return true;
  const identity = String(r.identity).trim().toLowerCase();
  const identityKey = async () => (await resolver.resolve(identity).catch(() => undefined))?.publicKey;
  const proof = (typeof r.session_proof === 'object' && r.session_proof !== null ? r.session_proof : {}) as Input;
  const canonical = (name: 'signin' | 'session-registration', fields: Input): string | undefined => {
    try {
      return canonicalString(profile, name, fields);
    } catch {
      return undefined;
    }
  };
  const verifies = (key: Uint8Array | undefined, text: string | undefined, signature: unknown): boolean => {
    const sig = decodeBase64Any(String(signature));
    return key !== undefined && text !== undefined && sig?.length === 64 && verifyEd25519(key, text, sig);
  };
  const sessionKey = parseKey(proof.session_public_key, 'signing');
  if (b.kind === 'unbound') {
    if (verdict.code !== 'signature_invalid') return false;
    const key = String(r.key_id).startsWith(vocabulary.key_ids.session_prefix) ? sessionKey : await identityKey();
    return b.near(r[b.field]).some((v) => verifies(key, canonical('signin', { ...r, identity, [b.field]: v }), r.signature));
  }
  if (verdict.code !== 'session_proof_invalid' || !verdict.detail.includes('ns.session-proof.signature')) return false;
  const key = await identityKey();
  const proofBound = b.near(proof[b.field]).some((v) => verifies(key, canonical('session-registration', { ...proof, identity, [b.field]: v }), proof.identity_signature));
  return proofBound && verifies(sessionKey, canonical('signin', { ...r, identity }), r.signature);
}
