// The CLI's keystore wrapping (spec/vocabulary.yaml keystore_cli_wrap; document 3 shows no wrapped
// format, and the relay never opens it): a key file's secrets, sealed with XChaCha20-Poly1305 under
// HKDF-SHA-256 of the passkey's PRF output for a random salt. Only the passkey can unwrap it again.
import { randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { fillTemplate, type Profile } from '../../../protocol/common/profile.ts';
import { vocabulary } from '../../../schemas/ts/vocabulary.ts';
import type { SoftwareAuthenticator } from './authenticator.ts';

/** What is wrapped: the key file's secrets (the CLI derives nothing from a master seed). */
export interface WrappedSecrets {
  seed: string;
  encryption_private_key: string;
}

interface Wrapped {
  v: 1;
  alg: 'xchacha20poly1305';
  salt: string;
  nonce: string;
  ciphertext: string;
}

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const raw = (text: string) => new Uint8Array(Buffer.from(text, 'base64url'));

function keyFor(profile: Profile, passkey: SoftwareAuthenticator, salt: Uint8Array): Uint8Array {
  return hkdf(sha256, passkey.prf(salt), salt, new TextEncoder().encode(fillTemplate(vocabulary.keystore_cli_wrap.info, profile.name)), 32);
}

/** The `wrapped` JSON text an enrollment carries. */
export function wrapSecrets(profile: Profile, passkey: SoftwareAuthenticator, secrets: WrappedSecrets): string {
  const salt = new Uint8Array(randomBytes(32));
  const nonce = new Uint8Array(randomBytes(24));
  const ciphertext = xchacha20poly1305(keyFor(profile, passkey, salt), nonce).encrypt(new TextEncoder().encode(JSON.stringify(secrets)));
  const w: Wrapped = { v: 1, alg: 'xchacha20poly1305', salt: b64u(salt), nonce: b64u(nonce), ciphertext: b64u(ciphertext) };
  return JSON.stringify(w);
}

/** The secrets back, or undefined when this passkey did not wrap them (or they are not this format). */
export function unwrapSecrets(profile: Profile, passkey: SoftwareAuthenticator, wrapped: unknown): WrappedSecrets | undefined {
  try {
    const w = (typeof wrapped === 'string' ? JSON.parse(wrapped) : wrapped) as Wrapped;
    if (w.v !== 1 || w.alg !== 'xchacha20poly1305') return undefined;
    const plain = xchacha20poly1305(keyFor(profile, passkey, raw(w.salt)), raw(w.nonce)).decrypt(raw(w.ciphertext));
    return JSON.parse(new TextDecoder().decode(plain)) as WrappedSecrets;
  } catch {
    return undefined;
  }
}
