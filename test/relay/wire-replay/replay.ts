// Replays a transcript row against a reference relay: each recorded exchange is sent again in the
// same shape (method, path, the headers the client set, the body's form) with fresh identities,
// keys, signatures and ids. Placeholders are mapped to fresh values as they first appear; what is
// signed or derived (admin envelopes, WebAuthn assertions, manifests, pages, chunks, shares,
// rosters, messages) is built again by the harness's actors from the recorded body's fields.
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import type { HttpResponse } from '../../../harness/actors/http.ts';
import { SoftwareAuthenticator, type EnrollmentInput, type RelayIdentity } from '../../../harness/actors/relay/index.ts';
import { create, encryptContent, groupRoster, hex16, nodeKeys, remove, replace, share, type Chunk, type NodeKeys } from '../../../harness/actors/drive/objects.ts';
import type { DriveActor } from '../../../harness/actors/drive/client.ts';
import type { SseStream } from '../../../harness/actors/relay/sse.ts';
import type { DriveSession } from '../../../harness/suites/drive/driver.ts';
import { registrableDomain } from '../../../protocol/relay/rp-id.ts';
import type { ChallengeForm } from '../../../protocol/relay/webauthn.ts';
import { closeStream, CORE_HANDLERS } from './core.ts';
import { shapeOf, type Exchange, type Row } from './transcripts.ts';

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

// --- the keystore -----------------------------------------------------------------------------

async function enroll(w: World, e: Exchange): Promise<HttpResponse> {
  const id = (await w.caller(e)) ?? (await w.identity('alice'));
  const b = e.request_body as Obj;
  w.enrollments.set(String(b.enrollment_id), e);
  const input: EnrollmentInput = {
    enrollment_id: String(b.enrollment_id).startsWith('{') ? await w.sub(String(b.enrollment_id)) : String(b.enrollment_id),
    kind: String(b.kind),
    wrap: String(b.wrap),
    wrapped: JSON.stringify(b.wrapped),
  };
  if (typeof b.label === 'string') input.label = b.label;
  if (typeof b.role === 'string') input.role = b.role;
  if (typeof b.credential_id === 'string') {
    const auth = new SoftwareAuthenticator(-7);
    w.passkeys.set(b.credential_id, { auth, recordedKey: String(b.credential_public_key) });
    Object.assign(input, auth.credential());
  }
  return w.s.relay.keystoreEnroll(id, input);
}

/** A fresh assertion as the recorded one was made: its challenge form, RP id and (in)valid signature. */
function assertion(w: World, recorded: Obj, block: NonNullable<Exchange['webauthn']>, identity: string): Obj {
  const passkey = w.passkeys.get(String(recorded.credential_id));
  if (!passkey) throw new Error(`no enrolled credential ${String(recorded.credential_id)} to assert with`);
  const hashed = block.authenticator_data.rp_id_hash_is_sha256_of.join(' ');
  const rpId = hashed.includes('registrableDomain') ? registrableDomain(identity)! : identity;
  const form: ChallengeForm = block.challenge_form.startsWith('base64url') ? 'utf8' : 'issued';
  return { ...passkey.auth.assert({ challenge: w.lastChallenge, challengeForm: form, rpId, wrongKey: !recordedSignatureValid(recorded, passkey.recordedKey) }) };
}

/** Whether the recorded assertion verifies with the recorded credential key (the "bad signature" rows do not). */
function recordedSignatureValid(a: Obj, spki: string): boolean {
  const key = createPublicKey({ key: Buffer.from(spki, 'base64url'), format: 'der', type: 'spki' });
  const signed = Buffer.concat([
    Buffer.from(String(a.authenticator_data), 'base64url'),
    createHash('sha256')
      .update(Buffer.from(String(a.client_data_json), 'base64url'))
      .digest(),
  ]);
  return verify('sha256', signed, { key, dsaEncoding: 'der' }, Buffer.from(String(a.signature), 'base64url'));
}

async function keystoreFetch(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity('alice');
  const b = e.request_body as Obj;
  const body: Obj = { assertion: assertion(w, b.assertion as Obj, e.webauthn!, id.identity) };
  if (typeof b.rp_id === 'string') body.rp_id = await w.sub(b.rp_id);
  return w.send(e, JSON.stringify(body));
}

