// The harness's relay client: it speaks document 3 to any relay over HTTP. Every call returns
// the raw HttpResponse (suites judge statuses and bodies themselves); the helpers build what a
// conforming client sends: hosted registration, challenges, signed requests, sessions, sealed and
// signed messages, acks, pickups (drain and cursor), consume, and the event stream.
import type { Profile } from '../../../protocol/common/profile.ts';
import type { HttpClient, HttpResponse } from '../http.ts';
import { adminEnvelope, challengeHeaders, registration, sessionRegistration, signedRequestHeaders, type Envelope, type RelayIdentity } from './envelope.ts';
import { openEvents, type SseStream } from './sse.ts';

export * from './envelope.ts';
export * from './sse.ts';

/** How an owner-only request is authenticated. */
export type OwnerAuth =
  | { mode: 'challenge'; named?: boolean; sessionId?: string; seed?: Uint8Array }
  | { mode: 'signed-request'; sessionId?: string; seed?: Uint8Array; timestamp?: number; nonce?: string }
  | { mode: 'none' }
  | { mode: 'headers'; headers: Record<string, string> };

export class RelayClient {
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

  async consume(id: RelayIdentity, body: Record<string, unknown>, auth: OwnerAuth = { mode: 'challenge' }): Promise<HttpResponse> {
    const path = `/messages/${encodeURIComponent(id.identity)}/consume`;
    const text = JSON.stringify(body);
    return this.post(path, text, await this.authHeaders(id, 'POST', path, auth, text));
  }

  registerSession(id: RelayIdentity, sessionSeed: Uint8Array, ttlS = 3600, headers: Record<string, string> = {}): Promise<HttpResponse> {
    return this.post('/sessions', sessionRegistration(this.profile, id, sessionSeed, ttlS), headers);
  }

  revokeSession(id: RelayIdentity, sessionId: string, seed = id.seed): Promise<HttpResponse> {
    const body = { identity: id.identity, ...adminEnvelope(this.profile, 'session-revocation', { identity: id.identity, session_id: sessionId }, seed) };
    return this.post(`/sessions/${encodeURIComponent(sessionId)}`, body, {}, 'DELETE');
  }

  async events(id: RelayIdentity, auth: OwnerAuth = { mode: 'challenge' }): Promise<SseStream> {
    const path = `/events/${encodeURIComponent(id.identity)}`;
    return openEvents(`${this.url}${path}`, await this.authHeaders(id, 'GET', path, auth), this.signal ? { signal: this.signal } : {});
  }
}
