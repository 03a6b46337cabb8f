// POST /drive/:identity/commit: exactly one signed operation (ra.drive.commit), checked whole
// before anything is written (ra.drive.commit-validated), applied in one transaction with the
// drive's next change sequence, remembered under its request id (ra.drive.commit-idempotent), and
// answered only after COMMIT (ra.drive.commit-answer). A base that is not the head answers 409
// with the head (ra.drive.stale-base, ra.drive.conflict-body).
import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import { makeAjv } from '../../../protocol/common/schema.ts';
import { parseRfc3339 } from '../../../protocol/common/time.ts';
import { guestKey } from '../../../protocol/relay/drive/guest.ts';
import { manifestProblems, verifyPages } from '../../../protocol/relay/drive/manifest.ts';
import { chainProblem, recordProblems } from '../../../protocol/relay/drive/record.ts';
import { shareProblems } from '../../../protocol/relay/drive/share.ts';
import { driveHash, verifyDrive, type SignedName } from '../../../protocol/relay/drive/sign.ts';
import { HttpError, ruleError } from '../../shared/errors.ts';
import { driveSeams, lineage, require, type Caller, type Drive } from './access.ts';
import type { ChangeRow, NodeRow } from './store.ts';
import { parseJson } from '../../shared/json.ts';

type Obj = Record<string, unknown>;

let validator: ValidateFunction | undefined;
function validCommit(body: unknown): string | undefined {
  validator ??= makeAjv().compile(JSON.parse(readFileSync(new URL('../../../schemas/json/objects/drive-commit.schema.json', import.meta.url), 'utf8')) as object);
  return validator(body)
    ? undefined
    : (validator.errors ?? [])
        .slice(0, 3)
        .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`)
        .join('; ');
}

const invalid = (detail: string) => new HttpError(400, 'invalid_request', detail, 'ra.drive.commit-validated');
const badTree = (detail: string) => new HttpError(400, 'invalid_request', detail, 'ra.drive.tree');

/** The 409 of a stale base: the node's head (ra.drive.conflict-body). */
function conflict(detail: string, node: string, head: NodeRow | undefined, extra: Obj = {}): HttpError {
  return new HttpError(409, 'conflict', detail, 'ra.drive.stale-base', {}, { head: { node, version: head?.version ?? '', seq: head?.seq ?? 0, ...extra } });
}

export interface Applied {
  result: Obj;
  /** What the event stream announces after COMMIT. */
  change?: ChangeRow;
  /** Who lost their last share (an unshare). */
  revoked?: { who: string; share: string };
}

export function parseCommit(bytes: Uint8Array): Obj {
  const parsed = parseJson(bytes);
  if (!parsed.ok) throw new HttpError(400, 'invalid_request', 'the commit is not JSON', 'ra.drive.commit');
  const body = parsed.value;
  const problem = validCommit(body);
  if (problem !== undefined) throw new HttpError(400, 'invalid_request', `the commit is not one operation of ra.drive.commit: ${problem}`, 'ra.drive.commit');
  return body as Obj;
}

/**
 * Applies a parsed commit for `caller`; the result, or the first result of the same request id.
 * The commit runs as one transaction holding the drive's lock, group-committed with the other
 * writes of the turn on SQLite (one WAL fsync for all); it resolves once that is durable.
 */
export async function applyCommit(d: Drive, drive: string, caller: Caller, body: Obj): Promise<Applied> {
  const id = String(body.id);
  // Signatures and permissions are checked before the transaction (they read only what a commit
  // cannot change under us: keys, and the shares the transaction re-reads).
  const op = body.manifest ? 'manifest' : body.records ? 'records' : body.trim ? 'trim' : body.share ? 'share' : 'unshare';
  if (op === 'manifest') signedBy(d, caller, 'manifest', body.manifest as Obj, 'author');
  if (op === 'records') for (const r of body.records as Obj[]) signedBy(d, caller, 'record', r, 'author');
  if (op === 'share') signedBy(d, caller, 'share', body.share as Obj, 'issuer');
  // Whole: in one transaction, a manifest's chunks checked before its head is written (ra.drive.commit-validated).
  const half = !driveSeams(d.ctx.config).commitsWhole();
  // Inside the transaction every read and write goes through it: `t` is the drive on its store.
  const atomic = <T>(fn: (t: Drive) => Promise<T>): Promise<T> => (half ? fn(d) : d.store.atomic(drive, (store) => fn({ ...d, store })));
  return atomic(async (t) => {
    const first = await t.store.appliedCommit(drive, id);
    if (first !== undefined) return { result: JSON.parse(first) as Obj };
    const applied =
      op === 'manifest'
        ? await manifest(t, drive, caller, body.manifest as Obj, (body.pages as Obj[] | undefined) ?? [])
        : op === 'records'
          ? await records(t, drive, caller, body.records as Obj[])
          : op === 'trim'
            ? await trim(t, drive, caller, body.trim as Obj)
            : op === 'share'
              ? await share(t, drive, caller, body.share as Obj)
              : await unshare(t, drive, caller, unshareId(body.unshare as Obj));
    const result = { id, ...applied.result };
    await t.store.putCommit(drive, id, JSON.stringify(result));
    return { ...applied, result };
  });
}

/** The share an unshare names: `{share}`, or `{id}` as the deployed client sends it (docs/decisions.md). */
const unshareId = (u: Obj): string => String(u.share ?? u.id);

/** The object names the caller as its author (a link writer: a guest name) and its signature verifies. */
function signedBy(d: Drive, caller: Caller, name: SignedName, o: Obj, field: 'author' | 'issuer'): void {
  const who = String(o[field]);
  let keys: Uint8Array[];
  if (caller.kind === 'link') {
    const key = field === 'author' ? guestKey(who) : undefined;
    if (!key) throw invalid(`a link writer signs as a guest author (ra.drive.guest), not ${who}`);
    keys = [key];
  } else {
    if (who !== caller.known.identity) throw invalid(`the ${name}'s ${field} must be the caller, ${caller.known.identity}`);
    keys = caller.known.keys;
  }
  if (!keys.some((k) => verifyDrive(d.ctx.config.profile, name, o, k)))
    throw new HttpError(401, 'signature_invalid', `the ${name}'s signature does not verify with ${who}'s key`, 'ra.drive.commit-validated');
}

