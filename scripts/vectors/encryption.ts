// npm run vectors: Message sealing: encryption.json.

import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { sealMessage, openMessage } from '../../protocol/relay/seal.ts';
import { check, same, type Json, ruleIds, b64u, fromB64u, utf8 } from './check.ts';
import { profile, bytesOf, recipient, ephemeral } from './fixtures.ts';
import { emit } from './emit.ts';
import { ENC } from './canonical.ts';


export const SEAL_NONCE = bytesOf('seal-nonce');
export function nobleOpen(priv: Uint8Array, eph: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined {
  const domain = profile.ids.message_seal_domain;
  try {
    const recipientPub = x25519.getPublicKey(priv);
    const shared = x25519.getSharedSecret(priv, eph);
    const key = hkdf(nobleSha256, shared, new Uint8Array([...eph, ...recipientPub]), utf8(domain), 32);
    return chacha20poly1305(key, nonce, new Uint8Array([...utf8(`${domain}\n`), ...eph, ...recipientPub])).decrypt(ciphertext);
  } catch {
    return undefined;
  }
}
export const plaintexts: Array<[string, string]> = [
  ['ascii', 'hello from the svc conformance kit'],
  ['empty', ''],
  ['unicode', 'h\u00e9llo \u2014 \u4e16\u754c \ud83d\udd12'],
  ['long', Array.from({ length: 40 }, (_, i) => `line ${String(i).padStart(2, '0')} of a longer message body\n`).join('')],
];
export const encryptionVectors: Json[] = plaintexts.map(([name, message]) => {
  const plaintext = utf8(message);
  const sealed = sealMessage(profile, recipient.pub, plaintext, { ephemeralPrivate: ephemeral.priv, nonce: SEAL_NONCE });
  same(`encryption ${name}: ephemeral key`, b64u(sealed.ephemeralPublicKey), b64u(ephemeral.pub));
  same(`encryption ${name}: ciphertext length`, sealed.ciphertext.length, plaintext.length + 16);
  same(`encryption ${name}: opens (core)`, b64u(openMessage(profile, recipient.priv, sealed) ?? new Uint8Array([0])), b64u(plaintext));
  same(`encryption ${name}: opens (noble)`, b64u(nobleOpen(recipient.priv, sealed.ephemeralPublicKey, sealed.nonce, sealed.ciphertext) ?? new Uint8Array([0])), b64u(plaintext));
  return {
    name,
    recipient_private_key: b64u(recipient.priv),
    recipient_public_key: b64u(recipient.pub),
    plaintext: b64u(plaintext),
    alg: ENC.alg,
    ciphertext: b64u(sealed.ciphertext),
    ephemeral_public_key: b64u(sealed.ephemeralPublicKey),
    nonce: b64u(sealed.nonce),
    valid: true,
    rules: ruleIds('ra.seal.message'),
  };
});
{
  const base = encryptionVectors[0]!;
  const ciphertext = fromB64u(base.ciphertext as string);
  ciphertext[0] = ciphertext[0]! ^ 0x01;
  const sealed = { ciphertext, ephemeralPublicKey: ephemeral.pub, nonce: SEAL_NONCE };
  check(openMessage(profile, recipient.priv, sealed) === undefined, 'encryption flipped-ciphertext-byte: the core opens it');
  check(nobleOpen(recipient.priv, ephemeral.pub, SEAL_NONCE, ciphertext) === undefined, 'encryption flipped-ciphertext-byte: noble opens it');
  encryptionVectors.push({ ...base, name: 'flipped-ciphertext-byte', ciphertext: b64u(ciphertext), valid: false });
}
emit(
  'encryption',
  'encryption',
  `Message sealing (x25519-chacha20-poly1305; rule ra.seal.message): key = HKDF-SHA256(X25519(ephemeral, recipient), salt = ephemeral public key || recipient public key, info = \`${profile.ids.message_seal_domain}\`), AAD = \`${profile.ids.message_seal_domain}\` LF || ephemeral public key || recipient public key, 12-byte nonce, 16-byte tag appended; every value base64url. The ephemeral key and nonce are fixed (fixtures/keys.json ephemeral-x25519, seal-nonce) so the vectors are reproducible; a real sender draws both fresh for every message. \`valid\` false: the ciphertext was altered and must not open.`,
  { vectors: encryptionVectors },
  encryptionVectors.length,
);
