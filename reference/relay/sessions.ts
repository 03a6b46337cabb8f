// Sessions (POST /sessions, DELETE /sessions/:id) and device rows (GET /devices/:identity, POST
// /devices/:identity/revoke). A session registration is verified against the identity's published
// key and may fill a device row from the X-Svc-Device-* headers (ra.devices.rows).
import { createHash, randomBytes } from 'node:crypto';
import { encodeBase64url } from '../../protocol/common/base64.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { formatRfc3339, parseRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { object } from './identities.ts';
import type { RelayContext } from './config.ts';
import { lookup, type DirectoryContext } from './directory.ts';
import { owner, type OwnerCall, type InboxContext } from './inbox.ts';
import type { DeviceRow } from './store.ts';

/** What this module uses of the relay's context. */
export type SessionsContext = Pick<RelayContext, 'auth' | 'config' | 'now' | 'store'> & DirectoryContext & InboxContext;

const MAX_TTL_MS = limits.relay_session_ttl_max_seconds * 1000;
const CLIENTS = new Set(['app', 'web', 'cli']);

/** At most `max` bytes of UTF-8, cut on a character boundary. */
function cut(value: string | null, max: number): string | null {
  if (value === null) return null;
  let out = '';
  for (const ch of value) {
    if (Buffer.byteLength(out + ch) > max) break;
    out += ch;
  }
  return out;
}

/** A header's text: its bytes read as UTF-8 where they are (a name typed in any script), else as they came. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
function headerText(value: string | null): string | null {
  if (value === null || !/[\u0080-\u00ff]/.test(value)) return value;
  try {
    return UTF8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

export async function registerSession(ctx: SessionsContext, req: Request, bytes: Uint8Array): Promise<Record<string, unknown>> {
  const b = object(bytes);
  for (const f of ['identity', 'session_public_key', 'issued_at', 'expires_at']) if (typeof b[f] !== 'string') throw ruleError(400, 'ra.errors.invalid-request', `${f} is required`);
  const issued = parseRfc3339(b.issued_at);
  const expires = parseRfc3339(b.expires_at);
  if (issued === undefined || expires === undefined) throw new HttpError(400, 'invalid_request', 'issued_at and expires_at must be RFC 3339', 'ra.sessions.ttl');
  if (issued > ctx.now() + limits.signed_request_window_seconds * 1000) throw new HttpError(400, 'invalid_request', 'issued_at is too far in the future', 'ra.sessions.ttl');
  if (expires <= issued || expires - issued > MAX_TTL_MS)
    throw new HttpError(400, 'invalid_request', `a session lives more than 0 and at most ${limits.relay_session_ttl_max_seconds} s`, 'ra.sessions.ttl');
  const key = parseKey(b.session_public_key, 'signing');
  if (!key) throw ruleError(400, 'ra.errors.invalid-request', 'session_public_key is not a base64url Ed25519 key');
  const known = await lookup(ctx, b.identity);
  if (!known) throw ruleError(401, 'ra.errors.signature-invalid', `${String(b.identity)} cannot be resolved, so its signature cannot be checked`);
  await ctx.auth.admin('session-registration', { identity: known.identity, session_public_key: b.session_public_key, expires_at: b.expires_at }, b, known.keys);
  if (expires <= ctx.now()) throw new HttpError(400, 'invalid_request', 'the session has already expired', 'ra.sessions.ttl');
  const id = `sess_${randomBytes(18).toString('base64url')}`;
  const deviceId = await device(ctx, req, known.identity);
  await ctx.auth.addSession({ id, identity: known.identity, key, expiresAt: expires, ...(deviceId ? { deviceId } : {}) });
  return { session_id: id, identity: known.identity, session_public_key: b.session_public_key, issued_at: b.issued_at, expires_at: b.expires_at };
}

/** Fills the device row from the X-Svc-Device-* headers (only a hash of the install id is kept). */
async function device(ctx: SessionsContext, req: Request, identity: string): Promise<string | undefined> {
  const ids = ctx.config.profile.ids;
  const h = (name: string) => headerText(req.headers.get(name));
  const install = h(ids.header_device);
  if (!install) return undefined;
  const id = `dev_${createHash('sha256').update(`${identity}\n${install}`).digest('hex').slice(0, 32)}`;
  const client = h(ids.header_device_client);
  await ctx.store.upsertDevice({
    id,
    identity,
    name: cut(h(ids.header_device_name), limits.device_name_max_bytes),
    kind: cut(h(ids.header_device_kind), limits.device_name_max_bytes),
    client: client && CLIENTS.has(client) ? client : null,
    platform: cut(h(ids.header_device_platform), limits.device_platform_max_bytes),
    browser: cut(h(ids.header_device_browser), limits.device_browser_max_bytes),
    enrollment_id: h(ids.header_device_enrollment),
    now: ctx.now(),
  });
  return id;
}

export async function revokeSession(ctx: SessionsContext, sessionId: string, bytes: Uint8Array): Promise<void> {
  const b = object(bytes);
  if (typeof b.identity !== 'string') throw new HttpError(400, 'invalid_request', 'identity is required', 'ra.sessions.revoke');
  const known = await lookup(ctx, b.identity);
  if (!known) throw ruleError(401, 'ra.errors.signature-invalid', `${b.identity} cannot be resolved`);
  await ctx.auth.admin('session-revocation', { identity: known.identity, session_id: sessionId }, b, known.keys, 'ra.sessions.revoke');
  const s = await ctx.auth.session(sessionId);
  if (s && s.identity !== known.identity) throw ruleError(401, 'ra.sessions.revoke', 'the session belongs to another identity');
  // Remembered until it would have expired, so a proof of it attached later is refused too.
  if (s) await ctx.store.revokeSession(encodeBase64url(s.key), s.identity, s.expiresAt);
  await ctx.auth.removeSession(sessionId);
}

const row = (d: DeviceRow) => ({ ...d, identity: undefined, added_at: formatRfc3339(d.added_at), last_seen: formatRfc3339(d.last_seen) });

export async function listDevices(ctx: SessionsContext, call: OwnerCall): Promise<Record<string, unknown>> {
  const known = await owner(ctx, call);
  const rows = (await ctx.store.devices(known.identity)).map(row);
  return ctx.config.documentOnly ? { items: rows } : { identity: known.identity, devices: rows };
}

export async function revokeDevice(ctx: SessionsContext, call: OwnerCall): Promise<Record<string, unknown>> {
  const known = await owner(ctx, call);
  const b = object(call.body);
  if (typeof b.device_id !== 'string' || !b.device_id.startsWith('dev_')) throw ruleError(400, 'ra.errors.invalid-request', 'device_id (dev_...) is required');
  const d = await ctx.store.device(b.device_id);
  if (!d || d.identity !== known.identity) throw ruleError(404, 'ra.errors.not-found', 'no such device of this identity');
  // The relay issues no DAV tokens or app passwords: none to revoke (the deployed client reads both counts).
  return { device_id: d.id, sessions_revoked: await ctx.auth.endDeviceSessions(known.identity, d.id), dav_tokens_revoked: 0, app_passwords_revoked: 0 };
}
