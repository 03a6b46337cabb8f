// npm run vectors: Session proofs (document 1, Session proof): session-proofs.json.

import { limits } from '../../schemas/ts/limits.ts';
import { signEd25519 } from '../../protocol/common/ed25519.ts';
import { checkSessionProof } from '../../protocol/signin/session-proof.ts';
import { parseRfc3339, formatRfc3339 } from '../../protocol/common/time.ts';
import { check, same, type Json, ruleIds, b64u, fromB64u, utf8 } from './check.ts';
import { profile, edKey, NOW_TEXT, ALICE, alice, aliceKey, bobKey, session, sessionKey } from './fixtures.ts';
import { emit } from './emit.ts';
import { registrationString, makeProof, fixtureProof } from './proofs.ts';
import { longProof, stdBase64 } from './signin.ts';


export const proofKeysAt = (t: number) => [aliceKey.pub, ...(alice.previous_keys ?? []).filter((p) => t <= parseRfc3339(p.valid_until)!).map((p) => edKey(p.key).pub)];
export const withoutField = (p: Json, field: string): Json => Object.fromEntries(Object.entries(p).filter(([k]) => k !== field));
export const sessionPub = b64u(sessionKey.pub);
check(/[-_]/.test(sessionPub), 'the session key must contain - or _ so its standard base64 form differs');
export const reSigned = (fields: Json): Json => {
  // Signed over the key re-encoded as base64url without padding, whatever form the proof carries.
  const signed = registrationString(ALICE, sessionPub, String(fields.issued_at), String(fields.expires_at), String(fields.nonce));
  return { ...fields, identity_signature: b64u(signEd25519(aliceKey.seed, signed)) };
};
export const flippedSignature = (() => {
  const s = fromB64u(fixtureProof.identity_signature as string);
  s[10] = s[10]! ^ 0x20;
  return b64u(s);
})();
export const shortKey = b64u(sessionKey.pub.subarray(0, 31));
export const proofCases: Array<{ name: string; proof: Json; now?: string; rule: string | null; rules?: string[] }> = [
  { name: 'valid', proof: fixtureProof, rule: null },
  { name: 'valid-at-expires-at', proof: fixtureProof, now: session.expires_at, rule: null },
  { name: 'expired', proof: fixtureProof, now: formatRfc3339(parseRfc3339(session.expires_at)! + 1000), rule: 'ns.session-proof.validation' },
  {
    name: 'ttl-exactly-24-hours',
    proof: makeProof({ issuedAt: session.issued_at, expiresAt: formatRfc3339(parseRfc3339(session.issued_at)! + limits.session_ttl_max_seconds * 1000), nonce: b64u(utf8('session-nonce-24h')) }),
    rule: null,
    rules: ['ns.session-proof.ttl', 'ns.limits.session-ttl'],
  },
  { name: 'ttl-24-hours-plus-1-second', proof: longProof, rule: 'ns.session-proof.ttl', rules: ['ns.limits.session-ttl'] },
  {
    name: 'expires-before-issued',
    proof: makeProof({ issuedAt: session.expires_at, expiresAt: session.issued_at, nonce: b64u(utf8('session-nonce-backwards')) }),
    rule: 'ns.session-proof.validation',
  },
  { name: 'missing-nonce', proof: withoutField(fixtureProof, 'nonce'), rule: 'ns.session-proof.fields' },
  { name: 'missing-identity-signature', proof: withoutField(fixtureProof, 'identity_signature'), rule: 'ns.session-proof.fields' },
  { name: 'empty-session-public-key', proof: { ...fixtureProof, session_public_key: '' }, rule: 'ns.session-proof.fields' },
  { name: 'not-rfc3339-issued-at', proof: reSigned({ ...fixtureProof, issued_at: '2026-01-15 08:00:00' }), rule: 'ns.session-proof.validation' },
  { name: 'not-rfc3339-expires-at-no-zone', proof: reSigned({ ...fixtureProof, expires_at: '2026-01-15T20:00:00' }), rule: 'ns.session-proof.validation' },
  { name: 'session-key-31-bytes', proof: { ...reSigned(fixtureProof), session_public_key: shortKey }, rule: 'ns.session-proof.key-encoding' },
  { name: 'session-key-not-base64', proof: { ...fixtureProof, session_public_key: `${sessionPub.slice(0, 40)}!!!` }, rule: 'ns.session-proof.key-encoding' },
  { name: 'bad-signature', proof: { ...fixtureProof, identity_signature: flippedSignature }, rule: 'ns.session-proof.signature' },
  { name: 'signed-by-the-session-key', proof: makeProof({ issuedAt: session.issued_at, expiresAt: session.expires_at, nonce: session.nonce, signer: sessionKey }), rule: 'ns.session-proof.signature' },
  { name: 'signed-by-another-identity', proof: makeProof({ issuedAt: session.issued_at, expiresAt: session.expires_at, nonce: session.nonce, signer: bobKey }), rule: 'ns.session-proof.signature' },
  { name: 'session-key-padded-base64url', proof: { ...fixtureProof, session_public_key: `${sessionPub}=` }, rule: null, rules: ['ns.session-proof.key-encoding'] },
  { name: 'session-key-standard-base64', proof: { ...fixtureProof, session_public_key: stdBase64(sessionKey.pub) }, rule: null, rules: ['ns.session-proof.key-encoding'] },
  {
    name: 'identity-signature-standard-base64',
    proof: { ...fixtureProof, identity_signature: stdBase64(fromB64u(fixtureProof.identity_signature as string)) },
    rule: null,
    rules: ['ns.session-proof.signature'],
  },
];
export const proofVectors = proofCases.map((c) => {
  const nowText = c.now ?? NOW_TEXT;
  const result = checkSessionProof(profile, ALICE, c.proof, parseRfc3339(nowText)!, proofKeysAt);
  same(`session-proofs ${c.name} valid (core${result.ok ? '' : `: ${result.rule} ${result.detail}`})`, result.ok, c.rule === null);
  if (!result.ok) same(`session-proofs ${c.name} failing rule (core: ${result.detail})`, result.rule, c.rule);
  const v: Json = { name: c.name, proof: c.proof, now: nowText, valid: c.rule === null };
  if (c.rule !== null) v.rule = c.rule;
  v.rules = ruleIds(...(c.rule ? [c.rule] : ['ns.session-proof.fields', 'ns.session-proof.validation', 'ns.session-proof.signature']), ...(c.rules ?? []), 'ns.session-proof.signed-lines');
  return v;
});
emit(
  'session-proofs',
  'session-proofs',
  `Session proofs (document 1, Session proof), checked for \`identity\` whose long-lived key is \`identity_key\`, at the vector's \`now\`: complete (five non-empty string fields), RFC 3339 timestamps, expires_at later than issued_at, not expired (now at most expires_at), span at most ${limits.session_ttl_max_seconds / 3600} hours, session_public_key 32 bytes in any base64 variant, and identity_signature (any base64 variant) over the session-registration lines with the session key re-encoded as base64url without padding. \`rule\` is the ns.session-proof.* rule that rejects an invalid proof.`,
  { identity: ALICE, identity_key: aliceKey.text, vectors: proofVectors },
  proofVectors.length,
);
