// npm run vectors: Key fingerprints: fingerprints.json.

import { keyFingerprint } from '../../protocol/common/canonical.ts';
import { check, same, ruleIds, b64u, utf8 } from './check.ts';
import { profile, NAME, aliceKey, recipient } from './fixtures.ts';
import { emit } from './emit.ts';
import { stdBase64 } from './signin.ts';
import { fingerprintOf } from './digests.ts';


export const aliceBare = b64u(aliceKey.pub);
export const flipped = Uint8Array.from(aliceKey.pub);
flipped[0] = flipped[0]! ^ 1;
export const fingerprintCases: Array<{ name: string; key: string; kind: 'signing' | 'encryption'; normal: string | null }> = [
  { name: 'signing-key', key: aliceKey.text, kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-bare', key: aliceBare, kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-padded', key: `${aliceBare}=`, kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-standard-base64', key: stdBase64(aliceKey.pub), kind: 'signing', normal: aliceKey.text },
  { name: 'signing-key-prefixed-standard-base64', key: `ed25519:${stdBase64(aliceKey.pub)}`, kind: 'signing', normal: aliceKey.text },
  { name: 'one-bit-flip', key: `ed25519:${b64u(flipped)}`, kind: 'signing', normal: `ed25519:${b64u(flipped)}` },
  { name: 'all-zero-key', key: `ed25519:${b64u(new Uint8Array(32))}`, kind: 'signing', normal: `ed25519:${b64u(new Uint8Array(32))}` },
  { name: 'same-bytes-as-x25519', key: `x25519:${aliceBare}`, kind: 'encryption', normal: `x25519:${aliceBare}` },
  { name: 'encryption-key', key: recipient.text, kind: 'encryption', normal: recipient.text },
  { name: 'wrong-prefix-for-kind', key: recipient.text, kind: 'signing', normal: null },
  { name: 'malformed', key: 'ed25519:not-base64!!', kind: 'signing', normal: null },
  { name: 'mixed-alphabets', key: `ed25519:${aliceBare.replace('_', '/')}`, kind: 'signing', normal: null },
  { name: 'wrong-length', key: `ed25519:${b64u(utf8('short'))}`, kind: 'signing', normal: null },
  { name: 'empty', key: '', kind: 'signing', normal: null },
];
check(aliceBare.includes('_'), 'the alice key must contain `_` for the mixed-alphabet vector');
export const fingerprintVectors = fingerprintCases.map((c) => {
  const fp = c.normal === null ? '' : fingerprintOf(`${NAME}-fingerprint-v1`, c.normal);
  same(`fingerprints ${c.name} (core)`, keyFingerprint(profile, c.key, c.kind) ?? '', fp);
  return { name: c.name, key: c.key, kind: c.kind, fingerprint: fp, valid: c.normal !== null, rules: ruleIds('ra.key-fingerprint') };
});
emit(
  'fingerprints',
  'fingerprints',
  `Key fingerprints (spec/signing.yaml key-fingerprint): SHA-256 over \`${NAME}-fingerprint-v1\` LF and the key re-encoded as \`ed25519:\`/\`x25519:\` (by \`kind\`) plus base64url; four groups of five digits. A key is accepted with or without its own prefix and in any single base64 variant; a key with the other kind's prefix, mixed alphabets, bad characters or not 32 bytes is invalid (empty fingerprint). The same bytes as a signing and as an encryption key give different fingerprints.`,
  { vectors: fingerprintVectors },
  fingerprintVectors.length,
);
