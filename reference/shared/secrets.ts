// Random secrets and their stored form. Every secret a reference server hands out (binding
// cookie, poll secret, resume code, session cookie) is 256 random bits, base64url; only its
// SHA-256 is stored (ns.transaction.record), so a leaked database completes no login.
import { createHash, randomFillSync, timingSafeEqual } from 'node:crypto';
import { encodeBase64url } from '../../protocol/common/base64.ts';

/** Bits of every secret issued; above every minimum in limits/. */
export const SECRET_BITS = 256;
const SECRET_CHARS = Math.ceil(SECRET_BITS / 6);
const BASE64URL = /^[A-Za-z0-9_-]+$/;

// Secrets are cut from a pool the CSPRNG refills 4 KiB at a time: one call per 128 secrets
// instead of one each (the call costs more than the bytes on a server's hot path). Bytes handed
// out are zeroed in the pool, so none is ever given twice or left behind.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomBytes(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.alloc(n));
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const out = Buffer.from(pool.subarray(poolAt, poolAt + n));
  pool.fill(0, poolAt, poolAt + n);
  poolAt += n;
  return out;
}

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

/** A secret as issued here: base64url of exactly SECRET_BITS bits. */
export function wellFormedSecret(value: unknown): value is string {
  return typeof value === 'string' && value.length === SECRET_CHARS && BASE64URL.test(value);
}
