// Envelopes and signatures the harness's relay client produces, built from spec/signing.yaml:
// messages (sealed with message-seal-v1 by the harness's own noble implementation, signed by the
// identity key or a session key), acks, admin envelopes, signed-request headers and challenge
// answers. Signatures are sent as standard base64 ("base64" in document 3); keys as base64url.
// Ed25519 signatures are deterministic, so they are made on node:crypto (the protocol core's,
// held to noble on every vector): noble took a run seconds of CPU to make the same bytes.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { canonicalString } from '../../../protocol/common/canonical.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import { signDocument } from '../../../protocol/common/document.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { formatRfc3339 } from '../../../protocol/common/time.ts';
import { publicKeyFromSeed as publicKey, signEd25519 as sign } from '../../../protocol/common/ed25519.ts';
import { sealMessage, sha256 } from '../../impl/noble.ts';

/** A test identity as the relay client holds it: signing seed, and an X25519 key pair for mail. */
export interface RelayIdentity {
  identity: string;
  seed: Uint8Array;
  encryption: { privateKey: Uint8Array; publicKey: Uint8Array };
}

/** A session key registered with POST /sessions (or only proven by a session proof). */
export interface SessionKey {
  seed: Uint8Array;
  sessionId?: string;
  proof?: Record<string, string>;
}

export type Envelope = Record<string, unknown>;

export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
export const newNonce = (bytes = 16): string => randomBytes(bytes).toString('base64url');
export const now = (offsetS = 0): string => formatRfc3339(Date.now() + offsetS * 1000);

/** A fresh X25519 key pair, raw 32 bytes each (OpenSSL's generator: noble's took ten times as long). */
function x25519KeyPair(): { privateKey: Uint8Array; publicKey: Uint8Array } {
  const jwk = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
  return { privateKey: new Uint8Array(Buffer.from(jwk.d!, 'base64url')), publicKey: new Uint8Array(Buffer.from(jwk.x!, 'base64url')) };
}

export function newRelayIdentity(identity: string, seed: Uint8Array = new Uint8Array(randomBytes(32))): RelayIdentity {
  return { identity, seed, encryption: x25519KeyPair() };
}

export function signingKey(id: RelayIdentity): string {
  return encodeBase64url(publicKey(id.seed));
}

/** The message, sealed for `recipientKey` and signed (ra.signing.message, ra.seal.message). */
export function message(
  profile: Profile,
  from: RelayIdentity,
  to: string,
  recipientKey: Uint8Array,
  plaintext: string,
  options: { id?: string; session?: SessionKey; timestamp?: string; type?: string; expiresAt?: string } = {},
): Envelope {
  const sealed = sealMessage(profile.ids.message_seal_domain, recipientKey, new TextEncoder().encode(plaintext));
  const envelope: Envelope = {
    id: options.id ?? `m_${newNonce(12)}`,
    sender: from.identity,
    recipient: to,
    timestamp: options.timestamp ?? now(),
    payload: encodeBase64url(sealed.ciphertext),
    encryption: { alg: 'x25519-chacha20-poly1305', ephemeral_public_key: encodeBase64url(sealed.ephemeral), nonce: encodeBase64url(sealed.nonce) },
  };
  // Signed as the `type:` and `expires:` lines (spec/signing.yaml, the message's optional lines).
  if (options.type !== undefined) envelope.type = options.type;
  if (options.expiresAt !== undefined) envelope.expires_at = options.expiresAt;
  if (options.session?.sessionId) envelope.session_id = options.session.sessionId;
  if (options.session?.proof) envelope.session_proof = options.session.proof;
  return signEnvelope(profile, 'message', envelope, options.session?.seed ?? from.seed);
}

/** An ack of `messageId` by its recipient `from`, to the original sender (ra.signing.ack). */
export function ack(profile: Profile, from: RelayIdentity, to: string, messageId: string, options: { state?: string; session?: SessionKey } = {}): Envelope {
  const envelope: Envelope = { type: 'ack', id: `a_${newNonce(12)}`, message_id: messageId, state: options.state ?? 'delivered_client', sender: from.identity, recipient: to, timestamp: now() };
  if (options.session?.sessionId) envelope.session_id = options.session.sessionId;
  if (options.session?.proof) envelope.session_proof = options.session.proof;
  return signEnvelope(profile, 'ack', envelope, options.session?.seed ?? from.seed);
}

export function signEnvelope(profile: Profile, kind: 'message' | 'ack', envelope: Envelope, seed: Uint8Array): Envelope {
  const { signature: _drop, ...unsigned } = envelope;
  void _drop;
  return { ...unsigned, signature: b64(sign(seed, canonicalString(profile, kind, unsigned))) };
}

/** `issued_at`, `nonce` and `identity_signature` over the named admin string (Authentication 4). */
export function adminEnvelope(
  profile: Profile,
  name: 'session-registration' | 'session-revocation' | 'identity-registration' | 'identity-export' | 'keystore-enroll' | 'keystore-list' | 'keystore-remove' | 'enroll-fetch' | 'enroll-deliver',
  fields: Record<string, unknown>,
  seed: Uint8Array,
  issuedAt = now(),
  nonce = newNonce(),
): Record<string, string> {
  const signed = { ...fields, issued_at: issuedAt, nonce };
  return { issued_at: issuedAt, nonce, identity_signature: b64(sign(seed, canonicalString(profile, name, signed))) };
}

