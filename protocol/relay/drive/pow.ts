// Proof of work (ra.drive.pow): SHA-256 of token, the join literal and the solution must start
// with `bits` zero bits; requested difficulties are clamped into the limits' window.
import { createHash } from 'node:crypto';
import { driveSpec } from '../../../schemas/ts/drive.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { encodeBase64url } from '../../common/base64.ts';

/** A requested difficulty in the allowed window: 0 or less is the default. */
export function clampPowBits(bits: number): number {
  if (!(bits > 0)) return limits.drive_pow_default_bits;
  return Math.min(Math.max(Math.floor(bits), limits.drive_pow_min_bits), limits.drive_pow_max_bits);
}

export function leadingZeroBits(digest: Uint8Array): number {
  let n = 0;
  for (const b of digest) {
    if (b !== 0) return n + Math.clz32(b) - 24;
    n += 8;
  }
  return n;
}

export function checkPow(token: string, solution: string, bits: number): boolean {
  return leadingZeroBits(createHash('sha256').update(`${token}${driveSpec.pow.join}${solution}`, 'utf8').digest()) >= bits;
}

/** Counts up from 0; each candidate is the counter as 8 bytes big-endian, base64url. */
export function solvePow(token: string, bits: number, maxTries = 2 ** 32): string {
  const counter = Buffer.alloc(8);
  for (let i = 0; i < maxTries; i++) {
    counter.writeBigUInt64BE(BigInt(i));
    const candidate = encodeBase64url(counter);
    if (checkPow(token, candidate, bits)) return candidate;
  }
  throw new RangeError(`no solution within ${maxTries} tries`);
}
