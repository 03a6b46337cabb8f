// Payload vectors: pairing.json (commitments, comparison codes, short codes), encryption.json and
// message-seal-v1.json (message sealing), profiles.json and requests.json (the encoded form).
import type { Check } from '../../../run/model.ts';
import { decodeBase64Any, encodeBase64url } from '../../../../protocol/common/base64.ts';
import { compactJson } from '../../../../protocol/common/json.ts';
import * as noble from '../../../impl/noble.ts';
import { ruleIds, vectorCheck, listOf, nameOf, type KindContext } from '../check.ts';

export function pairingChecks(kc: KindContext): Check[] {
  const { core, profile } = kc;
  const file = kc.file as { pairings?: Record<string, string>[]; short_codes?: Record<string, unknown>[] };
  const pairings = (file.pairings ?? []).map((v, i) =>
    vectorCheck(kc, `pairing:${v.name ?? i}`, ['ra.pairing.commitment', 'ra.pairing.sas'], (expect) => {
      const commitment = core.pairingCommitment(profile, { ephemeral_public_key: v.ephemeral_public_key!, commit_nonce: v.commit_nonce! });
      expect.equal('commitment (core)', commitment, v.commitment);
      expect.equal('commitment (noble)', encodeBase64url(noble.sha256(`${profile.ids.pairing_commit_literal}\n${v.ephemeral_public_key}\n${v.commit_nonce}`)), v.commitment);
      expect.equal(
        'six-digit code',
        core.pairingSas(profile, { commitment: v.commitment!, ephemeral_public_key: v.ephemeral_public_key!, commit_nonce: v.commit_nonce!, approver_nonce: v.approver_nonce! }),
        v.sas,
      );
    }),
  );
  const codes = (file.short_codes ?? []).map((v, i) =>
    vectorCheck(kc, `short-code:${nameOf(v, i)}`, ['ra.pairing.short-code', 'ns.reference.code'], (expect) => {
      const code = core.normalizeShortCode(String(v.input));
      expect.equal('valid', code !== undefined, v.valid);
      if (v.valid) expect.equal('code', code, v.code);
    }),
  );
  return [...pairings, ...codes];
}

export function encryptionChecks(kc: KindContext): Check[] {
  const domain = kc.profile.ids.message_seal_domain;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), ['ra.seal.message', ...ruleIds(v.rules)], (expect) => {
      const b = (k: string) => decodeBase64Any(String(v[k] ?? '')) ?? new Uint8Array();
      const sealed = { ciphertext: b('ciphertext'), ephemeralPublicKey: b('ephemeral_public_key'), nonce: b('nonce') };
      const valid = v.valid !== false;
      const core = kc.core.openMessage(kc.profile, b('recipient_private_key'), sealed);
      const nob = noble.openMessage(domain, b('recipient_private_key'), sealed.ephemeralPublicKey, sealed.nonce, sealed.ciphertext);
      expect.agree('opens', core !== undefined, nob !== undefined, valid);
      if (valid) {
        expect.equal('plaintext (core)', core && encodeBase64url(core), v.plaintext);
        expect.equal('plaintext (noble)', nob && encodeBase64url(nob), v.plaintext);
      }
    }),
  );
}

export function profileChecks(kc: KindContext): Check[] {
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), ['ob.profile.document', ...ruleIds(v.rules)], (expect) => {
      const r = kc.core.checkProfileDocument(v.raw);
      expect.equal('valid', r.ok, v.valid);
    }),
  );
}

/** The relay's validated system documents (contacts.json, inbox-policy.json): the verdict on write. */
const documentChecks = (rule: 'ra.system.contacts' | 'ra.system.inbox-policy', check: (raw: unknown) => { ok: boolean }) =>
  function (kc: KindContext): Check[] {
    return listOf(kc.file).map((v, i) =>
      vectorCheck(kc, nameOf(v, i), [rule, ...ruleIds(v.rules)], (expect) => {
        expect.equal('valid', check(v.raw).ok, v.valid);
      }),
    );
  };

export const contactsChecks = (kc: KindContext): Check[] => documentChecks('ra.system.contacts', kc.core.checkContacts)(kc);
export const inboxPolicyChecks = (kc: KindContext): Check[] => documentChecks('ra.system.inbox-policy', kc.core.checkInboxPolicy)(kc);

export function requestChecks(kc: KindContext): Check[] {
  const { core } = kc;
  const file = kc.file as { invalid?: Record<string, unknown>[] };
  const valid = listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), ['ns.encoding.compact', 'ns.encoding.decode', ...ruleIds(v.rules)], (expect) => {
      const request = v.request as Record<string, unknown>;
      expect.equal('encoded form', core.encodeObject(request), v.encoded);
      const forms = { encoded: v.encoded, ...((v.forms as Record<string, unknown>) ?? {}) };
      for (const [form, text] of Object.entries(forms)) {
        const decoded = core.decodeObject(String(text));
        expect.equal(`decoded from ${form}`, decoded.ok ? compactJson(decoded.value) : decoded.reason, compactJson(request));
      }
    }),
  );
  const invalid = (file.invalid ?? []).map((v, i) =>
    vectorCheck(kc, `invalid:${nameOf(v, i)}`, ['ns.encoding.decode'], (expect) => {
      expect.equal('decodes', core.decodeObject(String(v.input)).ok, false);
    }),
  );
  return [...valid, ...invalid];
}
