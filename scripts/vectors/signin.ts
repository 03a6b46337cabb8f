// npm run vectors: Sign-in approvals (document 1): signin.json and signin-boundaries.json.

import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { canonicalString, CanonicalError } from '../../protocol/common/canonical.ts';
import { signEd25519, verifyEd25519 } from '../../protocol/common/ed25519.ts';
import { decodeBase64Any, byteLength } from '../../protocol/common/base64.ts';
import { createVerifier } from '../../protocol/signin/verifier.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import { StaticResolver } from '../../protocol/signin/resolver.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { parseRfc3339, formatRfc3339 } from '../../protocol/common/time.ts';
import { check, same, type Json, ruleIds, b64u, utf8, derived, lines } from './check.ts';
import { profile, NAME, AUTH, type EdKey, edKeys, edKey, fail, identities, NOW_TEXT, NOW, ORIGIN, at, ALICE, CAROL, alice, aliceKey, bobKey, carolKey, previousKey, GRACE_END, SESSION_ID, session, sessionKey } from './fixtures.ts';
import { emit } from './emit.ts';
import { makeProof, fixtureProof, SESSION_REGISTRATION } from './proofs.ts';


export const REASON_RULE = vocabulary.signin_vector_reasons.map as Readonly<Record<string, number>>;
// The brief of this file, held against spec/vocabulary.yaml signin_vector_reasons.
same('signin_vector_reasons (spec/vocabulary.yaml)', REASON_RULE, {
  version: 1,
  shape: 1,
  audience: 2,
  action: 3,
  statement: 3,
  scope: 3,
  expired: 4,
  ttl: 4,
  future: 4,
  replay: 5,
  resolution: 6,
  signature: 7,
  proof: 7,
});
// The verifier's rejection codes (protocol/signin/verifier.ts) and the vector reason each one means.
export const CODE_REASON: Readonly<Record<string, string>> = {
  unsupported_version: 'version',
  malformed_response: 'shape',
  missing_field: 'shape',
  invalid_identity: 'shape',
  invalid_audience: 'audience',
  audience_mismatch: 'audience',
  unknown_action: 'action',
  invalid_statement: 'statement',
  scopes_not_canonical: 'scope',
  scope_not_allowed: 'scope',
  expired: 'expired',
  window_too_long: 'ttl',
  issued_in_future: 'future',
  nonce_replayed: 'replay',
  resolution_failed: 'resolution',
  invalid_key_id: 'proof',
  session_proof_mismatch: 'proof',
  session_proof_invalid: 'proof',
  signature_invalid: 'signature',
};
export const reasonText = Object.entries(
  Object.entries(REASON_RULE).reduce<Record<string, string[]>>((acc, [reason, rule]) => {
    (acc[`ns.verify.${rule}`] ??= []).push(reason);
    return acc;
  }, {}),
)
  .map(([rule, reasons]) => `${reasons.join('/')} -> ${rule}`)
  .join(', ');

export const STATEMENT = 'Sign in to Example RP';

/** The twelve lines of document 1 (Canonical signing string), assembled here; an absent field is an empty line. */
export function signinLines(r: Json): string {
  const s = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return lines(
    `${NAME}-signin`,
    s(r[AUTH]),
    s(r.request_id),
    s(r.identity).trim().toLowerCase(),
    s(r.audience),
    s(r.nonce),
    s(r.issued_at),
    s(r.expires_at),
    s(r.action),
    s(r.statement),
    Array.isArray(r.scopes) ? r.scopes.join(',') : '',
    s(r.key_id),
  );
}

/** The nonce of a sign-in vector, derived from its name. */
export const signinNonce = (name: string): string => b64u(derived(`${NAME}-conformance/signin-nonce/${name}`, limits.nonce_entropy_min_bytes));

