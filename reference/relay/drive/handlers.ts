// The drive's routes (document 3, Drive API): each authenticates its caller (access.ts), checks
// what the caller may do on the node it touches, and answers; reads of immutable objects
// (versions, pages, chunks) may be cached, everything else is `no-store` (ra.drive.cache).
import { clampPowBits } from '../../../protocol/relay/drive/pow.ts';
import { validChunkSize } from '../../../protocol/relay/drive/chunk.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { HttpError, ruleError } from '../../shared/errors.ts';
import { bodySha256 } from '../../shared/body.ts';
import type { OwnerCall } from '../inbox.ts';
import { anyRole, callerOf, downloadStarted, driveSeams, gone, hostedDrive, lineage, may, require, sharesOfCaller, type Caller, type Drive, type Role } from './access.ts';
import { applyCommit, parseCommit } from './commit.ts';
import { dropUrl, holdUrl, mustFit, promisedBytes, urlHeld, withinQuota } from './quota.ts';
import { S3Chunks, UPLOAD_TTL_SECONDS, type Upload } from './s3-chunks.ts';
import type { ChangeRow, NodeRow, ShareRow } from './store.ts';
import { asObject, parseJson } from '../../shared/json.ts';

type Obj = Record<string, unknown>;
const IMMUTABLE = 'private, max-age=31536000, immutable';

/** JSON with its length, as the relay's other answers (node then sends it whole, not chunked). */
const json = <T>(body: T extends PromiseLike<unknown> ? never : T, status = 200, cache = 'no-store') => jsonText(JSON.stringify(body), status, cache);
const jsonText = (text: string, status = 200, cache = 'no-store') =>
  new Response(text, { status, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'cache-control': cache } });
const HEX32 = /^[0-9a-f]{32}$/;
const HEX64 = /^[0-9a-f]{64}$/;
/** A base64 MD5 (ra.drive.missing-body's optional `md5`). */
const MD5 = /^[A-Za-z0-9+/]{21}[AQgw]==$/;
/** Whether the roles let their holder upload chunks (ra.drive.roles). */
const writer = (roles: Set<Role>) => (['append', 'create', 'write', 'admin'] as const).some((r) => roles.has(r));
const notFound = (what: string) => ruleError(404, 'ra.errors.not-found', `${what} does not exist here`);

async function open(d: Drive, call: OwnerCall): Promise<{ drive: string; caller: Caller }> {
  const drive = await hostedDrive(d, call.identity);
  return { drive, caller: await callerOf(d, drive, call) };
}

/** A node the caller may read; 404 for one that does not exist (before the 403, so ids are not probed by members only). */
async function readable(d: Drive, drive: string, caller: Caller, node: string): Promise<NodeRow> {
  const row = HEX32.test(node) ? await d.store.node(drive, node) : undefined;
  if (!row) throw notFound(`node ${node}`);
  await require(d, drive, caller, node, 'read');
  return row;
}

/**
 * A node as the drive answers it, in both forms clients read (document 3 shows no body): the
 * project's {node, version, seq, manifest, removed, rotate} and the deployed client's {id, head,
 * generation, kind, folder, mode, removed}, the latter read from the head manifest.
 */
const nodeView = (n: NodeRow) => {
  const manifest = JSON.parse(n.manifest) as Obj;
  return {
    id: n.node,
    head: n.version,
    generation: manifest.generation,
    kind: n.kind,
    folder: n.folder,
    mode: manifest.mode,
    node: n.node,
    version: n.version,
    seq: n.seq,
    manifest,
    removed: n.removed === 1,
    rotate: n.rotate === 1,
  };
};

export async function root(d: Drive, call: OwnerCall): Promise<Response> {
  const { drive, caller } = await open(d, call);
  if (caller.kind !== 'owner' && (await anyRole(d, drive, caller)).size === 0) throw new HttpError(403, 'not_authorized', 'the caller holds no share of this drive', 'ra.drive.roles');
  const meta = await d.store.meta(drive);
  return json({ drive, root: meta.root, seq: meta.seq, used: meta.used + (await promisedBytes(d, drive)), quota: d.quota });
}

