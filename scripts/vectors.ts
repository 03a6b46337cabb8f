// `npm run vectors`: fixtures/ (committed, hand-readable inputs) -> vectors/ (generated, committed).
//
// Every vector is built from the fixtures and CHECKED before anything is written: by the protocol
// core (the verifier, the canonical builders, the codecs), and, where asking the core would only
// check the core against itself, by an independent construction written here from the documents
// (hand-assembled signing lines, digests recomputed with node:crypto, seals reopened with @noble,
// Ed25519 edge cases derived with @noble point arithmetic). Any disagreement throws and nothing is
// written. Output is deterministic: no clock, no randomness, insertion-ordered keys, 2-space JSON
// with a trailing newline. `--check` writes nothing and fails when a committed file differs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, createHmac } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512, sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { rules as ruleCatalogue } from '../schemas/ts/rules.ts';
import { vocabulary } from '../schemas/ts/vocabulary.ts';
import { signingSpec, type SignedStringName } from '../schemas/ts/signing.ts';
import { limits } from '../schemas/ts/limits.ts';
import { profileFor } from '../protocol/common/profile.ts';
import { canonicalString, CanonicalError, pairingCommitment, pairingSas, keyFingerprint, pairwiseSubject } from '../protocol/common/canonical.ts';
import { signEd25519, publicKeyFromSeed, verifyEd25519 } from '../protocol/common/ed25519.ts';
import { encodeBase64url, decodeBase64Any, byteLength } from '../protocol/common/base64.ts';
import { encodeObject, decodeObject } from '../protocol/common/codec.ts';
import { compactJson } from '../protocol/common/json.ts';
import { documentCanonical, verifyDocument, keyValidAt, previousKeys } from '../protocol/common/document.ts';
import { validServiceName, claimable, hostedReason, dirName, type HostedReason } from '../protocol/common/names.ts';
import { normalizeIdInput } from '../protocol/bridge/id-input.ts';
import { referenceFromInput, normalizeShortCode } from '../protocol/signin/reference.ts';
import { normalizeOrigin, sameOrigin } from '../protocol/common/url.ts';
import { sealMessage, openMessage, x25519PublicKey } from '../protocol/relay/seal.ts';
import { checkProfileDocument } from '../protocol/bridge/profile-document.ts';
import { checkSessionProof } from '../protocol/signin/session-proof.ts';
import { createVerifier } from '../protocol/signin/verifier.ts';
import { MemoryNonceStore } from '../protocol/signin/nonce.ts';
import { StaticResolver } from '../protocol/signin/resolver.ts';
import { parseKey } from '../protocol/common/keys.ts';
import { parseRfc3339, formatRfc3339 } from '../protocol/common/time.ts';
import { makeAjv } from '../protocol/common/schema.ts';
import { root, writeOrCheck, type Output } from './lib/outputs.ts';

ed.hashes.sha512 = sha512;

// ---------------------------------------------------------------------------------------------
// Checking helpers

class VectorError extends Error {}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new VectorError(message);
}

function same(label: string, actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new VectorError(`${label}: expected ${e}, got ${a}`);
}

type Json = Record<string, unknown>;

const RULE_IDS = new Set(ruleCatalogue.map((r) => r.id));
/** Rule ids from spec/rules/, de-duplicated; an unknown id stops the generator. */
function ruleIds(...ids: string[]): string[] {
  for (const id of ids) check(RULE_IDS.has(id), `unknown rule id ${id} (not in spec/rules/)`);
  return [...new Set(ids)];
}

const b64u = (bytes: Uint8Array): string => encodeBase64url(bytes);
const fromB64u = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64url'));
const digest = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest();
const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
const readJson = (path: string): Json => JSON.parse(readFileSync(join(root, path), 'utf8')) as Json;
/** Test material derived like the fixtures: SHA-256 of a label. */
const derived = (label: string, length = 32): Uint8Array => new Uint8Array(digest(label).subarray(0, length));
const lines = (...parts: string[]): string => parts.join('\n');

// ---------------------------------------------------------------------------------------------
// Fixtures, each value recomputed from its label

const profile = profileFor('svc');
const NAME = profile.name;
const AUTH = profile.ids.auth_field;

interface EdKey {
  name: string;
  seed: Uint8Array;
  pub: Uint8Array;
  text: string;
}
interface XKey {
  name: string;
  priv: Uint8Array;
  pub: Uint8Array;
  text: string;
}

const keyFixtures = readJson('fixtures/keys.json');
const edKeys = new Map<string, EdKey>();
const xKeys = new Map<string, XKey>();
const byteFixtures = new Map<string, Uint8Array>();
for (const [name, raw] of Object.entries(keyFixtures)) {
  if (name === 'description') continue;
  const entry = raw as Json;
  const label = entry.label as string;
  check(typeof label === 'string' && label.length > 0, `fixtures/keys.json ${name}: no label`);
  if (entry.type === 'ed25519') {
    const seed = derived(label);
    same(`fixtures/keys.json ${name}.seed (SHA-256 of "${label}")`, entry.seed, b64u(seed));
    const pub = publicKeyFromSeed(seed);
    same(`fixtures/keys.json ${name}.public_key`, entry.public_key, `ed25519:${b64u(pub)}`);
    same(`fixtures/keys.json ${name}.public_key (noble)`, b64u(ed.getPublicKey(seed)), b64u(pub));
    edKeys.set(name, { name, seed, pub, text: `ed25519:${b64u(pub)}` });
  } else if (entry.type === 'x25519') {
    const priv = derived(label);
    same(`fixtures/keys.json ${name}.private_key (SHA-256 of "${label}")`, entry.private_key, b64u(priv));
    const pub = x25519PublicKey(priv);
    same(`fixtures/keys.json ${name}.public_key`, entry.public_key, `x25519:${b64u(pub)}`);
    same(`fixtures/keys.json ${name}.public_key (noble)`, b64u(x25519.getPublicKey(priv)), b64u(pub));
    xKeys.set(name, { name, priv, pub, text: `x25519:${b64u(pub)}` });
  } else if (entry.type === 'bytes') {
    const value = derived(label, entry.length as number);
    same(`fixtures/keys.json ${name}.value (SHA-256 of "${label}", ${String(entry.length)} bytes)`, entry.value, b64u(value));
    byteFixtures.set(name, value);
  } else {
    throw new VectorError(`fixtures/keys.json ${name}: unknown type ${String(entry.type)}`);
  }
}
const edKey = (name: string): EdKey => edKeys.get(name) ?? fail(`fixtures/keys.json has no ed25519 key ${name}`);
const xKey = (name: string): XKey => xKeys.get(name) ?? fail(`fixtures/keys.json has no x25519 key ${name}`);
const bytesOf = (name: string): Uint8Array => byteFixtures.get(name) ?? fail(`fixtures/keys.json has no bytes ${name}`);
function fail(message: string): never {
  throw new VectorError(message);
}

interface SessionFixture {
  key: string;
  public_key: string;
  issued_at: string;
  expires_at: string;
  nonce: string;
}
interface IdentityFixture {
  resolvable: boolean;
  key: string;
  public_key: string;
  encryption_key?: string;
  encryption_public_key?: string;
  relay?: string;
  capabilities?: string[];
  updated_at?: string;
  previous_keys?: Array<{ key: string; public_key: string; valid_until: string }>;
  sessions?: Record<string, SessionFixture>;
}
const identityFixtures = readJson('fixtures/identities.json');
const identities = new Map<string, IdentityFixture>();
for (const [id, raw] of Object.entries(identityFixtures)) {
  if (id === 'description') continue;
  const entry = raw as IdentityFixture;
  same(`fixtures/identities.json ${id}: a valid service name`, validServiceName(id), id);
  same(`fixtures/identities.json ${id}.public_key`, entry.public_key, edKey(entry.key).text);
  if (entry.encryption_key) same(`fixtures/identities.json ${id}.encryption_public_key`, entry.encryption_public_key, xKey(entry.encryption_key).text);
  for (const p of entry.previous_keys ?? []) {
    same(`fixtures/identities.json ${id} previous key ${p.key}`, p.public_key, edKey(p.key).text);
    check(parseRfc3339(p.valid_until) !== undefined, `fixtures/identities.json ${id}: valid_until is not RFC 3339`);
  }
  for (const [sid, s] of Object.entries(entry.sessions ?? {})) {
    same(`fixtures/identities.json ${id} session ${sid}`, s.public_key, edKey(s.key).text);
    const span = parseRfc3339(s.expires_at)! - parseRfc3339(s.issued_at)!;
    check(span > 0 && span <= limits.session_ttl_max_seconds * 1000, `fixtures/identities.json ${id} session ${sid}: window outside the 24-hour cap`);
  }
  identities.set(id, entry);
}
const identity = (id: string): IdentityFixture => identities.get(id) ?? fail(`fixtures/identities.json has no ${id}`);

const clock = readJson('fixtures/clock.json');
const NOW_TEXT = clock.now as string;
const NOW = parseRfc3339(NOW_TEXT) ?? fail('fixtures/clock.json: now is not RFC 3339');
same('fixtures/clock.json now is in whole seconds, UTC', formatRfc3339(NOW), NOW_TEXT);
const ORIGIN = clock.rp_origin as string;
same('fixtures/clock.json rp_origin is a normalized origin', normalizeOrigin(ORIGIN), ORIGIN);
/** RFC 3339 (UTC, whole seconds) `seconds` from the fixed `now`. */
const at = (seconds: number): string => formatRfc3339(NOW + seconds * 1000);

const ALICE = 'alice.example.com';
const BOB = 'bob.example.org';
const CAROL = 'carol.example.net';
const alice = identity(ALICE);
const aliceKey = edKey(alice.key);
const bobKey = edKey(identity(BOB).key);
const carol = identity(CAROL);
check(!carol.resolvable, 'fixtures/identities.json: carol.example.net must be unresolvable');
const carolKey = edKey(carol.key);
const alicePrevious = alice.previous_keys?.[0] ?? fail('alice.example.com needs a previous key');
const previousKey = edKey(alicePrevious.key);
const GRACE_END = parseRfc3339(alicePrevious.valid_until)!;
const SESSION_ID = Object.keys(alice.sessions ?? {})[0] ?? fail('alice.example.com needs a session');
const session = alice.sessions![SESSION_ID]!;
const sessionKey = edKey(session.key);
const recipient = xKey(alice.encryption_key ?? fail('alice.example.com needs an encryption key'));
const ephemeral = xKey('ephemeral-x25519');

// ---------------------------------------------------------------------------------------------
// Output

const outputs: Output[] = [];
const counts: Array<[string, number]> = [];
function emit(file: string, kind: string, description: string, body: Json, count: number): void {
  const content = { kind, description, profile: NAME, ...body };
  outputs.push({ path: `vectors/${file}.json`, content: `${JSON.stringify(content, null, 2)}\n` });
  counts.push([file, count]);
}

// ---------------------------------------------------------------------------------------------
// Session proofs (document 1, Session proof)

/** session-registration, hand-assembled from document 1 and compared with the core's builder. */
function registrationString(id: string, sessionPublicKey: string, issuedAt: string, expiresAt: string, nonce: string): string {
  const s = lines('session-registration', id, sessionPublicKey, issuedAt, expiresAt, nonce);
  same(
    'session-registration string (core)',
    canonicalString(profile, 'session-registration', { identity: id, session_public_key: sessionPublicKey, issued_at: issuedAt, expires_at: expiresAt, nonce }),
    s,
  );
  return s;
}

