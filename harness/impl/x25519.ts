// X25519 (RFC 7748) for the harness's second implementation, through node:crypto (OpenSSL). The
// curve operation alone: noble's pure-JS ladder costs about 2 ms, forty times OpenSSL's, and a main
// run does thousands of them (every message and drive object the harness seals). What the second
// implementation checks on its own stays its own: the HKDF salt and info, the AAD, nonce and
// framing of each seal, written from the spec without protocol/.
import { createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject } from 'node:crypto';

// The fixed DER head of an X25519 PKCS #8 key (RFC 8410), before the raw 32 bytes.
const PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const b64 = (raw: Uint8Array): string => Buffer.from(raw).toString('base64url');

// Keys this module made, and any imported once, are kept by their raw bytes (the most recent few
// thousand): building a KeyObject costs more than the exchange.
const made = new Map<string, { key: KeyObject; publicKey: Uint8Array }>();
const CACHED = 4096;

function remember(d: string, key: KeyObject, publicKey: Uint8Array): { key: KeyObject; publicKey: Uint8Array } {
  if (made.size >= CACHED) made.delete(made.keys().next().value!);
  const entry = { key, publicKey };
  made.set(d, entry);
  return entry;
}

/**
 * A JWK import hands OpenSSL the raw key (about 0.03 ms); PKCS #8 DER goes through its decoder
 * framework (about 0.8 ms). Node takes `x` as a string and derives the public key from `d` alone;
 * should a Node ever insist on a matching `x`, the import throws and DER is used.
 */
function rawPrivateKey(raw: Uint8Array): KeyObject {
  try {
    return createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: b64(raw), x: '' }, format: 'jwk' });
  } catch {
    return createPrivateKey({ key: Buffer.concat([PKCS8, raw]), format: 'der', type: 'pkcs8' });
  }
}

function privateOf(raw: Uint8Array): { key: KeyObject; publicKey: Uint8Array } {
  if (raw.length !== 32) throw new Error('an X25519 private key is 32 bytes');
  const d = b64(raw);
  const hit = made.get(d);
  if (hit) return hit;
  const key = rawPrivateKey(raw);
  return remember(d, key, Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x!, 'base64url'));
}

/** The same surface as noble's `x25519`, so the callers read alike; every argument raw 32 bytes. */
export const x25519 = {
  getPublicKey(priv: Uint8Array): Uint8Array {
    return new Uint8Array(privateOf(priv).publicKey);
  },
  /** Throws on a small-order point (an all-zero secret), as noble's does. */
  getSharedSecret(priv: Uint8Array, pub: Uint8Array): Uint8Array {
    if (pub.length !== 32) throw new Error('an X25519 public key is 32 bytes');
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: b64(pub) }, format: 'jwk' });
    return new Uint8Array(diffieHellman({ privateKey: privateOf(priv).key, publicKey }));
  },
  utils: {
    randomSecretKey(): Uint8Array {
      const { privateKey } = generateKeyPairSync('x25519');
      const jwk = privateKey.export({ format: 'jwk' });
      remember(jwk.d!, privateKey, Buffer.from(jwk.x!, 'base64url'));
      return new Uint8Array(Buffer.from(jwk.d!, 'base64url'));
    },
  },
};
