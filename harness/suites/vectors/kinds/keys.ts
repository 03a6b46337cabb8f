// Keys and documents: fingerprints.json, ed25519.json (the strictness decision), documents.json
// (identity documents: canonical form, signature, key validity) and session-proofs.json.
import type { Check } from '../../../run/model.ts';
import { decodeBase64Any } from '../../../../protocol/common/base64.ts';
import { parseKey, formatKey } from '../../../../protocol/common/keys.ts';
import { parseRfc3339 } from '../../../../protocol/common/time.ts';
import * as noble from '../../../impl/noble.ts';
import { ruleIds, vectorCheck, listOf, nameOf, type KindContext } from '../check.ts';

function nobleFingerprint(literal: string, key: string, kind: 'signing' | 'encryption'): string {
  const bytes = parseKey(key, kind);
  if (!bytes) return '';
  const d = noble.sha256(`${literal}\n${formatKey(bytes, kind)}`);
  const groups: string[] = [];
  for (let i = 0; i < 4; i++) {
    let n = 0;
    for (let j = 0; j < 5; j++) n = n * 256 + d[i * 5 + j]!;
    groups.push(String(n % 100_000).padStart(5, '0'));
  }
  return groups.join(' ');
}

export function fingerprintChecks(kc: KindContext): Check[] {
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i, 'key'), ['ra.key-fingerprint', ...ruleIds(v.rules)], (expect) => {
      const kind = v.kind === 'encryption' ? 'encryption' : 'signing';
      const fp = kc.core.keyFingerprint(kc.profile, String(v.key), kind);
      expect.equal('valid', fp !== undefined, v.valid);
      if (v.valid) {
        expect.equal('fingerprint (core)', fp, v.fingerprint);
        expect.equal('fingerprint (noble)', nobleFingerprint(kc.profile.ids.fingerprint_literal, String(v.key), kind), v.fingerprint);
      }
    }),
  );
}

export function ed25519Checks(kc: KindContext): Check[] {
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), ['ns.ed25519.strict', 'ns.response.signature', ...ruleIds(v.rules)], (expect) => {
      const pub = decodeBase64Any(String(v.public_key)) ?? new Uint8Array();
      const sig = decodeBase64Any(String(v.signature)) ?? new Uint8Array();
      const msg = String(v.message ?? '');
      expect.agree(`verification (${String(v.rule ?? 'valid')})`, kc.core.verifyEd25519(pub, msg, sig), noble.verify(pub, msg, sig), v.valid as boolean);
    }),
  );
}

export function documentChecks(kc: KindContext): Check[] {
  const { core } = kc;
  return listOf(kc.file).map((v, i) =>
    vectorCheck(kc, nameOf(v, i), ['ns.identity-document.format', 'ns.identity-document.previous-keys', ...ruleIds(v.rules)], (expect) => {
      const doc = v.document as Record<string, unknown>;
      const canonical = core.documentCanonical(doc);
      if (v.canonical !== undefined) expect.equal('canonical document', canonical, v.canonical);
      const valid = v.valid === undefined ? true : v.valid === true;
      expect.equal('document verifies', core.verifyDocument(doc).ok, valid);
      const key = parseKey(doc.public_key);
      const sig = decodeBase64Any(String(doc.signature ?? '')) ?? new Uint8Array();
      if (key) expect.agree('signature over the canonical form', core.verifyEd25519(key, canonical, sig), noble.verify(key, canonical, sig), valid);
      // key_valid: at the vector's `at`, or (interop files carry no instant) at updated_at.
      const at = parseRfc3339(v.at ?? doc.updated_at);
      const current = parseKey(doc.public_key);
      for (const [k, expected] of Object.entries((v.key_valid as Record<string, boolean>) ?? {})) {
        const candidate = parseKey(k);
        const actual = candidate !== undefined && current !== undefined && at !== undefined && core.keyValidAt(current, core.previousKeys(doc), candidate, at);
        expect.equal(`key ${k} valid at ${String(v.at ?? doc.updated_at)}`, actual, expected);
      }
    }),
  );
}

export function sessionProofChecks(kc: KindContext): Check[] {
  const file = kc.file as { identity: string; identity_key: string };
  const identityKey = parseKey(file.identity_key);
  return listOf(kc.file).map((v, i) =>
    vectorCheck(
      kc,
      nameOf(v, i),
      ['ns.session-proof.fields', 'ns.session-proof.validation', 'ns.session-proof.signature', 'ns.session-proof.signed-lines', ...ruleIds(v.rule ? [v.rule] : []), ...ruleIds(v.rules)],
      (expect) => {
        const now = parseRfc3339(v.now) ?? Number.NaN;
        const result = kc.core.checkSessionProof(kc.profile, file.identity, v.proof, now, () => (identityKey ? [identityKey] : []));
        expect.equal('valid', result.ok, v.valid);
        if (!result.ok && v.rule) expect.equal('failing rule', result.rule, v.rule);
      },
    ),
  );
}