export async function missing(d: Drive, call: OwnerCall): Promise<Response> {
  const { drive, caller } = await open(d, call);
  if (!writer(await anyRole(d, drive, caller))) throw new HttpError(403, 'not_authorized', 'only writers upload chunks', 'ra.drive.roles');
  const parsed = parseJson(call.body);
  const chunks = (parsed.ok ? (asObject(parsed.value) ?? {}) : {}).chunks;
  const refs = Array.isArray(chunks) ? (chunks as unknown[]) : [];
  const valid = (r: Obj | undefined) => HEX64.test(String(r?.id)) && typeof r?.size === 'number' && validChunkSize(r.size) && (r?.md5 === undefined || MD5.test(String(r.md5)));
  if (refs.length === 0 || refs.length > limits.drive_missing_max_chunks || !refs.every((r) => valid(r as Obj | undefined)))
    throw new HttpError(400, 'invalid_request', `the body is {chunks: [{id, size, md5?}]} with 1 to ${limits.drive_missing_max_chunks} chunks of sizes on the chunk grid`, 'ra.drive.missing-body');
  const held = await Promise.all((refs as Obj[]).map(async (r) => driveSeams(d.ctx.config).held((await d.store.chunkSize(drive, String(r.id))) !== undefined)));
  const wanted = (refs as Obj[]).filter((r, i) => !held[i] && refs.findIndex((x) => (x as Obj).id === r.id) === i);
  const adding = wanted.reduce((sum, r) => sum + Number(r.size), 0);
  const s3 = d.chunks instanceof S3Chunks ? d.chunks : undefined;
  // Straight to object storage when the client named the MD5 the URL must sign; else through the relay.
  const direct = s3 ? wanted.filter((r) => r.md5 !== undefined) : [];
  // Upload URLs promised (by any process) count against the quota: their bytes may arrive without
  // the relay. This answer's are held first, then everything held must fit with the rest.
  await Promise.all(direct.map((r) => holdUrl(d, drive, String(r.id), Number(r.size))));
  try {
    // An earlier answer's URL for a chunk asked for again now is not counted twice.
    const again = wanted.filter((r) => !direct.includes(r)).map((r) => String(r.id));
    await mustFit(d, drive, adding - direct.reduce((sum, r) => sum + Number(r.size), 0), again);
  } catch (error) {
    await Promise.all(direct.map((r) => dropUrl(d, drive, String(r.id))));
    throw error;
  }
  // The relay's own storage answers a relative URL: a client sends it the credentials it sends its
  // relay (an absolute URL reads as presigned storage to the deployed client; docs/decisions.md).
  const own = (id: string): Upload => ({ method: 'PUT', url: `/drive/${encodeURIComponent(drive)}/chunks/${id}`, headers: { 'content-type': 'application/octet-stream' } });
  const until = d.ctx.now() + (UPLOAD_TTL_SECONDS + 60) * 1000;
  const missing = await Promise.all(
    wanted.map(async (r) => {
      const id = String(r.id);
      if (!s3 || r.md5 === undefined) return { id, size: r.size, upload: own(id) };
      s3.track(drive, id, until);
      return { id, size: r.size, upload: await s3.uploadUrl(drive, id, Number(r.size), String(r.md5)) };
    }),
  );
  return json({ missing });
}

/**
 * Chunks uploaded straight to object storage are recorded, so a commit may reference them, only
 * once read back with a SHA-256 equal to their name (S3Chunks.settle); a no-op for other stores.
 */
