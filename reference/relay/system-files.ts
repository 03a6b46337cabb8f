// System files (document 3, System files): the owner's `.svc/public` and `.svc/relay` documents,
// challenge-signed, validated on write, with an ETag and `If-Match` for safe updates. Public ones
// are served at /.well-known/svc/<name> (capabilities with the relay's defaults merged in); the
// relay reads contacts.json and inbox-policy.json when it admits mail (ra.inbox.policy).
import { createHash } from 'node:crypto';
import { checkProfileDocument } from '../../protocol/bridge/profile-document.ts';
import { checkContacts, checkGroupRoster, checkInboxPolicy, type DocumentCheck } from '../../protocol/relay/system-files.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import type { RelayContext } from './config.ts';
import { lookup, type DirectoryContext } from './directory.ts';
import { relaySeams } from './seams.ts';
import { owner, type OwnerCall, type InboxContext } from './inbox.ts';
import { parseJson } from '../shared/json.ts';

/** What this module uses of the relay's context. */
/** What reading a system document uses (the identity document's neighbours read them too). */
export type SystemReadContext = Pick<RelayContext, 'config' | 'store'>;

export type SystemFilesContext = Pick<RelayContext, 'auth' | 'config' | 'now' | 'store'> & DirectoryContext & InboxContext;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The documents a relay keeps, by path under the system directory, and how each is checked on write. */
export const SYSTEM_FILES: Readonly<Record<string, (doc: unknown, ctx: SystemFilesContext, identity: string) => DocumentCheck | Promise<DocumentCheck>>> = {
  'public/profile.json': (d) => checkProfileDocument(d),
  'public/capabilities.json': (d) =>
    isObject(d) && (d.endpoints === undefined || isObject(d.endpoints)) ? { ok: true } : { ok: false, reason: 'capabilities.json is an object; endpoints, when present, an object' },
  'public/group-roster.json': groupRoster,
  'relay/contacts.json': checkContacts,
  'relay/inbox-policy.json': checkInboxPolicy,
};

/** The identity's own signed roster, checked with its registered key (ra.system.group-roster). */
async function groupRoster(doc: unknown, ctx: SystemFilesContext, identity: string): Promise<DocumentCheck> {
  const key = parseKey((await ctx.store.identity(identity))?.public_key);
  if (!key) return { ok: false, reason: `${identity} has no registered key to check the roster with` };
  const stored = (await systemDocument(ctx, identity, 'public/group-roster.json'))?.epoch;
  return relaySeams(ctx.config).rosterVerdict(checkGroupRoster(ctx.config.profile, identity, key, typeof stored === 'number' ? stored : undefined)(doc));
}

const etagOf = (text: string) => `"${createHash('sha256').update(text).digest('base64url')}"`;

/**
 * The relay-written zone (ra.system.relay-written): documents the relay keeps for the owner to
 * read, made from its own records when read, never written by the owner.
 */
export const RELAY_WRITTEN: Readonly<Record<string, (ctx: SystemReadContext, identity: string) => Promise<Record<string, unknown> | undefined>>> = {
  'relay-written/identity.json': async (ctx, identity) => {
    const row = await ctx.store.identity(identity);
    if (!row) return undefined;
    return {
      version: 1,
      identity,
      signing_key: prefixed(vocabulary.key_prefixes.signing, row.public_key),
      ...(row.encryption_public_key ? { encryption_key: prefixed(vocabulary.key_prefixes.encryption, row.encryption_public_key) } : {}),
      registered_at: formatRfc3339(row.created_at),
      relay: ctx.config.relayAddress,
    };
  },
  'relay-written/usage.json': async (ctx, identity) => {
    const pending = await ctx.store.pending(identity);
    return {
      version: 1,
      pending: { messages: pending.filter((r) => r.kind === 'message').length, acks: pending.filter((r) => r.kind === 'ack').length },
      devices: (await ctx.store.devices(identity)).length,
      enrollments: (await ctx.store.enrollments(identity)).length,
      system_files: (await ctx.store.systemFiles(identity)).length,
    };
  },
};
const RELAY_ZONE = 'relay-written/';
/** A key as registered, with its algorithm prefix (registration takes it with or without). */
function prefixed(prefix: string, key: string): string {
  return key.startsWith(prefix) ? key : `${prefix}${key}`;
}

/**
 * Where poweur keeps a group's roster: in the owner-written relay zone. The same signed roster is
 * kept at either name, one stored document (docs/decisions.md, System files).
 */
const ROSTER_ALIASES: Readonly<Record<string, string>> = { 'relay/group.json': 'public/group-roster.json' };

