// The fresh world a transcript file is replayed in (its identities, ids and keys by placeholder),
// and what a replay handler is: replay.ts dispatches to the handlers, core.ts holds some of them.
import { randomBytes } from 'node:crypto';
import type { HttpResponse } from '../../../harness/actors/http.ts';
import type { RelayIdentity, SoftwareAuthenticator } from '../../../harness/actors/relay/index.ts';
import { encryptContent, hex16, nodeKeys, type Chunk, type NodeKeys } from '../../../harness/actors/drive/objects.ts';
import type { SseStream } from '../../../harness/actors/relay/sse.ts';
import type { DriveSession } from '../../../harness/suites/drive/driver.ts';
import type { Exchange, Row } from './transcripts.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const PLACEHOLDER = /\{([a-z_]+)(?::(\d+))?\}/g;
const IDENTITIES: Record<string, 'relay' | 'peer'> = { alice: 'relay', bob: 'relay', group: 'relay', carol: 'peer' };

/** What one replayed exchange answered, and what the engine could not replay (with why). */
export type Replayed = { answer: HttpResponse } | { skipped: string };

/** The fresh world one transcript file is replayed in: identities, ids and keys by placeholder. */
export class World {
  readonly ids = new Map<string, RelayIdentity>();
  readonly values = new Map<string, string>();
  readonly nodes = new Map<string, NodeKeys>();
  /** Each node placeholder's current head version. */
  readonly heads = new Map<string, string>();
  readonly chunks = new Map<string, Chunk>();
  readonly uploads = new Map<string, { url: string; headers: Record<string, string> }>();
  /** The recorded credential id's authenticator, and the recorded public key (to tell a bad signature). */
  readonly passkeys = new Map<string, { auth: SoftwareAuthenticator; recordedKey: string }>();
  /** Each enrollment placeholder's recorded enrollment, and those a replayed removal ended. */
  readonly enrollments = new Map<string, Exchange>();
  readonly removed = new Set<string>();
  /** Sessions registered, by the recorded session id placeholder. */
  readonly sessions = new Map<string, { id: string; seed: Uint8Array }>();
  /** Identities made without registering them (their registration is itself a recorded exchange). */
  readonly unregistered = new Set<string>();
  /** The last cursors a pickup answered. */
  readonly cursors: { cursor?: string; ack_cursor?: string } = {};
  /** An event stream a row opened, closed when the row ends. */
  stream: SseStream | undefined;
  /** Recorded ETags and the fresh ones answered in their place. */
  readonly etags = new Map<string, string>();
  #lastChallenge = '';

  constructor(readonly s: DriveSession) {}

  async identity(name: string): Promise<RelayIdentity> {
    let id = this.ids.get(name);
    if (!id) {
      id = await this.s.identity(IDENTITIES[name] ?? 'relay', { register: !this.unregistered.has(name) });
      this.ids.set(name, id);
    }
    return id;
  }

  /** `text` with every placeholder replaced (identities registered on first sight, other ids made fresh). */
  async sub(text: string): Promise<string> {
    let out = text;
    for (const m of [...text.matchAll(PLACEHOLDER)]) out = out.replace(m[0], await this.value(m[0], m[1]!));
    return out;
  }

  async value(token: string, name: string): Promise<string> {
    if (name in IDENTITIES) return (await this.identity(name)).identity;
    if (name === 'relay') return this.s.target.url;
    if (name === 'peer') return this.s.target.peerUrl ?? '';
    if (name === 'relay_host' || name === 'peer_host') return new URL(name === 'relay_host' ? this.s.target.url : (this.s.target.peerUrl ?? '')).host;
    if (name === 'alice_handle') return (await this.identity('alice')).identity.split('.')[0]!;
    if (name === 'node') return this.node(token).node;
    if (name === 'chunk') return this.chunk(token, 4136).id;
    let v = this.values.get(token);
    if (v === undefined) {
      v = name === 'enrollment' ? `enr-${randomBytes(6).toString('hex')}` : hex16();
      this.values.set(token, v);
    }
    return v;
  }

  node(token: string, file = false): NodeKeys {
    let k = this.nodes.get(token);
    if (!k) this.nodes.set(token, (k = nodeKeys(undefined, file)));
    return k;
  }

  /** A fresh encrypted chunk for a placeholder, of the recorded size's bucket. */
  chunk(token: string, size: number): Chunk {
    let c = this.chunks.get(token);
    if (!c) {
      const drive = this.ids.get('alice')?.identity ?? 'drive';
      [c] = encryptContent(this.s.profile, drive, nodeKeys(undefined, true), randomBytes(Math.max(1, size - 60)));
      this.chunks.set(token, c!);
    }
    return c!;
  }

  /** The identity a recorded header names (its placeholder), or undefined. */
  async caller(e: Exchange): Promise<RelayIdentity | undefined> {
    const named = e.request_headers['X-Poweur-Identity'];
    const m = named ? /^\{([a-z_]+)\}$/.exec(named) : null;
    return m ? this.identity(m[1]!) : undefined;
  }