export async function settleUploads(d: Drive, drive: string, refs: Iterable<{ id: string }>): Promise<void> {
  if (!(d.chunks instanceof S3Chunks)) return;
  const s3 = d.chunks;
  // Read back a few at a time: each is a GET of up to a chunk from the store.
  const queue = [...refs];
  const settleNext = async (): Promise<void> => {
    for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) await settleOne(d, s3, drive, ref.id);
  };
  await Promise.all(Array.from({ length: Math.min(SETTLE_CONCURRENCY, queue.length) }, settleNext));
}

/** Chunks read back at once by one commit (or one sweep of lapsed URLs). */
const SETTLE_CONCURRENCY = 4;

async function settleOne(d: Drive, s3: S3Chunks, drive: string, id: string): Promise<void> {
  if ((await d.store.chunkSize(drive, id)) !== undefined) return;
  const reserved = await urlHeld(d, drive, id);
  const outcome = await s3.settle(drive, id, async (size) => {
    if ((await d.store.chunkSize(drive, id)) !== undefined) return true;
    if (!validChunkSize(size)) return false;
    const record = () => d.store.putChunk(drive, id, size, d.ctx.now());
    if (reserved === size) await record();
    else {
      // An upload no live hold counted (it lapsed, or Redis forgot it) must fit now, held while
      // it is recorded so that the uploads settled beside it count it.
      try {
        await withinQuota(d, drive, id, size, record);
      } catch (error) {
        if (error instanceof HttpError && error.status === 507) return false;
        throw error;
      }
    }
    return true;
  });
  if (outcome !== 'absent') {
    s3.release(drive, id);
    await dropUrl(d, drive, id);
  }
}

/** Settles the upload URLs that lapsed: what arrived counts like any uploaded chunk, the rest is freed. */
export async function settleLapsed(d: Drive): Promise<void> {
  if (!(d.chunks instanceof S3Chunks)) return;
  for (const r of d.chunks.expired(d.ctx.now())) {
    await settleUploads(d, r.drive, [r]);
    d.chunks.release(r.drive, r.id);
    await dropUrl(d, r.drive, r.id);
  }
}

export async function putChunk(d: Drive, call: OwnerCall, hash: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  if (!writer(await anyRole(d, drive, caller))) throw new HttpError(403, 'not_authorized', 'only writers upload chunks', 'ra.drive.roles');
  if (!HEX64.test(hash)) throw new HttpError(400, 'invalid_request', 'a chunk is named by its lowercase hex SHA-256', 'ra.drive.chunk-upload');
  if (!validChunkSize(call.body.length))
    throw new HttpError(400, 'invalid_request', `${call.body.length} bytes is not a chunk size (ra.drive.chunk: nonce, whole 4096-byte buckets, tag)`, 'ra.drive.chunk-upload');
  if (bodySha256(call.body) !== hash) throw ruleError(400, 'ra.drive.chunk-upload', 'the body does not hash to its name');
  if ((await d.store.chunkSize(drive, hash)) !== undefined) return json({ id: hash, size: call.body.length });
  // Uploads in flight hold their bytes against the quota, so concurrent ones (at any process)
  // cannot overrun it; so do upload URLs promised for other chunks (object storage).
  let created: boolean;
  try {
    created = await withinQuota(d, drive, hash, call.body.length, async () => {
      await d.chunks.put(drive, hash, call.body);
      return d.store.putChunk(drive, hash, call.body.length, d.ctx.now());
    });
  } catch (error) {
    // A parallel upload of this very chunk recorded it meanwhile (its bytes then counted as both
    // stored and held): it is stored, counted once, and this upload adds nothing.
    if (!(error instanceof HttpError && error.status === 507 && (await d.store.chunkSize(drive, hash)) !== undefined)) throw error;
    created = false;
  }
  if (d.chunks instanceof S3Chunks) {
    d.chunks.release(drive, hash);
    await dropUrl(d, drive, hash);
  }
  // One upload creates the chunk, the one whose record was inserted; the others found it (ra.drive.chunk-upload).
  return json({ id: hash, size: call.body.length }, created ? 201 : 200);
}

