// The harness's relay client: it speaks document 3 to any relay over HTTP. Every call returns
// the raw HttpResponse (suites judge statuses and bodies themselves); the helpers build what a
// conforming client sends: hosted registration, challenges, signed requests, sessions, sealed and
// signed messages, acks, pickups (drain and cursor), consume, and the event stream.
import type { Profile } from '../../../protocol/common/profile.ts';
import type { HttpClient, HttpResponse } from '../http.ts';
import { adminEnvelope, challengeHeaders, registration, sessionRegistration, signedRequestHeaders, type Envelope, type RelayIdentity } from './envelope.ts';
import { openEvents, type SseStream } from './sse.ts';
import { createHash } from 'node:crypto';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import type { Assertion } from '../../../protocol/relay/webauthn.ts';

export * from './envelope.ts';
export * from './archive.ts';
export * from './sse.ts';
export * from './authenticator.ts';

/** An enrollment as PUT sends it; `wrapped` is JSON text, sent as it is and digested as sent. */
export interface EnrollmentInput {
  enrollment_id: string;
  kind: string;
  wrap: string;
  wrapped: string;
  credential_id?: string;
  credential_public_key?: string;
  credential_alg?: number;
  label?: string;
  role?: string;
}

/** A pairing call's credential: the claim token as `Bearer <token>`, an Authorization value as it is, or none. */
export type Bearer = string | { authorization: string } | undefined;
const bearer = (token: Bearer): Record<string, string> => (token === undefined ? {} : typeof token === 'string' ? { authorization: `Bearer ${token}` } : { authorization: token.authorization });

/** How an owner-only request is authenticated. */
export type OwnerAuth =
  | { mode: 'challenge'; named?: boolean; sessionId?: string; seed?: Uint8Array }
  | { mode: 'signed-request'; sessionId?: string; seed?: Uint8Array; timestamp?: number; nonce?: string }
  | { mode: 'none' }
  | { mode: 'headers'; headers: Record<string, string> };

export class RelayClient {
  /** Which spelling of a system path the relay took last (systemFile). */
  #systemSpelling: 'dir' | 'bare' | undefined;
  /**
   * When each pairing offer still in use was asked for (Date.now()), by identity and code: the
   * relay made it no earlier, so it lives at least until then plus its life. An offer abandoned
   * with a 2xx answer leaves it: a check that drew offers until one had the code it needs is not
   * using the ones it dropped.
   */
  readonly #offersAskedAt = new Map<string, number>();

  constructor(
    readonly profile: Profile,
    /** The relay's base URL, no trailing slash. */
    readonly url: string,
    readonly http: HttpClient,
    readonly signal?: AbortSignal,
  ) {}

  get(path: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
    return this.http.get(`${this.url}${path}`, { headers: { accept: 'application/json', ...headers }, ...(this.signal ? { signal: this.signal } : {}) });
  }

