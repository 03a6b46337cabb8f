// The session proof (ns.session-proof.*): completeness, RFC 3339, expiry, the 24-hour TTL cap,
// key encoding and the identity signature over the session-registration lines.
import { limits } from '../../schemas/ts/limits.ts';
import type { Profile } from '../common/profile.ts';
import { canonicalString } from '../common/canonical.ts';
import { decodeBase64Any, encodeBase64url } from '../common/base64.ts';
import { parseKey } from '../common/keys.ts';
import { parseRfc3339 } from '../common/time.ts';
import { verifyEd25519 } from '../common/ed25519.ts';

export const proofFields = ['session_public_key', 'issued_at', 'expires_at', 'nonce', 'identity_signature'] as const;

export type ProofCheck = { ok: true; sessionKey: Uint8Array; issuedAt: number; expiresAt: number } | { ok: false; rule: string; detail: string };

/**
 * Checks `proof` for `identity` at `now`. `identityKeysAt(t)` gives the identity keys valid at
 * time t (the current key and previous keys still in their grace window).
 */
export function checkSessionProof(profile: Profile, identity: string, proof: unknown, now: number, identityKeysAt: (t: number) => readonly Uint8Array[]): ProofCheck {
  if (proof === null || typeof proof !== 'object' || Array.isArray(proof)) return { ok: false, rule: 'ns.session-proof.fields', detail: 'session_proof must be an object' };
  const p = proof as Record<string, unknown>;
  const missing = proofFields.find((f) => typeof p[f] !== 'string' || p[f] === '');
  if (missing) return { ok: false, rule: 'ns.session-proof.fields', detail: `session_proof.${missing} is required` };
  const issuedAt = parseRfc3339(p.issued_at);
  const expiresAt = parseRfc3339(p.expires_at);
  if (issuedAt === undefined || expiresAt === undefined) return { ok: false, rule: 'ns.session-proof.validation', detail: 'session_proof timestamps must be RFC 3339' };
  if (expiresAt <= issuedAt) return { ok: false, rule: 'ns.session-proof.validation', detail: 'session_proof.expires_at must be later than issued_at' };
  if (now > expiresAt) return { ok: false, rule: 'ns.session-proof.validation', detail: 'the session has expired' };
  if (expiresAt - issuedAt > limits.session_ttl_max_seconds * 1000) return { ok: false, rule: 'ns.session-proof.ttl', detail: 'the session is longer than 24 hours' };
  const sessionKey = parseKey(p.session_public_key, 'signing');
  if (!sessionKey) return { ok: false, rule: 'ns.session-proof.key-encoding', detail: 'session_public_key is not a 32-byte Ed25519 key' };
  const signature = decodeBase64Any(p.identity_signature as string);
  if (!signature) return { ok: false, rule: 'ns.session-proof.signature', detail: 'identity_signature is not base64' };
  // The key is re-encoded (base64url, no padding) before signing, as registration does.
  const signed = canonicalString(profile, 'session-registration', { ...p, identity, session_public_key: encodeBase64url(sessionKey) });
  const valid = identityKeysAt(issuedAt).some((k) => verifyEd25519(k, signed, signature));
  if (!valid) return { ok: false, rule: 'ns.session-proof.signature', detail: 'identity_signature does not verify' };
  return { ok: true, sessionKey, issuedAt, expiresAt };
}