export async function commit(d: Drive, call: OwnerCall): Promise<Response> {
  const { drive, caller } = await open(d, call);
  const body = parseCommit(call.body);
  await settleUploads(d, drive, chunkRefs(body));
  const applied = await applyCommit(d, drive, caller, body);
  const seams = driveSeams(d.ctx.config);
  if (applied.change) d.events.changed(drive, changeView(applied.change), !seams.changeFiltered());
  if (applied.revoked && seams.endsRevoked()) d.events.revoked(drive, applied.revoked.who, applied.revoked.share);
  return json(applied.result);
}

/** The chunks a commit's pages and records name (applyCommit checks each is recorded). */
function chunkRefs(body: Obj): Array<{ id: string }> {
  const holders = [...(Array.isArray(body.pages) ? (body.pages as Obj[]) : []), ...(Array.isArray(body.records) ? (body.records as Obj[]) : [])];
  const ids = holders.flatMap((h) => (Array.isArray(h?.chunks) ? (h.chunks as Obj[]) : []).map((c) => String(c?.id))).filter((id) => HEX64.test(id));
  return [...new Set(ids)].map((id) => ({ id }));
}

const changeView = (c: ChangeRow) => ({
  seq: c.seq,
  node: c.node,
  operation: c.operation,
  ...(c.version !== null ? { version: c.version } : {}),
  ...(c.position !== null ? { position: c.position } : {}),
  ...(c.share !== null ? { share: c.share } : {}),
});

export async function changes(d: Drive, call: OwnerCall): Promise<Response> {
  const { drive, caller } = await open(d, call);
  const raw = new URL(call.req.url).searchParams.get('cursor') ?? '0';
  if (!/^\d{1,15}$/.test(raw)) throw new HttpError(400, 'invalid_request', 'cursor is a decimal change sequence', 'ra.drive.changes-body');
  if (caller.kind !== 'owner' && (await anyRole(d, drive, caller)).size === 0) throw new HttpError(403, 'not_authorized', 'the caller holds no share of this drive', 'ra.drive.roles');
  let cursor = driveSeams(d.ctx.config).changesAfter(Number(raw));
  const out: ReturnType<typeof changeView>[] = [];
  const max = pageLimit(new URL(call.req.url).searchParams, 'ra.drive.changes-body');
  // A member's page is filtered; the cursor still moves past what it may not see.
  for (;;) {
    const rows = await d.store.changes(drive, cursor, max);
    for (const r of rows) {
      if (out.length >= max) return json({ changes: out, cursor, more: true });
      cursor = r.seq;
      if (caller.kind === 'owner' || (await may(d, drive, caller, r.node, 'read'))) out.push(changeView(r));
    }
    if (rows.length < max) return json({ changes: out, cursor, more: false });
  }
}

export async function node(d: Drive, call: OwnerCall, id: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  return json(nodeView(await readable(d, drive, caller, id)));
}

export async function children(d: Drive, call: OwnerCall, id: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  await readable(d, drive, caller, id);
  // A page of live children after the node id `cursor`, in id order; the cursor "" ends.
  return json(await childrenPage(d, drive, id, new URL(call.req.url).searchParams));
}

export async function history(d: Drive, call: OwnerCall, id: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  await readable(d, drive, caller, id);
  return json({ versions: await d.store.versions(drive, id, limits.drive_listing_max_entries) });
}

export async function records(d: Drive, call: OwnerCall, id: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  await readable(d, drive, caller, id);
  const raw = new URL(call.req.url).searchParams.get('after') ?? '0';
  if (!/^\d{1,15}$/.test(raw)) throw new HttpError(400, 'invalid_request', 'after is a decimal record position', 'ra.drive.nodes-body');
  const max = limits.drive_listing_max_entries;
  const rows = await d.store.records(drive, id, Number(raw), max + 1);
  return json({ records: rows.slice(0, max).map((r) => ({ position: r.position, record: JSON.parse(r.body) as Obj })), more: rows.length > max });
}