/** Every referenced chunk is stored in this drive with the size the reference says. */
async function chunksStored(d: Drive, drive: string, refs: readonly Obj[]): Promise<string[]> {
  const ids: string[] = [];
  for (const ref of refs) {
    const size = await d.store.chunkSize(drive, String(ref.id));
    if (size === undefined) throw invalid(`chunk ${String(ref.id)} is not stored in this drive: upload it first (chunks/missing)`);
    if (size !== ref.size) throw invalid(`chunk ${String(ref.id)} is ${size} bytes stored, not ${String(ref.size)}`);
    ids.push(String(ref.id));
  }
  return ids;
}

async function change(d: Drive, drive: string, row: Omit<ChangeRow, 'drive' | 'seq' | 'version' | 'position' | 'share'> & Partial<ChangeRow>): Promise<ChangeRow> {
  const full: ChangeRow = { drive, seq: await d.store.nextSeq(drive), version: null, position: null, share: null, ...row };
  await d.store.addChange(full);
  return full;
}

async function manifest(d: Drive, drive: string, caller: Caller, m: Obj, pages: Obj[]): Promise<Applied> {
  const problems = manifestProblems(m);
  if (problems.length > 0) throw invalid(`the manifest is refused (ra.drive.manifest-shape): ${problems.join('; ')}`);
  if (m.drive !== drive) throw invalid(`the manifest names drive ${String(m.drive)}, not ${drive}`);
  const profile = d.ctx.config.profile;
  const content = verifyPages(profile, m, pages);
  if (!content.ok) throw invalid(`the pages are refused (ra.drive.manifest-pages): ${content.reason}`);
  const half = !driveSeams(d.ctx.config).commitsWhole();
  let chunks = half ? [] : await chunksStored(d, drive, content.chunks);
  const node = String(m.node);
  const operation = String(m.operation);
  const folder = String(m.folder ?? '');
  const existing = await d.store.node(drive, node);
  if (operation === 'create') {
    if (folder === '') {
      if (caller.kind !== 'owner') throw new HttpError(403, 'not_authorized', 'only the owner creates the root', 'ra.drive.roles');
      const root = (await d.store.meta(drive)).root;
      if (root !== null || existing) throw conflict('the drive already has its root', root ?? node, await d.store.node(drive, root ?? node));
      if (m.kind !== 'folder') throw badTree('the root is a folder');
    } else {
      await require(d, drive, caller, folder, 'create');
      await liveFolder(d, drive, folder);
      if (existing) throw conflict(`node ${node} already exists`, node, existing);
      await nameFree(d, drive, folder, String(m.name_hash), node);
    }
  } else {
    if (!existing) throw ruleError(404, 'ra.errors.not-found', `node ${node} does not exist`);
    await require(d, drive, caller, node, 'write');
    if (!driveSeams(d.ctx.config).onHead(m.parent, existing.version, operation)) throw conflict(`the base ${String(m.parent)} is not the head of ${node}`, node, existing);
    if (existing.removed) throw conflict(`node ${node} is removed`, node, existing);
    if (m.kind !== existing.kind) throw invalid(`node ${node} is a ${existing.kind}`);
    if (existing.folder === '' && (operation === 'move' || operation === 'remove')) throw badTree('the root is neither moved nor removed');
    if (operation === 'move') {
      await require(d, drive, caller, folder, 'create');
      await liveFolder(d, drive, folder);
      if ((await lineage(d, drive, folder)).some((n) => n.node === node)) throw badTree('a folder cannot move into itself or below itself');
      await nameFree(d, drive, folder, String(m.name_hash), node);
    }
    if (operation === 'remove' && existing.kind === 'folder' && (await d.store.children(drive, node, 1)).length > 0) throw conflict(`folder ${node} has live children`, node, existing);
  }
  if (await d.store.version(drive, node, String(m.version))) throw invalid(`version ${String(m.version)} of ${node} already exists`);
  const c = await change(d, drive, { node, operation, version: String(m.version) });
  const text = JSON.stringify(m);
  await d.store.putNode({
    drive,
    node,
    kind: m.kind as NodeRow['kind'],
    folder: operation === 'move' || operation === 'create' ? folder : (existing?.folder ?? ''),
    name_hash: operation === 'move' || operation === 'create' ? String(m.name_hash) : (existing?.name_hash ?? ''),
    version: String(m.version),
    seq: c.seq,
    removed: operation === 'remove' ? 1 : 0,
    rotate: operation === 'rotate' ? 0 : (existing?.rotate ?? 0),
    manifest: text,
  });
  if (half) chunks = await chunksStored(d, drive, content.chunks);
  await d.store.putVersion(
    drive,
    node,
    String(m.version),
    c.seq,
    operation,
    text,
    pages.map((p) => ({ hash: driveHash(profile, 'page', p), body: JSON.stringify(p) })),
    chunks,
  );
  if (operation === 'create' && folder === '') await d.store.setRoot(drive, node);
  return { result: { seq: c.seq, node, version: String(m.version), head: String(m.version), positions: [] }, change: c };
}