/**
 * The stored name of the document a request's path names. Document 3 does not say whether :path
 * carries the service's directory: both `relay/contacts.json` and `.svc/relay/contacts.json`
 * (`.poweur/...` under that service name) name the same document.
 */
export function storedPath(ctx: SystemReadContext, path: string): string {
  const dir = `${ctx.config.profile.ids.system_dir}/`;
  const bare = path.startsWith(dir) ? path.slice(dir.length) : path;
  return ROSTER_ALIASES[bare] ?? bare;
}

/** The path the request names, checked against the documents the relay keeps (404 otherwise); its stored name. */
function known(ctx: SystemReadContext, requested: string): string {
  const path = storedPath(ctx, requested);
  // The document-only variant keeps no relay-written zone (document 3 names none).
  if (!(path in SYSTEM_FILES) && !(path in RELAY_WRITTEN && !ctx.config.documentOnly))
    throw ruleError(
      404,
      'ra.errors.not-found',
      `no system document ${requested} (the relay keeps ${[...Object.keys(SYSTEM_FILES), ...Object.keys(RELAY_WRITTEN)].join(', ')}, with or without ${ctx.config.profile.ids.system_dir}/)`,
    );
  return path;
}

/** A write into the relay's own zone is refused (ra.system.relay-written). */
function ownerWrites(ctx: SystemFilesContext, path: string): void {
  if (!relaySeams(ctx.config).ownerWrites(path, path.startsWith(RELAY_ZONE))) throw ruleError(403, 'ra.system.relay-written', `${path} is written by the relay; the owner reads it only`);
}

/** A relay-written document as text, or a stored owner document's row. */
async function current(ctx: SystemReadContext, identity: string, path: string): Promise<{ body: string; etag: string } | undefined> {
  const stored = await ctx.store.systemFile(identity, path);
  if (stored || !(path in RELAY_WRITTEN)) return stored;
  const doc = await RELAY_WRITTEN[path]!(ctx, identity);
  if (!doc) return undefined;
  const body = JSON.stringify(doc);
  return { body, etag: etagOf(body) };
}

/** Every system document of `identity` as the export writes it: the owner's and the relay's. */
export async function systemDocuments(ctx: SystemReadContext, identity: string): Promise<Array<[string, string]>> {
  const out = (await ctx.store.systemFiles(identity)).map((r): [string, string] => [r.path, r.body]);
  for (const path of Object.keys(RELAY_WRITTEN)) if (!out.some(([p]) => p === path)) out.push([path, (await current(ctx, identity, path))!.body]);
  return out;
}

/**
 * `If-Match` against the stored ETag: a mismatch (or a document that is not there) answers 412.
 * The stored ETag it matched, which the write then names, so a writer that lost a race since gets 412 too.
 */
function preconditions(req: Request, current: string | undefined): string | undefined {
  const wanted = req.headers.get('if-match');
  if (wanted === null) return undefined;
  const ok = wanted.trim() === '*' ? current !== undefined : current !== undefined && wanted.split(',').some((t) => t.trim() === current);
  if (!ok) throw stale();
  return current;
}
const stale = () => new HttpError(412, 'precondition_failed', 'If-Match does not name the stored version', 'ra.system.etag');

