// Each signed part swapped alone (the matrix's binding cells, spec/facets/rp.yaml): the approval is
// delivered exactly as the RP issued its request and the signer signed it, except that its
// signature (or its session proof's identity signature) was made over one part with another valid
// value. Rules 1 to 6 pass on the delivered fields, so only the signature can refuse it: an RP
// that accepts it does not bind that part.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import type { RuleId } from '../../../../../schemas/ts/rules.ts';
import { canonicalString } from '../../../../../protocol/common/canonical.ts';
import { signEd25519 } from '../../../../../protocol/common/ed25519.ts';
import { encodeBase64url } from '../../../../../protocol/common/base64.ts';
import { vocabulary } from '../../../../../schemas/ts/vocabulary.ts';
import { isoShift, sign } from '../../driver.ts';
import { type MutationContext, type Scenario, session, sessionApproval, R } from './scenario.ts';

/** Another value of the same form: its last character changed. */
const lastChanged = (v: unknown): string => {
  const s = String(v);
  return s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
};

/** Another 32-byte key in the same encoding: the last character keeps its two zero bits (unpadded base64url of 32 bytes). */
const otherKey = (v: unknown): string => {
  const s = String(v);
  return s.slice(0, -1) + (s.endsWith('A') ? 'E' : 'A');
};

/** The same host under the other scheme (a valid origin, not this RP's). */
const otherScheme = (v: unknown): string => (String(v).startsWith('https:') ? String(v).replace(/^https:/, 'http:') : String(v).replace(/^http:/, 'https:'));

/** The genuine approval with its signature made over `changes` instead. */
function signedOver(m: MutationContext, changes: Record<string, unknown>): Record<string, unknown> {
  return { ...m.genuine, signature: encodeBase64url(signEd25519(m.who.seed, canonicalString(m.profile, 'signin', { ...m.genuine, ...changes }))) };
}

interface Swap {
  part: string;
  what: string;
  start?: Scenario['start'];
  changes: (m: MutationContext) => Record<string, unknown>;
}

const SWAPS: Swap[] = [
  { part: 'identity', what: 'another identity (a prefix added)', changes: (m) => ({ identity: `x${m.who.identity}` }) },
  { part: 'audience', what: 'the same host under the other scheme', changes: (m) => ({ audience: otherScheme(m.request.audience) }) },
  { part: 'nonce', what: 'another nonce', changes: (m) => ({ nonce: lastChanged(m.request.nonce) }) },
  { part: 'request-id', what: 'another request_id', changes: (m) => ({ request_id: lastChanged(m.request.request_id) }) },
  { part: 'issued-at', what: 'issued_at one second later', changes: (m) => ({ issued_at: isoShift(m.request.issued_at, 1) }) },
  { part: 'expires-at', what: 'expires_at one second earlier', changes: (m) => ({ expires_at: isoShift(m.request.expires_at, -1) }) },
  {
    part: 'action',
    what: 'another action of the closed set',
    changes: (m) => ({ action: vocabulary.actions.values.find((a) => a !== m.request.action) }),
  },
  {
    part: 'scopes',
    what: 'another set of supported scopes',
    start: { scopes: [vocabulary.scopes.values[0]!] },
    changes: (m) => ({ scopes: Array.isArray(m.request.scopes) && m.request.scopes.length > 0 ? [] : [vocabulary.scopes.values[0]!] }),
  },
];

function swapScenario(x: Swap): Scenario {
  return {
    name: `7/swap-${x.part}`,
    title: `an approval whose signature was made over ${x.what}, delivered with the request's own, is refused`,
    rules: ['ns.verify.7'],
    context: ['ns.canonical.lines'],
    ...(x.start ? { start: x.start } : {}),
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.verify.7', facet: 'binding', value: x.part }],
    build: (m) => signedOver(m, x.changes(m)),
  };
}

/** A session-signed approval whose session key signed key_id `identity` (line 12), delivered as `session:<id>`. */
function swapKeyIdScenario(profile: Profile): Scenario {
  return {
    name: '7/swap-key-id',
    title: 'a session-signed approval whose signature was made over key_id "identity", delivered with key_id session:<id>, is refused',
    rules: ['ns.verify.7'],
    context: ['ns.canonical.lines', 'ns.response.key-id'],
    expect: R(401, 'signature_invalid'),
    cells: [{ rule: 'ns.verify.7', facet: 'binding', value: 'key-id' }],
    build: (m) => {
      const key = session(m);
      const approval = sign(profile, m.request, m.who, key);
      const text = canonicalString(profile, 'signin', { ...approval, key_id: vocabulary.key_ids.identity });
      return { ...approval, signature: encodeBase64url(signEd25519(key.seed, text)) };
    },
  };
}

interface ProofSwap {
  part: string;
  field: string;
  what: string;
  value: (v: unknown) => string;
}

const PROOF_SWAPS: ProofSwap[] = [
  { part: 'session-public-key', field: 'session_public_key', what: 'another session key', value: otherKey },
  { part: 'issued-at', field: 'issued_at', what: 'issued_at one second later', value: (v) => isoShift(v, 1) },
  { part: 'expires-at', field: 'expires_at', what: 'expires_at one second earlier', value: (v) => isoShift(v, -1) },
  { part: 'nonce', field: 'nonce', what: 'another nonce', value: lastChanged },
];

function proofSwapScenario(profile: Profile, x: ProofSwap): Scenario {
  const rules: RuleId[] = ['ns.verify.7', 'ns.session-proof.signed-lines'];
  return {
    name: `7/proof-swap-${x.part}`,
    title: `a session proof whose identity signature was made over ${x.what}, delivered with its own, is refused`,
    rules,
    context: ['ns.session-proof.signature'],
    expect: R(401, 'session_proof_invalid'),
    cells: [{ rule: 'ns.session-proof.signed-lines', facet: 'binding', value: x.part }],
    build: (m) =>
      sessionApproval(m, session(m), (p) => {
        const signed = canonicalString(profile, 'session-registration', { ...p, identity: m.who.identity, [x.field]: x.value(p[x.field]) });
        return { ...p, identity_signature: encodeBase64url(signEd25519(m.who.seed, signed)) };
      }),
  };
}

/** In the order the checks run. */
export function swapScenarios(profile: Profile): Scenario[] {
  return [...SWAPS.map(swapScenario), swapKeyIdScenario(profile), ...PROOF_SWAPS.map((x) => proofSwapScenario(profile, x))];
}
