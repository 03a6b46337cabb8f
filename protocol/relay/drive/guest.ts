// Guest authors (ra.drive.guest): prefix + lowercase unpadded base32 (RFC 4648) of an Ed25519 key +
// suffix; the key is read from the name, never resolved.
import { driveSpec } from '../../../schemas/ts/drive.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const { prefix, suffix } = driveSpec.guest;

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const b of bytes) {
    buffer = ((buffer << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

function unbase32(text: string): Uint8Array | undefined {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const c of text) {
    const v = ALPHABET.indexOf(c);
    if (v < 0) return undefined;
    buffer = ((buffer << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((buffer >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}

export const guestAuthor = (publicKey: Uint8Array): string => `${prefix}${base32(publicKey)}${suffix}`;

/** The Ed25519 key a guest author name carries, or undefined when it is not one (canonically). */
export function guestKey(author: string): Uint8Array | undefined {
  if (!author.startsWith(prefix) || !author.endsWith(suffix)) return undefined;
  const key = unbase32(author.slice(prefix.length, author.length - suffix.length));
  return key?.length === 32 && guestAuthor(key) === author ? key : undefined;
}
