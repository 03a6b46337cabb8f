// Replays a transcript row against a reference relay: each recorded exchange is sent again in the
// same shape (method, path, the headers the client set, the body's form) with fresh identities,
// keys, signatures and ids. Placeholders are mapped to fresh values as they first appear; what is
// signed or derived (admin envelopes, WebAuthn assertions, manifests, pages, chunks, shares,
// rosters, messages) is built again by the harness's actors from the recorded body's fields.
import { createHash, createPublicKey, verify } from 'node:crypto';
import type { HttpResponse } from '../../../harness/actors/http.ts';
import { SoftwareAuthenticator, type EnrollmentInput } from '../../../harness/actors/relay/index.ts';
import { create, groupRoster, hex16, remove, replace, share } from '../../../harness/actors/drive/objects.ts';
import type { DriveActor } from '../../../harness/actors/drive/client.ts';
import { registrableDomain } from '../../../protocol/relay/rp-id.ts';
import type { ChallengeForm } from '../../../protocol/relay/webauthn.ts';
import { closeStream, CORE_HANDLERS } from './core.ts';
import { shapeOf, type Exchange, type Row } from './transcripts.ts';
import { safe, type Handler, type Replayed, World } from './world.ts';

export { safe, World, type Replayed } from './world.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

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