  /**
   * Sends `e` again: its path with fresh values, its headers (authentication made fresh: challenge
   * headers, a signed request or a link), `body` as given or the recorded body with fresh values.
   */
  async send(e: Exchange, body?: string | Uint8Array, path?: string, extra: Record<string, string> = {}): Promise<HttpResponse> {
    const target = path ?? (await this.sub(e.path));
    const session = e.request_headers['X-Poweur-Session-Id'] !== undefined ? this.sessions.get(e.request_headers['X-Poweur-Session-Id']) : undefined;
    const auth = session ? { sessionId: session.id, seed: session.seed } : {};
    const h = e.request_headers;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(h)) if (/^(accept|content-type|if-match)$/i.test(k)) headers[k.toLowerCase()] = this.etags.get(v) ?? v;
    const text = body ?? (e.request_body === undefined ? undefined : await this.bodyText(e));
    const who = await this.caller(e);
    const client = this.base(e) === this.s.target.url ? this.s.relay : this.s.peer;
    const signedText = typeof text === 'string' ? text : '';
    if (who && h['X-Poweur-Challenge'] !== undefined) Object.assign(headers, await client.authHeaders(who, e.method, target, { mode: 'challenge', ...auth }, signedText));
    else if (who && h['X-Poweur-Timestamp'] !== undefined) {
      // A timestamp the recorded run sent off the relay's clock (its Date) is sent off by as much.
      const date = Date.parse((e as { reply_headers?: Record<string, string> }).reply_headers?.date ?? '');
      const off = Number.isNaN(date) ? 0 : Number(h['X-Poweur-Timestamp']) - Math.floor(date / 1000);
      const timestamp = Math.abs(off) > 30 ? Math.floor(Date.now() / 1000) + off : undefined;
      Object.assign(headers, await client.authHeaders(who, e.method, target, { mode: 'signed-request', ...auth, ...(timestamp !== undefined ? { timestamp } : {}) }, signedText));
    }
    if (h['X-Poweur-Link'] !== undefined) headers[this.s.profile.ids.header_link.toLowerCase()] = await this.sub(h['X-Poweur-Link']);
    for (const [k, v] of Object.entries(h)) if (/^x-poweur-device/i.test(k)) headers[k.toLowerCase().replace('x-poweur-', `x-${this.s.profile.name}-`)] = v;
    if (h.Authorization !== undefined) headers.authorization = await this.sub(h.Authorization);
    Object.assign(headers, extra);
    return this.s.drive.http.request(new URL(target, this.base(e)).href, { method: e.method, headers, ...(text !== undefined ? { body: text } : {}) });
  }

  /** The relay an exchange went to: A, or B for `{peer}`. */
  base(e: Exchange): string {
    return (e as { origin?: string }).origin === '{peer}' ? (this.s.target.peerUrl ?? this.s.target.url) : this.s.target.url;
  }

  /** The recorded JSON body with fresh values, written in the recorded form. */
  async bodyText(e: Exchange): Promise<string> {
    const json = await this.sub(JSON.stringify(e.request_body));
    return (e.request_body_form ?? '').includes('2-space') ? `${JSON.stringify(JSON.parse(json), null, 2)}\n` : json;
  }

  /** Keeps what an answer made that later requests name: ETags, challenges, upload URLs. */
  learn(e: Exchange, r: HttpResponse): void {
    const recordedEtag = (e as { reply_headers?: Record<string, string> }).reply_headers?.etag;
    if (recordedEtag && r.headers.etag) this.etags.set(recordedEtag, r.headers.etag);
    const b = safe(r);
    if (typeof b?.challenge === 'string') this.#lastChallenge = b.challenge;
    // What the recorded answer named by a placeholder (a session, a code, a message id) is the fresh answer's value.
    const recorded = e.reply_body;
    if (isObj(recorded) && b) for (const [k, v] of Object.entries(recorded)) if (typeof v === 'string' && /^\{[a-z_]+:\d+\}$/.test(v) && typeof b[k] === 'string') this.values.set(v, b[k]);
    for (const k of ['cursor', 'ack_cursor'] as const) if (typeof b?.[k] === 'string') this.cursors[k] = b[k];
    for (const m of Array.isArray(b?.missing) ? (b.missing as Obj[]) : []) {
      const up = m.upload as Obj;
      this.uploads.set(String(m.id), { url: String(up.url), headers: (up.headers ?? {}) as Record<string, string> });
    }
  }

  get lastChallenge(): string {
    return this.#lastChallenge;
  }
}

export const safe = (r: HttpResponse): Obj | undefined => {
  try {
    const v = r.json();
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
};

export type Handler = (w: World, e: Exchange, row: Row, listed: string[]) => Promise<HttpResponse>;