async function keystoreRemove(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity('alice');
  const b = e.request_body as Obj;
  const token = /\/keystore\/(.+)$/.exec(e.path)![1]!;
  // A removal the recorded run saw refused may now have succeeded: the row after it, which removes
  // the same enrollment, gets one enrolled again the same way.
  if (w.removed.has(token) && w.enrollments.has(token)) {
    w.values.delete(token);
    w.removed.delete(token);
    await enroll(w, w.enrollments.get(token)!);
  }
  const enrollment = await w.sub(token);
  const extra: Obj = {};
  if (isObj(b.actor_assertion)) extra.actor_assertion = assertion(w, b.actor_assertion, e.webauthn!, id.identity);
  if (typeof b.rp_id === 'string') extra.rp_id = await w.sub(b.rp_id);
  for (const k of ['allow_last', 'revoke_sessions']) if (b[k] !== undefined) extra[k] = b[k];
  const r = await w.s.relay.keystoreRemove(id, enrollment, extra);
  if (r.status === 204 || r.status === 200) w.removed.add(token);
  return r;
}

// --- system files, groups, devices, messages ----------------------------------------------------

async function systemFile(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body;
  // A signed roster is signed again by the fresh group (its members and admins fresh too).
  if (e.method === 'PUT' && isObj(b) && typeof b.signature === 'string' && b.group !== undefined) {
    const group = await w.identity('group');
    const fresh = JSON.parse(await w.sub(JSON.stringify(b))) as Obj;
    const roster = groupRoster(w.s.profile, group.identity, group, { members: fresh.members as string[], admins: fresh.admins as string[], epoch: Number(fresh.epoch) });
    return w.send(e, `${JSON.stringify(roster, null, 2)}\n`);
  }
  return w.send(e);
}

async function revokeDevice(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity('alice');
  const listed = safe(await w.s.relay.get(`/devices/${encodeURIComponent(id.identity)}`, await w.s.relay.authHeaders(id, 'GET', `/devices/${encodeURIComponent(id.identity)}`, { mode: 'challenge' })));
  const device = ((listed?.devices as Obj[] | undefined) ?? [])[0]?.id;
  w.values.set(String((e.request_body as Obj).device_id), String(device));
  return w.send(e);
}

// --- the drive -------------------------------------------------------------------------------

/** The drive actor a recorded exchange authenticates as. */
async function actorOf(w: World, e: Exchange): Promise<DriveActor> {
  if (e.request_headers['X-Poweur-Link'] !== undefined) return { link: await w.sub(e.request_headers['X-Poweur-Link']) };
  const id = (await w.caller(e)) ?? (await w.identity('alice'));
  return { identity: id.identity, seed: id.seed };
}

async function driveCommit(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body as Obj;
  const alice = await w.identity('alice');
  const drive = alice.identity;
  const author = alice;
  let body: Obj;
  if (isObj(b.manifest)) {
    const m = b.manifest;
    const token = String(m.node);
    const keys = w.node(token, m.kind === 'file');
    const recordedPages = Array.isArray(m.pages) ? (m.pages as string[]) : [];
    const chunks = ((b.pages as Obj[] | undefined) ?? []).flatMap((p) => (p.chunks as Obj[]).map((c) => w.chunk(String(c.id), Number(c.size))));
    const parent = w.heads.get(token) ?? '';
    if (m.operation === 'create') {
      const at = m.folder === '' ? {} : { folder: w.node(String(m.folder)), name: `replayed-${hex16().slice(0, 6)}` };
      body = create(w.s.profile, { drive, author, keys, kind: m.kind as 'file' | 'folder', at, chunks, ownerEncryption: alice.encryption.publicKey });
    } else if (m.operation === 'replace') body = replace(w.s.profile, { drive, author, keys, parent, chunks });
    else body = remove(w.s.profile, { drive, author, node: keys.node, kind: m.kind as 'file' | 'folder', parent, mode: String(m.mode) });
    const made = body.manifest as Obj;
    w.heads.set(token, String(made.version));
    w.values.set(String(m.version), String(made.version));
    recordedPages.forEach((p, i) => w.values.set(p, String((made.pages as string[])[i])));
    // The deployed client leaves `pages` out when there are none (move, remove).
    if (b.pages === undefined) delete body.pages;
  } else if (isObj(b.share)) {
    const s = b.share;
    const member = typeof s.member === 'string' ? await w.identity(/^\{([a-z]+)\}$/.exec(s.member)![1]!) : undefined;
    const made = share(w.s.profile, {
      drive,
      issuer: author,
      node: w.node(String(s.node)),
      role: s.role as 'read',
      ...(member ? { member: { identity: member.identity, encryption: member.encryption.publicKey } } : { link: await w.value(String(s.link), 'link') }),
    });
    body = made.body;
    w.values.set(String(s.id), String((body.share as Obj).id));
  } else body = { id: hex16(), unshare: { id: await w.sub(String((b.unshare as Obj).id)) } };
  return w.send(e, JSON.stringify({ ...body, id: hex16() }));
}