interface ProofSpec {
  issuedAt: string;
  expiresAt: string;
  nonce: string;
  key?: EdKey;
  signer?: EdKey;
}
function makeProof(spec: ProofSpec): Json {
  const key = spec.key ?? sessionKey;
  const signer = spec.signer ?? aliceKey;
  const signed = registrationString(ALICE, b64u(key.pub), spec.issuedAt, spec.expiresAt, spec.nonce);
  return {
    session_public_key: b64u(key.pub),
    issued_at: spec.issuedAt,
    expires_at: spec.expiresAt,
    nonce: spec.nonce,
    identity_signature: b64u(signEd25519(signer.seed, signed)),
  };
}
const fixtureProof = makeProof({ issuedAt: session.issued_at, expiresAt: session.expires_at, nonce: session.nonce });
const SESSION_REGISTRATION = registrationString(ALICE, b64u(sessionKey.pub), session.issued_at, session.expires_at, session.nonce);

// ---------------------------------------------------------------------------------------------
// Sign-in approvals (document 1): signin.json and signin-boundaries.json

const REASON_RULE = vocabulary.signin_vector_reasons.map as Readonly<Record<string, number>>;
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
const CODE_REASON: Readonly<Record<string, string>> = {
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
const reasonText = Object.entries(
  Object.entries(REASON_RULE).reduce<Record<string, string[]>>((acc, [reason, rule]) => {
    (acc[`ns.verify.${rule}`] ??= []).push(reason);
    return acc;
  }, {}),
)
  .map(([rule, reasons]) => `${reasons.join('/')} -> ${rule}`)
  .join(', ');

const STATEMENT = 'Sign in to Example RP';

/** The twelve lines of document 1 (Canonical signing string), assembled here; an absent field is an empty line. */
function signinLines(r: Json): string {
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
const signinNonce = (name: string): string => b64u(derived(`${NAME}-conformance/signin-nonce/${name}`, limits.nonce_entropy_min_bytes));

interface SigninCase {
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

interface SigninVector extends Json {
  name: string;
  response: Json;
  canonical: string;
}

async function signinVectors(cases: SigninCase[], perVectorNow: boolean): Promise<SigninVector[]> {
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

const expiredProof = makeProof({ issuedAt: '2026-01-14T08:00:00Z', expiresAt: '2026-01-14T20:00:00Z', nonce: b64u(utf8('session-nonce-expired')) });
const longProof = makeProof({
  issuedAt: session.issued_at,
  expiresAt: formatRfc3339(parseRfc3339(session.issued_at)! + (limits.session_ttl_max_seconds + 1) * 1000),
  nonce: b64u(utf8('session-nonce-too-long')),
});
const SESSION_KEY_ID = `${vocabulary.key_ids.session_prefix}${SESSION_ID}`;
const statementOfBytes = (n: number): string => {
  // Two-byte characters, so a limit counted in characters instead of bytes is caught.
  const head = `${STATEMENT}: `;
  const body = 'é'.repeat(Math.floor((n - byteLength(head)) / 2));
  const out = head + body + 'x'.repeat(n - byteLength(head) - byteLength(body));
  same(`statement of ${n} bytes`, byteLength(out), n);
  return out;
};
const stdBase64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

const signinCases: SigninCase[] = [
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

const signin = await signinVectors(signinCases, false);
const unresolvable = [...new Set(signin.map((v) => String(v.response.identity)).filter((id) => identities.get(id)?.resolvable === false))];
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

const boundaryCases: SigninCase[] = [
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
const boundaries = await signinVectors(boundaryCases, true);
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

// ---------------------------------------------------------------------------------------------
// Requests by reference (document 1, Requests by reference): signin-reference.json

const LINK = `${ORIGIN}/r/K7QM4XP2`;
const enc = encodeURIComponent;
const referenceForms: Array<{ name: string; input: string; uri: string | null; rules?: string[] }> = [
  { name: 'link-with-white-space', input: `  ${LINK} `, uri: LINK },
  { name: 'link', input: LINK, uri: LINK },
  { name: 'http-development-link', input: 'http://rp.localhost:8090/r/K7QM4XP2', uri: 'http://rp.localhost:8090/r/K7QM4XP2', rules: ['ns.request.audience-http-dev'] },
  { name: 'deep-link-request-uri', input: `${NAME}://auth?request_uri=${enc(LINK)}`, uri: LINK, rules: ['ns.transport.deeplink'] },
  { name: 'web-signer-auth-link', input: `https://signer.example.net/app/?auth=${enc(LINK)}`, uri: LINK, rules: ['ns.transport.web-handoff'] },
  { name: 'inline-encoded-request', input: encodeObject({ [AUTH]: '1' }), uri: null, rules: ['ns.transport.paste'] },
  { name: 'inline-deep-link-request', input: `${NAME}://auth?request=${encodeObject({ x: 1 })}`, uri: null, rules: ['ns.transport.deeplink'] },
  { name: 'inline-web-signer-auth', input: `https://signer.example.net/app/?auth=${encodeObject({ x: 1 })}`, uri: null, rules: ['ns.transport.web-handoff'] },
  { name: 'ftp-link', input: 'ftp://rp.example.com/r/K7QM4XP2', uri: null },
  { name: 'javascript-link', input: 'javascript:alert(1)', uri: null },
  { name: 'deep-link-javascript-request-uri', input: `${NAME}://auth?request_uri=${enc('javascript:alert(1)')}`, uri: null, rules: ['ns.transport.deeplink'] },
  { name: 'deep-link-data-request-uri', input: `${NAME}://auth?request_uri=${enc('data:text/html,<script>alert(1)</script>')}`, uri: null, rules: ['ns.transport.deeplink'] },
  { name: 'web-signer-auth-javascript', input: `https://signer.example.net/app/?auth=${enc('javascript:alert(1)')}`, uri: null, rules: ['ns.transport.web-handoff'] },
  { name: 'foreign-scheme-deep-link', input: `other://auth?request_uri=${enc(LINK)}`, uri: null },
];
const forms = referenceForms.map((f) => {
  same(`signin-reference form ${f.name} (core)`, referenceFromInput(profile, f.input) ?? null, f.uri);
  return { name: f.name, input: f.input, uri: f.uri ?? '', ok: f.uri !== null, rules: ruleIds('ns.reference.forms', ...(f.rules ?? [])) };
});
const referenceOrigins: Array<{ name: string; uri: string; audience: string; ok: boolean; rules?: string[] }> = [
  { name: 'same-origin', uri: LINK, audience: ORIGIN, ok: true },
  { name: 'audience-not-normalized', uri: 'https://rp.example.com:443/r/K7QM4XP2', audience: 'https://RP.example.com/', ok: true, rules: ['ns.request.audience'] },
  { name: 'http-development', uri: 'http://rp.localhost:8090/r/K7QM4XP2', audience: 'http://rp.localhost:8090', ok: true, rules: ['ns.request.audience-http-dev'] },
  { name: 'off-origin', uri: 'https://evil.example/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'http-versus-https', uri: 'http://rp.example.com/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'suffix-trick', uri: 'https://rp.example.com.evil.example/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'userinfo-trick', uri: 'https://rp.example.com@evil.example/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'other-port', uri: 'https://rp.example.com:8443/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'subdomain', uri: 'https://login.rp.example.com/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'javascript-uri', uri: 'javascript:alert(1)', audience: ORIGIN, ok: false },
];
const origins = referenceOrigins.map((o) => {
  same(`signin-reference origin ${o.name} (core)`, sameOrigin(o.audience, o.uri), o.ok);
  return { name: o.name, uri: o.uri, audience: o.audience, ok: o.ok, rules: ruleIds('ns.reference.same-origin', ...(o.rules ?? [])) };
});
emit(
  'signin-reference',
  'signin-reference',
  `Requests by reference (document 1, Requests by reference; Transport bindings): \`forms\` maps what a signer is given (a link, \`${NAME}://auth?request_uri=<link>\`, \`?auth=<link>\`, or an inline request, which is not a reference) to the reference link (\`uri\`, empty when \`ok\` is false); only http(s) links count. \`origins\` says whether a reference link is same-origin with the request's audience (normalized scheme, host and port), including hostile links: another host, http for https, a suffix or userinfo trick, another port.`,
  { forms, origins },
  forms.length + origins.length,
);

// ---------------------------------------------------------------------------------------------
// ID input (document 2, Identifier forms): id-input.json

const idCases: Array<{ name: string; input: string; allowHttp?: boolean; id: string | null; rules: string[] }> = [
  { name: 'uppercase', input: 'Alice.Example.COM', id: ALICE, rules: ['ob.id-input.case.uppercase', 'ob.id-input.lowercase'] },
  { name: 'trailing-dot', input: 'alice.example.com.', id: ALICE, rules: ['ob.id-input.case.trailing-dot', 'ob.id-input.lowercase'] },
  { name: 'leading-at', input: '@alice.example.com', id: ALICE, rules: ['ob.id-input.case.leading-at', 'ob.id-input.trim'] },
  { name: 'white-space', input: ' \talice.example.com  ', id: ALICE, rules: ['ob.id-input.trim'] },
  { name: 'https-url', input: 'https://alice.example.com', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.url'] },
  { name: 'https-url-trailing-slash', input: 'https://alice.example.com/', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.url'] },
  { name: 'https-url-upper-case', input: 'HTTPS://Alice.Example.com/', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.case.uppercase'] },
  { name: 'https-url-trailing-dot', input: 'https://alice.example.com./', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.case.trailing-dot'] },
  { name: 'url-with-path', input: 'https://alice.example.com/blog', id: null, rules: ['ob.id-input.case.url-path', 'ob.id-input.url'] },
  { name: 'url-with-port', input: 'https://alice.example.com:8443/', id: null, rules: ['ob.id-input.case.url-port', 'ob.id-input.url'] },
  { name: 'url-with-default-port', input: 'https://alice.example.com:443/', id: null, rules: ['ob.id-input.case.url-port', 'ob.id-input.url'] },
  { name: 'url-with-query', input: 'https://alice.example.com/?x=1', id: null, rules: ['ob.id-input.url'] },
  { name: 'url-with-empty-query', input: 'https://alice.example.com/?', id: null, rules: ['ob.id-input.url'] },
  { name: 'url-with-fragment', input: 'https://alice.example.com/#me', id: null, rules: ['ob.id-input.url'] },
  { name: 'url-with-userinfo', input: 'https://bob@alice.example.com/', id: null, rules: ['ob.id-input.url'] },
  { name: 'http-url', input: 'http://alice.example.com/', id: null, rules: ['ob.id-input.case.http-url', 'ob.id-input.url'] },
  { name: 'http-url-development-flag', input: 'http://alice.example.com/', allowHttp: true, id: ALICE, rules: ['ob.id-input.case.http-url', 'ob.id-input.url'] },
  { name: 'ftp-url-development-flag', input: 'ftp://alice.example.com/', allowHttp: true, id: null, rules: ['ob.id-input.url'] },
  { name: 'single-label', input: 'alice', id: null, rules: ['ob.id-input.case.single-label', 'ob.id-input.valid-name'] },
  { name: 'empty', input: '', id: null, rules: ['ob.id-input.trim'] },
  { name: 'only-at', input: '@', id: null, rules: ['ob.id-input.trim'] },
  { name: 'two-leading-ats', input: '@@alice.example.com', id: null, rules: ['ob.id-input.trim', 'ob.id-input.valid-name'] },
  { name: 'two-trailing-dots', input: 'alice.example.com..', id: null, rules: ['ob.id-input.lowercase', 'ob.id-input.valid-name'] },
  { name: 'name-with-path', input: 'alice.example.com/blog', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'at-inside', input: 'alice@example.com', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'non-ascii-letter', input: '\u0430lice.example.com', id: null, rules: ['ob.id-input.case.non-ascii', 'ob.id-input.valid-name'] },
  { name: 'xn-label', input: 'xn--80ak6aa92e.example', id: 'xn--80ak6aa92e.example', rules: ['ob.id-input.case.xn-label', 'ob.id-input.valid-name'] },
  { name: 'ip-address', input: '192.168.0.1', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'ip-address-url', input: 'https://192.168.0.1/', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'www-name', input: 'www.example.com', id: null, rules: ['ob.id-input.no-alias'] },
  { name: 'www-url', input: 'https://www.example.com/', id: null, rules: ['ob.id-input.no-alias'] },
  { name: 'reserved-label-is-still-an-id', input: 'support.example.com', id: 'support.example.com', rules: ['ob.id-input.valid-name'] },
];
const idVectors = idCases.map((c) => {
  const r = normalizeIdInput(c.input, c.allowHttp ? { allowHttp: true } : {});
  same(`id-input ${c.name} (core)`, r.ok ? r.id : null, c.id);
  const v: Json = { name: c.name, input: c.input };
  if (c.allowHttp) v.allow_http = true;
  if (c.id !== null) {
    const projections = { id: c.id, profile_url: `https://${c.id}/`, did: `did:web:${c.id}` };
    same(`id-input ${c.name} projections (core)`, r.ok ? { id: r.id, profile_url: r.profileUrl, did: r.did } : null, projections);
    Object.assign(v, projections);
  }
  v.valid = c.id !== null;
  v.rules = ruleIds('ob.id-input.order', ...c.rules, ...(c.id !== null ? ['ob.id-input.projections'] : []));
  return v;
});
emit(
  'id-input',
  'id-input',
  'Normalization of a typed service ID (document 2, Identifier forms, steps 1 to 5 and every listed case): a valid input yields the canonical ID and its projections `https://<id>/` and `did:web:<id>`; `allow_http` sets the development flag. ID input does not apply the reserved-label list (that is a hosting rule, names.json).',
  { vectors: idVectors },
  idVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Service names (document 3, Identity; GET /hosted/availability): names.json

const label63 = 'a'.repeat(63);
const nameCases: Array<{ identity: string; valid: boolean; claimable: boolean; hosted: HostedReason | null }> = [
  { identity: ALICE, valid: true, claimable: true, hosted: 'available' },
  { identity: 'a-b.example.org', valid: true, claimable: true, hosted: 'available' },
  { identity: 'bob.co.uk', valid: true, claimable: true, hosted: 'available' },
  { identity: 'UPPER.Example.ORG', valid: true, claimable: true, hosted: 'available' },
  { identity: 'ab.example.com', valid: true, claimable: true, hosted: 'too_short' },
  { identity: 'a--b.example.org', valid: true, claimable: true, hosted: 'hyphen' },
  { identity: `${label63}.example.org`, valid: true, claimable: true, hosted: 'available' },
  { identity: `${NAME}.example.org`, valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'poweur.example.org', valid: true, claimable: true, hosted: 'available' },
  { identity: 'www.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'dav.example.org', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'support.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'verify.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'id.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'oauth.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'indieauth.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'xn--80ak6aa92e.example.org', valid: true, claimable: true, hosted: 'punycode' },
  { identity: `${'a'.repeat(64)}.example.org`, valid: false, claimable: false, hosted: null },
  { identity: 'nodots', valid: false, claimable: false, hosted: null },
  { identity: '192.168.0.1', valid: false, claimable: false, hosted: null },
  { identity: '-bad.example.org', valid: false, claimable: false, hosted: null },
  { identity: 'bad-.example.org', valid: false, claimable: false, hosted: null },
  { identity: 'under_score.example.org', valid: false, claimable: false, hosted: null },
  { identity: '', valid: false, claimable: false, hosted: null },
  { identity: '\u0430dmin.example.com', valid: false, claimable: false, hosted: null },
  { identity: '\u0430lice.example.com', valid: false, claimable: false, hosted: null },
];
const nameVectors = nameCases.map((c) => {
  const label = `names ${JSON.stringify(c.identity)}`;
  same(`${label} valid (core)`, validServiceName(c.identity) !== undefined, c.valid);
  same(`${label} claimable (core)`, claimable(c.identity, profile), c.claimable);
  const reason = hostedReason(c.identity, profile);
  if (c.hosted !== null) same(`${label} hosted reason (core)`, reason, c.hosted);
  const hostedValid = c.hosted === 'available';
  same(`${label} hosted_valid (core)`, reason === 'available', hostedValid);
  const v: Json = { identity: c.identity, valid: c.valid, claimable: c.claimable, hosted_valid: hostedValid };
  if (c.valid) {
    const dir = c.identity.toLowerCase().split('.').join('__');
    same(`${label} dir_name (core)`, dirName(c.identity), dir);
    v.dir_name = dir;
    v.hosted_reason = c.hosted;
  }
  v.rules = ruleIds('ra.names.valid', ...(c.valid ? ['ra.names.reserved', 'ra.names.hosted', 'ra.names.dir-name'] : []));
  return v;
});
emit(
  'names',
  'names',
  `Service names (document 3, Identity; GET /hosted/availability): \`valid\` (an ASCII DNS name of two or more labels), \`claimable\` (its leftmost label is not reserved; the service's own name \`${NAME}\` is reserved), \`hosted_valid\` (acceptable as a handle hosted under a relay's domain, policy min ${vocabulary.hosted_policy.min_len} and max ${vocabulary.hosted_policy.max_len} characters, no block list) and, for valid names, \`dir_name\` (the storage directory, dots as \`__\`) and \`hosted_reason\` (the first failing hosted-handle check, or \`available\`).`,
  { vectors: nameVectors },
  nameVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Signed strings (spec/signing.yaml): canonical.json

interface CanonicalCase {
  name: string;
  string: SignedStringName;
  inputs: Json;
  lines: string[];
  extra?: Json;
}
const ISSUED = NOW_TEXT;
const NONCE = b64u(utf8('vector-nonce-001'));
const MSG_ID = `msg_${NOW}_abcdefghi`;
const ENC = { alg: 'x25519-chacha20-poly1305', ephemeral_public_key: b64u(ephemeral.pub), nonce: b64u(bytesOf('seal-nonce')) };
const PAYLOAD = b64u(utf8('ciphertext'));
const WRAPPED = '{"alg":"A256GCM","iv":"AAECAwQFBgcICQoL","ct":"c2VhbGVkLWtleQ"}';
const REQUEST_BODY = '{"recipient":"bob.example.org"}';
const hex = (data: string) => digest(data).toString('hex');
const enrollment = { identity: ALICE, issued_at: ISSUED, nonce: NONCE };
const aliceNext = edKey('alice-next');
const signinInputs = (() => {
  const { signature: _signature, ...rest } = signin[0]!.response;
  return rest;
})();
const canonicalCases: CanonicalCase[] = [
  {
    name: 'signin',
    string: 'signin',
    inputs: signinInputs,
    lines: [`${NAME}-signin`, '1', 'req-valid-identity', ALICE, ORIGIN, String(signinInputs.nonce), at(-60), at(60), 'signin', STATEMENT, 'messages:send', 'identity'],
  },
  {
    name: 'session-registration',
    string: 'session-registration',
    inputs: { identity: ALICE, session_public_key: b64u(sessionKey.pub), issued_at: session.issued_at, expires_at: session.expires_at, nonce: session.nonce },
    lines: ['session-registration', ALICE, b64u(sessionKey.pub), session.issued_at, session.expires_at, session.nonce],
  },
  {
    name: 'session-revocation',
    string: 'session-revocation',
    inputs: { identity: ALICE, session_id: SESSION_ID, issued_at: ISSUED, nonce: NONCE },
    lines: ['session-revocation', ALICE, SESSION_ID, ISSUED, NONCE],
  },
  {
    name: 'identity-registration',
    string: 'identity-registration',
    inputs: { identity: ALICE, public_key: b64u(aliceKey.pub), encryption_public_key: b64u(recipient.pub), relay_address: 'relay.example.com', issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-registration', ALICE, b64u(aliceKey.pub), b64u(recipient.pub), 'relay.example.com', ISSUED, NONCE],
  },
  {
    name: 'identity-registration-no-encryption-key',
    string: 'identity-registration',
    inputs: { identity: ALICE, public_key: b64u(aliceKey.pub), relay_address: 'relay.example.com:8443', issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-registration', ALICE, b64u(aliceKey.pub), '', 'relay.example.com:8443', ISSUED, NONCE],
  },
  { name: 'identity-export', string: 'identity-export', inputs: { ...enrollment }, lines: ['identity-export', ALICE, ISSUED, NONCE] },
  {
    name: 'identity-rotation',
    string: 'identity-rotation',
    inputs: { identity: ALICE, old_public_key: b64u(aliceKey.pub), new_public_key: b64u(aliceNext.pub), issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-rotation', ALICE, b64u(aliceKey.pub), b64u(aliceNext.pub), ISSUED, NONCE],
  },
  {
    name: 'identity-encryption-key',
    string: 'identity-encryption-key',
    inputs: { identity: ALICE, encryption_public_key: b64u(recipient.pub), issued_at: ISSUED, nonce: NONCE },
    lines: ['identity-encryption-key', ALICE, b64u(recipient.pub), ISSUED, NONCE],
  },
  {
    name: 'keystore-enroll',
    string: 'keystore-enroll',
    inputs: { identity: ALICE, enrollment_id: 'enr-001', kind: 'passkey', credential_id: b64u(utf8('cred-001')), wrapped_digest: b64u(digest(WRAPPED)), issued_at: ISSUED, nonce: NONCE },
    lines: ['keystore-enroll', ALICE, 'enr-001', 'passkey', b64u(utf8('cred-001')), b64u(digest(WRAPPED)), ISSUED, NONCE],
    extra: { wrapped: WRAPPED },
  },
  {
    name: 'keystore-enroll-no-credential',
    string: 'keystore-enroll',
    inputs: { identity: ALICE, enrollment_id: 'enr-002', kind: 'recovery-kit', credential_id: '', wrapped_digest: b64u(digest(WRAPPED)), issued_at: ISSUED, nonce: NONCE },
    lines: ['keystore-enroll', ALICE, 'enr-002', 'recovery-kit', '', b64u(digest(WRAPPED)), ISSUED, NONCE],
    extra: { wrapped: WRAPPED },
  },
  { name: 'keystore-list', string: 'keystore-list', inputs: { ...enrollment }, lines: ['keystore-list', ALICE, ISSUED, NONCE] },
  {
    name: 'keystore-remove',
    string: 'keystore-remove',
    inputs: { identity: ALICE, enrollment_id: 'enr-001', issued_at: ISSUED, nonce: NONCE },
    lines: ['keystore-remove', ALICE, 'enr-001', ISSUED, NONCE],
  },
  { name: 'enroll-fetch', string: 'enroll-fetch', inputs: { identity: ALICE, rendezvous_id: 'K7QM4XP2', issued_at: ISSUED, nonce: NONCE }, lines: ['enroll-fetch', ALICE, 'K7QM4XP2', ISSUED, NONCE] },
  {
    name: 'enroll-deliver',
    string: 'enroll-deliver',
    inputs: { identity: ALICE, rendezvous_id: 'K7QM4XP2', issued_at: ISSUED, nonce: NONCE },
    lines: ['enroll-deliver', ALICE, 'K7QM4XP2', ISSUED, NONCE],
  },
  {
    name: 'signed-request',
    string: 'signed-request',
    inputs: { identity: ALICE, method: 'POST', path: '/messages', timestamp: String(NOW / 1000), nonce: 'c2lnbmVkLXJlcXVlc3Qtbm9uY2U', body_sha256: hex(REQUEST_BODY) },
    lines: [`${NAME}-request/v1`, ALICE, 'POST', '/messages', String(NOW / 1000), 'c2lnbmVkLXJlcXVlc3Qtbm9uY2U', hex(REQUEST_BODY)],
    extra: { body: REQUEST_BODY },
  },
  {
    name: 'signed-request-no-body',
    string: 'signed-request',
    inputs: { identity: ALICE, method: 'GET', path: `/messages?since=${NOW / 1000 - 3600}`, timestamp: String(NOW / 1000), nonce: 'c2lnbmVkLXJlcXVlc3Qtbm9uY2UtZ2V0', body_sha256: hex('') },
    lines: [`${NAME}-request/v1`, ALICE, 'GET', `/messages?since=${NOW / 1000 - 3600}`, String(NOW / 1000), 'c2lnbmVkLXJlcXVlc3Qtbm9uY2UtZ2V0', hex('')],
    extra: { body: '' },
  },
  { name: 'challenge', string: 'challenge', inputs: { challenge: 'Y2hhbGxlbmdlLWZvci1hbGljZS0wMDE' }, lines: ['Y2hhbGxlbmdlLWZvci1hbGljZS0wMDE'] },
  { name: 'message-minimal', string: 'message', inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD }, lines: [ALICE, BOB, ISSUED, PAYLOAD] },
  {
    name: 'message-session-encrypted',
    string: 'message',
    inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD, id: MSG_ID, session_id: SESSION_ID, encryption: ENC },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, `session:${SESSION_ID}`, `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`],
  },
  {
    name: 'message-typed',
    string: 'message',
    inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD, id: MSG_ID, session_id: '', encryption: ENC, type: 'sys.contact.request' },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`, 'type:sys.contact.request'],
  },
  {
    name: 'message-threaded',
    string: 'message',
    inputs: { sender: ALICE, recipient: BOB, timestamp: ISSUED, payload: PAYLOAD, id: MSG_ID, session_id: SESSION_ID, encryption: ENC, thread_id: `thr_${NOW}_project` },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, `session:${SESSION_ID}`, `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`, `thread:thr_${NOW}_project`],
  },
  {
    name: 'message-full-envelope',
    string: 'message',
    // Metadata deliberately out of key order: the string sorts it.
    inputs: {
      sender: ALICE,
      recipient: BOB,
      timestamp: ISSUED,
      payload: PAYLOAD,
      id: MSG_ID,
      session_id: SESSION_ID,
      encryption: ENC,
      type: 'chat.attachment',
      thread_id: `thr_${NOW}_project`,
      expires_at: at(86400),
      metadata: { mime: 'image/png', 'share.path': 'shared/.attachments/a1', bytes: '20480' },
    },
    lines: [
      ALICE,
      BOB,
      ISSUED,
      PAYLOAD,
      `id:${MSG_ID}`,
      `session:${SESSION_ID}`,
      `enc:${ENC.alg}:${ENC.ephemeral_public_key}:${ENC.nonce}`,
      'type:chat.attachment',
      `thread:thr_${NOW}_project`,
      `expires:${at(86400)}`,
      'meta:bytes:20480',
      'meta:mime:image/png',
      'meta:share.path:shared/.attachments/a1',
    ],
  },
  {
    name: 'message-metadata-outside-bmp',
    string: 'message',
    // Keys outside the BMP sort after U+E000..U+FFFF in code-point (UTF-8 byte) order; UTF-16
    // code-unit order would put the surrogate pair of U+1F600 first.
    inputs: {
      sender: ALICE,
      recipient: BOB,
      timestamp: ISSUED,
      payload: PAYLOAD,
      id: MSG_ID,
      metadata: { '\u{1F600}': 'emoji', '\uFFFD': 'replacement', '\uE000': 'private-use', z: 'ascii', '\u{10000}': 'linear-b' },
    },
    lines: [ALICE, BOB, ISSUED, PAYLOAD, `id:${MSG_ID}`, 'meta:z:ascii', 'meta:\uE000:private-use', 'meta:\uFFFD:replacement', 'meta:\u{10000}:linear-b', 'meta:\u{1F600}:emoji'],
  },
  {
    name: 'ack',
    string: 'ack',
    inputs: { id: `ack_${NOW}_jklmnopqr`, message_id: MSG_ID, state: 'delivered_client', sender: BOB, recipient: ALICE, timestamp: ISSUED, session_id: '' },
    lines: ['ack', `ack_${NOW}_jklmnopqr`, MSG_ID, 'delivered_client', BOB, ALICE, ISSUED],
  },
  {
    name: 'ack-session',
    string: 'ack',
    inputs: { id: `ack_${NOW}_jklmnopqr`, message_id: MSG_ID, state: 'delivered_client', sender: BOB, recipient: ALICE, timestamp: ISSUED, session_id: 'sess_bob_1' },
    lines: ['ack', `ack_${NOW}_jklmnopqr`, MSG_ID, 'delivered_client', BOB, ALICE, ISSUED, 'session:sess_bob_1'],
  },
];
const canonicalVectors = canonicalCases.map((c) => {
  const expected = lines(...c.lines);
  same(`canonical ${c.name} (core)`, canonicalString(profile, c.string, c.inputs), expected);
  const signature = signEd25519(aliceKey.seed, expected);
  same(`canonical ${c.name} signature (noble)`, b64u(ed.sign(utf8(expected), aliceKey.seed)), b64u(signature));
  check(verifyEd25519(aliceKey.pub, expected, signature), `canonical ${c.name}: signature does not verify`);
  const entry = signingSpec.strings[c.string];
  return { name: c.name, string: c.string, inputs: c.inputs, ...(c.extra ?? {}), canonical: expected, signature: b64u(signature), rules: ruleIds(entry.rule, 'ra.signing.format') };
});
for (const [name, entry] of Object.entries(signingSpec.strings) as Array<[SignedStringName, { output: string; lines?: unknown }]>) {
  if (entry.output !== 'ed25519' || !entry.lines) continue;
  check(
    canonicalCases.some((c) => c.string === name),
    `canonical.json has no vector for the ed25519 string ${name} of spec/signing.yaml`,
  );
}
emit(
  'canonical',
  'canonical',
  'Every line-based Ed25519 string of spec/signing.yaml: `string` names the entry, `inputs` are the fields it is built from (an extra field such as `wrapped` or `body` shows what a digest input was computed from), `canonical` is the exact string (lines joined with a line feed, no trailing line feed, UTF-8) and `signature` is the Ed25519 signature (base64url, no padding) by the key of `seed_base64url`, whatever key the protocol would sign that string with.',
  { public_key_base64url: b64u(aliceKey.pub), seed_base64url: b64u(aliceKey.seed), vectors: canonicalVectors },
  canonicalVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Digests: pairing commitment and code, pairwise subject, key fingerprint: digests.json

const pairingInput = (n: number) => ({
  ephemeral_public_key: b64u(x25519PublicKey(derived(`${NAME}-conformance/pairing/${n}/ephemeral`))),
  commit_nonce: b64u(derived(`${NAME}-conformance/pairing/${n}/commit-nonce`)),
  approver_nonce: b64u(derived(`${NAME}-conformance/pairing/${n}/approver-nonce`)),
});
const sasOf = (d: Buffer) => (d.readBigUInt64BE(0) % 10n ** BigInt(limits.pairing_sas_digits)).toString().padStart(limits.pairing_sas_digits, '0');
const fingerprintOf = (literal: string, keyText: string) => {
  const d = digest(lines(literal, keyText));
  const groups: string[] = [];
  for (let i = 0; i < 4; i++) groups.push((d.readUIntBE(i * 5, 5) % 100_000).toString().padStart(5, '0'));
  return groups.join(' ');
};
const pairwiseSecret = bytesOf('pairwise-secret');
const digestVectors: Json[] = [];
for (const n of [1, 2]) {
  const p = pairingInput(n);
  const commitCanonical = lines(`${NAME}/v2/enroll-commit`, p.ephemeral_public_key, p.commit_nonce);
  same(`digest pairing-commitment-${n} string (core)`, canonicalString(profile, 'pairing-commitment', p), commitCanonical);
  const commitment = digest(commitCanonical).toString('base64url');
  same(`digest pairing-commitment-${n} (core)`, pairingCommitment(profile, p), commitment);
  digestVectors.push({
    name: `pairing-commitment-${n}`,
    string: 'pairing-commitment',
    inputs: { ephemeral_public_key: p.ephemeral_public_key, commit_nonce: p.commit_nonce },
    canonical: commitCanonical,
    output: commitment,
    rules: ruleIds('ra.pairing.commitment'),
  });
  const sasInputs = { commitment, ephemeral_public_key: p.ephemeral_public_key, commit_nonce: p.commit_nonce, approver_nonce: p.approver_nonce };
  const sasCanonical = lines(`${NAME}/v2/enroll-sas`, commitment, p.ephemeral_public_key, p.commit_nonce, p.approver_nonce);
  same(`digest pairing-sas-${n} string (core)`, canonicalString(profile, 'pairing-sas', sasInputs), sasCanonical);
  const sas = sasOf(digest(sasCanonical));
  same(`digest pairing-sas-${n} (core)`, pairingSas(profile, sasInputs), sas);
  digestVectors.push({ name: `pairing-sas-${n}`, string: 'pairing-sas', inputs: sasInputs, canonical: sasCanonical, output: sas, rules: ruleIds('ra.pairing.sas') });
}
for (const [name, sector, id] of [
  ['pairwise-subject', 'rp.example.com', ALICE],
  ['pairwise-subject-other-sector', 'app.example.net', ALICE],
  ['pairwise-subject-other-identity', 'rp.example.com', BOB],
] as const) {
  const s = lines(`${NAME}-oidc-sub-v1`, sector, id);
  same(`digest ${name} string (core)`, canonicalString(profile, 'pairwise-subject', { sector, identity: id }), s);
  const sub = createHmac('sha256', pairwiseSecret).update(s).digest('base64url');
  same(`digest ${name} (core)`, pairwiseSubject(profile, pairwiseSecret, sector, id), sub);
  digestVectors.push({ name, string: 'pairwise-subject', inputs: { sector, identity: id }, canonical: s, output: sub, secret_base64url: b64u(pairwiseSecret), rules: ruleIds('ob.subject.pairwise') });
}
for (const [name, key, kind, normal] of [
  ['key-fingerprint-signing', aliceKey.text, 'signing', aliceKey.text],
  ['key-fingerprint-signing-standard-base64', stdBase64(aliceKey.pub), 'signing', aliceKey.text],
  ['key-fingerprint-encryption', recipient.text, 'encryption', recipient.text],
  ['key-fingerprint-same-bytes-as-encryption', `x25519:${b64u(aliceKey.pub)}`, 'encryption', `x25519:${b64u(aliceKey.pub)}`],
] as const) {
  const s = lines(`${NAME}-fingerprint-v1`, normal);
  same(`digest ${name} string (core)`, canonicalString(profile, 'key-fingerprint', { key: normal }), s);
  const fp = fingerprintOf(`${NAME}-fingerprint-v1`, normal);
  same(`digest ${name} (core)`, keyFingerprint(profile, key, kind), fp);
  digestVectors.push({ name, string: 'key-fingerprint', inputs: { key, kind }, canonical: s, output: fp, rules: ruleIds('ra.key-fingerprint') });
}
check(new Set(digestVectors.map((v) => v.output)).size === digestVectors.length - 1, 'digests: only the two text forms of one key may share an output');
emit(
  'digests',
  'digests',
  `The strings that are hashed or MACed instead of signed (spec/signing.yaml): \`pairing-commitment\` (base64url SHA-256), \`pairing-sas\` (six digits: the first 8 digest bytes big-endian modulo 10^6), \`pairwise-subject\` (base64url HMAC-SHA256 keyed by \`secret_base64url\`) and \`key-fingerprint\` (four groups of five digits; \`inputs.key\` in any accepted text form and \`inputs.kind\`, the key re-encoded as \`ed25519:\`/\`x25519:\` plus base64url before hashing, as \`canonical\` shows). \`canonical\` is the exact string, \`output\` the result. Pairing inputs are SHA-256 of \`${NAME}-conformance/pairing/<n>/<field>\` (the ephemeral key is the X25519 public key of that private key).`,
  { vectors: digestVectors },
  digestVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Identity documents (project-defined, spec/signing.yaml identity-document): documents.json

const ESC: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
/** Canonical JSON written independently of protocol/common/json.ts: known fields, empty optionals dropped, keys sorted, escapes. */
function independentCanonical(doc: Json): string {
  const spec = signingSpec.strings['identity-document'];
  const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
  const sortDeep = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sortDeep)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sortDeep((v as Json)[k])]),
          )
        : v;
  const known: Json = {};
  for (const f of spec.fields) if ((spec.required_fields as readonly string[]).includes(f) || !empty(doc[f])) known[f] = doc[f];
  return JSON.stringify(sortDeep(known)).replace(/[<>&\u2028\u2029]/g, (c) => ESC[c]!);
}
function signDocument(fields: Json, key: EdKey): Json {
  return { ...fields, signature: b64u(signEd25519(key.seed, documentCanonical(fields))) };
}
const aliceDoc: Json = {
  version: 1,
  identity: ALICE,
  public_key: alice.public_key,
  encryption_public_key: alice.encryption_public_key,
  relay: alice.relay,
  capabilities: alice.capabilities,
  updated_at: alice.updated_at,
};
const bobFixture = identity(BOB);
const previousEntries = (alice.previous_keys ?? []).map((p) => ({ public_key: p.public_key, valid_until: p.valid_until }));
const documentCases: Array<{ name: string; document: Json; at: string; valid: boolean; rules?: string[] }> = [
  { name: 'full', document: signDocument(aliceDoc, aliceKey), at: NOW_TEXT, valid: true },
  {
    name: 'minimal',
    document: signDocument({ version: 1, identity: BOB, public_key: bobFixture.public_key, relay: bobFixture.relay, updated_at: bobFixture.updated_at }, bobKey),
    at: NOW_TEXT,
    valid: true,
  },
  { name: 'rotated-previous-key-in-grace', document: signDocument({ ...aliceDoc, previous_keys: previousEntries }, aliceKey), at: formatRfc3339(GRACE_END - 30_000), valid: true },
  { name: 'rotated-previous-key-at-valid-until', document: signDocument({ ...aliceDoc, previous_keys: previousEntries }, aliceKey), at: alicePrevious.valid_until, valid: true },
  { name: 'rotated-previous-key-past-valid-until', document: signDocument({ ...aliceDoc, previous_keys: previousEntries }, aliceKey), at: NOW_TEXT, valid: true },
  { name: 'moved', document: signDocument({ ...aliceDoc, moved_to: 'alice.example.net' }, aliceKey), at: NOW_TEXT, valid: true },
  { name: 'empty-optional-values-left-out', document: signDocument({ ...aliceDoc, encryption_public_key: '', capabilities: [], moved_to: '' }, aliceKey), at: NOW_TEXT, valid: true },
  { name: 'unknown-field-not-signed', document: { ...signDocument(aliceDoc, aliceKey), display_hint: 'added after signing; not a known field' }, at: NOW_TEXT, valid: true },
  { name: 'tampered-relay', document: { ...signDocument(aliceDoc, aliceKey), relay: 'relay.evil.example' }, at: NOW_TEXT, valid: false },
  { name: 'signed-by-another-key', document: signDocument(aliceDoc, bobKey), at: NOW_TEXT, valid: false },
  { name: 'escaped-characters', document: signDocument({ ...aliceDoc, capabilities: ['messaging', 'x-<b>&amp;</b>', 'line\u2028separator'] }, aliceKey), at: NOW_TEXT, valid: true },
];
const documentVectors = documentCases.map((c) => {
  const doc = c.document;
  const canonical = independentCanonical(doc);
  same(`documents ${c.name} canonical (core)`, documentCanonical(doc), canonical);
  check(!/[<>&\u2028\u2029]/.test(canonical), `documents ${c.name}: unescaped character in the canonical form`);
  check(!canonical.includes('"signature"') && !canonical.includes('display_hint'), `documents ${c.name}: signature or an unknown field is signed`);
  same(`documents ${c.name} verifies (core)`, verifyDocument(doc).ok, c.valid);
  const key = parseKey(doc.public_key)!;
  const signature = decodeBase64Any(String(doc.signature))!;
  same(`documents ${c.name} signature (noble, strict)`, ed.verify(signature, utf8(canonical), key, { zip215: false }), c.valid);
  const atMs = parseRfc3339(c.at)!;
  const keyValid: Record<string, boolean> = { [String(doc.public_key)]: true };
  for (const p of (doc.previous_keys as Array<{ public_key: string; valid_until: string }> | undefined) ?? []) keyValid[p.public_key] = atMs <= parseRfc3339(p.valid_until)!;
  keyValid[carolKey.text] = false;
  for (const [k, expected] of Object.entries(keyValid)) same(`documents ${c.name} key ${k} valid at ${c.at} (core)`, keyValidAt(key, previousKeys(doc), parseKey(k)!, atMs), expected);
  return {
    name: c.name,
    document: doc,
    canonical,
    signature: doc.signature,
    key_valid: keyValid,
    at: c.at,
    valid: c.valid,
    rules: ruleIds('ns.identity-document.format', ...('previous_keys' in doc ? ['ns.identity-document.previous-keys'] : [])),
  };
});
emit(
  'documents',
  'documents',
  'Signed identity documents (project-defined; spec/signing.yaml identity-document): `canonical` is what the signature covers (known fields only, empty optional values left out, `signature` and unknown fields never, keys sorted by code point at every depth, no white space, `<`, `>`, `&`, U+2028 and U+2029 escaped as \\u00XX). `valid` says whether `document.signature` verifies under `document.public_key` over the canonical form of the document as given (false when a field was changed after signing). `key_valid` says, for each key, whether it may verify for this identity at the instant `at`: the current key always, a `previous_keys` entry while `at` is not after its `valid_until`, any other key never.',
  { vectors: documentVectors },
  documentVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Key fingerprints: fingerprints.json

const aliceBare = b64u(aliceKey.pub);
const flipped = Uint8Array.from(aliceKey.pub);
flipped[0] = flipped[0]! ^ 1;
const fingerprintCases: Array<{ name: string; key: string; kind: 'signing' | 'encryption'; normal: string | null }> = [
  { name: 'signing-key', key: aliceKey.text, kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-bare', key: aliceBare, kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-padded', key: `${aliceBare}=`, kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-standard-base64', key: stdBase64(aliceKey.pub), kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-prefixed-standard-base64', key: `ed25519:${stdBase64(aliceKey.pub)}`, kind: 'signing', normal: aliceKey.text },
  { name: 'one-bit-flip', key: `ed25519:${b64u(flipped)}`, kind: 'signing', normal: `ed25519:${b64u(flipped)}` },
  { name: 'all-zero-key', key: `ed25519:${b64u(new Uint8Array(32))}`, kind: 'signing', normal: `ed25519:${b64u(new Uint8Array(32))}` },
  { name: 'same-bytes-as-x25519', key: `x25519:${aliceBare}`, kind: 'encryption', normal: `x25519:${aliceBare}` },
  { name: 'encryption-key', key: recipient.text, kind: 'encryption', normal: recipient.text },
  { name: 'wrong-prefix-for-kind', key: recipient.text, kind: 'signing', normal: null },
  { name: 'malformed', key: 'ed25519:not-base64!!', kind: 'signing', normal: null },
  { name: 'mixed-alphabets', key: `ed25519:${aliceBare.replace('_', '/')}`, kind: 'signing', normal: null },
  { name: 'wrong-length', key: `ed25519:${b64u(utf8('short'))}`, kind: 'signing', normal: null },
  { name: 'empty', key: '', kind: 'signing', normal: null },
];
check(aliceBare.includes('_'), 'the alice key must contain `_` for the mixed-alphabet vector');
const fingerprintVectors = fingerprintCases.map((c) => {
  const fp = c.normal === null ? '' : fingerprintOf(`${NAME}-fingerprint-v1`, c.normal);
  same(`fingerprints ${c.name} (core)`, keyFingerprint(profile, c.key, c.kind) ?? '', fp);
  return { name: c.name, key: c.key, kind: c.kind, fingerprint: fp, valid: c.normal !== null, rules: ruleIds('ra.key-fingerprint') };
});
emit(
  'fingerprints',
  'fingerprints',
  `Key fingerprints (spec/signing.yaml key-fingerprint): SHA-256 over \`${NAME}-fingerprint-v1\` LF and the key re-encoded as \`ed25519:\`/\`x25519:\` (by \`kind\`) plus base64url; four groups of five digits. A key is accepted with or without its own prefix and in any single base64 variant; a key with the other kind's prefix, mixed alphabets, bad characters or not 32 bytes is invalid (empty fingerprint). The same bytes as a signing and as an encryption key give different fingerprints.`,
  { vectors: fingerprintVectors },
  fingerprintVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Pairing (document 3): pairing.json

const pairings = [1, 2, 3].map((n) => {
  const p = pairingInput(n);
  const commitment = digest(lines(`${NAME}/v2/enroll-commit`, p.ephemeral_public_key, p.commit_nonce)).toString('base64url');
  same(`pairing ${n} commitment (core)`, pairingCommitment(profile, p), commitment);
  const sas = sasOf(digest(lines(`${NAME}/v2/enroll-sas`, commitment, p.ephemeral_public_key, p.commit_nonce, p.approver_nonce)));
  same(`pairing ${n} sas (core)`, pairingSas(profile, { ...p, commitment }), sas);
  return {
    name: `pairing-${n}`,
    ephemeral_public_key: p.ephemeral_public_key,
    commit_nonce: p.commit_nonce,
    approver_nonce: p.approver_nonce,
    commitment,
    sas,
    rules: ruleIds('ra.pairing.commitment', 'ra.pairing.sas'),
  };
});
const shortCodeCases: Array<[string, string | null]> = [
  ['K7QM4XP2', 'K7QM4XP2'],
  ['k7qm-4xp2', 'K7QM4XP2'],
  [' K7QM 4XP2 ', 'K7QM4XP2'],
  ['K7QM\u20134XP2', 'K7QM4XP2'],
  ['K7QM\u20144XP2', 'K7QM4XP2'],
  ['K7QM_4XP2', 'K7QM4XP2'],
  ['K7QM.4XP2', 'K7QM4XP2'],
  ['O0IL-1234', '00111234'],
  ['oil0-ilo1', '01101101'],
  ['K7QM-4XP', null],
  ['K7QM-4XP23', null],
  ['K7QU-4XP2', null],
  ['K7QM-4XP!', null],
  ['K7QM/4XP2', null],
  ['', null],
];
const shortCodes = shortCodeCases.map(([input, code]) => {
  same(`pairing short code ${JSON.stringify(input)} (core)`, normalizeShortCode(input) ?? null, code);
  return { input, code: code ?? '', valid: code !== null, rules: ruleIds('ra.pairing.short-code', 'ns.reference.code') };
});
emit(
  'pairing',
  'pairing',
  `Device pairing (document 3, Pairing): \`pairings\` give the commitment (base64url SHA-256 of \`${NAME}/v2/enroll-commit\`, the ephemeral key and the commit nonce, each as base64url text) and the six-digit comparison code (SHA-256 of \`${NAME}/v2/enroll-sas\`, commitment, ephemeral key, commit nonce, approver nonce; first 8 bytes big-endian modulo 10^6). Inputs are SHA-256 of \`${NAME}-conformance/pairing/<n>/<field>\`. \`short_codes\` give the loose reading of the 8-character Crockford base32 rendezvous code: case-insensitive, spaces, dashes of every kind, underscores and dots ignored, O read as 0, I and L as 1; anything else, or another length, is invalid.`,
  { pairings, short_codes: shortCodes },
  pairings.length + shortCodes.length,
);

// ---------------------------------------------------------------------------------------------
// Message sealing: encryption.json

const SEAL_NONCE = bytesOf('seal-nonce');
function nobleOpen(priv: Uint8Array, eph: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined {
  const domain = profile.ids.message_seal_domain;
  try {
    const recipientPub = x25519.getPublicKey(priv);
    const shared = x25519.getSharedSecret(priv, eph);
    const key = hkdf(nobleSha256, shared, new Uint8Array([...eph, ...recipientPub]), utf8(domain), 32);
    return chacha20poly1305(key, nonce, new Uint8Array([...utf8(`${domain}\n`), ...eph, ...recipientPub])).decrypt(ciphertext);
  } catch {
    return undefined;
  }
}
const plaintexts: Array<[string, string]> = [
  ['ascii', 'hello from the svc conformance kit'],
  ['empty', ''],
  ['unicode', 'h\u00e9llo \u2014 \u4e16\u754c \ud83d\udd12'],
  ['long', Array.from({ length: 40 }, (_, i) => `line ${String(i).padStart(2, '0')} of a longer message body\n`).join('')],
];
const encryptionVectors: Json[] = plaintexts.map(([name, message]) => {
  const plaintext = utf8(message);
  const sealed = sealMessage(profile, recipient.pub, plaintext, { ephemeralPrivate: ephemeral.priv, nonce: SEAL_NONCE });
  same(`encryption ${name}: ephemeral key`, b64u(sealed.ephemeralPublicKey), b64u(ephemeral.pub));
  same(`encryption ${name}: ciphertext length`, sealed.ciphertext.length, plaintext.length + 16);
  same(`encryption ${name}: opens (core)`, b64u(openMessage(profile, recipient.priv, sealed) ?? new Uint8Array([0])), b64u(plaintext));
  same(`encryption ${name}: opens (noble)`, b64u(nobleOpen(recipient.priv, sealed.ephemeralPublicKey, sealed.nonce, sealed.ciphertext) ?? new Uint8Array([0])), b64u(plaintext));
  return {
    name,
    recipient_private_key: b64u(recipient.priv),
    recipient_public_key: b64u(recipient.pub),
    plaintext: b64u(plaintext),
    alg: ENC.alg,
    ciphertext: b64u(sealed.ciphertext),
    ephemeral_public_key: b64u(sealed.ephemeralPublicKey),
    nonce: b64u(sealed.nonce),
    valid: true,
    rules: ruleIds('ra.seal.message'),
  };
});
{
  const base = encryptionVectors[0]!;
  const ciphertext = fromB64u(base.ciphertext as string);
  ciphertext[0] = ciphertext[0]! ^ 0x01;
  const sealed = { ciphertext, ephemeralPublicKey: ephemeral.pub, nonce: SEAL_NONCE };
  check(openMessage(profile, recipient.priv, sealed) === undefined, 'encryption flipped-ciphertext-byte: the core opens it');
  check(nobleOpen(recipient.priv, ephemeral.pub, SEAL_NONCE, ciphertext) === undefined, 'encryption flipped-ciphertext-byte: noble opens it');
  encryptionVectors.push({ ...base, name: 'flipped-ciphertext-byte', ciphertext: b64u(ciphertext), valid: false });
}
emit(
  'encryption',
  'encryption',
  `Message sealing (x25519-chacha20-poly1305; rule ra.seal.message): key = HKDF-SHA256(X25519(ephemeral, recipient), salt = ephemeral public key || recipient public key, info = \`${profile.ids.message_seal_domain}\`), AAD = \`${profile.ids.message_seal_domain}\` LF || ephemeral public key || recipient public key, 12-byte nonce, 16-byte tag appended; every value base64url. The ephemeral key and nonce are fixed (fixtures/keys.json ephemeral-x25519, seal-nonce) so the vectors are reproducible; a real sender draws both fresh for every message. \`valid\` false: the ciphertext was altered and must not open.`,
  { vectors: encryptionVectors },
  encryptionVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Public profile documents: profiles.json

const link = (i: number) => ({ label: `link ${i}`, url: `https://example.org/${i}` });
const profileCases: Array<{ name: string; raw: unknown; valid: boolean }> = [
  { name: 'full', raw: { version: 1, display_name: 'Alice', avatar: 'avatar.png', bio: 'builder', links: [{ label: 'site', url: 'https://example.org' }], locale: 'en' }, valid: true },
  { name: 'empty', raw: { version: 1 }, valid: true },
  { name: 'no-version', raw: { display_name: 'Alice' }, valid: true },
  { name: 'display-name-256-bytes', raw: { version: 1, display_name: '\u00e9'.repeat(128) }, valid: true },
  { name: 'display-name-257-bytes', raw: { version: 1, display_name: `${'\u00e9'.repeat(128)}x` }, valid: false },
  { name: 'bio-4096-bytes', raw: { version: 1, bio: 'b'.repeat(4096) }, valid: true },
  { name: 'bio-4097-bytes', raw: { version: 1, bio: 'b'.repeat(4097) }, valid: false },
  { name: 'links-32', raw: { version: 1, links: Array.from({ length: 32 }, (_, i) => link(i)) }, valid: true },
  { name: 'links-33', raw: { version: 1, links: Array.from({ length: 33 }, (_, i) => link(i)) }, valid: false },
  { name: 'link-without-url', raw: { version: 1, links: [{ label: 'site' }] }, valid: false },
  { name: 'link-with-blank-url', raw: { version: 1, links: [{ label: 'site', url: '  ' }] }, valid: false },
  { name: 'avatar-webp', raw: { version: 1, avatar: 'me_2026-01.webp' }, valid: true },
  { name: 'avatar-off-tree', raw: { version: 1, avatar: 'https://cdn.example.org/a.png' }, valid: false },
  { name: 'avatar-path', raw: { version: 1, avatar: 'public/avatar.png' }, valid: false },
  { name: 'avatar-parent-path', raw: { version: 1, avatar: '../avatar.png' }, valid: false },
  { name: 'avatar-not-an-image', raw: { version: 1, avatar: 'avatar.svg' }, valid: false },
  { name: 'identity-page-defaults', raw: { version: 1, identity_page: {} }, valid: true },
  { name: 'identity-page-opt-outs', raw: { version: 1, identity_page: { enabled: false, indexable: false, advertise_anonymous_messages: true } }, valid: true },
  { name: 'identity-page-bad-boolean', raw: { version: 1, identity_page: { enabled: 'no' } }, valid: false },
  { name: 'identity-page-null', raw: { version: 1, identity_page: null }, valid: false },
  { name: 'bad-version', raw: { version: 2 }, valid: false },
  { name: 'not-an-object', raw: ['display_name', 'Alice'], valid: false },
];
const profileVectors = profileCases.map((c) => {
  same(`profiles ${c.name} (core)`, checkProfileDocument(c.raw).ok, c.valid);
  return { name: c.name, raw: c.raw, valid: c.valid, rules: ruleIds('ob.profile.document') };
});
emit(
  'profiles',
  'profiles',
  'Public profile documents (rule ob.profile.document): version 1 or none; display_name at most 256 bytes; bio at most 4096 bytes; at most 32 links, each with a non-blank url; avatar a bare image file name (png, jpg, jpeg, webp, gif); identity_page an object of booleans. Unknown fields (such as `locale`) are allowed.',
  { vectors: profileVectors },
  profileVectors.length,
);

// ---------------------------------------------------------------------------------------------
// The encoded request (document 1, Encoded form): requests.json

const ajv = makeAjv();
const requestSchema = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/json/objects/request.schema.json'), 'utf8')) as object);
const baseRequest = (name: string): Json => ({
  [AUTH]: '1',
  request_id: `req-${name}`,
  audience: ORIGIN,
  nonce: b64u(derived(`${NAME}-conformance/request-nonce/${name}`, limits.nonce_entropy_min_bytes)),
  issued_at: at(0),
  expires_at: at(limits.window_max_seconds),
  action: 'signin',
});
const requestCases: Array<{ name: string; request: Json }> = [
  { name: 'minimal', request: baseRequest('minimal') },
  { name: 'full', request: { ...baseRequest('full'), domain: 'rp.example.com', statement: STATEMENT, response_uri: `${ORIGIN}/${NAME}/response`, scopes: ['messages:send', 'profile:read'] } },
  { name: 'login-only-empty-scopes', request: { ...baseRequest('login-only'), action: 'signup', scopes: [] } },
  { name: 'unicode-statement', request: { ...baseRequest('unicode'), statement: 'Se connecter \u00e0 l\u2019exemple \u2014 \u4f8b \ud83d\udd11?>' } },
];
const padded = (s: string) => s + '='.repeat((4 - (s.length % 4)) % 4);
const requestVectors = requestCases.map((c) => {
  check(requestSchema(c.request), `requests ${c.name}: not a valid request object: ${ajv.errorsText(requestSchema.errors)}`);
  const json = compactJson(c.request);
  const encoded = Buffer.from(json, 'utf8').toString('base64url');
  same(`requests ${c.name} encoded (core)`, encodeObject(c.request), encoded);
  const forms = { raw_json: json, padded_base64url: padded(encoded), standard_base64: Buffer.from(json, 'utf8').toString('base64') };
  for (const [form, textForm] of Object.entries({ encoded, ...forms })) {
    const decoded = decodeObject(textForm);
    same(`requests ${c.name} decoded from ${form} (core)`, decoded.ok ? decoded.value : decoded.reason, c.request);
  }
  return { name: c.name, request: c.request, encoded, forms, rules: ruleIds('ns.encoding.compact', 'ns.encoding.decode') };
});
check(
  requestVectors.some((v) => /[+/]/.test(v.forms.standard_base64)),
  'requests: no vector where standard base64 differs from base64url',
);
check(
  requestVectors.some((v) => v.forms.padded_base64url !== v.encoded),
  'requests: no vector that needs padding',
);
const DECODE_REASON: Record<string, string> = { 'neither JSON nor base64': 'not-base64', 'decoded bytes are not UTF-8': 'not-utf8', 'not valid JSON': 'not-json', 'not a JSON object': 'not-object' };
const invalidRequests: Array<{ name: string; input: string; reason: string }> = [
  { name: 'not-base64', input: '%%% not base64 %%%', reason: 'not-base64' },
  { name: 'mixed-base64-alphabets', input: `${requestVectors[0]!.encoded.slice(0, 8)}-+${requestVectors[0]!.encoded.slice(10)}`, reason: 'not-base64' },
  { name: 'not-utf8', input: b64u(new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])), reason: 'not-utf8' },
  { name: 'not-json', input: b64u(utf8('hello, not json')), reason: 'not-json' },
  { name: 'raw-json-truncated', input: compactJson(requestCases[0]!.request).slice(0, 20), reason: 'not-json' },
  { name: 'json-array', input: b64u(utf8(JSON.stringify([AUTH, '1']))), reason: 'not-object' },
  { name: 'json-string', input: b64u(utf8(JSON.stringify('svc'))), reason: 'not-object' },
  { name: 'json-null', input: b64u(utf8('null')), reason: 'not-object' },
];
const invalid = invalidRequests.map((c) => {
  const decoded = decodeObject(c.input);
  check(!decoded.ok, `requests invalid ${c.name}: the core decodes it`);
  same(`requests invalid ${c.name} reason (core: ${decoded.ok ? '' : decoded.reason})`, decoded.ok ? undefined : DECODE_REASON[decoded.reason], c.reason);
  return { name: c.name, input: c.input, reason: c.reason, rules: ruleIds('ns.encoding.decode') };
});
emit(
  'requests',
  'requests',
  'The encoded form of a request (document 1, Encoded form): `encoded` is the compact JSON of `request` (keys in the order given) in base64url without padding; a decoder also accepts each of `forms` (`raw_json`, `padded_base64url`, `standard_base64`) and must get back exactly `request`. `invalid` inputs must be refused; `reason` says why: not-base64 (neither JSON nor any single base64 variant), not-utf8, not-json, not-object (valid JSON that is not an object).',
  { vectors: requestVectors, invalid },
  requestVectors.length + invalid.length,
);

// ---------------------------------------------------------------------------------------------
// Session proofs (document 1, Session proof): session-proofs.json

const proofKeysAt = (t: number) => [aliceKey.pub, ...(alice.previous_keys ?? []).filter((p) => t <= parseRfc3339(p.valid_until)!).map((p) => edKey(p.key).pub)];
const withoutField = (p: Json, field: string): Json => Object.fromEntries(Object.entries(p).filter(([k]) => k !== field));
const sessionPub = b64u(sessionKey.pub);
check(/[-_]/.test(sessionPub), 'the session key must contain - or _ so its standard base64 form differs');
const reSigned = (fields: Json): Json => {
  // Signed over the key re-encoded as base64url without padding, whatever form the proof carries.
  const signed = registrationString(ALICE, sessionPub, String(fields.issued_at), String(fields.expires_at), String(fields.nonce));
  return { ...fields, identity_signature: b64u(signEd25519(aliceKey.seed, signed)) };
};
const flippedSignature = (() => {
  const s = fromB64u(fixtureProof.identity_signature as string);
  s[10] = s[10]! ^ 0x20;
  return b64u(s);
})();
const shortKey = b64u(sessionKey.pub.subarray(0, 31));
const proofCases: Array<{ name: string; proof: Json; now?: string; rule: string | null; rules?: string[] }> = [
  { name: 'valid', proof: fixtureProof, rule: null },
  { name: 'valid-at-expires-at', proof: fixtureProof, now: session.expires_at, rule: null },
  { name: 'expired', proof: fixtureProof, now: formatRfc3339(parseRfc3339(session.expires_at)! + 1000), rule: 'ns.session-proof.validation' },
  {
    name: 'ttl-exactly-24-hours',
    proof: makeProof({ issuedAt: session.issued_at, expiresAt: formatRfc3339(parseRfc3339(session.issued_at)! + limits.session_ttl_max_seconds * 1000), nonce: b64u(utf8('session-nonce-24h')) }),
    rule: null,
    rules: ['ns.session-proof.ttl', 'ns.limits.session-ttl'],
  },
  { name: 'ttl-24-hours-plus-1-second', proof: longProof, rule: 'ns.session-proof.ttl', rules: ['ns.limits.session-ttl'] },
  {
    name: 'expires-before-issued',
    proof: makeProof({ issuedAt: session.expires_at, expiresAt: session.issued_at, nonce: b64u(utf8('session-nonce-backwards')) }),
    rule: 'ns.session-proof.validation',
  },
  { name: 'missing-nonce', proof: withoutField(fixtureProof, 'nonce'), rule: 'ns.session-proof.fields' },
  { name: 'missing-identity-signature', proof: withoutField(fixtureProof, 'identity_signature'), rule: 'ns.session-proof.fields' },
  { name: 'empty-session-public-key', proof: { ...fixtureProof, session_public_key: '' }, rule: 'ns.session-proof.fields' },
  { name: 'not-rfc3339-issued-at', proof: reSigned({ ...fixtureProof, issued_at: '2026-01-15 08:00:00' }), rule: 'ns.session-proof.validation' },
  { name: 'not-rfc3339-expires-at-no-zone', proof: reSigned({ ...fixtureProof, expires_at: '2026-01-15T20:00:00' }), rule: 'ns.session-proof.validation' },
  { name: 'session-key-31-bytes', proof: { ...reSigned(fixtureProof), session_public_key: shortKey }, rule: 'ns.session-proof.key-encoding' },
  { name: 'session-key-not-base64', proof: { ...fixtureProof, session_public_key: `${sessionPub.slice(0, 40)}!!!` }, rule: 'ns.session-proof.key-encoding' },
  { name: 'bad-signature', proof: { ...fixtureProof, identity_signature: flippedSignature }, rule: 'ns.session-proof.signature' },
  { name: 'signed-by-the-session-key', proof: makeProof({ issuedAt: session.issued_at, expiresAt: session.expires_at, nonce: session.nonce, signer: sessionKey }), rule: 'ns.session-proof.signature' },
  { name: 'signed-by-another-identity', proof: makeProof({ issuedAt: session.issued_at, expiresAt: session.expires_at, nonce: session.nonce, signer: bobKey }), rule: 'ns.session-proof.signature' },
  { name: 'session-key-padded-base64url', proof: { ...fixtureProof, session_public_key: `${sessionPub}=` }, rule: null, rules: ['ns.session-proof.key-encoding'] },
  { name: 'session-key-standard-base64', proof: { ...fixtureProof, session_public_key: stdBase64(sessionKey.pub) }, rule: null, rules: ['ns.session-proof.key-encoding'] },
  {
    name: 'identity-signature-standard-base64',
    proof: { ...fixtureProof, identity_signature: stdBase64(fromB64u(fixtureProof.identity_signature as string)) },
    rule: null,
    rules: ['ns.session-proof.signature'],
  },
];
const proofVectors = proofCases.map((c) => {
  const nowText = c.now ?? NOW_TEXT;
  const result = checkSessionProof(profile, ALICE, c.proof, parseRfc3339(nowText)!, proofKeysAt);
  same(`session-proofs ${c.name} valid (core${result.ok ? '' : `: ${result.rule} ${result.detail}`})`, result.ok, c.rule === null);
  if (!result.ok) same(`session-proofs ${c.name} failing rule (core: ${result.detail})`, result.rule, c.rule);
  const v: Json = { name: c.name, proof: c.proof, now: nowText, valid: c.rule === null };
  if (c.rule !== null) v.rule = c.rule;
  v.rules = ruleIds(...(c.rule ? [c.rule] : ['ns.session-proof.fields', 'ns.session-proof.validation', 'ns.session-proof.signature']), ...(c.rules ?? []), 'ns.session-proof.signed-lines');
  return v;
});
emit(
  'session-proofs',
  'session-proofs',
  `Session proofs (document 1, Session proof), checked for \`identity\` whose long-lived key is \`identity_key\`, at the vector's \`now\`: complete (five non-empty string fields), RFC 3339 timestamps, expires_at later than issued_at, not expired (now at most expires_at), span at most ${limits.session_ttl_max_seconds / 3600} hours, session_public_key 32 bytes in any base64 variant, and identity_signature (any base64 variant) over the session-registration lines with the session key re-encoded as base64url without padding. \`rule\` is the ns.session-proof.* rule that rejects an invalid proof.`,
  { identity: ALICE, identity_key: aliceKey.text, vectors: proofVectors },
  proofVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Audience normalization (document 1, Request object `audience`): audience.json

const audienceCases: Array<{ name: string; input: string; origin: string | null; rules?: string[] }> = [
  { name: 'normalized', input: ORIGIN, origin: ORIGIN },
  { name: 'upper-case-host', input: 'https://RP.Example.COM', origin: ORIGIN },
  { name: 'upper-case-scheme', input: 'HTTPS://rp.example.com', origin: ORIGIN },
  { name: 'default-port', input: 'https://rp.example.com:443', origin: ORIGIN },
  { name: 'http-default-port', input: 'http://rp.example.com:80', origin: 'http://rp.example.com', rules: ['ns.request.audience-http-dev'] },
  { name: 'explicit-non-default-port', input: 'https://rp.example.com:8443', origin: 'https://rp.example.com:8443' },
  { name: 'https-on-port-80', input: 'https://rp.example.com:80', origin: 'https://rp.example.com:80' },
  { name: 'trailing-slash', input: 'https://rp.example.com/', origin: ORIGIN },
  { name: 'path', input: 'https://rp.example.com/login', origin: null },
  { name: 'query', input: 'https://rp.example.com?next=/', origin: null },
  { name: 'empty-query', input: 'https://rp.example.com/?', origin: null },
  { name: 'fragment', input: 'https://rp.example.com#top', origin: null },
  { name: 'userinfo', input: 'https://user@rp.example.com', origin: null },
  { name: 'userinfo-with-password', input: 'https://user:secret@rp.example.com', origin: null },
  { name: 'http', input: 'http://localhost:3000', origin: 'http://localhost:3000', rules: ['ns.request.audience-http-dev'] },
  { name: 'ftp', input: 'ftp://rp.example.com', origin: null },
  { name: 'no-scheme', input: 'rp.example.com', origin: null },
  { name: 'no-host', input: 'https://', origin: null },
  { name: 'unicode-host', input: 'https://b\u00fccher.example', origin: null },
  { name: 'empty', input: '', origin: null },
];
const audienceVectors = audienceCases.map((c) => {
  same(`audience ${c.name} (core)`, normalizeOrigin(c.input) ?? null, c.origin);
  return { name: c.name, input: c.input, origin: c.origin, rules: ruleIds('ns.request.audience', ...(c.rules ?? [])) };
});
emit(
  'audience',
  'audience',
  "Audience normalization (document 1, Request object `audience`; verification rule 2 compares the normalized audience with the verifier's origin): lower-case scheme and host, default port dropped (443 for https, 80 for http), a lone trailing `/` dropped; anything with a path, query (even an empty `?`), fragment or userinfo, a scheme other than http(s), no host or a non-ASCII host has no origin (`origin` null). `http` normalizes here; that it is for development only is a separate policy (ns.request.audience-http-dev).",
  { vectors: audienceVectors },
  audienceVectors.length,
);

// ---------------------------------------------------------------------------------------------
// Ed25519 strictness (spec/signing.yaml ed25519): ed25519.json

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const P = 2n ** 255n - 19n;
const le = (n: bigint, length = 32): Uint8Array => {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    out[i] = Number(n & 255n);
    n >>= 8n;
  }
  return out;
};
const fromLe = (b: Uint8Array): bigint => {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
};
const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));
const hram = (r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint => fromLe(sha512(concat(r, a, m)));
const extended = ed.utils.getExtendedPublicKey(aliceKey.seed);
same('ed25519: noble scalar point is the alice key', b64u(extended.pointBytes), b64u(aliceKey.pub));
const scalar = extended.scalar;
const A = extended.point;
const T8 = ed.Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
check(!T8.is0() && T8.multiply(8n, false).is0() && !T8.multiply(4n, false).is0(), 'ed25519: T8 is not of order 8');
const IDENTITY = ed.Point.ZERO.toBytes();
const rScalar = (name: string): bigint => fromLe(sha512(utf8(`${NAME}-conformance/ed25519/r/${name}`))) % L;
const MSG = (name: string) => `${NAME}-conformance ed25519 vector: ${name}`;

/** Whether [S]B = R + [k]A holds with lenient decoding (any y, k reduced mod L), and with the cofactor. */
function equations(pub: Uint8Array, message: string, sig: Uint8Array): { cofactorless: boolean; cofactored: boolean } {
  let Ap: ed.Point;
  let Rp: ed.Point;
  try {
    Ap = ed.Point.fromBytes(pub, true);
    Rp = ed.Point.fromBytes(sig.subarray(0, 32), true);
  } catch {
    return { cofactorless: false, cofactored: false };
  }
  const S = fromLe(sig.subarray(32)) % L;
  const k = hram(sig.subarray(0, 32), pub, utf8(message)) % L;
  const lhs = ed.Point.BASE.multiply(S, false);
  const rhs = Rp.add(Ap.multiply(k, false));
  return { cofactorless: lhs.equals(rhs), cofactored: lhs.subtract(rhs).multiply(8n, false).is0() };
}
/** The first message `<base> #i` whose challenge hash is a multiple of `m`, both reduced mod L and not. */
function messageWithChallenge(base: string, r: Uint8Array, pub: Uint8Array, m: bigint): string {
  for (let i = 0; i < 10_000; i++) {
    const message = `${base} #${i}`;
    const h = hram(r, pub, utf8(message));
    if (h % m === 0n && (h % L) % m === 0n) return message;
  }
  return fail(`ed25519: no message found for ${base}`);
}

interface EdCase {
  name: string;
  pub: Uint8Array;
  message: string;
  sig: Uint8Array;
  valid: boolean;
  rule?: string;
  holds?: 'cofactorless' | 'cofactored-only';
}
const edCases: EdCase[] = [];
{
  const message = MSG('valid');
  const sig = signEd25519(aliceKey.seed, message);
  edCases.push({ name: 'valid', pub: aliceKey.pub, message, sig, valid: true, holds: 'cofactorless' });
  const S = fromLe(sig.subarray(32));
  edCases.push({ name: 's-plus-l', pub: aliceKey.pub, message, sig: concat(sig.subarray(0, 32), le(S + L)), valid: false, rule: 's-canonical', holds: 'cofactorless' });
  edCases.push({ name: 's-equals-l', pub: aliceKey.pub, message, sig: concat(sig.subarray(0, 32), le(L)), valid: false, rule: 's-canonical' });
  edCases.push({ name: 's-all-ones', pub: aliceKey.pub, message, sig: concat(sig.subarray(0, 32), new Uint8Array(32).fill(0xff)), valid: false, rule: 's-canonical' });
  edCases.push({ name: 'wrong-message', pub: aliceKey.pub, message: `${message}!`, sig, valid: false });
  edCases.push({ name: 'signature-63-bytes', pub: aliceKey.pub, message, sig: sig.subarray(0, 63), valid: false });
  edCases.push({ name: 'signature-65-bytes', pub: aliceKey.pub, message, sig: concat(sig, new Uint8Array([0])), valid: false });
  edCases.push({ name: 'public-key-31-bytes', pub: aliceKey.pub.subarray(0, 31), message, sig, valid: false });
}
{
  // Small-order public keys with R = identity and S = 0: the cofactorless equation holds.
  const zeroSig = concat(IDENTITY, new Uint8Array(32));
  edCases.push({ name: 'small-order-key-identity', pub: IDENTITY, message: MSG('small-order-key-identity'), sig: zeroSig, valid: false, rule: 'a-not-small-order', holds: 'cofactorless' });
  const zeroKey = new Uint8Array(32); // y = 0: a point of order 4
  edCases.push({
    name: 'small-order-key-all-zero',
    pub: zeroKey,
    message: messageWithChallenge(MSG('small-order-key-all-zero'), IDENTITY, zeroKey, 4n),
    sig: zeroSig,
    valid: false,
    rule: 'a-not-small-order',
    holds: 'cofactorless',
  });
  const t8 = T8.toBytes();
  edCases.push({
    name: 'small-order-key-order-8',
    pub: t8,
    message: messageWithChallenge(MSG('small-order-key-order-8'), IDENTITY, t8, 8n),
    sig: zeroSig,
    valid: false,
    rule: 'a-not-small-order',
    holds: 'cofactorless',
  });
  const nonCanonical = le(P + 1n); // y = p + 1, the identity encoded non-canonically
  edCases.push({ name: 'non-canonical-key-y-p-plus-1', pub: nonCanonical, message: MSG('non-canonical-key-y-p-plus-1'), sig: zeroSig, valid: false, rule: 'a-canonical', holds: 'cofactorless' });
}
{
  // R = identity encoded non-canonically (y = p + 1), S = k·a: holds once R is decoded leniently.
  const R = le(P + 1n);
  const message = MSG('non-canonical-r');
  const S = ((hram(R, aliceKey.pub, utf8(message)) % L) * scalar) % L;
  edCases.push({ name: 'non-canonical-r', pub: aliceKey.pub, message, sig: concat(R, le(S)), valid: false, rule: 'r-canonical', holds: 'cofactorless' });
}
{
  // R = rB + T8, S = r + k·a: only the cofactored equation holds.
  const r = rScalar('valid-only-with-cofactor');
  const R = ed.Point.BASE.multiply(r).add(T8).toBytes();
  const message = MSG('valid-only-with-cofactor');
  const S = (r + (hram(R, aliceKey.pub, utf8(message)) % L) * scalar) % L;
  edCases.push({ name: 'valid-only-with-cofactor', pub: aliceKey.pub, message, sig: concat(R, le(S)), valid: false, rule: 'cofactorless', holds: 'cofactored-only' });
}
{
  // Mixed-order key A + T8 and a challenge k ≡ 0 (mod 8): the cofactorless equation holds.
  const mixed = A.add(T8).toBytes();
  const r = rScalar('mixed-order-key');
  const R = ed.Point.BASE.multiply(r).toBytes();
  const message = messageWithChallenge(MSG('mixed-order-key'), R, mixed, 8n);
  const S = (r + (hram(R, mixed, utf8(message)) % L) * scalar) % L;
  edCases.push({ name: 'mixed-order-key', pub: mixed, message, sig: concat(R, le(S)), valid: true, rule: 'mixed-order-accepted', holds: 'cofactorless' });
}
{
  // R = identity, S = k·a: [S]B = [k]A = R + [k]A.
  const message = MSG('identity-r');
  const S = ((hram(IDENTITY, aliceKey.pub, utf8(message)) % L) * scalar) % L;
  edCases.push({ name: 'identity-r', pub: aliceKey.pub, message, sig: concat(IDENTITY, le(S)), valid: true, rule: 'mixed-order-accepted', holds: 'cofactorless' });
}
const edRules = new Set((signingSpec.ed25519.rules as ReadonlyArray<{ id: string }>).map((r) => r.id));
const edVectors = edCases.map((c) => {
  if (c.rule) check(edRules.has(c.rule), `ed25519 ${c.name}: ${c.rule} is not a rule of spec/signing.yaml ed25519`);
  if (c.holds) {
    const eq = equations(c.pub, c.message, c.sig);
    if (c.holds === 'cofactorless') check(eq.cofactorless, `ed25519 ${c.name}: the construction is wrong, the cofactorless equation does not hold`);
    else check(!eq.cofactorless && eq.cofactored, `ed25519 ${c.name}: the construction is wrong, it must hold only with the cofactor`);
  }
  const core = verifyEd25519(c.pub, c.message, c.sig);
  // A disagreement here is a bug in protocol/ed25519.ts: stop, do not bend the vector.
  check(core === c.valid, `ed25519 ${c.name}: protocol/ed25519.ts verifyEd25519 says ${core}, spec/signing.yaml ed25519 (${c.rule ?? 'RFC 8032'}) says ${c.valid}`);
  const v: Json = { name: c.name, public_key: b64u(c.pub), message: c.message, signature: b64u(c.sig), valid: c.valid };
  if (c.rule) v.rule = c.rule;
  v.rules = ruleIds('ns.ed25519.strict');
  return v;
});
emit(
  'ed25519',
  'ed25519',
  'Ed25519 verification edge cases pinning spec/signing.yaml `ed25519` (strict RFC 8032, cofactorless; rule ns.ed25519.strict). `public_key` and `signature` are base64url of the raw bytes, `message` the UTF-8 text signed. `rule` names the entry of spec/signing.yaml ed25519.rules the vector pins: s-canonical (S >= L rejected), a-canonical (public key y >= p rejected), a-not-small-order (keys of order dividing 8 rejected), r-canonical (R compared byte for byte, a non-canonical R rejected), cofactorless (a signature valid only under the cofactored equation rejected), mixed-order-accepted (a key with a torsion component, or R = identity, accepted when [S]B = R + [k]A holds). Where a vector is rejected by one rule only, every other check passes: the equation holds when the encodings are decoded leniently. Vectors without `rule` are plain RFC 8032 behaviour.',
  { vectors: edVectors },
  edVectors.length,
);

// ---------------------------------------------------------------------------------------------

const check_ = process.argv.includes('--check');
process.exitCode = writeOrCheck(outputs, check_, 'vectors', 'npm run vectors');
if (!check_) for (const [file, n] of counts) process.stdout.write(`  vectors/${file}.json: ${n}\n`);
