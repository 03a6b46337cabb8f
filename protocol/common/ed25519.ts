// Ed25519 on node:crypto (OpenSSL), held to the spec's strict cofactorless rules
// (spec/signing.yaml `ed25519`, rule ns.ed25519.strict). OpenSSL already rejects S >= L and
// compares R byte for byte; it accepts small-order and non-canonical public keys, so those are
// refused here before it is asked. KeyObjects are cached (public and private): building one costs
// more than a verify or a signature.
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SMALL_ORDER_Y = vocabulary.ed25519_small_order_y.values.map((h) => Buffer.from(h, 'hex'));
const CACHE_LIMIT = 4096;
const keyCache = new Map<string, KeyObject | null>();

/** y (sign bit cleared) >= p = 2^255 - 19: a non-canonical encoding. */
function nonCanonicalY(y: Buffer): boolean {
  if ((y[31]! & 0x7f) !== 0x7f || y[0]! < 0xed) return false;
  for (let i = 1; i < 31; i++) if (y[i] !== 0xff) return false;
  return true;
}

/** Why a public key is refused (rules a-canonical, a-not-small-order), or undefined. */
export function publicKeyProblem(pub: Uint8Array): string | undefined {
  if (pub.length !== 32) return 'public key is not 32 bytes';
  const y = Buffer.from(pub);
  y[31] = y[31]! & 0x7f;
  if (nonCanonicalY(y)) return 'non-canonical public key encoding';
  if (SMALL_ORDER_Y.some((s) => s.equals(y))) return 'public key of small order';
  return undefined;
}

// A resolver's cache hands back the same key arrays: each is looked up by identity first, its
// bytes compared with a copy taken then (an array written to since is looked up afresh).
const byArray = new WeakMap<Uint8Array, { bytes: Buffer; key: KeyObject | null }>();

function keyObject(pub: Uint8Array): KeyObject | null {
  const seen = byArray.get(pub);
  if (seen !== undefined && seen.bytes.equals(pub)) return seen.key;
  const key = keyObjectByBytes(pub);
  byArray.set(pub, { bytes: Buffer.from(pub), key });
  return key;
}

function keyObjectByBytes(pub: Uint8Array): KeyObject | null {
  const id = Buffer.from(pub.buffer, pub.byteOffset, pub.byteLength).toString('base64'); // a view, not a copy
  let key = keyCache.get(id);
  if (key !== undefined) return key;
  if (publicKeyProblem(pub) !== undefined) key = null;
  else {
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pub).toString('base64url') }, format: 'jwk' });
    } catch {
      key = null; // not a point on the curve
    }
  }
  if (keyCache.size >= CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value!);
  keyCache.set(id, key);
  return key;
}

export function verifyEd25519(pub: Uint8Array, message: Uint8Array | string, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  const key = keyObject(pub);
  if (!key) return false;
  const data = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  return verify(null, data, key, signature);
}

/**
 * The same check on libuv's thread pool (node:crypto's callback form): the caller's thread only
 * hands the work over, so a server verifies on other cores while its event loop goes on.
 */
export function verifyEd25519Async(pub: Uint8Array, message: Uint8Array | string, signature: Uint8Array): Promise<boolean> {
  if (signature.length !== 64) return Promise.resolve(false);
  const key = keyObject(pub);
  if (!key) return Promise.resolve(false);
  const data = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  return new Promise((resolve) => verify(null, data, key, signature, (error, ok) => resolve(error === null && ok)));
}

const privateCache = new Map<string, KeyObject>();

function privateKey(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new TypeError('an Ed25519 seed is 32 bytes');
  const id = Buffer.from(seed).toString('base64');
  let key = privateCache.get(id);
  if (key) return key;
  key = rawPrivateKey(seed);
  if (privateCache.size >= CACHE_LIMIT) privateCache.delete(privateCache.keys().next().value!);
  privateCache.set(id, key);
  return key;
}

/**
 * A JWK import hands OpenSSL the raw seed (about 0.04 ms here); PKCS#8 DER goes through its
 * decoder framework (about 0.6 ms), and a run makes thousands of identities. Node takes `x` as a
 * string and derives the public key from `d` alone, so none is computed for it; should a Node
 * ever insist on a matching `x`, the import throws and DER is used.
 */
function rawPrivateKey(seed: Uint8Array): KeyObject {
  try {
    return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(seed).toString('base64url'), x: '' }, format: 'jwk' });
  } catch {
    return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  }
}

export function signEd25519(seed: Uint8Array, message: Uint8Array | string): Uint8Array {
  const data = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  return new Uint8Array(sign(null, data, privateKey(seed)));
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  const der = createPublicKey(privateKey(seed)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(der.subarray(SPKI_PREFIX.length));
}
