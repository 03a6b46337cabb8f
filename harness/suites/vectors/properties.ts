// Property checks of the implementation under test (fast-check; --seed, --runs and --replay
// apply): random test identities sign valid approvals that must pass, every single-field
// mutation of one must be refused by the rule for that field, and the two Ed25519
// implementations must agree on random and mutated inputs.
import fc from 'fast-check';
import type { Check } from '../../run/model.ts';
import { propertyCheck } from '../../run/property.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { MemoryNonceStore } from '../../../protocol/signin/nonce.ts';
import { StaticResolver } from '../../../protocol/signin/resolver.ts';
import { signApproval } from '../../../protocol/signin/signer.ts';
import { formatRfc3339 } from '../../../protocol/common/time.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import * as noble from '../../impl/noble.ts';
import { strongest } from './check.ts';
import type { Core } from './core.ts';

const ORIGIN = 'https://rp.example.com';
const NOW = Date.UTC(2026, 0, 15, 9, 30);

const approvalInput = fc.record({
  seed: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  label: fc.stringMatching(/^[a-z][a-z0-9]{0,20}$/),
  requestId: fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
  nonce: fc.uint8Array({ minLength: 16, maxLength: 32 }).map(encodeBase64url),
  issuedOffset: fc.integer({ min: -120, max: 60 }),
  span: fc.integer({ min: 1, max: 300 }),
  action: fc.constantFrom('signin', 'signup', 'link'),
  statement: fc.option(
    fc.string({ maxLength: 80 }).filter((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s)),
    { nil: undefined },
  ),
  scopes: fc.subarray(['messages:send', 'profile:read']),
});

type ApprovalInput = typeof approvalInput extends fc.Arbitrary<infer T> ? T : never;

function build(profile: Profile, a: ApprovalInput) {
  const identity = `${a.label}.example.org`;
  const issuedAt = Math.floor(NOW / 1000) * 1000 + a.issuedOffset * 1000;
  const request = {
    [profile.ids.auth_field]: '1',
    request_id: a.requestId,
    audience: ORIGIN,
    nonce: a.nonce,
    issued_at: formatRfc3339(issuedAt),
    expires_at: formatRfc3339(Math.max(issuedAt + a.span * 1000, NOW)),
    action: a.action,
    ...(a.statement === undefined ? {} : { statement: a.statement }),
    scopes: a.scopes,
  };
  return { identity, response: signApproval(profile, request, { identity, seed: a.seed }) };
}

// Which rules may refuse a change to each field: the rule of the field's own check, or rule 7
// when the change keeps the field well-formed but breaks the signature.
const MUTATIONS: Record<string, { values: unknown[]; rules: number[] }> = {
  auth: { values: ['2', '', 1, null], rules: [1] },
  request_id: { values: ['x', '', 7], rules: [1, 7] },
  identity: { values: ['mallory.example.org', 'nodots', ''], rules: [1, 6, 7] },
  audience: { values: ['https://evil.example', 'not a url', 'http://rp.example.com', ''], rules: [1, 2] },
  nonce: { values: ['AAAAAAAAAAAAAAAAAAAAAA', ''], rules: [1, 7] },
  issued_at: { values: ['2026-01-15T09:29:59Z', 'yesterday', '2026-01-15T10:00:00Z', ''], rules: [1, 4, 7] },
  expires_at: { values: ['2026-01-15T09:34:00Z', '2026-01-15 09:31:00', '2026-01-16T09:31:00Z'], rules: [1, 4, 7] },
  action: { values: ['signin', 'link', 'delete', null], rules: [1, 3, 7] },
  statement: { values: ['edited', 'line\nbreak', 'x'.repeat(301)], rules: [3, 7] },
  scopes: { values: [['messages:send'], ['profile:read', 'messages:send'], ['dav:rw:apps'], []], rules: [3, 7] },
  key_id: { values: ['session:abc', 'other', ''], rules: [1, 7] },
  signature: { values: ['AAAA', 'not base64!'], rules: [7] },
};

export function propertyChecks(profile: Profile, core: Core, source: string): Check[] {
  const rules = ['ns.verify.1', 'ns.verify.2', 'ns.verify.3', 'ns.verify.4', 'ns.verify.6', 'ns.verify.7', 'ns.verify.order', 'ns.canonical.lines'];
  const mutation = propertyCheck({
    id: `vectors/${source}#single-field-mutation`,
    title: 'a valid approval passes, and any single-field change to it is refused by the right rule',
    suite: 'vectors',
    rules,
    level: strongest(rules),
    arbitrary: fc.tuple(approvalInput, fc.constantFrom(...Object.keys(MUTATIONS)), fc.nat()),
    predicate: async ([input, field, pick]) => {
      const { identity, response } = build(profile, input);
      const fresh = () =>
        core.createVerifier({ profile, origin: ORIGIN, resolver: new StaticResolver().set(identity, core.publicKeyFromSeed(input.seed)), nonces: new MemoryNonceStore(() => NOW), now: () => NOW });
      const accepted = await fresh()(response);
      if (!accepted.ok) return { ok: false, detail: `the unmutated approval was refused: rule ${accepted.rule} ${accepted.code}`, evidence: { response } };
      const m = MUTATIONS[field]!;
      const key = field === 'auth' ? profile.ids.auth_field : field;
      const value = m.values[pick % m.values.length];
      if (JSON.stringify(response[key]) === JSON.stringify(value)) return true; // not a change
      const mutated = { ...response, [key]: value };
      const verdict = await fresh()(mutated);
      if (verdict.ok) return { ok: false, detail: `changing ${key} to ${JSON.stringify(value)} was accepted`, evidence: { mutated } };
      if (!m.rules.includes(verdict.rule)) return { ok: false, detail: `changing ${key} was refused by rule ${verdict.rule}, expected one of ${m.rules.join(', ')}`, evidence: { mutated, verdict } };
      return true;
    },
  });

  const edRules = ['ns.ed25519.strict', 'ns.response.signature'];
  const agreement = propertyCheck({
    id: `vectors/${source}#ed25519-agreement`,
    title: 'node:crypto and noble agree on random signatures and on every one-bit change of them',
    suite: 'vectors',
    rules: edRules,
    level: strongest(edRules),
    arbitrary: fc.tuple(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), fc.nat(511), fc.nat(255)),
    predicate: ([seed, message, bit, keyByte]) => {
      const pub = core.publicKeyFromSeed(seed);
      const sig = core.signEd25519(seed, message);
      if (!core.verifyEd25519(pub, message, sig) || !noble.verify(pub, message, sig)) return { ok: false, detail: 'a fresh signature did not verify in both' };
      const flipped = Uint8Array.from(sig);
      flipped[bit >> 3]! ^= 1 << (bit & 7);
      const otherKey = Uint8Array.from(pub);
      otherKey[keyByte % 32]! ^= 1;
      for (const [k, s] of [
        [pub, flipped],
        [otherKey, sig],
      ] as const) {
        const a = core.verifyEd25519(k, message, s);
        const b = noble.verify(k, message, s);
        if (a !== b) return { ok: false, detail: `core says ${a}, noble says ${b}`, evidence: { key: encodeBase64url(k), signature: encodeBase64url(s) } };
      }
      return true;
    },
  });
  return [mutation, agreement];
}
