// Sign-in approvals (signin.json, signin-boundaries.json): each vector runs through the verifier
// in file order with one nonce cache (a replay vector replays an earlier one), and the rule that
// rejects it must be the one its `reason` names. The signature is also checked on its own by the
// core and by noble, which must agree.
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import type { Check } from '../../../run/model.ts';
import { parseKey } from '../../../../protocol/common/keys.ts';
import { parseRfc3339 } from '../../../../protocol/common/time.ts';
import { decodeBase64Any } from '../../../../protocol/common/base64.ts';
import { MemoryNonceStore } from '../../../../protocol/signin/nonce.ts';
import { ResolutionError, type Resolver } from '../../../../protocol/signin/resolver.ts';
import type { PreviousKey } from '../../../../protocol/common/document.ts';
import type { Verdict } from '../../../../protocol/signin/verifier.ts';
import * as noble from '../../../impl/noble.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { ruleIds, vectorCheck, type KindContext } from '../check.ts';
import { once } from '../../../run/once.ts';

interface SigninVector {
  name: string;
  origin: string;
  now?: string;
  response: Record<string, unknown>;
  canonical?: string;
  valid: boolean;
  reason?: string;
  signature_valid?: boolean;
  rules?: string[];
}
interface SigninFile {
  identity_key: string;
  now: string;
  previous_keys?: Array<{ public_key: string; valid_until?: string }>;
  unresolvable?: string[];
  vectors: SigninVector[];
}

const REASONS: Readonly<Record<string, number>> = vocabulary.signin_vector_reasons.map;
const ACCEPTED = [
  'ns.verify.order',
  'ns.verify.1',
  'ns.verify.2',
  'ns.verify.3',
  'ns.verify.4',
  'ns.verify.5',
  'ns.verify.6',
  'ns.verify.7',
  'ns.canonical.format',
  'ns.canonical.lines',
  'ns.response.signature',
  'ns.ed25519.strict',
  'ns.nonce.cache-key',
];

function rulesFor(v: SigninVector): RuleId[] {
  const rules: string[] = ['ns.canonical.lines', ...(v.rules ?? [])];
  if (v.valid) {
    rules.push(...ACCEPTED);
    if (v.response.session_proof) rules.push('ns.auth.2', 'ns.auth.2.session-proof', 'ns.session-proof.signed-lines', 'ns.session-proof.signature', 'ns.session-proof.validation');
    if (!v.response.statement) rules.push('ns.canonical.statement-empty');
    if (!Array.isArray(v.response.scopes) || v.response.scopes.length === 0) rules.push('ns.canonical.scopes-joined', 'ns.request.scopes-login-only');
  } else {
    const rule = REASONS[v.reason ?? ''];
    if (rule !== undefined) rules.push(`ns.verify.${rule}`, 'ns.verify.order');
    if (v.reason === 'replay') rules.push('ns.nonce.single-use', 'ns.nonce.cache-key');
    if (v.reason === 'proof') rules.push('ns.auth.2.session-proof');
  }
  return ruleIds(rules);
}

export function signinChecks(kc: KindContext): Check[] {
  const file = kc.file as SigninFile;
  const { profile, core } = kc;
  const identityKey = parseKey(file.identity_key);
  if (!identityKey) throw new Error(`${kc.source}: identity_key does not parse`);
  const previous: PreviousKey[] = (file.previous_keys ?? []).flatMap((p) => {
    const publicKey = parseKey(p.public_key);
    if (!publicKey) return [];
    const validUntil = parseRfc3339(p.valid_until);
    return [validUntil === undefined ? { publicKey } : { publicKey, validUntil }];
  });
  const unresolvable = new Set(file.unresolvable ?? []);
  const resolver: Resolver = {
    async resolve(identity) {
      if (unresolvable.has(identity)) throw new ResolutionError('not_found', `${identity} publishes no key`);
      return { identity, publicKey: identityKey, previousKeys: previous, source: 'vector file' };
    },
  };

  // Every vector in order, once, with one nonce cache and a clock that follows each vector.
  let clock = 0;
  const nonces = new MemoryNonceStore(() => clock);
  const verdicts = once(async () => {
    const out = new Map<string, Verdict>();
    for (const v of file.vectors) {
      clock = parseRfc3339(v.now ?? file.now) ?? Number.NaN;
      const verify = core.createVerifier({ profile, origin: v.origin, resolver, nonces, now: () => clock });
      out.set(v.name, await verify(v.response));
    }
    return out;
  });

  return file.vectors.map((v) =>
    vectorCheck(kc, v.name, rulesFor(v), async (expect) => {
      // A response missing a signed field has no signing string; it must then be refused.
      let canonical: string | undefined;
      try {
        canonical = core.canonicalString(profile, 'signin', v.response);
      } catch {
        expect.that(!v.valid, 'the signing string cannot be built from this valid response');
      }
      if (canonical !== undefined && v.canonical !== undefined) expect.equal('canonical string', canonical, v.canonical);

      const verdict = (await verdicts()).get(v.name)!;
      if (v.valid) expect.that(verdict.ok, `expected acceptance, rejected by rule ${verdict.ok ? '' : `${verdict.rule} (${verdict.code}: ${verdict.detail})`}`);
      else {
        const rule = REASONS[v.reason ?? ''];
        if (verdict.ok) expect.that(false, `expected rejection (${v.reason}), but the verifier accepted it`);
        else if (rule !== undefined) expect.equal(`rejecting rule for reason ${v.reason}`, `rule ${verdict.rule}`, `rule ${rule}`);
      }

      // The signature on its own, by both implementations, against every key the vector could use.
      if (canonical === undefined) return;
      const signature = decodeBase64Any(String(v.response.signature ?? '')) ?? new Uint8Array();
      const proof = v.response.session_proof as Record<string, unknown> | undefined;
      const sessionKey = proof ? parseKey(proof.session_public_key) : undefined;
      const keys = sessionKey ? [sessionKey] : [identityKey, ...previous.map((p) => p.publicKey)];
      const coreSig = keys.some((k) => core.verifyEd25519(k, canonical, signature));
      const nobleSig = keys.some((k) => noble.verify(k, canonical, signature));
      expect.agree('signature over the canonical string', coreSig, nobleSig, v.signature_valid ?? (v.valid ? true : undefined));
    }),
  );
}