export async function version(d: Drive, call: OwnerCall, id: string, v: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  await readable(d, drive, caller, id);
  const row = HEX32.test(v) ? await d.store.version(drive, id, v) : undefined;
  if (!row) throw notFound(`version ${v} of ${id}`);
  return jsonText(row.manifest, 200, IMMUTABLE);
}

export async function page(d: Drive, call: OwnerCall, id: string, v: string, hash: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  await readable(d, drive, caller, id);
  const body = HEX32.test(v) && HEX64.test(hash) ? await d.store.page(drive, id, v, hash) : undefined;
  if (body === undefined) throw notFound(`page ${hash} of ${id} version ${v}`);
  return jsonText(body, 200, IMMUTABLE);
}

/** A chunk through what references it: a version of the node, or (no version) one of its records. */
export async function chunk(d: Drive, call: OwnerCall, id: string, v: string | undefined, hash: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  await readable(d, drive, caller, id);
  const seams = driveSeams(d.ctx.config);
  const references = async () => (v === undefined ? d.store.recordReferences(drive, id, hash) : HEX32.test(v) && (await d.store.versionReferences(drive, id, v, hash)));
  const referenced = HEX64.test(hash) && (await seams.chunkServed(references));
  const s3 = d.chunks instanceof S3Chunks ? d.chunks : undefined;
  // The bytes, or where the store serves them (the presigned URL made, as a file is read, before an open is spent).
  const location = referenced && s3 ? await s3.readUrl(drive, hash, IMMUTABLE) : undefined;
  const bytes = referenced && !s3 ? await d.chunks.get(drive, hash) : undefined;
  if (!bytes && !location) throw ruleError(404, 'ra.drive.chunk-access', `no ${v === undefined ? 'record' : `version ${v}`} of ${id} references chunk ${hash}`);
  // A download through a link (a read of a version's or record's first chunk) spends one open.
  if (caller.kind === 'link' && (await d.store.startsContent(drive, id, v, hash))) {
    if (!(await seams.spendOpen(() => d.store.spendOpen(drive, caller.share.id)))) throw ruleError(410, 'ra.drive.link-opens', 'the link has no opens left');
    // The rest of this download may follow even when this read spent the last open.
    await downloadStarted(d, caller.share.id, { node: id, ...(v !== undefined ? { version: v } : {}) });
  }
  // A recorded chunk is stored (and was verified when recorded): object storage serves it. The
  // presigned URL expires, so the redirect is not cached; what it leads to is immutable.
  if (location) return new Response(null, { status: 307, headers: { location, 'cache-control': 'no-store', 'content-length': '0' } });
  if (!bytes) throw new Error('unreachable: a chunk with neither bytes nor location');
  return new Response(bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: { 'content-type': 'application/octet-stream', 'cache-control': IMMUTABLE, 'content-length': String(bytes.length) } });
}

const shareView = (s: ShareRow) => JSON.parse(s.body) as Obj;

export async function shares(d: Drive, call: OwnerCall): Promise<Response> {
  const { drive, caller } = await open(d, call);
  if (caller.kind === 'owner')
    return json({
      shares: (await d.store.allShares(drive)).filter((s) => !gone(d, s)).map(shareView),
    });
  const mine = await sharesOfCaller(d, drive, caller);
  return json({
    shares: driveSeams(d.ctx.config)
      .memberShares(mine.filter((s) => !gone(d, s)))
      .map(shareView),
  });
}

export async function nodeShares(d: Drive, call: OwnerCall, id: string): Promise<Response> {
  const { drive, caller } = await open(d, call);
  await readable(d, drive, caller, id);
  const admin = await may(d, drive, caller, id, 'admin');
  const mine = (s: ShareRow) => (caller.kind === 'member' ? s.member === caller.known.identity || caller.groups.includes(s.member ?? '') : caller.kind === 'link' ? s.id === caller.share.id : true);
  const above = driveSeams(d.ctx.config).nodeSharesFrom((await lineage(d, drive, id)).map((n) => n.node));
  const list = (await Promise.all(above.map((n) => d.store.sharesOn(drive, n)))).flat().filter((s) => !gone(d, s) && (admin || mine(s)));
  return json({ shares: list.map(shareView) });
}

