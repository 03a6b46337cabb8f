// Replay handlers for the relay core and pairing (messaging.json, pairing.json, and the sessions and
// messages of the other files): registration, identity reads, sessions, messages and acks (signed
// by the identity or a session, with or without its proof), pickups, consume, the event stream,
// export, rotation, and pairing's offer, reveal, fetch, deliver and abandon, each built afresh.
import { randomBytes } from 'node:crypto';
import type { HttpResponse } from '../../../harness/actors/http.ts';
import { ack, adminEnvelope, b64, message, openEvents, registration, sessionProof, signingKey, type RelayIdentity, type SessionKey } from '../../../harness/actors/relay/index.ts';
import { newDeviceKey, sealFor, type DeviceKey } from '../../../harness/actors/relay/pairing.ts';
import { publicKey, sign } from '../../../harness/impl/noble.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import { canonicalString } from '../../../protocol/common/canonical.ts';
import { signDocument } from '../../../protocol/common/document.ts';
import type { Handler, World } from './world.ts';
import type { Exchange } from './transcripts.ts';

type Obj = Record<string, unknown>;
const named = (placeholder: unknown): string => /^\{([a-z]+)\}$/.exec(String(placeholder))?.[1] ?? 'alice';
const devices = new WeakMap<World, Map<string, DeviceKey>>();
const rfc3339 = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

async function register(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body as Obj;
  const id = await w.identity(named(b.identity));
  const facts = (await w.s.facts())[w.base(e) === w.s.target.url ? 'relay' : 'peer']!;
  const invite = w.base(e) === w.s.target.url && w.s.target.declared.inviteCode ? { invite_code: w.s.target.declared.inviteCode } : {};
  return w.send(e, JSON.stringify(registration(w.s.profile, id, facts.relayAddress, invite)));
}

/** A session registered for the body's identity, kept under the placeholder the recorded answer named. */
async function registerSession(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity(named((e.request_body as Obj).identity));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(e.request_headers)) if (/^x-poweur-device/i.test(k)) headers[k.toLowerCase().replace('x-poweur-', `x-${w.s.profile.name}-`)] = v;
  const seed = new Uint8Array(randomBytes(32));
  const r = await (w.base(e) === w.s.target.url ? w.s.relay : w.s.peer).registerSession(id, seed, 3600, headers);
  const recorded = (e.reply_body as Obj | undefined)?.session_id;
  const fresh = (r.json() as Obj | undefined)?.session_id;
  if (typeof recorded === 'string' && typeof fresh === 'string') w.sessions.set(recorded, { id: fresh, seed });
  return r;
}

/** The session a recorded envelope names (with its proof when it carried one). */
function sessionOf(w: World, from: RelayIdentity, b: Obj): SessionKey | undefined {
  const s = typeof b.session_id === 'string' ? w.sessions.get(b.session_id) : undefined;
  if (!s) return undefined;
  return { seed: s.seed, sessionId: s.id, ...(b.session_proof !== undefined ? { proof: sessionProof(w.s.profile, from, s.seed) } : {}) };
}

/** A message as recorded (sender, recipient, type, expiry relative to its timestamp, signer), sealed and signed afresh. */
async function postMessage(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body as Obj;
  const from = await w.identity(named(b.sender));
  const to = await w.identity(named(b.recipient));
  const ahead = typeof b.expires_at === 'string' ? Date.parse(b.expires_at) - Date.parse(String(b.timestamp)) : undefined;
  const session = sessionOf(w, from, b);
  const m = message(w.s.profile, from, to.identity, to.encryption.publicKey, 'replayed', {
    ...(typeof b.type === 'string' ? { type: b.type } : {}),
    ...(ahead !== undefined ? { expiresAt: rfc3339(Date.now() + ahead) } : {}),
    ...(session ? { session } : {}),
  });
  if (typeof b.id === 'string') w.values.set(b.id, String(m.id));
  return w.send(e, JSON.stringify(m));
}

async function postAck(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body as Obj;
  const from = await w.identity(named(b.sender));
  const session = sessionOf(w, from, b);
  const a = ack(w.s.profile, from, (await w.identity(named(b.recipient))).identity, await w.sub(String(b.message_id)), { state: String(b.state), ...(session ? { session } : {}) });
  return w.send(e, JSON.stringify(a));
}

/** Consume through what the last pickup answered (a recorded "0" stays 0). */
async function consume(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body as Obj;
  const body: Obj = {};
  if (b.through !== undefined) body.through = b.through === '0' ? '0' : (w.cursors.cursor ?? '0');
  if (b.ack_through !== undefined) body.ack_through = b.ack_through === '0' ? '0' : (w.cursors.ack_cursor ?? '0');
  return w.send(e, JSON.stringify(body));
}

async function revokeSession(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity(named((e.request_body as Obj).identity));
  const token = /\/sessions\/(.+)$/.exec(e.path)![1]!;
  const session = w.sessions.get(token);
  const body = { identity: id.identity, ...adminEnvelope(w.s.profile, 'session-revocation', { identity: id.identity, session_id: session?.id ?? '' }, id.seed) };
  return w.send(e, JSON.stringify(body), `/sessions/${encodeURIComponent(session?.id ?? 'none')}`);
}

/**
 * The event stream, opened and kept while the row's next exchanges run; its answer reads as the
 * first event's data (what the client reads of each frame), and the row waits for a message event.
 */
async function events(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity(named(e.request_headers['X-Poweur-Identity']));
  const path = await w.sub(e.path);
  const stream = await openEvents(new URL(path, w.base(e)).href, await w.s.relay.authHeaders(id, 'GET', path, { mode: 'challenge' }));
  w.stream = stream;
  const first = stream.status === 200 ? await stream.next(() => true, 5_000).catch(() => undefined) : undefined;
  const text = JSON.stringify(first?.data ?? {});
  return { status: stream.status, headers: stream.headers, text: () => (stream.status === 200 ? text : (stream.body ?? '')), json: () => JSON.parse(text) as unknown } as unknown as HttpResponse;
}