export interface SigninCase {
  name: string;
  /** Field overrides on the default approval; `undefined` removes the field. */
  fields?: Json;
  signer?: EdKey;
  /** Applied after signing (a response edited in transit). */
  tamper?: (r: Json) => void;
  /** How the signature is written (default base64url without padding). */
  encode?: (signature: Uint8Array) => string;
  replayOf?: string;
  now?: string;
  valid: boolean;
  reason?: string;
  /** Expected `signature_valid`; the generator computes it and compares. */
  signatureValid: boolean;
  rules: string[];
}

export interface SigninVector extends Json {
  name: string;
  response: Json;
  canonical: string;
}

export async function signinVectors(cases: SigninCase[], perVectorNow: boolean): Promise<SigninVector[]> {
  const built: SigninVector[] = [];
  for (const c of cases) {
    let response: Json;
    let signer: EdKey;
    if (c.replayOf !== undefined) {
      const first = built.find((v) => v.name === c.replayOf) ?? fail(`${c.name}: replay_of ${c.replayOf} is not an earlier vector`);
      response = structuredClone(first.response);
      signer = edKeys.get(first.signed_with as string)!;
    } else {
      const base: Json = {
        [AUTH]: '1',
        request_id: `req-${c.name}`,
        identity: ALICE,
        audience: ORIGIN,
        nonce: signinNonce(c.name),
        issued_at: at(-60),
        expires_at: at(60),
        action: 'signin',
        statement: STATEMENT,
        scopes: ['messages:send'],
        key_id: 'identity',
      };
      for (const [k, v] of Object.entries(c.fields ?? {})) {
        if (v === undefined) delete base[k];
        else base[k] = v;
      }
      signer = c.signer ?? aliceKey;
      const signed = signinLines(base);
      const signature = signEd25519(signer.seed, signed);
      response = { ...base, signature: (c.encode ?? b64u)(signature) };
      c.tamper?.(response);
    }
    const canonical = signinLines(response);
    // The core's builder must produce the same twelve lines, or (a required field absent) refuse.
    try {
      same(`${c.name}: signin string (core)`, canonicalString(profile, 'signin', response), canonical);
    } catch (error) {
      check(error instanceof CanonicalError && !c.valid, `${c.name}: the core cannot build the signin string: ${(error as Error).message}`);
    }
    const vector: SigninVector = { name: c.name, origin: ORIGIN, ...(perVectorNow ? { now: c.now ?? NOW_TEXT } : {}), response, canonical, valid: c.valid };
    if (!c.valid) vector.reason = c.reason;
    if (c.replayOf !== undefined) vector.replay_of = c.replayOf;
    vector.signature_valid = c.signatureValid;
    vector.signed_with = signer.name;
    vector.rules = c.valid ? ruleIds(...c.rules) : ruleIds(`ns.verify.${REASON_RULE[c.reason!] ?? fail(`${c.name}: unknown reason ${String(c.reason)}`)}`, ...c.rules);
    built.push(vector);
  }

  // Every vector through the verifier, in order, with one nonce cache and the resolver the file describes.
  let now = NOW;
  const nonces = new MemoryNonceStore(() => now);
  const resolver = new StaticResolver();
  for (const [id, entry] of identities) {
    if (!entry.resolvable) continue;
    resolver.set(
      id,
      edKey(entry.key).pub,
      (entry.previous_keys ?? []).map((p) => ({ publicKey: edKey(p.key).pub, validUntil: parseRfc3339(p.valid_until)! })),
    );
  }
  for (const v of built) {
    now = parseRfc3339(v.now ?? NOW_TEXT) ?? fail(`${v.name}: now is not RFC 3339`);
    const verify = createVerifier({ profile, origin: v.origin as string, resolver, nonces, now: () => now });
    const verdict = await verify(structuredClone(v.response));
    if (v.valid) {
      check(verdict.ok, `${v.name}: expected valid, the core rejects it: ${verdict.ok ? '' : `rule ${verdict.rule} ${verdict.code} (${verdict.detail})`}`);
    } else {
      check(!verdict.ok, `${v.name}: expected rejection (${String(v.reason)}), the core accepts it`);
      same(`${v.name}: reason from the core's code ${verdict.code} (${verdict.detail})`, CODE_REASON[verdict.code], v.reason);
      same(`${v.name}: rejecting rule`, verdict.ruleId, `ns.verify.${REASON_RULE[v.reason as string]}`);
      same(`${v.name}: first rule cited`, (v.rules as string[])[0], verdict.ruleId);
    }
    // signature_valid: under the attached proof's session key, else the identity key or a previous key.
    const proof = v.response.session_proof as Json | undefined;
    const proofKey = proof ? parseKey(proof.session_public_key) : undefined;
    const keys = proofKey ? [proofKey] : [aliceKey.pub, ...(alice.previous_keys ?? []).map((p) => edKey(p.key).pub)];
    const signature = decodeBase64Any(String(v.response.signature ?? '')) ?? new Uint8Array();
    const signatureValid = keys.some((k) => verifyEd25519(k, v.canonical, signature));
    same(`${v.name}: signature_valid`, signatureValid, v.signature_valid);
    if (v.valid) check(signatureValid, `${v.name}: a valid vector must carry a valid signature`);
  }
  return built;
}

