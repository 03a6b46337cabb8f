// The native verifier: document 1, Authentication 3, rules 1 to 7 in that order, cheapest first,
// so a replayed or misaddressed approval costs no DNS or HTTPS lookup. Every rejection names its
// rule number, its rule id and a stable code.
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import type { ErrorCode, RuleId } from '../../schemas/ts/rules.ts';
import type { Profile } from '../common/profile.ts';
import { canonicalString, CanonicalError } from '../common/canonical.ts';
import { decodeBase64Any, byteLength } from '../common/base64.ts';
import { normalizeOrigin } from '../common/url.ts';
import { validServiceName } from '../common/names.ts';
import { scopeProblem } from './scopes.ts';
import { parseRfc3339 } from '../common/time.ts';
import { nonceKey, type NonceStore } from './nonce.ts';
import { ResolutionError, type Resolver, type ResolvedIdentity } from './resolver.ts';
import { keyValidAt } from '../common/document.ts';
import { checkSessionProof } from './session-proof.ts';
import { verifyEd25519 } from '../common/ed25519.ts';

export type RuleNumber = 1 | 2 | 3 | 4 | 5 | 6 | 7;

export interface Rejection {
  ok: false;
  rule: RuleNumber;
  ruleId: RuleId & `ns.verify.${RuleNumber}`;
  code: ErrorCode;
  detail: string;
}
export interface Approval {
  ok: true;
  identity: string;
  keyId: string;
  delegated: boolean; // signed by a session key
  requestId: string;
  action: string;
  scopes: string[];
  issuedAt: number;
  expiresAt: number;
}
export type Verdict = Approval | Rejection;

export interface VerifierOptions {
  profile: Profile;
  /** The verifier's own origin; rule 2 compares the normalized audience with it. */
  origin: string;
  resolver: Resolver;
  nonces: NonceStore;
  now?: () => number;
  /**
   * Checks one signature (rule 7); default `verifyEd25519`, synchronous on the calling thread. A
   * server passes `verifyEd25519Async` so the signature is checked on libuv's thread pool while
   * its event loop serves other requests.
   */
  verifySignature?: (publicKey: Uint8Array, message: string, signature: Uint8Array) => boolean | Promise<boolean>;
}

const reject = (rule: RuleNumber, code: ErrorCode, detail: string): Rejection => ({ ok: false, rule, ruleId: `ns.verify.${rule}`, code, detail });
const ACTIONS: ReadonlySet<string> = new Set(vocabulary.actions.values);
// "One line, no CR, LF or other control characters" (ns.request.statement): C0 and C1 controls
// and the Unicode line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const SESSION = vocabulary.key_ids.session_prefix;
const REQUIRED = ['request_id', 'nonce', 'signature', 'identity', 'audience', 'issued_at', 'expires_at', 'action', 'key_id'] as const;

/**
 * Called after rules 1 to 4 pass and before the nonce is claimed, with the response checked so
 * far: an RP binds the approval to the transaction it issued here (ns.delivery.request-binding),
 * so a mismatched approval spends no nonce and costs no lookup. Whatever it throws propagates.
 */
export type BeforeNonce = (response: Readonly<Record<string, unknown>>) => void | Promise<void>;

export type Verifier = (response: unknown, beforeNonce?: BeforeNonce) => Promise<Verdict>;

