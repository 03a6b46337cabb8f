// PKCE (RFC 7636) as the bridge profile allows it: S256 only (ob.authorize.pkce-required,
// ob.authorize.pkce-plain-refused). Pure: the challenge of a verifier and the grammar of both.
import { createHash } from 'node:crypto';

/** RFC 7636 section 4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** The base64url of a SHA-256 digest: exactly 43 characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export const wellFormedVerifier = (v: unknown): v is string => typeof v === 'string' && VERIFIER.test(v);
export const wellFormedChallenge = (c: unknown): c is string => typeof c === 'string' && CHALLENGE.test(c);

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** True when `verifier` is well formed and hashes to `challenge`. */
export function verifierMatches(verifier: unknown, challenge: string): boolean {
  return wellFormedVerifier(verifier) && s256Challenge(verifier) === challenge;
}