export const expiredProof = makeProof({ issuedAt: '2026-01-14T08:00:00Z', expiresAt: '2026-01-14T20:00:00Z', nonce: b64u(utf8('session-nonce-expired')) });
export const longProof = makeProof({
  issuedAt: session.issued_at,
  expiresAt: formatRfc3339(parseRfc3339(session.issued_at)! + (limits.session_ttl_max_seconds + 1) * 1000),
  nonce: b64u(utf8('session-nonce-too-long')),
});
export const SESSION_KEY_ID = `${vocabulary.key_ids.session_prefix}${SESSION_ID}`;
export const statementOfBytes = (n: number): string => {
  // Two-byte characters, so a limit counted in characters instead of bytes is caught.
  const head = `${STATEMENT}: `;
  const body = 'é'.repeat(Math.floor((n - byteLength(head)) / 2));
  const out = head + body + 'x'.repeat(n - byteLength(head) - byteLength(body));
  same(`statement of ${n} bytes`, byteLength(out), n);
  return out;
};
export const stdBase64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

export const signinCases: SigninCase[] = [
  { name: 'valid-identity', valid: true, signatureValid: true, rules: ['ns.verify.7', 'ns.canonical.lines', 'ns.response.key-id'] },
  {
    name: 'valid-session-delegated',
    fields: { key_id: SESSION_KEY_ID, session_proof: fixtureProof },
    signer: sessionKey,
    valid: true,
    signatureValid: true,
    rules: ['ns.verify.7', 'ns.auth.2', 'ns.auth.2.session-proof', 'ns.session-proof.signed-lines', 'ns.session-proof.signature', 'ns.response.session-proof-presence'],
  },
  {
    name: 'valid-login-only',
    fields: { statement: undefined, scopes: undefined },
    valid: true,
    signatureValid: true,
    rules: ['ns.request.scopes-login-only', 'ns.canonical.statement-empty', 'ns.canonical.scopes-joined'],
  },
  { name: 'valid-login-only-empty-scope-list', fields: { scopes: [] }, valid: true, signatureValid: true, rules: ['ns.request.scopes-login-only', 'ns.canonical.scopes-joined'] },
  { name: 'valid-two-scopes', fields: { scopes: ['messages:send', 'profile:read'] }, valid: true, signatureValid: true, rules: ['ns.request.scopes', 'ns.canonical.scopes-joined', 'ns.verify.3'] },
  { name: 'valid-identity-upper-case', fields: { identity: 'Alice.Example.COM' }, valid: true, signatureValid: true, rules: ['ns.response.identity', 'ns.canonical.lines'] },
  {
    name: 'valid-statement-300-bytes',
    fields: { statement: statementOfBytes(limits.statement_max_bytes) },
    valid: true,
    signatureValid: true,
    rules: ['ns.verify.3', 'ns.request.statement', 'ns.limits.statement'],
  },
  { name: 'valid-action-signup', fields: { action: 'signup' }, valid: true, signatureValid: true, rules: ['ns.verify.3', 'ns.request.action'] },
  { name: 'valid-signature-standard-base64', encode: stdBase64, valid: true, signatureValid: true, rules: ['ns.response.signature', 'ns.verify.7'] },
  { name: 'expired', fields: { issued_at: at(-600), expires_at: at(-480) }, valid: false, reason: 'expired', signatureValid: true, rules: ['ns.transaction.expiry'] },
  { name: 'ttl-exceeded', fields: { issued_at: at(-60), expires_at: at(600) }, valid: false, reason: 'ttl', signatureValid: true, rules: ['ns.request.window', 'ns.limits.window'] },
  { name: 'issued-in-future', fields: { issued_at: at(limits.clock_skew_seconds + 1), expires_at: at(300) }, valid: false, reason: 'future', signatureValid: true, rules: ['ns.limits.clock-skew'] },
  { name: 'wrong-audience', fields: { audience: 'https://evil.example' }, valid: false, reason: 'audience', signatureValid: true, rules: ['ns.flow.audience-own-origin', 'ns.request.audience'] },
  { name: 'replayed-nonce', replayOf: 'valid-identity', valid: false, reason: 'replay', signatureValid: true, rules: ['ns.nonce.single-use', 'ns.nonce.cache-key'] },
  // The cache key is audience|identity|request_id|nonce: the spent nonce of valid-identity under another request_id is a new key.
  { name: 'same-nonce-other-request-id', fields: { nonce: signinNonce('valid-identity') }, valid: true, signatureValid: true, rules: ['ns.nonce.cache-key', 'ns.verify.5'] },
  {
    name: 'scope-outside-namespace',
    fields: { scopes: ['dav:rw:apps/com.example.mail'] },
    valid: false,
    reason: 'scope',
    signatureValid: true,
    rules: ['ns.request.scope-namespace', 'ns.request.scope-vocabulary'],
  },
  { name: 'scopes-unsorted', fields: { scopes: ['profile:read', 'messages:send'] }, valid: false, reason: 'scope', signatureValid: true, rules: ['ns.request.scopes'] },
  { name: 'scopes-duplicated', fields: { scopes: ['messages:send', 'messages:send'] }, valid: false, reason: 'scope', signatureValid: true, rules: ['ns.request.scopes'] },
  { name: 'tampered-statement', tamper: (r) => void (r.statement = 'Sign in and transfer everything'), valid: false, reason: 'signature', signatureValid: false, rules: ['ns.canonical.lines'] },
  { name: 'wrong-version', fields: { [AUTH]: '2' }, valid: false, reason: 'version', signatureValid: true, rules: ['ns.request.version', 'ns.version.1'] },
  { name: 'missing-nonce', fields: { nonce: undefined }, valid: false, reason: 'shape', signatureValid: true, rules: ['ns.response.fields', 'ns.request.nonce'] },
  { name: 'empty-nonce', fields: { nonce: '' }, valid: false, reason: 'shape', signatureValid: true, rules: ['ns.response.fields', 'ns.request.nonce'] },
  { name: 'invalid-identity-name', fields: { identity: 'alice' }, valid: false, reason: 'shape', signatureValid: true, rules: ['ns.response.identity', 'ra.names.valid'] },
  { name: 'unknown-action', fields: { action: 'delete-account' }, valid: false, reason: 'action', signatureValid: true, rules: ['ns.request.action'] },
  {
    name: 'statement-301-bytes',
    fields: { statement: statementOfBytes(limits.statement_max_bytes + 1) },
    valid: false,
    reason: 'statement',
    signatureValid: true,
    rules: ['ns.request.statement', 'ns.limits.statement'],
  },
  { name: 'statement-with-line-feed', fields: { statement: `${STATEMENT}\nand approve a transfer` }, valid: false, reason: 'statement', signatureValid: true, rules: ['ns.request.statement'] },
  { name: 'statement-with-tab', fields: { statement: `${STATEMENT}\tnow` }, valid: false, reason: 'statement', signatureValid: true, rules: ['ns.request.statement'] },
  {
    name: 'session-key-id-without-proof',
    fields: { key_id: SESSION_KEY_ID },
    signer: sessionKey,
    valid: false,
    reason: 'proof',
    signatureValid: false,
    rules: ['ns.response.session-proof-presence', 'ns.auth.2'],
  },
  {
    name: 'session-key-id-without-proof-identity-signed',
    fields: { key_id: SESSION_KEY_ID },
    valid: false,
    reason: 'proof',
    signatureValid: true,
    rules: ['ns.response.session-proof-presence', 'ns.auth.2'],
  },
  { name: 'proof-with-identity-key-id', fields: { session_proof: fixtureProof }, valid: false, reason: 'proof', signatureValid: false, rules: ['ns.response.session-proof-presence', 'ns.auth.2'] },
  {
    name: 'proof-with-identity-key-id-session-signed',
    fields: { session_proof: fixtureProof },
    signer: sessionKey,
    valid: false,
    reason: 'proof',
    signatureValid: true,
    rules: ['ns.response.session-proof-presence', 'ns.auth.2'],
  },
  {
    name: 'session-proof-ttl-over-24h',
    fields: { key_id: SESSION_KEY_ID, session_proof: longProof },
    signer: sessionKey,
    valid: false,
    reason: 'proof',
    signatureValid: true,
    rules: ['ns.session-proof.ttl', 'ns.limits.session-ttl', 'ns.auth.2.session-proof'],
  },
  {
    name: 'session-proof-expired',
    fields: { key_id: SESSION_KEY_ID, session_proof: expiredProof },
    signer: sessionKey,
    valid: false,
    reason: 'proof',
    signatureValid: true,
    rules: ['ns.session-proof.validation', 'ns.auth.2.session-proof'],
  },
  {
    name: 'previous-key-in-grace',
    fields: { issued_at: formatRfc3339(GRACE_END - 30_000), expires_at: at(60) },
    signer: previousKey,
    valid: true,
    signatureValid: true,
    rules: ['ns.verify.7', 'ns.identity-document.previous-keys'],
  },
  {
    name: 'previous-key-after-grace',
    fields: { issued_at: formatRfc3339(GRACE_END + 15_000), expires_at: at(60) },
    signer: previousKey,
    valid: false,
    reason: 'signature',
    signatureValid: true,
    rules: ['ns.identity-document.previous-keys'],
  },
  { name: 'signed-by-another-key', signer: bobKey, valid: false, reason: 'signature', signatureValid: false, rules: ['ns.ed25519.strict'] },
  { name: 'unresolvable-identity', fields: { identity: CAROL }, signer: carolKey, valid: false, reason: 'resolution', signatureValid: false, rules: ['ns.resolve.chain'] },
];
check(NOW - 60_000 <= GRACE_END && GRACE_END < NOW, 'the previous key must leave its grace window between the default issued_at and now');

