// The cast of document 3's owner surface, for judging an operation across every principal: the
// owner (identity key), its own session, another identity and that identity's session, a session
// of another identity presented as the owner's, a revoked session of the owner, and a stranger
// with no proof. Also admin envelopes whose signature covers one part other than the one sent
// (the binding cells), and the owner's system documents at a path learned from the relay.
import { randomBytes } from 'node:crypto';
import { canonicalString } from '../../../protocol/common/canonical.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { signEd25519 as sign } from '../../../protocol/common/ed25519.ts';
import type { HttpResponse } from '../http.ts';
import { b64, newNonce, now, type RelayIdentity } from './envelope.ts';
import type { EnrollmentInput, RelayClient } from './index.ts';

/** Who calls an owner-only operation. */
export type Principal = 'owner' | 'own-session' | 'other-identity' | 'other-identity-session' | 'other-session-as-owner' | 'revoked-session' | 'stranger';

export const REFUSED_PRINCIPALS = ['other-identity', 'other-identity-session', 'other-session-as-owner', 'revoked-session', 'stranger'] as const satisfies readonly Principal[];

export interface RegisteredSession {
  seed: Uint8Array;
  sessionId: string;
}

/** The owner, another identity, and their sessions (one of the owner's revoked). */
export interface Cast {
  owner: RelayIdentity;
  other: RelayIdentity;
  ownSession: RegisteredSession;
  otherSession: RegisteredSession;
  revokedSession: RegisteredSession;
}

/** Registers a session key for `id` (POST /sessions); throws with the answer when it is not 201. */
export async function registeredSession(client: RelayClient, id: RelayIdentity): Promise<RegisteredSession> {
  const seed = new Uint8Array(randomBytes(32));
  const r = await client.registerSession(id, seed);
  const sessionId = (safe(r) as { session_id?: unknown }).session_id;
  if (r.status !== 201 || typeof sessionId !== 'string') throw new CastError(`registering a session for ${id.identity} (POST /sessions) answered ${r.status} ${r.text().slice(0, 200)}`);
  return { seed, sessionId };
}

export class CastError extends Error {}

/** The cast around `owner` and `other`: three sessions registered, the third revoked. */
export async function castOf(client: RelayClient, owner: RelayIdentity, other: RelayIdentity): Promise<Cast> {
  const [ownSession, otherSession, revokedSession] = await Promise.all([registeredSession(client, owner), registeredSession(client, other), registeredSession(client, owner)]);
  const gone = await client.revokeSession(owner, revokedSession.sessionId);
  if (gone.status !== 204) throw new CastError(`revoking a session (DELETE /sessions/:id) answered ${gone.status} ${gone.text().slice(0, 200)}`);
  return { owner, other, ownSession, otherSession, revokedSession };
}

/** The challenge headers `who` sends for `method path` on the owner's resource. */
export function principalHeaders(client: RelayClient, cast: Cast, who: Principal, method: string, path: string, body = ''): Promise<Record<string, string>> {
  const { owner, other } = cast;
  const as = (id: RelayIdentity, session?: RegisteredSession) =>
    client.authHeaders(id, method, path, { mode: 'challenge', ...(session ? { sessionId: session.sessionId, seed: session.seed } : {}) }, body);
  switch (who) {
    case 'owner':
      return as(owner);
    case 'own-session':
      return as(owner, cast.ownSession);
    case 'other-identity':
      return as(other);
    case 'other-identity-session':
      return as(other, cast.otherSession);
    case 'other-session-as-owner':
      return as(owner, cast.otherSession);
    case 'revoked-session':
      return as(owner, cast.revokedSession);
    case 'stranger':
      return Promise.resolve({});
  }
}

/** A system document of `cast.owner` at `path`, by `who`. */
export async function systemAs(client: RelayClient, cast: Cast, who: Principal, method: 'GET' | 'PUT' | 'DELETE', path: string, body?: string): Promise<HttpResponse> {
  const target = `/identities/${encodeURIComponent(cast.owner.identity)}/system/${path}`;
  return client.systemFile(cast.owner, method, path, body, { auth: { mode: 'headers', headers: await principalHeaders(client, cast, who, method, target, body ?? '') } });
}

