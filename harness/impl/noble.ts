// The harness's independent second implementation, on @noble/*: every vector is checked by the
// protocol core (node:crypto) AND by this, and any disagreement fails the check. It implements
// the same strict cofactorless rules (spec/signing.yaml `ed25519`) its own way: noble's strict
// decoding refuses non-canonical and small-order keys and R, and the equation is checked here
// without the cofactor, because noble's own verify is cofactored. X25519's curve operation alone is
// OpenSSL's (./x25519.ts: noble's costs 2 ms); the seals built on it are this file's own.
import * as ed from '@noble/ed25519';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import { hmac } from '@noble/hashes/hmac.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { x25519 } from './x25519.ts';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';

ed.hashes.sha512 = sha512;

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const enc = new TextEncoder();
const bytes = (m: Uint8Array | string) => (typeof m === 'string' ? enc.encode(m) : m);

function leToBigint(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

export function verify(pub: Uint8Array, message: Uint8Array | string, sig: Uint8Array): boolean {
  if (pub.length !== 32 || sig.length !== 64) return false;
  const msg = bytes(message);
  let A: ed.Point;
  let R: ed.Point;
  try {
    A = ed.Point.fromBytes(pub, false);
    R = ed.Point.fromBytes(sig.subarray(0, 32), false);
  } catch {
    return false;
  }
  if (A.isSmallOrder()) return false;
  const S = leToBigint(sig.subarray(32));
  if (S >= L) return false;
  const k = leToBigint(sha512(new Uint8Array([...sig.subarray(0, 32), ...pub, ...msg]))) % L;
  const lhs = S === 0n ? ed.Point.ZERO : ed.Point.BASE.multiply(S);
  const rhs = k === 0n ? R : R.add(A.multiply(k));
  return lhs.equals(rhs) && ed.verify(sig, msg, pub, { zip215: false });
}

export function sign(seed: Uint8Array, message: Uint8Array | string): Uint8Array {
  return ed.sign(bytes(message), seed);
}

export function publicKey(seed: Uint8Array): Uint8Array {
  return ed.getPublicKey(seed);
}

export function sha256(data: Uint8Array | string): Uint8Array {
  return nobleSha256(bytes(data));
}

export function hmacSha256(key: Uint8Array, data: Uint8Array | string): Uint8Array {
  return hmac(nobleSha256, key, bytes(data));
}

/** Opens an x25519-chacha20-poly1305 message seal (ra.seal.message) with noble primitives. */
export function openMessage(domain: string, recipientPrivate: Uint8Array, ephemeral: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined {
  try {
    const recipient = x25519.getPublicKey(recipientPrivate);
    const shared = x25519.getSharedSecret(recipientPrivate, ephemeral);
    const salt = new Uint8Array([...ephemeral, ...recipient]);
    const key = hkdf(nobleSha256, shared, salt, enc.encode(domain), 32);
    const aad = new Uint8Array([...enc.encode(`${domain}\n`), ...ephemeral, ...recipient]);
    return chacha20poly1305(key, nonce, aad).decrypt(ciphertext);
  } catch {
    return undefined;
  }
}

/**
 * Seals for `recipient` as x25519-chacha20-poly1305 (ra.seal.message) with noble primitives: a
 * fresh ephemeral key and nonce unless `fixed` pins them (vectors). The mirror of openMessage.
 */
export function sealMessage(
  domain: string,
  recipient: Uint8Array,
  plaintext: Uint8Array,
  fixed?: { ephemeralPrivate: Uint8Array; nonce: Uint8Array },
): { ephemeral: Uint8Array; nonce: Uint8Array; ciphertext: Uint8Array } {
  const ephemeralPrivate = fixed?.ephemeralPrivate ?? x25519.utils.randomSecretKey();
  const ephemeral = x25519.getPublicKey(ephemeralPrivate);
  const shared = x25519.getSharedSecret(ephemeralPrivate, recipient);
  const salt = new Uint8Array([...ephemeral, ...recipient]);
  const key = hkdf(nobleSha256, shared, salt, enc.encode(domain), 32);
  const aad = new Uint8Array([...enc.encode(`${domain}\n`), ...ephemeral, ...recipient]);
  const nonce = fixed?.nonce ?? crypto.getRandomValues(new Uint8Array(12));
  return { ephemeral, nonce, ciphertext: chacha20poly1305(key, nonce, aad).encrypt(plaintext) };
}

/** An X25519 key pair (private, public), raw 32 bytes each. */
export function x25519KeyPair(): { privateKey: Uint8Array; publicKey: Uint8Array } {
  const privateKey = x25519.utils.randomSecretKey();
  return { privateKey, publicKey: x25519.getPublicKey(privateKey) };
}

/** The X25519 public key of a private key. */
export function x25519PublicKeyOf(privateKey: Uint8Array): Uint8Array {
  return x25519.getPublicKey(privateKey);
}
