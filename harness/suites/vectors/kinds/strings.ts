// Signed strings (canonical.json) and digests (digests.json): every string is rebuilt from its
// inputs by the core; signatures are re-made from the seed and verified by both implementations.
import { signingSpec, type SignedStringName } from '../../../../schemas/ts/signing.ts';
import type { Check } from '../../../run/model.ts';
import { decodeBase64Any, encodeBase64url } from '../../../../protocol/common/base64.ts';
import * as noble from '../../../impl/noble.ts';
import { ruleIds, vectorCheck, listOf, type KindContext } from '../check.ts';

const names = Object.keys(signingSpec.strings) as SignedStringName[];

/** The signing entry a vector exercises: its `string` field, else the longest name prefix. */
export function stringFor(v: Record<string, unknown>): SignedStringName | undefined {
  if (typeof v.string === 'string') return names.includes(v.string as SignedStringName) ? (v.string as SignedStringName) : undefined;
  const name = String(v.name ?? '');
  return names.filter((n) => name === n || name.startsWith(`${n}-`)).sort((a, b) => b.length - a.length)[0];
}

export function canonicalChecks(kc: KindContext): Check[] {
  const file = kc.file as { seed_base64url: string; public_key_base64url: string };
  const seed = decodeBase64Any(file.seed_base64url);
  if (seed?.length !== 32) throw new Error(`${kc.source}: seed_base64url is not a 32-byte seed`);
  const { core, profile } = kc;
  const keyCheck = vectorCheck(kc, 'public-key', ['ns.response.signature', 'ns.ed25519.strict'], (expect) => {
    expect.equal('public key from seed (core)', encodeBase64url(core.publicKeyFromSeed(seed)), file.public_key_base64url);
    expect.equal('public key from seed (noble)', encodeBase64url(noble.publicKey(seed)), file.public_key_base64url);
  });
  const pub = core.publicKeyFromSeed(seed);
  return [
    keyCheck,
    ...listOf(kc.file).map((v, i) => {
      const name = stringFor(v);
      const rules = ruleIds(name ? [signingSpec.strings[name].rule, 'ra.signing.format'] : ['ra.signing.format']);
      return vectorCheck(kc, String(v.name ?? i), [...rules, ...ruleIds(v.rules)], (expect) => {
        if (!name) return void expect.that(false, `no entry of spec/signing.yaml matches vector ${String(v.name)}`);
        const canonical = core.canonicalString(profile, name, v.inputs as Record<string, unknown>);
        expect.equal(`canonical ${name} string`, canonical, v.canonical);
        expect.equal('signature made from the seed (core)', encodeBase64url(core.signEd25519(seed, canonical)), v.signature);
        expect.equal('signature made from the seed (noble)', encodeBase64url(noble.sign(seed, canonical)), v.signature);
        const sig = decodeBase64Any(String(v.signature)) ?? new Uint8Array();
        expect.agree('signature verifies', core.verifyEd25519(pub, canonical, sig), noble.verify(pub, canonical, sig), true);
      });
    }),
  ];
}

export function digestChecks(kc: KindContext): Check[] {
  const { core, profile } = kc;
  return listOf(kc.file).map((v, i) => {
    const name = stringFor(v);
    const rules = ruleIds(name ? [signingSpec.strings[name].rule] : ['ra.signing.format']);
    return vectorCheck(kc, String(v.name ?? i), [...rules, ...ruleIds(v.rules)], (expect) => {
      const inputs = v.inputs as Record<string, string>;
      if (!name) return void expect.that(false, `no digest entry matches ${String(v.name)}`);
      if (name === 'key-fingerprint') {
        expect.equal('fingerprint', core.keyFingerprint(profile, inputs.key!, (inputs.kind as 'signing' | 'encryption') ?? 'signing'), v.output);
        return;
      }
      const canonical = core.canonicalString(profile, name, inputs);
      expect.equal(`canonical ${name} string`, canonical, v.canonical);
      if (name === 'pairing-commitment') {
        expect.equal('commitment (core)', core.pairingCommitment(profile, inputs as never), v.output);
        expect.equal('commitment (noble)', encodeBase64url(noble.sha256(canonical)), v.output);
      } else if (name === 'pairing-sas') {
        expect.equal('sas (core)', core.pairingSas(profile, inputs as never), v.output);
        const d = noble.sha256(canonical);
        expect.equal('sas (noble)', (new DataView(d.buffer, d.byteOffset).getBigUint64(0) % 1_000_000n).toString().padStart(6, '0'), v.output);
      } else if (name === 'pairwise-subject') {
        const secret = decodeBase64Any(String(v.secret_base64url)) ?? new Uint8Array();
        expect.equal('sub (core)', core.pairwiseSubject(profile, secret, inputs.sector!, inputs.identity!), v.output);
        expect.equal('sub (noble)', encodeBase64url(noble.hmacSha256(secret, canonical)), v.output);
      }
    });
  });
}