/**
 * Where `name` (e.g. `relay/contacts.json`) lives: document 3 names the documents `.svc/public`
 * and `.svc/relay` and leaves the path form open, so both forms are tried with the owner's write
 * of `body`; the first the relay does not answer 404 is the one. Returns it with that answer.
 */
export async function learnSystemPath(client: RelayClient, owner: RelayIdentity, name: string, body: string): Promise<{ path: string; answer: HttpResponse }> {
  const forms = [name, `${client.profile.ids.system_dir}/${name}`];
  let answer: HttpResponse | undefined;
  for (const path of forms) {
    answer = await client.systemFile(owner, 'PUT', path, body);
    if (answer.status !== 404) return { path, answer };
  }
  return { path: forms[0]!, answer: answer! };
}

type AdminName = 'keystore-enroll' | 'keystore-list' | 'keystore-remove' | 'enroll-fetch' | 'enroll-deliver';

/** One part of an admin envelope signed otherwise than sent: a signed field's value, or issued_at or nonce. */
export type Swap = { field: string; value: string } | { part: 'issued-at' } | { part: 'nonce' };

/**
 * `issued_at`, `nonce` and `identity_signature` over `fields` by `seed`, with `swap` signed in
 * place of what is sent: another valid value of one signed field, an issued_at five seconds
 * earlier, or another nonce.
 */
export function adminSigned(profile: Profile, name: AdminName, fields: Record<string, unknown>, seed: Uint8Array, swap?: Swap): Record<string, string> {
  const issued_at = now();
  const nonce = newNonce();
  const signed: Record<string, unknown> = { ...fields, issued_at, nonce };
  if (swap && 'field' in swap) signed[swap.field] = swap.value;
  else if (swap?.part === 'issued-at') signed.issued_at = now(-5);
  else if (swap?.part === 'nonce') signed.nonce = newNonce();
  return { issued_at, nonce, identity_signature: b64(sign(seed, canonicalString(profile, name, signed))) };
}

const sha256b64url = async (text: string) => encodeBase64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));

/** PUT .../keystore with `envelope` as given (the wrapped JSON sent as its text). */
export function enrollWithEnvelope(client: RelayClient, identity: string, e: EnrollmentInput, envelope: Record<string, string>): Promise<HttpResponse> {
  const { wrapped, ...rest } = e;
  const text = `{"wrapped":${wrapped},${JSON.stringify({ ...rest, ...envelope }).slice(1)}`;
  return client.post(`/identities/${encodeURIComponent(identity)}/keystore`, text, {}, 'PUT');
}

/** The fields a keystore-enroll signature covers, for `e` sent by `identity`. */
export async function enrollFields(identity: string, e: EnrollmentInput): Promise<Record<string, string>> {
  return { identity, enrollment_id: e.enrollment_id, kind: e.kind, credential_id: e.credential_id ?? '', wrapped_digest: await sha256b64url(e.wrapped) };
}

export const keystoreListWith = (client: RelayClient, identity: string, envelope: Record<string, string>) => client.post(`/identities/${encodeURIComponent(identity)}/keystore/list`, { ...envelope });

export const keystoreRemoveWith = (client: RelayClient, identity: string, enrollmentId: string, body: Record<string, unknown>) =>
  client.post(`/identities/${encodeURIComponent(identity)}/keystore/${encodeURIComponent(enrollmentId)}`, body, {}, 'DELETE');

/** The approver's fetch or delivery at `code` with a body and envelope as given. */
export const enrollStepWith = (client: RelayClient, identity: string, code: string, step: 'fetch' | 'deliver', body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  client.post(`/identities/${encodeURIComponent(identity)}/enroll/${encodeURIComponent(code)}/${step}`, body, headers);

function safe(r: HttpResponse): unknown {
  try {
    return r.json();
  } catch {
    return {};
  }
}

/**
 * `call` made `n` ways at once, their answers in order. `n` requests first open `n` kept-alive
 * connections (GET /health), so the racing calls leave together instead of behind `n` handshakes
 * (a step that finishes within a handshake would otherwise never meet its rivals).
 */
export async function race<T>(client: RelayClient, n: number, call: (i: number) => Promise<T>): Promise<T[]> {
  await Promise.all(Array.from({ length: n }, () => client.get('/health')));
  return Promise.all(Array.from({ length: n }, (_, i) => call(i)));
}
