// The shape of a verification scenario (an approval a rule refuses, or one that must complete), what
// running it records, and the helpers its mutations sign with.
import type { Profile } from '../../../../../protocol/common/profile.ts';
import { canonicalString } from '../../../../../protocol/common/canonical.ts';
import { signEd25519 } from '../../../../../protocol/common/ed25519.ts';
import { decodeBase64Any, encodeBase64url } from '../../../../../protocol/common/base64.ts';
import type { SessionKey } from '../../../../../protocol/signin/signer.ts';
import { limits } from '../../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../../schemas/ts/vocabulary.ts';
import type { Exchange } from '../../../../actors/http.ts';
import type { ErrorCode, RuleId } from '../../../../../schemas/ts/rules.ts';
import { Session, envelopeOf, sessionFor, sign, type Started, type TestIdentity } from '../../driver.ts';

export interface MutationContext {
  s: Session;
  profile: Profile;
  started: Started;
  request: Record<string, unknown>;
  who: TestIdentity;
  genuine: Record<string, unknown>;
}

export interface Scenario {
  /** Check name part: `rp/verify/<name>` and `rp/codes/<name>`. */
  name: string;
  title: string;
  /**
   * The rules the refusal (or acceptance) decides: document rules, judged by rp/verify/<name>
   * with any 4xx; or only project decisions (binding/*), judged by rp/codes/<name> alone.
   */
  rules: RuleId[];
  /** Rules the scenario passes through without deciding them. */
  context?: RuleId[];
  /** Expected answer under this project's decisions; undefined for an acceptance scenario. */
  expect?: { status: number; codes: ErrorCode[] };
  /** Start options the scenario needs (skipped when the RP cannot honour them). */
  start?: { action?: string; scopes?: string[]; statement?: string };
  /** The approval to deliver (an object, or text sent as the bare body). */
  build: (m: MutationContext) => Promise<Record<string, unknown> | string> | Record<string, unknown> | string;
  /** Acceptance scenario: the built approval must complete the login itself. */
  accept?: boolean;
  /** The matrix cells (spec/facets/rp.yaml) its document check fills, on the delivery endpoint. */
  cells?: Array<{ rule: RuleId; facet: string; value: string }>;
}

export interface ScenarioResult {
  status: number;
  envelope: ReturnType<typeof envelopeOf>;
  /** What the RP answered to the mutated delivery, for failure texts. */
  answer: string;
  /** Its `error` code, if any. */
  code?: string;
  /** Poll status right after the mutated delivery. */
  after: string;
  /** How long the RP took to refuse (ms). */
  refusedInMs?: number;
  /** Problem with completing the login by the genuine approval afterwards (or by the approval itself when accepting). */
  genuineProblem?: string;
  exchanges: Exchange[];
  notes: string[];
}

// ---- signing helpers for mutations ----

/** Re-signs `response` as is (its canonical string, whatever its fields say) with `seed`. */
export function resign(profile: Profile, response: Record<string, unknown>, seed: Uint8Array): Record<string, unknown> {
  const out = { ...response };
  out.signature = encodeBase64url(signEd25519(seed, canonicalString(profile, 'signin', out)));
  return out;
}

/** Signs a changed canonical string (for canonical-form rules): `edit` gets the correct lines. */
export function signLines(profile: Profile, response: Record<string, unknown>, seed: Uint8Array, edit: (lines: string[]) => string): Record<string, unknown> {
  const lines = canonicalString(profile, 'signin', response).split('\n');
  return { ...response, signature: encodeBase64url(signEd25519(seed, edit(lines))) };
}

const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/** The same signature with S replaced by S + L (a non-canonical S, ns.ed25519.strict). */
export function nonCanonicalS(signature: string): string {
  const bytes = decodeBase64Any(signature)!;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(bytes[i]!);
  s += L;
  const out = Uint8Array.from(bytes);
  for (let i = 32; i < 64; i++) {
    out[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return encodeBase64url(out);
}

export function flipBit(signature: string, bit: number): string {
  const bytes = Uint8Array.from(decodeBase64Any(signature)!);
  bytes[bit >> 3]! ^= 1 << (bit & 7);
  return encodeBase64url(bytes);
}

export const now = () => Date.now();
export const skew = limits.clock_skew_seconds;
export const win = limits.window_max_seconds;

/** The request with fields changed, then signed by `who` (so the signature is valid over the change). */
export function signedWith(m: MutationContext, changes: Record<string, unknown>, remove: string[] = []): Record<string, unknown> {
  const request: Record<string, unknown> = { ...m.request, ...changes };
  for (const f of remove) delete request[f];
  return sign(m.profile, request, m.who);
}

export function without(m: MutationContext, field: string, resigned = true): Record<string, unknown> {
  const r = { ...m.genuine };
  delete r[field];
  if (!resigned || field === 'signature') return r;
  try {
    return resign(m.profile, r, m.who.seed);
  } catch {
    return r; // the canonical string needs the field: the old signature stays
  }
}

export function session(m: MutationContext, opts?: Parameters<typeof sessionFor>[2]): SessionKey {
  return sessionFor(m.profile, m.who, opts);
}

export function sessionApproval(m: MutationContext, key: SessionKey, proofEdit?: (p: Record<string, string>) => Record<string, unknown>): Record<string, unknown> {
  const approval = sign(m.profile, m.request, m.who, key);
  if (proofEdit) approval.session_proof = proofEdit({ ...key.proof });
  return approval;
}

/** A session proof re-signed by the identity key over whatever its fields now say. */
export function reproof(m: MutationContext, proof: Record<string, unknown>, seed = m.who.seed): Record<string, unknown> {
  let text: string;
  try {
    text = canonicalString(m.profile, 'session-registration', { identity: m.who.identity, ...proof });
  } catch {
    return proof;
  }
  return { ...proof, identity_signature: encodeBase64url(signEd25519(seed, text)) };
}

export const S_PREFIX = vocabulary.key_ids.session_prefix;

/** An expected refusal: its status and the codes the project gives it. */
export const R = (status: number, ...codes: ErrorCode[]) => ({ status, codes });
export const foreignOrigin = 'https://rp.attacker.example';