async function liveFolder(d: Drive, drive: string, folder: string): Promise<void> {
  const f = await d.store.node(drive, folder);
  if (!f || f.removed || f.kind !== 'folder') throw badTree(`${folder} is not a live folder of this drive`);
}

async function nameFree(d: Drive, drive: string, folder: string, nameHash: string, node: string): Promise<void> {
  if (nameHash === '') return;
  const taken = await d.store.named(drive, folder, nameHash, node);
  if (taken) throw conflict('the name is taken in that folder', taken.node, taken);
}

async function records(d: Drive, drive: string, caller: Caller, list: Obj[]): Promise<Applied> {
  const node = String(list[0]!.node);
  const target = await d.store.node(drive, node);
  if (!target) throw ruleError(404, 'ra.errors.not-found', `node ${node} does not exist`);
  await require(d, drive, caller, node, 'append');
  if (target.removed || target.kind !== 'file' || (JSON.parse(target.manifest) as Obj).mode !== 'append') throw invalid(`node ${node} is not a live append file`);
  let position = await d.store.lastPosition(drive, node);
  const positions: number[] = [];
  const profile = d.ctx.config.profile;
  for (const r of list) {
    const problems = recordProblems(r);
    if (problems.length > 0) throw invalid(`a record is refused (ra.drive.record): ${problems.join('; ')}`);
    if (r.drive !== drive || r.node !== node) throw invalid('every record of a commit names this drive and one node');
    const head = await d.store.authorHead(drive, node, String(r.author));
    const problem = chainProblem(r, head.sequence, head.hash);
    if (problem !== undefined) {
      if (Number(r.sequence) <= head.sequence) throw conflict(`${problem} for ${String(r.author)}`, node, target, { sequence: head.sequence, hash: head.hash });
      throw invalid(`${problem} (ra.drive.record)`);
    }
    const chunks = await chunksStored(d, drive, Array.isArray(r.chunks) ? (r.chunks as Obj[]) : []);
    position += 1;
    positions.push(position);
    await d.store.putRecord({ drive, node, position, author: String(r.author), sequence: Number(r.sequence), hash: driveHash(profile, 'record', r), body: JSON.stringify(r) }, chunks);
  }
  const c = await change(d, drive, { node, operation: 'append', position });
  return { result: { seq: c.seq, node, position, head: target.version, positions }, change: c };
}