export const signin = await signinVectors(signinCases, false);
export const unresolvable = [...new Set(signin.map((v) => String(v.response.identity)).filter((id) => identities.get(id)?.resolvable === false))];
emit(
  'signin',
  'signin',
  `Native sign-in approvals (document 1), verified IN ORDER by one verifier at \`origin\` and \`now\` with one nonce cache: a replay vector (\`replay_of\`) replays an earlier accepted vector. The resolver publishes \`identity_key\` and \`previous_keys\` for every identity except those in \`unresolvable\`. \`canonical\` is the twelve-line signing string of the response as delivered (an absent field, as in missing-nonce, is shown as an empty line; the verifier rejects such a response before it builds the string). \`signature_valid\` says whether \`response.signature\` verifies over \`canonical\` under the attached session_proof's session key, or, without a proof, under \`identity_key\` or a \`previous_keys\` entry regardless of valid_until; \`signed_with\` names the fixtures/keys.json key that made it. \`reason\` names the verification rule that must reject: ${reasonText}; the first entry of \`rules\` is that rule.`,
  {
    identity_key: aliceKey.text,
    session_key: sessionKey.text,
    session_registration_canonical: SESSION_REGISTRATION,
    previous_keys: (alice.previous_keys ?? []).map((p) => ({ public_key: p.public_key, valid_until: p.valid_until })),
    unresolvable,
    now: NOW_TEXT,
    vectors: signin,
  },
  signin.length,
);