export function createVerifier(options: VerifierOptions): Verifier {
  const { profile, resolver, nonces } = options;
  const now = options.now ?? Date.now;
  const verifySignature = options.verifySignature ?? verifyEd25519;
  const origin = normalizeOrigin(options.origin);
  if (origin === undefined) throw new TypeError(`verifier origin ${options.origin} is not an origin`);
  const authField = profile.ids.auth_field;
  let lastAudience: [unknown, string | undefined] = [undefined, undefined];

  return async function verify(input: unknown, beforeNonce?: BeforeNonce): Promise<Verdict> {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return reject(1, 'malformed_response', 'the response must be a JSON object');
    const r = input as Record<string, unknown>;

    // Rule 1: shape and version.
    if (r[authField] !== '1') return reject(1, 'unsupported_version', `${authField} must be "1"`);
    // Errors table: "a missing required field" is rule 1, whichever field it is.
    for (const f of REQUIRED) {
      if (typeof r[f] !== 'string' || r[f] === '') return reject(1, 'missing_field', `${f} is required`);
    }
    const identity = validServiceName(r.identity);
    if (identity === undefined) return reject(1, 'invalid_identity', 'identity is not a valid service name');

    // Rule 2: audience (its last form remembered: nearly every approval names this verifier's own).
    let audience: string | undefined;
    if (r.audience === lastAudience[0]) audience = lastAudience[1];
    else lastAudience = [r.audience, (audience = normalizeOrigin(r.audience))];
    if (audience === undefined) return reject(2, 'invalid_audience', 'audience is not an origin');
    if (audience !== origin) return reject(2, 'audience_mismatch', `audience ${audience} is not this verifier's origin ${origin}`);

    // Rule 3: action, statement, scopes.
    if (typeof r.action !== 'string' || !ACTIONS.has(r.action)) return reject(3, 'unknown_action', `action must be one of ${[...ACTIONS].join(', ')}`);
    if (r.statement !== undefined && r.statement !== null) {
      if (typeof r.statement !== 'string') return reject(3, 'invalid_statement', 'statement must be a string');
      if (byteLength(r.statement) > limits.statement_max_bytes) return reject(3, 'invalid_statement', `statement is longer than ${limits.statement_max_bytes} bytes`);
      if (CONTROL.test(r.statement)) return reject(3, 'invalid_statement', 'statement contains a line break or control character');
    }
    const scopes = scopeProblem(r.scopes);
    if (scopes) return reject(3, scopes.problem === 'not_canonical' ? 'scopes_not_canonical' : 'scope_not_allowed', scopes.detail);

    // Rule 4: window.
    const issuedAt = parseRfc3339(r.issued_at);
    const expiresAt = parseRfc3339(r.expires_at);
    if (issuedAt === undefined || expiresAt === undefined) return reject(4, 'invalid_timestamp', 'issued_at and expires_at must be RFC 3339');
    if (expiresAt <= issuedAt) return reject(4, 'window_invalid', 'expires_at must be later than issued_at');
    if (expiresAt - issuedAt > limits.window_max_seconds * 1000) return reject(4, 'window_too_long', `the window is longer than ${limits.window_max_seconds / 60} minutes`);
    const t = now();
    if (issuedAt > t + limits.clock_skew_seconds * 1000) return reject(4, 'issued_in_future', `issued_at is more than ${limits.clock_skew_seconds / 60} minutes ahead`);
    if (t > expiresAt) return reject(4, 'expired', 'the approval has expired');

    if (beforeNonce) await beforeNonce(r);

    // Rule 5: nonce, atomically claimed; given back if a later rule fails, so only a verified
    // approval spends it (ns.nonce.spend-on-success) while a concurrent replay still loses.
    const key = nonceKey(audience, identity, r.request_id as string, r.nonce as string);
    let claimed: boolean;
    try {
      const claim = nonces.claim(key, expiresAt);
      claimed = typeof claim === 'boolean' ? claim : await claim; // an in-process store answers at once
    } catch (error) {
      return reject(5, 'nonce_cache_unavailable', `the nonce cache cannot be reached (${(error as Error).message}); failing closed`);
    }
    if (!claimed) return reject(5, 'nonce_replayed', 'this nonce was already spent');

    const verdict = await resolveAndCheck(r, identity, issuedAt, expiresAt, t);
    if (!verdict.ok) await nonces.release(key).catch(() => undefined);
    return verdict;
  };

  async function resolveAndCheck(r: Record<string, unknown>, identity: string, issuedAt: number, expiresAt: number, t: number): Promise<Verdict> {
    // Rule 6: resolution.
    let resolved: ResolvedIdentity;
    try {
      resolved = await resolver.resolve(identity);
    } catch (error) {
      const code = error instanceof ResolutionError && error.code === 'key_mismatch' ? 'key_mismatch' : 'resolution_failed';
      return reject(6, code, `resolving ${identity} failed: ${(error as Error).message}`);
    }

    // Rule 7: signature, by the identity key valid at issued_at or by a proven session key.
    const keyId = r.key_id;
    const hasProof = r.session_proof !== undefined && r.session_proof !== null;
    const delegated = typeof keyId === 'string' && keyId.startsWith(SESSION) && keyId.length > SESSION.length;
    if (keyId !== vocabulary.key_ids.identity && !delegated) return reject(7, 'invalid_key_id', `key_id must be "identity" or "${SESSION}<id>"`);
    if (delegated !== hasProof) {
      return reject(7, 'session_proof_mismatch', delegated ? 'key_id names a session but no session_proof is attached' : 'a session_proof is attached but key_id is identity');
    }
    const signature = decodeBase64Any(r.signature as string);
    if (signature?.length !== 64) return reject(7, 'signature_invalid', 'signature is not a 64-byte base64 value');
    let signingKeys: readonly Uint8Array[];
    if (delegated) {
      const proof = checkSessionProof(profile, identity, r.session_proof, t, (at) => keysAt(resolved, at));
      if (!proof.ok) return reject(7, 'session_proof_invalid', `${proof.detail} (${proof.rule})`);
      signingKeys = [proof.sessionKey];
    } else {
      signingKeys = keysAt(resolved, issuedAt);
    }
    let message: string;
    try {
      message = canonicalString(profile, 'signin', r);
    } catch (error) {
      const field = error instanceof CanonicalError ? error.field : '?';
      return reject(7, 'signature_invalid', `the signing string cannot be built: ${field} (${(error as Error).message})`);
    }
    const verified = signingKeys.length === 1 ? verifySignature(signingKeys[0]!, message, signature) : anyVerifies(signingKeys, message, signature, verifySignature);
    if (!(typeof verified === 'boolean' ? verified : await verified)) return reject(7, 'signature_invalid', 'the signature does not verify');
    return {
      ok: true,
      identity,
      keyId: keyId as string,
      delegated,
      requestId: r.request_id as string,
      action: r.action as string,
      scopes: Array.isArray(r.scopes) ? (r.scopes as string[]) : [],
      issuedAt,
      expiresAt,
    };
  }
}

/** The identity's keys valid at `at`: the current one, and previous ones not yet past `valid_until`. */
function keysAt(resolved: ResolvedIdentity, at: number): Uint8Array[] {
  const { publicKey, previousKeys } = resolved;
  if (previousKeys.length === 0) return [publicKey];
  return [publicKey, ...previousKeys.map((p) => p.publicKey)].filter((k) => keyValidAt(publicKey, previousKeys, k, at));
}

async function anyVerifies(keys: readonly Uint8Array[], message: string, signature: Uint8Array, verify: NonNullable<VerifierOptions['verifySignature']>): Promise<boolean> {
  for (const key of keys) if (await verify(key, message, signature)) return true;
  return false;
}