async function missing(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body as { chunks: Obj[] };
  const chunks = b.chunks.map((c) => w.chunk(String(c.id), Number(c.size)));
  return w.send(e, JSON.stringify({ chunks: chunks.map((c) => ({ id: c.id, size: c.size })) }));
}

/** The chunk upload: to the URL the missing list answered, with the credentials sent to the relay when it is relative (as the deployed client does). */
async function putChunk(w: World, e: Exchange): Promise<HttpResponse> {
  const token = /\/chunks\/(\{chunk:\d+\})$/.exec(e.path)![1]!;
  const c = w.chunks.get(token)!;
  const up = w.uploads.get(c.id);
  if (!up) throw new Error(`no upload URL was answered for ${token}`);
  const relative = up.url.startsWith('/');
  const headers = { ...up.headers, ...(relative ? await w.s.drive.headers(await actorOf(w, e)) : {}) };
  return w.s.drive.http.request(new URL(up.url, w.s.target.url).href, { method: 'PUT', headers, body: c.bytes });
}

/** A read of the drive; `/nodes/undefined` (the deployed client asking for an id the listing lacked) asks for the first child listed. */
async function driveRead(w: World, e: Exchange, listed: string[]): Promise<HttpResponse> {
  const path = e.path.includes('/nodes/undefined') ? (await w.sub(e.path)).replace('/nodes/undefined', `/nodes/${listed[0] ?? 'none'}`) : await w.sub(e.path);
  const actor = await actorOf(w, e);
  return w.s.drive.http.request(new URL(path, w.s.target.url).href, { method: 'GET', headers: { accept: 'application/json', ...(await w.s.drive.headers(actor)) } });
}

// --- dispatch ----------------------------------------------------------------------------------

export type Handler = (w: World, e: Exchange, row: Row, listed: string[]) => Promise<HttpResponse>;

/** Handlers by shape: `METHOD path` with its placeholders as `{}`. */
const HANDLERS: Array<[RegExp, Handler]> = [
  [/^GET \/auth\/challenge$/, (w, e) => w.send(e)],
  [/^PUT \/identities\/\{\}\/keystore$/, enroll],
  [/^POST \/identities\/\{\}\/keystore\/list$/, async (w) => w.s.relay.keystoreList(await w.identity('alice'))],
  [/^POST \/identities\/\{\}\/keystore\/fetch$/, keystoreFetch],
  [/^DELETE \/identities\/\{\}\/keystore\/\{\}$/, keystoreRemove],
  [/^(GET|PUT|DELETE) \/identities\/\{\}\/system\/.+$/, systemFile],
  [/^GET \/devices\/\{\}$/, (w, e) => w.send(e)],
  [/^POST \/devices\/\{\}\/revoke$/, revokeDevice],
  [/^GET \/groups\/\{\}(\/epoch)?$/, (w, e) => w.send(e)],
  [/^POST \/drive\/\{\}\/commit$/, driveCommit],
  [/^POST \/drive\/\{\}\/chunks\/missing$/, missing],
  [/^PUT \/drive\/\{\}\/chunks\/\{\}$/, putChunk],
  [/^GET \/drive\/\{\}\/links\/\{\}$/, (w, e) => w.send(e)],
  [/^GET \/drive\/\{\}(\/.*)?$/, (w, e, _row, listed) => driveRead(w, e, listed)],
  ...CORE_HANDLERS,
];

export function handlerFor(e: Exchange): Handler | undefined {
  const shape = `${e.method} ${shapeOf(e.path)}`;
  return HANDLERS.find(([re]) => re.test(shape))?.[1];
}

/** Replays every exchange of `row` in order. */
export async function replayRow(w: World, row: Row): Promise<Replayed[]> {
  const out: Replayed[] = [];
  let listed: string[] = [];
  for (const e of row.exchanges) {
    const handler = handlerFor(e);
    if (!handler) {
      out.push({ skipped: `no replay for ${e.method} ${shapeOf(e.path)}` });
      continue;
    }
    const answer = await handler(w, e, row, listed);
    w.learn(e, answer);
    const kids = safe(answer)?.children;
    if (Array.isArray(kids)) listed = (kids as Obj[]).map((k) => String(k.id ?? k.node));
    out.push({ answer });
  }
  await closeStream(w);
  return out;
}