/** The hosted registration body for `id` at a relay whose address is `relayAddress` (POST /identities). */
export function registration(profile: Profile, id: RelayIdentity, relayAddress: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const public_key = signingKey(id);
  const encryption_public_key = encodeBase64url(id.encryption.publicKey);
  const identity_document = signDocument({ version: 1, identity: id.identity, public_key, encryption_public_key, relay: relayAddress, updated_at: now() }, id.seed);
  const envelope = adminEnvelope(profile, 'identity-registration', { identity: id.identity, public_key, encryption_public_key, relay_address: relayAddress }, id.seed);
  return { identity: id.identity, public_key, encryption_public_key, identity_document, ...envelope, ...extra };
}

/** POST /sessions body: a session key for `id` living `ttlS` seconds. */
export function sessionRegistration(profile: Profile, id: RelayIdentity, sessionSeed: Uint8Array, ttlS = 3600, issuedAt = now()): Record<string, string> {
  const expires_at = formatRfc3339(Date.parse(issuedAt) + ttlS * 1000);
  const session_public_key = encodeBase64url(publicKey(sessionSeed));
  const nonce = newNonce();
  const signed = { identity: id.identity, session_public_key, issued_at: issuedAt, expires_at, nonce };
  return { ...signed, identity_signature: b64(sign(id.seed, canonicalString(profile, 'session-registration', signed))) };
}

/** The session proof of document 1 (also accepted on relay envelopes). */
export function sessionProof(profile: Profile, id: RelayIdentity, sessionSeed: Uint8Array, ttlS = 3600, issuedAt = now()): Record<string, string> {
  const { identity: _i, ...proof } = sessionRegistration(profile, id, sessionSeed, ttlS, issuedAt);
  void _i;
  return proof;
}

export interface SignedRequestInput {
  identity: string;
  seed: Uint8Array;
  method: string;
  /** Path and query exactly as sent. */
  path: string;
  body?: string | Uint8Array;
  sessionId?: string;
  /** Unix seconds (default now); a string is sent and signed as it is (a malformed one, say). */
  timestamp?: number | string;
  nonce?: string;
}

/** The `X-Svc-*` headers of a signed request (ra.signed-request). */
export function signedRequestHeaders(profile: Profile, input: SignedRequestInput): Record<string, string> {
  const ids = profile.ids;
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = input.nonce ?? newNonce(18);
  const body = input.body ?? '';
  const body_sha256 = Buffer.from(sha256(typeof body === 'string' ? new TextEncoder().encode(body) : body)).toString('hex');
  const line = canonicalString(profile, 'signed-request', { identity: input.identity, method: input.method, path: input.path, timestamp, nonce, body_sha256 });
  return {
    [ids.header_identity.toLowerCase()]: input.identity,
    [ids.header_timestamp.toLowerCase()]: timestamp,
    [ids.header_nonce.toLowerCase()]: nonce,
    [ids.header_signature.toLowerCase()]: b64(sign(input.seed, line)),
    ...(input.sessionId ? { [ids.header_session_id.toLowerCase()]: input.sessionId } : {}),
  };
}

/** Challenge-and-response headers (Authentication 2): the challenge named in X-Svc-Challenge. */
export function challengeHeaders(profile: Profile, identity: string, challenge: string, seed: Uint8Array, sessionId?: string, named = true): Record<string, string> {
  const ids = profile.ids;
  return {
    [ids.header_identity.toLowerCase()]: identity,
    [ids.header_signature.toLowerCase()]: b64(sign(seed, canonicalString(profile, 'challenge', { challenge }))),
    ...(named ? { [ids.header_challenge.toLowerCase()]: challenge } : {}),
    ...(sessionId ? { [ids.header_session_id.toLowerCase()]: sessionId } : {}),
  };
}

/**
 * A rotation of `id`'s key to `newSeed`'s (POST /identities/:id/rotate): the new document signed by
 * the new key, listing the old key in previous_keys for an hour, and the old key's signature over
 * the identity-rotation lines.
 */
export function rotation(profile: Profile, id: RelayIdentity, relayAddress: string, newSeed: Uint8Array): Record<string, string | Record<string, unknown>> {
  const oldKey = signingKey(id);
  const newKey = encodeBase64url(publicKey(newSeed));
  const issued_at = now();
  const nonce = newNonce();
  const document = signDocument(
    {
      version: 1,
      identity: id.identity,
      public_key: newKey,
      encryption_public_key: encodeBase64url(id.encryption.publicKey),
      relay: relayAddress,
      previous_keys: [{ public_key: oldKey, valid_until: now(3600) }],
      updated_at: issued_at,
    },
    newSeed,
  );
  const lines = canonicalString(profile, 'identity-rotation', { identity: id.identity, old_public_key: oldKey, new_public_key: newKey, issued_at, nonce });
  return { identity_document: document, new_public_key: newKey, rotation_signature: b64(sign(id.seed, lines)), issued_at, nonce };
}
