// npm run vectors: Digests: pairing commitment and code, pairwise subject, key fingerprint: digests.json.

import { createHmac } from 'node:crypto';
import { limits } from '../../schemas/ts/limits.ts';
import { canonicalString, pairingCommitment, pairingSas, keyFingerprint, pairwiseSubject } from '../../protocol/common/canonical.ts';
import { x25519PublicKey } from '../../protocol/relay/seal.ts';
import { check, same, type Json, ruleIds, b64u, digest, derived, lines } from './check.ts';
import { profile, NAME, bytesOf, ALICE, BOB, aliceKey, recipient } from './fixtures.ts';
import { emit } from './emit.ts';
import { stdBase64 } from './signin.ts';


export const pairingInput = (n: number) => ({
  ephemeral_public_key: b64u(x25519PublicKey(derived(`${NAME}-conformance/pairing/${n}/ephemeral`))),
  commit_nonce: b64u(derived(`${NAME}-conformance/pairing/${n}/commit-nonce`)),
  approver_nonce: b64u(derived(`${NAME}-conformance/pairing/${n}/approver-nonce`)),
});
export const sasOf = (d: Buffer) => (d.readBigUInt64BE(0) % 10n ** BigInt(limits.pairing_sas_digits)).toString().padStart(limits.pairing_sas_digits, '0');
export const fingerprintOf = (literal: string, keyText: string) => {
  const d = digest(lines(literal, keyText));
  const groups: string[] = [];
  for (let i = 0; i < 4; i++) groups.push((d.readUIntBE(i * 5, 5) % 100_000).toString().padStart(5, '0'));
  return groups.join(' ');
};
export const pairwiseSecret = bytesOf('pairwise-secret');
export const digestVectors: Json[] = [];
for (const n of [1, 2]) {
  const p = pairingInput(n);
  const commitCanonical = lines(`${NAME}/v2/enroll-commit`, p.ephemeral_public_key, p.commit_nonce);
  same(`digest pairing-commitment-${n} string (core)`, canonicalString(profile, 'pairing-commitment', p), commitCanonical);
  const commitment = digest(commitCanonical).toString('base64url');
  same(`digest pairing-commitment-${n} (core)`, pairingCommitment(profile, p), commitment);
  digestVectors.push({
    name: `pairing-commitment-${n}`,
    string: 'pairing-commitment',
    inputs: { ephemeral_public_key: p.ephemeral_public_key, commit_nonce: p.commit_nonce },
    canonical: commitCanonical,
    output: commitment,
    rules: ruleIds('ra.pairing.commitment'),
  });
  const sasInputs = { commitment, ephemeral_public_key: p.ephemeral_public_key, commit_nonce: p.commit_nonce, approver_nonce: p.approver_nonce };
  const sasCanonical = lines(`${NAME}/v2/enroll-sas`, commitment, p.ephemeral_public_key, p.commit_nonce, p.approver_nonce);
  same(`digest pairing-sas-${n} string (core)`, canonicalString(profile, 'pairing-sas', sasInputs), sasCanonical);
  const sas = sasOf(digest(sasCanonical));
  same(`digest pairing-sas-${n} (core)`, pairingSas(profile, sasInputs), sas);
  digestVectors.push({ name: `pairing-sas-${n}`, string: 'pairing-sas', inputs: sasInputs, canonical: sasCanonical, output: sas, rules: ruleIds('ra.pairing.sas') });
}
for (const [name, sector, id] of [
  ['pairwise-subject', 'rp.example.com', ALICE],
  ['pairwise-subject-other-sector', 'app.example.net', ALICE],
  ['pairwise-subject-other-identity', 'rp.example.com', BOB],
] as const) {
  const s = lines(`${NAME}-oidc-sub-v1`, sector, id);
  same(`digest ${name} string (core)`, canonicalString(profile, 'pairwise-subject', { sector, identity: id }), s);
  const sub = createHmac('sha256', pairwiseSecret).update(s).digest('base64url');
  same(`digest ${name} (core)`, pairwiseSubject(profile, pairwiseSecret, sector, id), sub);
  digestVectors.push({ name, string: 'pairwise-subject', inputs: { sector, identity: id }, canonical: s, output: sub, secret_base64url: b64u(pairwiseSecret), rules: ruleIds('ob.subject.pairwise') });
}
for (const [name, key, kind, normal] of [
  ['key-fingerprint-signing', aliceKey.text, 'signing', aliceKey.text],
  ['key-fingerprint-signing-standard-base64', stdBase64(aliceKey.pub), 'signing', aliceKey.text],
  ['key-fingerprint-encryption', recipient.text, 'encryption', recipient.text],
  ['key-fingerprint-same-bytes-as-encryption', `x25519:${b64u(aliceKey.pub)}`, 'encryption', `x25519:${b64u(aliceKey.pub)}`],
] as const) {
  const s = lines(`${NAME}-fingerprint-v1`, normal);
  same(`digest ${name} string (core)`, canonicalString(profile, 'key-fingerprint', { key: normal }), s);
  const fp = fingerprintOf(`${NAME}-fingerprint-v1`, normal);
  same(`digest ${name} (core)`, keyFingerprint(profile, key, kind), fp);
  digestVectors.push({ name, string: 'key-fingerprint', inputs: { key, kind }, canonical: s, output: fp, rules: ruleIds('ra.key-fingerprint') });
}
check(new Set(digestVectors.map((v) => v.output)).size === digestVectors.length - 1, 'digests: only the two text forms of one key may share an output');
emit(
  'digests',
  'digests',
  `The strings that are hashed or MACed instead of signed (spec/signing.yaml): \`pairing-commitment\` (base64url SHA-256), \`pairing-sas\` (six digits: the first 8 digest bytes big-endian modulo 10^6), \`pairwise-subject\` (base64url HMAC-SHA256 keyed by \`secret_base64url\`) and \`key-fingerprint\` (four groups of five digits; \`inputs.key\` in any accepted text form and \`inputs.kind\`, the key re-encoded as \`ed25519:\`/\`x25519:\` plus base64url before hashing, as \`canonical\` shows). \`canonical\` is the exact string, \`output\` the result. Pairing inputs are SHA-256 of \`${NAME}-conformance/pairing/<n>/<field>\` (the ephemeral key is the X25519 public key of that private key).`,
  { vectors: digestVectors },
  digestVectors.length,
);