  post(path: string, body: string | Uint8Array | Record<string, unknown>, headers: Record<string, string> = {}, method = 'POST'): Promise<HttpResponse> {
    return this.http.request(`${this.url}${path}`, {
      method,
      body,
      headers: { accept: 'application/json', ...(typeof body === 'string' || body instanceof Uint8Array ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(this.signal ? { signal: this.signal } : {}),
    });
  }

  banner(): Promise<HttpResponse> {
    return this.get('/');
  }

  register(id: RelayIdentity, relayAddress: string, extra: Record<string, unknown> = {}): Promise<HttpResponse> {
    return this.post('/identities', registration(this.profile, id, relayAddress, extra));
  }

  challenge(identity: string): Promise<HttpResponse> {
    return this.get(`/auth/challenge?identity=${encodeURIComponent(identity)}`);
  }

  /** The headers authenticating `method path` for `id` (a fresh challenge when the mode asks for one). */
  async authHeaders(id: RelayIdentity, method: string, path: string, auth: OwnerAuth, body = ''): Promise<Record<string, string>> {
    if (auth.mode === 'none') return {};
    if (auth.mode === 'headers') return auth.headers;
    const seed = auth.seed ?? id.seed;
    if (auth.mode === 'signed-request') {
      return signedRequestHeaders(this.profile, {
        identity: id.identity,
        seed,
        method,
        path,
        body,
        ...(auth.sessionId ? { sessionId: auth.sessionId } : {}),
        ...(auth.timestamp !== undefined ? { timestamp: auth.timestamp } : {}),
        ...(auth.nonce ? { nonce: auth.nonce } : {}),
      });
    }
    const r = await this.challenge(id.identity);
    const challenge = (r.json() as { challenge?: unknown }).challenge;
    if (r.status !== 200 || typeof challenge !== 'string') throw new Error(`GET /auth/challenge answered ${r.status}: ${r.text().slice(0, 200)}`);
    return challengeHeaders(this.profile, id.identity, challenge, seed, auth.sessionId, auth.named ?? true);
  }

  send(envelope: Envelope | string): Promise<HttpResponse> {
    return this.post('/messages', typeof envelope === 'string' ? envelope : envelope);
  }

  ack(envelope: Envelope | string): Promise<HttpResponse> {
    return this.post('/acks', typeof envelope === 'string' ? envelope : envelope);
  }

  async pickup(id: RelayIdentity, auth: OwnerAuth = { mode: 'challenge' }, since?: string): Promise<HttpResponse> {
    const path = `/messages/${encodeURIComponent(id.identity)}${since !== undefined ? `?since=${encodeURIComponent(since)}` : ''}`;
    return this.get(path, await this.authHeaders(id, 'GET', path, auth));
  }

  /** POST consume with `body` as JSON, or a string sent as it is. */
  async consume(id: RelayIdentity, body: Record<string, unknown> | string, auth: OwnerAuth = { mode: 'challenge' }): Promise<HttpResponse> {
    const path = `/messages/${encodeURIComponent(id.identity)}/consume`;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return this.post(path, text, await this.authHeaders(id, 'POST', path, auth, text));
  }

  registerSession(id: RelayIdentity, sessionSeed: Uint8Array, ttlS = 3600, headers: Record<string, string> = {}): Promise<HttpResponse> {
    return this.post('/sessions', sessionRegistration(this.profile, id, sessionSeed, ttlS), headers);
  }

  revokeSession(id: RelayIdentity, sessionId: string, seed = id.seed): Promise<HttpResponse> {
    const body = { identity: id.identity, ...adminEnvelope(this.profile, 'session-revocation', { identity: id.identity, session_id: sessionId }, seed) };
    return this.post(`/sessions/${encodeURIComponent(sessionId)}`, body, {}, 'DELETE');
  }

  /** PUT /identities/:identity/keystore; `signedDigest` signs another wrapped_digest than the bytes sent. */
  /** `o.text` edits the body as sent, after signing (e.g. to leave `wrapped` out or repeat it). */
  keystoreEnroll(id: RelayIdentity, e: EnrollmentInput, o: { signedDigest?: string; seed?: Uint8Array; text?: (sent: string) => string } = {}): Promise<HttpResponse> {
    const { wrapped, ...rest } = e;
    const wrapped_digest = o.signedDigest ?? encodeBase64url(createHash('sha256').update(wrapped).digest());
    const envelope = adminEnvelope(
      this.profile,
      'keystore-enroll',
      { identity: id.identity, enrollment_id: e.enrollment_id, kind: e.kind, credential_id: e.credential_id ?? '', wrapped_digest },
      o.seed ?? id.seed,
    );
    const text = `{"wrapped":${wrapped},${JSON.stringify({ ...rest, ...envelope }).slice(1)}`;
    return this.post(`/identities/${encodeURIComponent(id.identity)}/keystore`, o.text ? o.text(text) : text, {}, 'PUT');
  }

  keystoreList(id: RelayIdentity, seed = id.seed): Promise<HttpResponse> {
    return this.post(`/identities/${encodeURIComponent(id.identity)}/keystore/list`, adminEnvelope(this.profile, 'keystore-list', { identity: id.identity }, seed));
  }

  /** POST .../keystore/fetch; `rpId` undefined leaves rp_id out (the relay then tries each acceptable id). */
  keystoreFetch(identity: string, assertion: Assertion | Record<string, unknown>, rpId?: string): Promise<HttpResponse> {
    return this.post(`/identities/${encodeURIComponent(identity)}/keystore/fetch`, { assertion, ...(rpId !== undefined ? { rp_id: rpId } : {}) });
  }

  keystoreRemove(id: RelayIdentity, enrollmentId: string, extra: Record<string, unknown> = {}, seed = id.seed): Promise<HttpResponse> {
    const body = { ...extra, ...adminEnvelope(this.profile, 'keystore-remove', { identity: id.identity, enrollment_id: enrollmentId }, seed) };
    return this.post(`/identities/${encodeURIComponent(id.identity)}/keystore/${encodeURIComponent(enrollmentId)}`, body, {}, 'DELETE');
  }

  /**
   * A system document (`path` under the system directory, e.g. relay/contacts.json), owner-authenticated.
   * Document 3 does not say whether :path carries the service's directory (`.svc/relay/contacts.json`,
   * as the deployed client writes it) or not: the directory's spelling is tried first, the bare path
   * after a 404, and the spelling the relay answered is kept for the next calls. A path starting
   * with "." is sent as it is.
   */
  async systemFile(id: RelayIdentity, method: 'GET' | 'PUT' | 'DELETE', path: string, body?: string, o: { auth?: OwnerAuth; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
    if (path.startsWith('.')) return this.#systemFileAt(id, method, path, body, o);
    const spellings: Array<'dir' | 'bare'> = this.#systemSpelling === 'bare' ? ['bare', 'dir'] : ['dir', 'bare'];
    let last: HttpResponse | undefined;
    for (const spelling of spellings) {
      last = await this.#systemFileAt(id, method, spelling === 'dir' ? `${this.profile.ids.system_dir}/${path}` : path, body, o);
      if (last.status !== 404) {
        this.#systemSpelling = spelling;
        return last;
      }
    }
    return last!;
  }

  async #systemFileAt(id: RelayIdentity, method: 'GET' | 'PUT' | 'DELETE', path: string, body: string | undefined, o: { auth?: OwnerAuth; headers?: Record<string, string> }): Promise<HttpResponse> {
    const target = `/identities/${encodeURIComponent(id.identity)}/system/${path}`;
    const auth = await this.authHeaders(id, method, target, o.auth ?? { mode: 'challenge' }, body ?? '');
    return this.http.request(`${this.url}${target}`, {
      method,
      ...(body !== undefined ? { body } : {}),
      headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...auth, ...(o.headers ?? {}) },
      ...(this.signal ? { signal: this.signal } : {}),
    });
  }

  /** POST .../enroll/offer: the new device's offer (no authentication). */
  async enrollOffer(identity: string, body: Record<string, unknown>): Promise<HttpResponse> {
    const at = Date.now();
    const r = await this.post(`/identities/${encodeURIComponent(identity)}/enroll/offer`, body);
    let code: unknown;
    try {
      code = (r.json() as { rendezvous_id?: unknown } | null)?.rendezvous_id;
    } catch {
      // no JSON: the offer is timed all the same (below)
    }
    // An answer without a code still counts: the relay may have made an offer all the same.
    this.#offersAskedAt.set(typeof code === 'string' ? `${identity}\n${code}` : `${identity}\n?${at}`, at);
    return r;
  }

  /** When the oldest pairing offer still in use was asked for, if any was. */
  oldestOfferAskedAt(): number | undefined {
    return this.#offersAskedAt.size === 0 ? undefined : Math.min(...this.#offersAskedAt.values());
  }

  /** The approver's fetch (`code` as typed in the path; `signedCode` the canonical code it signs). */
  enrollFetch(id: RelayIdentity, code: string, body: { approver_nonce: string; mode: string }, signedCode = code, seed = id.seed): Promise<HttpResponse> {
    const envelope = adminEnvelope(this.profile, 'enroll-fetch', { identity: id.identity, rendezvous_id: signedCode }, seed);
    return this.post(`/identities/${encodeURIComponent(id.identity)}/enroll/${encodeURIComponent(code)}/fetch`, { ...body, ...envelope });
  }

  enrollDeliver(id: RelayIdentity, code: string, sealed: string, seed = id.seed): Promise<HttpResponse> {
    const envelope = adminEnvelope(this.profile, 'enroll-deliver', { identity: id.identity, rendezvous_id: code }, seed);
    return this.post(`/identities/${encodeURIComponent(id.identity)}/enroll/${encodeURIComponent(code)}/deliver`, { sealed, ...envelope });
  }

  /** The new device's calls, bearing its claim token (undefined: no Authorization header). */
  enrollReveal(identity: string, code: string, token: Bearer, body: { ephemeral_public_key: string; commit_nonce: string }): Promise<HttpResponse> {
    return this.post(`/identities/${encodeURIComponent(identity)}/enroll/${encodeURIComponent(code)}/reveal`, body, bearer(token));
  }

  enrollPoll(identity: string, code: string, token: Bearer): Promise<HttpResponse> {
    return this.get(`/identities/${encodeURIComponent(identity)}/enroll/${encodeURIComponent(code)}`, bearer(token));
  }

  async enrollAbandon(identity: string, code: string, token: Bearer): Promise<HttpResponse> {
    const r = await this.http.request(`${this.url}/identities/${encodeURIComponent(identity)}/enroll/${encodeURIComponent(code)}`, {
      method: 'DELETE',
      headers: { accept: 'application/json', ...bearer(token) },
      ...(this.signal ? { signal: this.signal } : {}),
    });
    if (r.status >= 200 && r.status < 300) this.#offersAskedAt.delete(`${identity}\n${code}`);
    return r;
  }

  async events(id: RelayIdentity, auth: OwnerAuth = { mode: 'challenge' }): Promise<SseStream> {
    const path = `/events/${encodeURIComponent(id.identity)}`;
    return openEvents(`${this.url}${path}`, await this.authHeaders(id, 'GET', path, auth), this.signal ? { signal: this.signal } : {});
  }
}
