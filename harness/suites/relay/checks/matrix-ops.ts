// What the matrix checks share: the principals document 3 tells apart on an owner-only call (the
// owner, its sessions, another identity and its sessions, a revoked session, a stranger), the
// inbox operations as one table (pickup, its cursor read, consume, events), and the signed
// operations of spec/http/relay.openapi.yaml with a request builder that signs one set of parts
// and sends another (each bound part swapped alone). Nothing here judges: the checks do.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ack, signedRequestHeaders, type OwnerAuth, type RelayIdentity } from '../../../actors/relay/index.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { specFile } from '../../../fuzz/operations.ts';
import { openEvents } from '../../../actors/relay/sse.ts';
import { CheckFailure, isObject, safeJson, said, type Session } from '../driver.ts';
import { mail } from './messaging.ts';

/** A registered session: its key's seed and the relay's id for it. */
export interface Sess {
  seed: Uint8Array;
  sessionId: string;
}

export const randomSeed = (): Uint8Array => new Uint8Array(32).map(() => Math.floor(Math.random() * 256));

/** A session registered for `id` (living `ttlS` seconds); the check stops without one. */
export async function session(s: Session, id: RelayIdentity, ttlS = 3600, headers: Record<string, string> = {}): Promise<Sess> {
  const seed = randomSeed();
  const r = await s.relay.registerSession(id, seed, ttlS, headers);
  const b = safeJson(r);
  if (r.status !== 201 || !isObject(b) || typeof b.session_id !== 'string') throw new CheckFailure(`POST /sessions for ${id.identity} answered ${said(r)}, not 201 with a session_id`);
  return { seed, sessionId: b.session_id };
}

/** A revoked session of `id`: registered, then ended by DELETE /sessions/:id. */
export async function revokedSession(s: Session, id: RelayIdentity): Promise<Sess> {
  const sess = await session(s, id);
  const r = await s.relay.revokeSession(id, sess.sessionId);
  if (r.status !== 204) throw new CheckFailure(`revoking a session of ${id.identity} answered ${said(r)}, not 204`);
  return sess;
}

/** The two ways an owner-only call is authenticated (Authentication 2 and 3). */
export const MODES = ['challenge', 'signed-request'] as const;
export type Mode = (typeof MODES)[number];

/** Owner-call authentication in `mode`, by `seed` (default the identity's key) and a session id. */
export const by = (mode: Mode, o: { seed?: Uint8Array; sessionId?: string } = {}): OwnerAuth => ({ mode, ...(o.seed ? { seed: o.seed } : {}), ...(o.sessionId ? { sessionId: o.sessionId } : {}) });

/** The inbox operations (operationIds of spec/http/relay.openapi.yaml) that take an owner's authentication. */
export const INBOX_OPS = ['pickup', 'consume', 'events'] as const;
export type InboxOp = (typeof INBOX_OPS)[number];

export interface Answer {
  status: number;
  text: string;
}

/**
 * One inbox operation on `target`'s inbox, authenticated by `auth`: a cursor read for the pickup
 * (so a call wrongly let through forgets nothing another cell needs), a consume of nothing, and an
 * event stream opened and closed at once.
 */
export async function inboxCall(s: Session, op: InboxOp, target: RelayIdentity, auth: OwnerAuth): Promise<Answer> {
  if (op === 'pickup') {
    const r = await s.relay.pickup(target, auth, '0');
    return { status: r.status, text: said(r) };
  }
  if (op === 'consume') {
    const r = await s.relay.consume(target, { through: '0', ack_through: '0' }, auth);
    return { status: r.status, text: said(r) };
  }
  const stream = await s.relay.events(target, auth);
  await stream.close();
  return { status: stream.status, text: `${stream.status} ${(stream.body ?? '').slice(0, 160)}` };
}

/** An operation of the relay's OpenAPI file whose security lists a signed request. */
export interface SignedOp {
  id: string;
  method: string;
  /** The template, e.g. `/messages/{identity}`. */
  path: string;
}