async function trim(d: Drive, drive: string, caller: Caller, t: Obj): Promise<Applied> {
  const node = String(t.node);
  const target = await d.store.node(drive, node);
  if (!target) throw ruleError(404, 'ra.errors.not-found', `node ${node} does not exist`);
  await require(d, drive, caller, node, 'write');
  const snapshot = t.snapshot as Obj;
  if (!(await d.store.version(drive, String(snapshot.node), String(snapshot.version)))) throw invalid('the trim names a snapshot version that is not committed');
  await d.store.trim(drive, node, Number(t.before));
  const c = await change(d, drive, { node, operation: 'trim', position: Number(t.before) });
  return { result: { seq: c.seq, node, position: Number(t.before), head: target.version, positions: [] }, change: c };
}

async function share(d: Drive, drive: string, caller: Caller, s: Obj): Promise<Applied> {
  const problems = shareProblems(s);
  if (problems.length > 0) throw invalid(`the share is refused (ra.drive.share): ${problems.join('; ')}`);
  if (s.drive !== drive) throw invalid(`the share names drive ${String(s.drive)}, not ${drive}`);
  if (s.member === drive) throw invalid('the owner needs no share');
  const node = String(s.node);
  const target = await d.store.node(drive, node);
  if (!target || target.removed) throw badTree(`${node} is not a live node of this drive`);
  await require(d, drive, caller, node, 'admin');
  if (await d.store.share(drive, String(s.id))) throw invalid(`share ${String(s.id)} already exists`);
  const expires = typeof s.expires === 'string' && s.expires !== '' ? (parseRfc3339(s.expires) ?? null) : null;
  const caps = (s.caps ?? {}) as Obj;
  await d.store.putShare({
    drive,
    id: String(s.id),
    node,
    member: typeof s.member === 'string' && s.member !== '' ? s.member : null,
    link: typeof s.link === 'string' && s.link !== '' ? s.link : null,
    role: String(s.role),
    body: JSON.stringify(s),
    expires_at: expires,
    downloads: Number(caps.downloads ?? 0),
  });
  const c = await change(d, drive, { node, operation: 'share', share: String(s.id) });
  return { result: { seq: c.seq, node, share: String(s.id), head: target.version, positions: [] }, change: c };
}

async function unshare(d: Drive, drive: string, caller: Caller, id: string): Promise<Applied> {
  const s = await d.store.share(drive, id);
  if (!s || s.revoked) throw ruleError(404, 'ra.errors.not-found', `share ${id} is not live`);
  await require(d, drive, caller, s.node, 'admin');
  await d.store.revokeShare(drive, id);
  // The former member held the keys of everything below the shared node (ra.drive.unshare).
  const queue = [s.node];
  for (let n = queue.shift(), seen = 0; n !== undefined && seen < 100_000; n = queue.shift(), seen++) {
    await d.store.markRotate(drive, n);
    queue.push(...(await d.store.children(drive, n, 100_000)).map((c) => c.node));
  }
  const c = await change(d, drive, { node: s.node, operation: 'unshare', share: id });
  const head = (await d.store.node(drive, s.node))?.version ?? '';
  const who = s.member ?? `link:${s.id}`;
  const left = s.member ? (await d.store.sharesOf(drive, s.member)).length : 0;
  return { result: { seq: c.seq, node: s.node, share: id, head, positions: [] }, change: c, ...(left === 0 ? { revoked: { who, share: id } } : {}) };
}
