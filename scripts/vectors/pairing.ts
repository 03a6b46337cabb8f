// npm run vectors: Pairing (document 3): pairing.json.

import { pairingCommitment, pairingSas } from '../../protocol/common/canonical.ts';
import { normalizeShortCode } from '../../protocol/signin/reference.ts';
import { same, ruleIds, digest, lines } from './check.ts';
import { profile, NAME } from './fixtures.ts';
import { emit } from './emit.ts';
import { pairingInput, sasOf } from './digests.ts';


export const pairings = [1, 2, 3].map((n) => {
  const p = pairingInput(n);
  const commitment = digest(lines(`${NAME}/v2/enroll-commit`, p.ephemeral_public_key, p.commit_nonce)).toString('base64url');
  same(`pairing ${n} commitment (core)`, pairingCommitment(profile, p), commitment);
  const sas = sasOf(digest(lines(`${NAME}/v2/enroll-sas`, commitment, p.ephemeral_public_key, p.commit_nonce, p.approver_nonce)));
  same(`pairing ${n} sas (core)`, pairingSas(profile, { ...p, commitment }), sas);
  return {
    name: `pairing-${n}`,
    ephemeral_public_key: p.ephemeral_public_key,
    commit_nonce: p.commit_nonce,
    approver_nonce: p.approver_nonce,
    commitment,
    sas,
    rules: ruleIds('ra.pairing.commitment', 'ra.pairing.sas'),
  };
});
export const shortCodeCases: Array<[string, string | null]> = [
  ['K7QM4XP2', 'K7QM4XP2'],
  ['k7qm-4xp2', 'K7QM4XP2'],
  [' K7QM 4XP2 ', 'K7QM4XP2'],
  ['K7QM\u20134XP2', 'K7QM4XP2'],
  ['K7QM\u20144XP2', 'K7QM4XP2'],
  ['K7QM_4XP2', 'K7QM4XP2'],
  ['K7QM.4XP2', 'K7QM4XP2'],
  ['O0IL-1234', '00111234'],
  ['oil0-ilo1', '01101101'],
  ['K7QM-4XP', null],
  ['K7QM-4XP23', null],
  ['K7QU-4XP2', null],
  ['K7QM-4XP!', null],
  ['K7QM/4XP2', null],
  ['', null],
];
export const shortCodes = shortCodeCases.map(([input, code]) => {
  same(`pairing short code ${JSON.stringify(input)} (core)`, normalizeShortCode(input) ?? null, code);
  return { input, code: code ?? '', valid: code !== null, rules: ruleIds('ra.pairing.short-code', 'ns.reference.code') };
});
emit(
  'pairing',
  'pairing',
  `Device pairing (document 3, Pairing): \`pairings\` give the commitment (base64url SHA-256 of \`${NAME}/v2/enroll-commit\`, the ephemeral key and the commit nonce, each as base64url text) and the six-digit comparison code (SHA-256 of \`${NAME}/v2/enroll-sas\`, commitment, ephemeral key, commit nonce, approver nonce; first 8 bytes big-endian modulo 10^6). Inputs are SHA-256 of \`${NAME}-conformance/pairing/<n>/<field>\`. \`short_codes\` give the loose reading of the 8-character Crockford base32 rendezvous code: case-insensitive, spaces, dashes of every kind, underscores and dots ignored, O read as 0, I and L as 1; anything else, or another length, is invalid.`,
  { pairings, short_codes: shortCodes },
  pairings.length + shortCodes.length,
);