export const boundaryCases: SigninCase[] = [
  {
    name: 'span-exactly-5-minutes',
    fields: { issued_at: at(-150), expires_at: at(limits.window_max_seconds - 150) },
    valid: true,
    signatureValid: true,
    rules: ['ns.verify.4', 'ns.request.window', 'ns.limits.window'],
  },
  {
    name: 'span-5-minutes-plus-1-second',
    fields: { issued_at: at(-150), expires_at: at(limits.window_max_seconds - 149) },
    valid: false,
    reason: 'ttl',
    signatureValid: true,
    rules: ['ns.request.window', 'ns.limits.window'],
  },
  { name: 'now-equals-expires-at', fields: { issued_at: at(-120), expires_at: at(0) }, valid: true, signatureValid: true, rules: ['ns.verify.4'] },
  { name: 'now-1-second-after-expires-at', fields: { issued_at: at(-120), expires_at: at(0) }, now: at(1), valid: false, reason: 'expired', signatureValid: true, rules: ['ns.transaction.expiry'] },
  {
    name: 'now-half-a-second-after-expires-at',
    fields: { issued_at: at(-120), expires_at: at(0) },
    now: `${NOW_TEXT.slice(0, -1)}.5Z`,
    valid: false,
    reason: 'expired',
    signatureValid: true,
    rules: ['ns.transaction.expiry'],
  },
  {
    name: 'issued-exactly-2-minutes-ahead',
    fields: { issued_at: at(limits.clock_skew_seconds), expires_at: at(limits.clock_skew_seconds + 120) },
    valid: true,
    signatureValid: true,
    rules: ['ns.verify.4', 'ns.limits.clock-skew'],
  },
  {
    name: 'issued-2-minutes-1-second-ahead',
    fields: { issued_at: at(limits.clock_skew_seconds + 1), expires_at: at(limits.clock_skew_seconds + 121) },
    valid: false,
    reason: 'future',
    signatureValid: true,
    rules: ['ns.limits.clock-skew'],
  },
  {
    name: 'timestamps-with-offset',
    fields: { issued_at: '2026-01-15T10:29:00+01:00', expires_at: '2026-01-15T10:31:00+01:00' },
    valid: true,
    signatureValid: true,
    rules: ['ns.verify.4', 'ns.request.timestamps'],
  },
];
same('timestamps-with-offset is the default window', parseRfc3339('2026-01-15T10:29:00+01:00'), NOW - 60_000);
export const boundaries = await signinVectors(boundaryCases, true);
emit(
  'signin-boundaries',
  'signin',
  `Sign-in window boundaries (document 1, Authentication 3.4; limits window_max_seconds ${limits.window_max_seconds}, clock_skew_seconds ${limits.clock_skew_seconds}): same shape as signin.json, but every vector carries its own \`now\` (the verifier clock for that vector; the top-level \`now\` is the default). Verified in order with one nonce cache. ${reasonText}.`,
  {
    identity_key: aliceKey.text,
    session_key: sessionKey.text,
    session_registration_canonical: SESSION_REGISTRATION,
    now: NOW_TEXT,
    vectors: boundaries,
  },
  boundaries.length,
);
