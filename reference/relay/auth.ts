// Owner authentication (document 3, Authentication 2, 3 and 4) over the relay's in-memory state
// (state.ts: this process's memory, or Redis shared by the relay's processes): challenges (60 s,
// single use), signed-request nonces (60 s window), admin-envelope nonces and sessions (at most
// 24 h; a restart of the state forgets them all, ra.sessions.memory, ra.sessions.cluster-restart).
import { randomBytes } from 'node:crypto';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { verifyEd25519Async } from '../../protocol/common/ed25519.ts';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import type { Profile } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { bodySha256 } from '../shared/body.ts';
import type { Challenge, RelayState, Session } from './state.ts';

export type { Session } from './state.ts';

export interface OwnerRequest {
  headers: Headers;
  method: string;
  /** Path and query exactly as sent. */
  target: string;
  body: Uint8Array;
}

const WINDOW_MS = limits.signed_request_window_seconds * 1000;
const RECENCY_MS = limits.admin_recency_seconds * 1000;

export class Auth {
  constructor(
    readonly state: RelayState,
    readonly profile: Profile,
    readonly now: () => number,
    /** The `challenge-reuse` breakage: challenges are never consumed. */
    readonly reuseChallenges: boolean,
    /** A challenge's life (document 3: 60 s, unless the relay is configured otherwise). */
    readonly challengeMs: number,
    /** The `challenge-race` breakage: spent after the signature check without a re-check (seen from outside). */
    readonly raceChallenges: boolean,
  ) {}

  async issueChallenge(identity: string): Promise<Challenge> {
    const c = { challenge: randomBytes(32).toString('base64url'), expiresAt: this.now() + this.challengeMs };
    await this.state.addChallenge(identity, c, limits.challenges_per_identity_max);
    return c;
  }