export async function events(d: Drive, call: OwnerCall): Promise<Response> {
  const { drive, caller } = await open(d, call);
  const roles = await anyRole(d, drive, caller);
  if (caller.kind !== 'owner' && !roles.has('read') && !roles.has('write') && !roles.has('admin')) throw new HttpError(403, 'not_authorized', 'only readers follow the drive', 'ra.drive.roles');
  const who = caller.kind === 'owner' ? drive : caller.kind === 'member' ? caller.known.identity : `link:${caller.share.id}`;
  const stream = await d.events.open(
    drive,
    {
      who,
      groups: caller.kind === 'member' ? caller.groups : [],
      sees: async (n) => caller.kind === 'owner' || (await may(d, drive, caller, n, 'read')),
      // A stream whose member lost access ends (ra.drive.events-revocation), unless a variant keeps it.
      holds: async () => caller.kind === 'owner' || !driveSeams(d.ctx.config).endsRevoked() || (caller.kind === 'member' && (await anyRole(d, drive, caller)).size > 0),
    },
    call.req.signal,
  );
  if (!stream) throw ruleError(429, 'ra.errors.too-many-streams', `${who} has ${d.ctx.config.maxStreams} drive streams open`);
  return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' } });
}

/** GET /drive/:identity/links/:link, public (ra.drive.links, ra.drive.links-body). */
export async function link(d: Drive, identity: string, id: string, _req: Request): Promise<Response> {
  const drive = await hostedDrive(d, identity);
  const s = HEX32.test(id) ? await d.store.shareByLink(drive, id) : undefined;
  if (!s || gone(d, s)) throw notFound(`link ${id}`);
  const body = shareView(s);
  const bits = Number(body.pow ?? 0);
  return new Response(
    JSON.stringify({
      link: id,
      drive,
      node: s.node,
      role: s.role,
      kdf: String(body.kdf ?? ''),
      salt: String(body.salt ?? ''),
      pow: bits > 0 ? { bits: clampPowBits(bits), token: await d.links.issue(s.id) } : null,
      opens_left: s.downloads > 0 ? Math.max(0, s.downloads - s.used) : null,
      expires: String(body.expires ?? ''),
    }),
    { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'access-control-allow-origin': '*' } },
  );
}

/**
 * A listing's `limit` (the deployed client asks `limit=100`): a decimal from 1; more than
 * drive_listing_max_entries asks for a full page. None is a full page.
 */
function pageLimit(query: URLSearchParams, rule: 'ra.drive.changes-body' | 'ra.drive.nodes-body'): number {
  const raw = query.get('limit');
  if (raw === null) return limits.drive_listing_max_entries;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw new HttpError(400, 'invalid_request', 'limit is a decimal count from 1', rule);
  return Math.min(Number(raw), limits.drive_listing_max_entries);
}

/** A page of a folder's live children after the node id `cursor` ("" or none: from the first); the next cursor, "" at the end. */
async function childrenPage(d: Drive, drive: string, folder: string, query: URLSearchParams): Promise<{ children: Obj[]; cursor: string }> {
  const after = query.get('cursor') ?? '';
  if (after !== '' && !HEX32.test(after)) throw new HttpError(400, 'invalid_request', 'cursor is a node id from the last page, or empty', 'ra.drive.nodes-body');
  const max = pageLimit(query, 'ra.drive.nodes-body');
  const rows = await d.store.children(drive, folder, max + 1, after);
  const page = rows.slice(0, max);
  return { children: page.map(nodeView), cursor: rows.length > max ? page[page.length - 1]!.node : '' };
}
