// Message sealing, x25519-chacha20-poly1305 (ra.seal.message; the interop set decides the
// construction): HKDF-SHA256 over the X25519 secret, salt = ephemeral key || recipient key, info =
// the domain; AAD = domain LF || ephemeral key || recipient key || context (empty for messages,
// ra.drive.seal for the drive's domains); 12-byte nonce; tag appended.
import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { Profile } from '../common/profile.ts';

const X25519_SPKI = Buffer.from('302a300506032b656e032100', 'hex');
const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const TAG = 16;

const publicKey = (raw: Uint8Array): KeyObject => createPublicKey({ key: Buffer.concat([X25519_SPKI, raw]), format: 'der', type: 'spki' });
const privateKey = (raw: Uint8Array): KeyObject => createPrivateKey({ key: Buffer.concat([X25519_PKCS8, raw]), format: 'der', type: 'pkcs8' });
const rawPublic = (key: KeyObject): Buffer => key.export({ format: 'der', type: 'spki' }).subarray(X25519_SPKI.length);

export interface Sealed {
  ciphertext: Uint8Array;
  ephemeralPublicKey: Uint8Array;
  nonce: Uint8Array;
}

function keyAndAad(domain: string, shared: Buffer, ephemeral: Uint8Array, recipient: Uint8Array, context: Uint8Array) {
  const salt = Buffer.concat([ephemeral, recipient]);
  const key = Buffer.from(hkdfSync('sha256', shared, salt, domain, 32));
  const aad = Buffer.concat([Buffer.from(`${domain}\n`), ephemeral, recipient, context]);
  return { key, aad };
}

export function x25519PublicKey(privateRaw: Uint8Array): Uint8Array {
  return new Uint8Array(rawPublic(createPublicKey(privateKey(privateRaw))));
}

export interface FixedSeal {
  ephemeralPrivate: Uint8Array;
  nonce: Uint8Array;
}

/** Seals for `recipient`; `fixed` (ephemeral private key and nonce) only for reproducible vectors. */
export function sealMessage(profile: Profile, recipient: Uint8Array, plaintext: Uint8Array, fixed?: FixedSeal): Sealed {
  return sealWith(profile.ids.message_seal_domain, recipient, plaintext, new Uint8Array(), fixed);
}

/** The plaintext, or undefined when anything does not check out (wrong key, tampering, sizes). */
export function openMessage(profile: Profile, recipientPrivate: Uint8Array, sealed: Sealed): Uint8Array | undefined {
  return openWith(profile.ids.message_seal_domain, recipientPrivate, sealed, new Uint8Array());
}

/** Seals under `domain`, binding `context` into the AAD. */
export function sealWith(domain: string, recipient: Uint8Array, plaintext: Uint8Array, context: Uint8Array, fixed?: FixedSeal): Sealed {
  const eph = fixed ? privateKey(fixed.ephemeralPrivate) : generateKeyPairSync('x25519').privateKey;
  const ephemeral = rawPublic(createPublicKey(eph));
  const shared = diffieHellman({ privateKey: eph, publicKey: publicKey(recipient) });
  const { key, aad } = keyAndAad(domain, shared, ephemeral, recipient, context);
  const nonce = fixed ? Buffer.from(fixed.nonce) : randomBytes(12);
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
  cipher.setAAD(aad, { plaintextLength: plaintext.length });
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { ciphertext: new Uint8Array(body), ephemeralPublicKey: new Uint8Array(ephemeral), nonce: new Uint8Array(nonce) };
}

/** Opens a seal under `domain` and `context`; undefined when anything does not check out. */
export function openWith(domain: string, recipientPrivate: Uint8Array, sealed: Sealed, context: Uint8Array): Uint8Array | undefined {
  if (recipientPrivate.length !== 32 || sealed.ephemeralPublicKey.length !== 32 || sealed.nonce.length !== 12 || sealed.ciphertext.length < TAG) return undefined;
  try {
    const priv = privateKey(recipientPrivate);
    const recipient = rawPublic(createPublicKey(priv));
    const shared = diffieHellman({ privateKey: priv, publicKey: publicKey(sealed.ephemeralPublicKey) });
    const { key, aad } = keyAndAad(domain, shared, sealed.ephemeralPublicKey, recipient, context);
    const body = sealed.ciphertext.subarray(0, sealed.ciphertext.length - TAG);
    const decipher = createDecipheriv('chacha20-poly1305', key, sealed.nonce, { authTagLength: TAG });
    decipher.setAAD(aad, { plaintextLength: body.length });
    decipher.setAuthTag(sealed.ciphertext.subarray(sealed.ciphertext.length - TAG));
    return new Uint8Array(Buffer.concat([decipher.update(body), decipher.final()]));
  } catch {
    return undefined;
  }
}