let signed: SignedOp[] | undefined;

/** Every operation spec/http/relay.openapi.yaml opens with a signed request (security `signedRequest`), read once. */
export function signedOperations(): SignedOp[] {
  signed ??= readSignedOperations();
  return signed;
}

function readSignedOperations(): SignedOp[] {
  const doc = parse(readFileSync(specFile('relay'), 'utf8')) as { paths?: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, unknown>> }>> };
  const out: SignedOp[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of ['get', 'post', 'put', 'delete', 'patch']) {
      const op = item[method];
      if (op?.operationId && (op.security ?? []).some((s) => 'signedRequest' in s)) out.push({ id: op.operationId, method: method.toUpperCase(), path });
    }
  }
  return out;
}

/** What a signed request signs, or sends: every bound part of `svc-request/v1`. */
export interface RequestParts {
  identity: string;
  /** The key that signs. */
  seed: Uint8Array;
  sessionId?: string;
  method: string;
  /** Path and query. */
  path: string;
  body: string;
  timestamp: number;
  nonce: string;
}

/**
 * Sends `sent` with a signature over `signed` (the two differ in the part a cell swaps). An event
 * stream is opened and closed at once; its status is the answer.
 */
export async function signedCall(s: Session, signed: RequestParts, sent: RequestParts): Promise<Answer> {
  const ids = s.profile.ids;
  const headers: Record<string, string> = {
    ...signedRequestHeaders(s.profile, { identity: signed.identity, seed: signed.seed, method: signed.method, path: signed.path, body: signed.body, timestamp: signed.timestamp, nonce: signed.nonce }),
    [ids.header_identity.toLowerCase()]: sent.identity,
    [ids.header_timestamp.toLowerCase()]: String(sent.timestamp),
    [ids.header_nonce.toLowerCase()]: sent.nonce,
    ...(sent.sessionId ? { [ids.header_session_id.toLowerCase()]: sent.sessionId } : {}),
  };
  const url = `${s.relay.url}${sent.path}`;
  if (sent.method === 'GET' && sent.path.startsWith('/events/')) {
    const stream = await openEvents(url, headers, s.signal ? { signal: s.signal } : {});
    await stream.close();
    return { status: stream.status, text: `${stream.status} ${(stream.body ?? '').slice(0, 160)}` };
  }
  const r = await s.relay.http.request(url, {
    method: sent.method,
    headers: { accept: 'application/json', ...(sent.body !== '' ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(sent.body !== '' ? { body: sent.body } : {}),
    ...(s.signal ? { signal: s.signal } : {}),
  });
  return { status: r.status, text: said(r) };
}

/** Runs `tasks` at most `width` at a time (a 2-core relay, and undici's connections, are not flooded). */
export async function pooled<T>(tasks: ReadonlyArray<() => Promise<T>>, width = 8): Promise<T[]> {
  const out: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return out;
}

export const ok = (a: Answer): boolean => a.status >= 200 && a.status < 300;
export const refused4xx = (a: Answer): boolean => a.status >= 400 && a.status < 500;

/**
 * Spends `from`'s sender bucket with badly signed envelopes (messages, or acks) to `to`, twenty at
 * a time, until one is answered 429: that answer, or undefined when `cap` + 20 never were. One
 * envelope is sealed and its copies differ by id (their signatures are bad anyway).
 */
export async function throttle(s: Session, kind: 'message' | 'ack', from: RelayIdentity, to: RelayIdentity, cap: number): Promise<HttpResponse | undefined> {
  const base = kind === 'message' ? mail(s, from, to, 'throttle') : ack(s.profile, from, to.identity, 'm_throttle');
  for (let sent = 0; sent < cap + 20; sent += 20) {
    const batch = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const env = { ...base, id: `${String(base.id)}_${sent + i}`, signature: 'AAAA' };
        return kind === 'message' ? s.relay.send(env) : s.relay.ack(env);
      }),
    );
    const limited = batch.find((r) => r.status === 429);
    if (limited) return limited;
  }
  return undefined;
}