  /**
   * Who may act for `identity` on this request: a signed request (X-Svc-Timestamp and
   * X-Svc-Nonce present) or a signed challenge; with X-Svc-Session-Id, by that session's key.
   * `keys` are the identity's verification keys (current and still-valid previous ones).
   */
  async owner(identity: string, req: OwnerRequest, keys: () => Promise<Uint8Array[]>): Promise<void> {
    const ids = this.profile.ids;
    const h = (name: string) => req.headers.get(name) ?? undefined;
    const claimed = h(ids.header_identity);
    const signature = h(ids.header_signature);
    if (claimed === undefined || signature === undefined) throw ruleError(401, 'ra.errors.challenge-invalid', `${ids.header_identity} and ${ids.header_signature} are required`);
    if (claimed.toLowerCase() !== identity) throw ruleError(401, 'ra.errors.challenge-invalid', `${ids.header_identity} names another identity`);
    // One that is not base64 verifies nothing: refused as a bad signature of the flow it came in.
    const sig = decodeBase64Any(signature) ?? new Uint8Array();
    const sessionId = h(ids.header_session_id);
    let session: Session | undefined;
    if (sessionId !== undefined) {
      session = await this.session(sessionId);
      if (!session || session.identity !== identity) throw ruleError(401, 'ra.auth.session-key', 'the session is unknown or expired: register a new one');
    }
    const verifyWith = async (message: string): Promise<boolean> => {
      for (const k of session ? [session.key] : await keys()) if (await verifyEd25519Async(k, message, sig)) return true;
      return false;
    };
    const timestamp = h(ids.header_timestamp);
    const nonce = h(ids.header_nonce);
    if (timestamp !== undefined || nonce !== undefined) {
      return this.#signedRequest(identity, req, timestamp, nonce, verifyWith);
    }
    const named = h(ids.header_challenge);
    const outstanding = (await this.state.challenges(identity)).filter((c) => named === undefined || c.challenge === named);
    // A named challenge is claimed before the signature is checked, so concurrent answers spend it once.
    if (named !== undefined && !this.raceChallenges && outstanding[0] !== undefined && !(await this.#claim(identity, outstanding[0]))) outstanding.length = 0;
    for (const c of outstanding) {
      if (!(await verifyWith(canonicalString(this.profile, 'challenge', { challenge: c.challenge })))) continue;
      // Unnamed, the signature says which challenge it answers: claimed after the check, and only
      // by the first of concurrent answers (the claim is one atomic step of the state).
      if ((named !== undefined && !this.raceChallenges) || (await this.#claim(identity, c))) return;
      throw ruleError(401, 'ra.errors.challenge-invalid', 'the challenge was already used');
    }
    throw ruleError(401, 'ra.errors.challenge-invalid', outstanding.length === 0 ? 'no live challenge of this identity matches (unknown, used or expired)' : 'the challenge signature does not verify');
  }

  /** Spends `c`; false when another request already did (single use). */
  async #claim(identity: string, c: Challenge): Promise<boolean> {
    // --break challenge-race: whoever checked the challenge live spends it, used or not.
    if (this.raceChallenges) {
      if (!this.reuseChallenges) await this.state.spendChallenge(identity, c.challenge);
      return true;
    }
    // --break challenge-reuse: a live challenge is never spent.
    if (this.reuseChallenges) return (await this.state.challenges(identity)).some((x) => x.challenge === c.challenge);
    return this.state.spendChallenge(identity, c.challenge);
  }

  async #signedRequest(identity: string, req: OwnerRequest, timestamp: string | undefined, nonce: string | undefined, verifyWith: (m: string) => Promise<boolean>): Promise<void> {
    if (nonce === undefined || nonce.length < limits.signed_request_nonce_min_chars || nonce.length > limits.signed_request_nonce_max_chars) {
      throw ruleError(
        400,
        'ra.errors.invalid-request',
        `the nonce must be ${limits.signed_request_nonce_min_chars} to ${limits.signed_request_nonce_max_chars} characters (ra.auth.signed-request-nonce)`,
      );
    }
    if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) throw ruleError(401, 'ra.errors.request-expired', 'the timestamp is not Unix seconds');
    if (Math.abs(Number(timestamp) * 1000 - this.now()) > WINDOW_MS)
      throw ruleError(401, 'ra.errors.request-expired', `the timestamp is more than ${limits.signed_request_window_seconds} s from this relay's clock (see the Date header)`);
    const body_sha256 = bodySha256(req.body);
    const line = canonicalString(this.profile, 'signed-request', { identity, method: req.method, path: req.target, timestamp, nonce, body_sha256 });
    if (!(await verifyWith(line))) throw ruleError(401, 'ra.errors.signature-invalid', 'the signed request does not verify');
    await this.#spendNonce(`req|${identity}|${nonce}`, WINDOW_MS * 2);
  }

  /**
   * An admin envelope (Authentication 4): `issued_at` within the recency window, a nonce not seen
   * in it, and `identity_signature` over the operation's lines by one of `keys`.
   */
  async admin(
    name: Parameters<typeof canonicalString>[1],
    fields: Record<string, unknown>,
    body: Record<string, unknown>,
    keys: readonly Uint8Array[],
    missingRule: Parameters<typeof ruleError>[1] = 'ra.errors.invalid-request',
  ): Promise<void> {
    const { issued_at, nonce, identity_signature } = body;
    if (typeof issued_at !== 'string' || typeof nonce !== 'string' || nonce === '' || typeof identity_signature !== 'string')
      throw new HttpError(400, 'invalid_request', 'issued_at, nonce and identity_signature are required (the admin envelope)', missingRule);
    const at = parseRfc3339(issued_at);
    if (at === undefined) throw ruleError(400, 'ra.errors.invalid-request', 'issued_at is not RFC 3339');
    if (Math.abs(at - this.now()) > RECENCY_MS)
      throw new HttpError(401, 'request_expired', `issued_at is more than ${limits.admin_recency_seconds} s from this relay's clock`, 'ra.auth.recency-window');
    // One that is not base64 verifies nothing, as one of another length does not.
    const sig = decodeBase64Any(identity_signature) ?? new Uint8Array();
    let message: string;
    try {
      message = canonicalString(this.profile, name, { ...fields, issued_at, nonce });
    } catch (error) {
      throw ruleError(400, 'ra.errors.invalid-request', `the signed lines cannot be built: ${(error as Error).message}`);
    }
    let ok = false;
    for (const k of keys) if (await verifyEd25519Async(k, message, sig)) ok = true;
    if (!ok) throw ruleError(401, 'ra.errors.signature-invalid', 'identity_signature does not verify');
    await this.#spendNonce(`admin|${name}|${nonce}`, RECENCY_MS * 2);
  }

  async #spendNonce(key: string, ttlMs: number): Promise<void> {
    if (!(await this.state.spendNonce(key, ttlMs))) throw ruleError(401, 'ra.errors.request-replayed', 'this nonce was already used');
  }

  addSession(s: Session): Promise<void> {
    return this.state.addSession(s);
  }

  session(id: string): Promise<Session | undefined> {
    return this.state.session(id);
  }

  /** Ends one session: the ended session, if it was live. */
  removeSession(id: string): Promise<Session | undefined> {
    return this.state.removeSession(id);
  }

  /**
   * Claims a live challenge of `identity` by its value (a WebAuthn assertion's, which carries
   * it); false when none matches. Claimed before the signature is checked: concurrent answers
   * spend it once.
   */
  async takeChallenge(identity: string, challenge: string): Promise<boolean> {
    const c = (await this.state.challenges(identity)).find((x) => x.challenge === challenge);
    return c !== undefined && this.#claim(identity, c);
  }

  /** Ends every session of an identity: the ended sessions. */
  endSessions(identity: string): Promise<Session[]> {
    return this.state.endSessions(identity);
  }

  /** Ends every session of a device; how many. */
  async endDeviceSessions(identity: string, deviceId: string): Promise<number> {
    return (await this.state.endSessions(identity, deviceId)).length;
  }
}