export async function getSystemFile(ctx: SystemFilesContext, call: OwnerCall, requested: string): Promise<Response> {
  const who = await owner(ctx, call);
  const row = await current(ctx, who.identity, known(ctx, requested));
  if (!row) throw ruleError(404, 'ra.errors.not-found', `${requested} is not written yet`);
  return new Response(row.body, { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', etag: row.etag } });
}

export async function putSystemFile(ctx: SystemFilesContext, call: OwnerCall, requested: string): Promise<Response> {
  const who = await owner(ctx, call);
  const path = known(ctx, requested);
  ownerWrites(ctx, path);
  const check = SYSTEM_FILES[path] ?? ((): DocumentCheck => ({ ok: true }));
  if (call.body.length > limits.system_file_max_bytes) throw ruleError(413, 'ra.errors.payload-too-large', `a system document is at most ${limits.system_file_max_bytes} bytes`);
  const parsed = parseJson(call.body);
  if (!parsed.ok) throw new HttpError(400, 'invalid_request', `${path} is not JSON`, 'ra.system.validated');
  const doc = parsed.value;
  const text = new TextDecoder().decode(call.body); // valid UTF-8: parseJson refuses anything else
  const verdict = await check(doc, ctx, who.identity);
  if (!verdict.ok) throw new HttpError(400, 'invalid_request', `${path} is refused: ${verdict.reason}`, 'ra.system.validated');
  const guard = preconditions(call.req, (await ctx.store.systemFile(who.identity, path))?.etag);
  const etag = etagOf(text);
  if (!(await ctx.store.putSystemFile({ identity: who.identity, path, body: text, etag, updated_at: ctx.now() }, guard))) throw stale();
  return new Response(JSON.stringify({ path: requested, etag }), { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', etag } });
}

export async function deleteSystemFile(ctx: SystemFilesContext, call: OwnerCall, requested: string): Promise<Response> {
  const who = await owner(ctx, call);
  const path = known(ctx, requested);
  ownerWrites(ctx, path);
  const row = await ctx.store.systemFile(who.identity, path);
  const guard = preconditions(call.req, row?.etag);
  if (!row) throw ruleError(404, 'ra.errors.not-found', `${path} is not written yet`);
  if (!(await ctx.store.removeSystemFile(who.identity, path, guard)) && guard !== undefined) throw stale();
  return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
}

/** Two stored system documents parsed (each undefined when not written or not an object), read at once. */
export async function systemDocumentPair(
  ctx: SystemReadContext,
  identity: string,
  paths: readonly [string, string],
): Promise<[Record<string, unknown> | undefined, Record<string, unknown> | undefined]> {
  const rows = await ctx.store.systemFilesAt(identity, paths);
  const parsed = (path: string) => {
    const row = rows.find((r) => r.path === path);
    const doc = row ? (JSON.parse(row.body) as unknown) : undefined;
    return isObject(doc) ? doc : undefined;
  };
  return [parsed(paths[0]), parsed(paths[1])];
}

/** A stored system document parsed, or undefined (the relay's own reads: policy, public files). */
export async function systemDocument(ctx: SystemReadContext, identity: string, path: string): Promise<Record<string, unknown> | undefined> {
  const row = await ctx.store.systemFile(identity, path);
  if (!row) return undefined;
  const doc = JSON.parse(row.body) as unknown;
  return isObject(doc) ? doc : undefined;
}

/**
 * GET /groups/:group/epoch (ra.groups.epoch, public): the epoch of a group identity's roster, 0 for
 * an identity that is not a group; 404 for one the relay does not host.
 */
export async function groupEpoch(ctx: SystemFilesContext, group: string): Promise<{ group: string; epoch: number }> {
  if (!(await ctx.store.identity(group))) throw ruleError(404, 'ra.errors.not-found', `${group} is not hosted here`);
  const roster = await systemDocument(ctx, group, 'public/group-roster.json');
  const epoch = roster && Array.isArray(roster.admins) && typeof roster.epoch === 'number' ? roster.epoch : 0;
  return { group, epoch };
}

/**
 * GET /groups/:group (outside document 3; poweur's group fan-out reads it): the group's signed
 * roster as stored, to a caller that proves itself (challenge or signed request) and is the group
 * or listed in the roster; 404 when the relay hosts no such group or it has no roster.
 */
export async function groupRosterRead(ctx: SystemFilesContext, group: string, req: Request, target: string): Promise<Response> {
  if (!(await ctx.store.identity(group))) throw ruleError(404, 'ra.errors.not-found', `${group} is not hosted here`);
  const ids = ctx.config.profile.ids;
  const claimed = req.headers.get(ids.header_identity);
  if (claimed === null) throw ruleError(401, 'ra.errors.challenge-invalid', `the roster is read with the caller's challenge headers or a signed request (${ids.header_identity}, ...)`);
  const caller = await lookup(ctx, claimed);
  if (!caller) throw ruleError(401, 'ra.errors.challenge-invalid', `${claimed} cannot be resolved, so its proof cannot be checked`);
  await ctx.auth.owner(caller.identity, { headers: req.headers, method: req.method, target, body: new Uint8Array() }, async () => caller.keys);
  const row = await ctx.store.systemFile(group, 'public/group-roster.json');
  if (!row) throw ruleError(404, 'ra.errors.not-found', `${group} has no roster`);
  const roster = JSON.parse(row.body) as Record<string, unknown>;
  const listed = [roster.members, roster.admins].some((l) => Array.isArray(l) && l.some((m) => typeof m === 'string' && m.toLowerCase() === caller.identity));
  if (caller.identity !== group && !listed) throw new HttpError(403, 'not_authorized', `${caller.identity} is not a member of ${group}`, 'ra.system.group-roster');
  return new Response(row.body, { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', etag: row.etag } });
}