/** Closes the row's event stream, once a message event arrived (or 5 s passed). */
export async function closeStream(w: World): Promise<void> {
  if (!w.stream) return;
  await w.stream.next((x) => x.event === 'message', 5_000).catch(() => undefined);
  await w.stream.close();
  w.stream = undefined;
}

async function exportIdentity(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity('alice');
  return w.send(e, JSON.stringify(adminEnvelope(w.s.profile, 'identity-export', { identity: id.identity }, id.seed)));
}

/** A rotation to a new key: signed by the old key, the new document by the new key listing the old one. */
async function rotate(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity('alice');
  const newSeed = new Uint8Array(randomBytes(32));
  const oldKey = signingKey(id);
  const newKey = encodeBase64url(publicKey(newSeed));
  const issued_at = rfc3339(Date.now());
  const nonce = encodeBase64url(randomBytes(16));
  const facts = (await w.s.facts()).relay;
  const identity_document = signDocument(
    {
      version: 1,
      identity: id.identity,
      public_key: newKey,
      encryption_public_key: encodeBase64url(id.encryption.publicKey),
      relay: facts.relayAddress,
      previous_keys: [{ public_key: oldKey, valid_until: rfc3339(Date.now() + 3_600_000) }],
      updated_at: issued_at,
    },
    newSeed,
  );
  const rotation_signature = b64(sign(id.seed, canonicalString(w.s.profile, 'identity-rotation', { identity: id.identity, old_public_key: oldKey, new_public_key: newKey, issued_at, nonce })));
  const r = await w.send(e, JSON.stringify({ identity_document, new_public_key: newKey, rotation_signature, issued_at, nonce }));
  if (r.status === 200) w.ids.set('alice', { ...id, seed: newSeed });
  return r;
}

// --- pairing ----------------------------------------------------------------------------------

async function offer(w: World, e: Exchange): Promise<HttpResponse> {
  const b = e.request_body as Obj;
  const device = newDeviceKey(w.s.profile);
  const r = await w.send(e, JSON.stringify({ commitment: device.commitment, ...(b.label !== undefined ? { label: b.label } : {}) }));
  const code = (e.reply_body as Obj | undefined)?.rendezvous_id;
  if (typeof code === 'string') (devices.get(w) ?? devices.set(w, new Map()).get(w)!).set(code, device);
  return r;
}

const deviceOf = (w: World, e: Exchange): DeviceKey => {
  const code = /\/enroll\/(\{code:\d+\})/.exec(e.path)![1]!;
  const d = devices.get(w)?.get(code);
  if (!d) throw new Error(`no offer was replayed for ${code}`);
  return d;
};

async function approverFetch(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity('alice');
  const b = e.request_body as Obj;
  const code = await w.sub(/\/enroll\/(\{code:\d+\})/.exec(e.path)![1]!);
  let nonce = w.values.get(String(b.approver_nonce));
  if (!nonce) w.values.set(String(b.approver_nonce), (nonce = encodeBase64url(randomBytes(32))));
  return w.send(e, JSON.stringify({ ...adminEnvelope(w.s.profile, 'enroll-fetch', { identity: id.identity, rendezvous_id: code }, id.seed), approver_nonce: nonce, mode: b.mode }));
}

async function deliver(w: World, e: Exchange): Promise<HttpResponse> {
  const id = await w.identity('alice');
  const code = await w.sub(/\/enroll\/(\{code:\d+\})/.exec(e.path)![1]!);
  const sealed = sealFor(w.s.profile, deviceOf(w, e).key.ephemeral_public_key, id.seed);
  return w.send(e, JSON.stringify({ ...adminEnvelope(w.s.profile, 'enroll-deliver', { identity: id.identity, rendezvous_id: code }, id.seed), sealed }));
}

export const CORE_HANDLERS: Array<[RegExp, Handler]> = [
  [/^GET \/(health|hosted\/availability|identities\/\{\})?$/, (w, e) => w.send(e)],
  [/^GET \/\.well-known\/[^/]+\/id\.json$/, async (w, e) => w.send(e, undefined, undefined, { host: (await w.identity('alice')).identity })],
  [/^POST \/identities$/, register],
  [/^POST \/sessions$/, registerSession],
  [/^DELETE \/sessions\/\{\}$/, revokeSession],
  [/^POST \/messages$/, postMessage],
  [/^POST \/acks$/, postAck],
  [/^GET \/messages\/\{\}$/, (w, e) => w.send(e)],
  [/^POST \/messages\/\{\}\/consume$/, consume],
  [/^GET \/events\/\{\}$/, events],
  [/^POST \/identities\/\{\}\/export$/, exportIdentity],
  [/^POST \/identities\/\{\}\/rotate$/, rotate],
  [/^POST \/identities\/\{\}\/enroll\/offer$/, offer],
  [/^GET \/identities\/\{\}\/enroll\/\{\}$/, (w, e) => w.send(e)],
  [/^POST \/identities\/\{\}\/enroll\/\{\}\/reveal$/, (w, e) => w.send(e, JSON.stringify(deviceOf(w, e).key))],
  [/^POST \/identities\/\{\}\/enroll\/\{\}\/fetch$/, approverFetch],
  [/^POST \/identities\/\{\}\/enroll\/\{\}\/deliver$/, deliver],
  [/^DELETE \/identities\/\{\}\/enroll\/\{\}$/, (w, e) => w.send(e)],
];
