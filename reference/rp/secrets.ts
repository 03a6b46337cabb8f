// Random secrets and their stored form. Every secret the RP hands out (binding cookie, poll
// secret, resume code, session cookie) is 256 random bits, base64url; only its SHA-256 is stored
// (ns.transaction.record), so a leaked database completes no login.
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { shortCodeFrom } from '../../protocol/signin/reference.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';

/** Bits of every secret the RP issues; above every minimum in limits.yaml. */
export const SECRET_BITS = 256;

export function newSecret(bits: number = SECRET_BITS): string {
  return encodeBase64url(randomBytes(bits / 8));
}

/** The stored form of a secret: SHA-256, base64url. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A secret as this RP issues it: base64url of exactly SECRET_BITS bits. */
export function wellFormedSecret(value: unknown): value is string {
  return typeof value === 'string' && value.length === Math.ceil(SECRET_BITS / 6) && /^[A-Za-z0-9_-]+$/.test(value);
}

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
