// The random values of a native sign-in transaction (reference RP and bridge): match code,
// reference code, request nonce and request id. The generic secrets (newSecret, hashSecret, ...)
// live in reference/shared/secrets.ts.
import { randomBytes, randomInt } from 'node:crypto';
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { shortCodeFrom } from '../../protocol/signin/reference.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';

/** The two-digit match code (limits: match_code_digits). */
export function newMatchCode(): string {
  const digits = limits.match_code_digits;
  return String(randomInt(0, 10 ** digits)).padStart(digits, '0');
}

/** An 8-character Crockford base32 reference code (ns.reference.code). */
export function newReferenceCode(): string {
  return shortCodeFrom(randomBytes(vocabulary.short_code.length));
}

/** The request nonce: 32 random bytes (at least limits.nonce_entropy_min_bytes). */
export function newNonce(): string {
  return encodeBase64url(randomBytes(Math.max(32, limits.nonce_entropy_min_bytes)));
}

export function newRequestId(): string {
  return `req_${encodeBase64url(randomBytes(16))}`;
}
