// A model of one drive (document 3, Drive API): random sequences of commands (upload and create a
// folder or file, replace on the head or on an old base, move, remove, append, trim, share with a
// member or a link, unshare, read as owner, member or link holder, read the changes), each run
// against the relay and against a model of the tree and its shares, every answer judged by the
// model. What the document decides is judged as it says (the owner anything; a member what its
// shares allow, over the node's ancestors; a link holder its link; 409 on a stale base; the node
// heads, the append tail, the changes in order); a refused command must change nothing the model
// can read back. The member holds any of the five roles (read, write, admin, append, create), on
// shares that may have expired; it reads through every read path (the node, its children, history,
// version, chunk and records), and a link holder reads with or without the link's password.
// Where a role's name leaves an answer open (a read by an append or create member) the model takes
// whatever the relay answers.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { Check } from '../../../run/model.ts';
import type { PropertyVerdict } from '../../../run/property.ts';
import { suiteProperty } from '../../../run/check.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import type { DriveActor } from '../../../actors/drive/client.ts';
import { create, decryptChunk, encryptContent, hex16, move, nodeKeys, record, recordHash, remove, replace, share, type Chunk, type NodeKeys } from '../../../actors/drive/objects.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import { DriveSession, bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { linkSecrets } from '../../../impl/noble-drive.ts';

type Obj = Record<string, unknown>;
type Who = 'owner' | 'member';
type Reader = Who | 'link' | 'link-bare' | 'nobody';
type Role = 'read' | 'write' | 'admin' | 'append' | 'create';
type Path = 'node' | 'children' | 'history' | 'version' | 'chunk' | 'records';
/** What a command does to a node, as the roles grant it. */
type Act = 'read' | 'write' | 'create' | 'append';
type Cmd =
  | { t: 'mkdir'; by: Who; at: number }
  | { t: 'put'; by: Who; at: number; size: number; append: boolean }
  | { t: 'replace'; by: Who; file: number; size: number; stale: boolean }
  | { t: 'move'; by: Who; file: number; to: number }
  | { t: 'remove'; by: Who; file: number }
  | { t: 'append'; by: Who; file: number; size: number }
  | { t: 'trim'; by: Who; file: number }
  | { t: 'share'; node: number; role: Role; expired: boolean }
  | { t: 'link'; node: number; password: boolean }
  | { t: 'unshare'; share: number }
  | { t: 'read'; as: Reader; node: number; path: Path }
  | { t: 'changes' };

const MAX_SEQUENCES = 20;
const MAX_COMMANDS = 16;

const who = fc.constantFrom<Who>('owner', 'member');
const index = fc.nat(15);
const size = fc.constantFrom(0, 1, 300, 70_000);
const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
// Weighted toward what interacts: shares, members' writes and reads, writes on a base.
const command: fc.Arbitrary<Cmd> = fc.oneof(
  w(2, fc.record({ t: fc.constant('mkdir' as const), by: who, at: index })),
  w(3, fc.record({ t: fc.constant('put' as const), by: who, at: index, size, append: fc.boolean() })),
  w(3, fc.record({ t: fc.constant('replace' as const), by: who, file: index, size, stale: fc.boolean() })),
  w(1, fc.record({ t: fc.constant('move' as const), by: who, file: index, to: index })),
  w(1, fc.record({ t: fc.constant('remove' as const), by: who, file: index })),
  w(2, fc.record({ t: fc.constant('append' as const), by: who, file: index, size })),
  w(1, fc.record({ t: fc.constant('trim' as const), by: who, file: index })),
  w(3, fc.record({ t: fc.constant('share' as const), node: index, role: fc.constantFrom<Role>('read', 'write', 'admin', 'append', 'create'), expired: fc.boolean() })),
  w(1, fc.record({ t: fc.constant('link' as const), node: index, password: fc.boolean() })),
  w(1, fc.record({ t: fc.constant('unshare' as const), share: index })),
  w(
    4,
    fc.record({
      t: fc.constant('read' as const),
      as: fc.constantFrom<Reader>('owner', 'member', 'link', 'link-bare', 'nobody'),
      node: index,
      path: fc.constantFrom<Path>('node', 'children', 'history', 'version', 'chunk', 'records'),
    }),
  ),
  w(1, fc.record({ t: fc.constant('changes' as const) })),
);

/** Sequences always tried first (every one, whatever the runs asked): one per way a drive goes wrong that a random walk reaches rarely. */
const EXAMPLES: Cmd[][] = [
  // A reader writes; then one with write does.
  [
    { t: 'share', node: 0, role: 'read', expired: false },
    { t: 'mkdir', by: 'member', at: 0 },
    { t: 'put', by: 'member', at: 0, size: 300, append: false },
    { t: 'share', node: 0, role: 'write', expired: false },
    { t: 'put', by: 'member', at: 0, size: 300, append: false },
  ],
  // A share on a folder holds below it, and only there.
  [
    { t: 'mkdir', by: 'owner', at: 0 },
    { t: 'mkdir', by: 'owner', at: 0 },
    { t: 'share', node: 1, role: 'write', expired: false },
    { t: 'put', by: 'owner', at: 1, size: 1, append: false },
    { t: 'read', as: 'member', node: 3, path: 'node' },
    { t: 'put', by: 'member', at: 1, size: 1, append: false },
    { t: 'read', as: 'member', node: 2, path: 'node' },
    { t: 'put', by: 'member', at: 2, size: 1, append: false },
  ],
  // A replace on the head, then on the old base.
  [
    { t: 'put', by: 'owner', at: 0, size: 300, append: false },
    { t: 'replace', by: 'owner', file: 0, size: 70_000, stale: false },
    { t: 'replace', by: 'owner', file: 0, size: 1, stale: true },
    { t: 'read', as: 'owner', node: 1, path: 'node' },
  ],
  // An append tail, a stranger's append, a trim.
  [
    { t: 'put', by: 'owner', at: 0, size: 0, append: true },
    { t: 'append', by: 'owner', file: 0, size: 0 },
    { t: 'append', by: 'member', file: 0, size: 300 },
    { t: 'append', by: 'owner', file: 0, size: 300 },
    { t: 'trim', by: 'owner', file: 0 },
    { t: 'read', as: 'owner', node: 1, path: 'node' },
  ],
  // A moved file keeps its content (a move's version carries no pages).
  [
    { t: 'put', by: 'owner', at: 0, size: 70_000, append: false },
    { t: 'mkdir', by: 'owner', at: 0 },
    { t: 'move', by: 'owner', file: 0, to: 1 },
    { t: 'read', as: 'owner', node: 1, path: 'node' },
  ],
  // An append member overwrites, a create member modifies (neither may); then each does its own.
  [
    { t: 'put', by: 'owner', at: 0, size: 300, append: false },
    { t: 'put', by: 'owner', at: 0, size: 0, append: true },
    { t: 'share', node: 0, role: 'append', expired: false },
    { t: 'replace', by: 'member', file: 0, size: 1, stale: false },
    { t: 'append', by: 'member', file: 0, size: 300 },
    { t: 'share', node: 0, role: 'create', expired: false },
    { t: 'remove', by: 'member', file: 0 },
    { t: 'mkdir', by: 'member', at: 0 },
  ],
  // An expired share grants nothing, on any read path.
  [
    { t: 'put', by: 'owner', at: 0, size: 300, append: false },
    { t: 'share', node: 0, role: 'write', expired: true },
    { t: 'read', as: 'member', node: 1, path: 'chunk' },
    { t: 'read', as: 'member', node: 0, path: 'children' },
    { t: 'put', by: 'member', at: 0, size: 1, append: false },
  ],
  // A share on a folder grants nothing beside it.
  [
    { t: 'mkdir', by: 'owner', at: 0 },
    { t: 'mkdir', by: 'owner', at: 0 },
    { t: 'put', by: 'owner', at: 2, size: 300, append: false },
    { t: 'share', node: 1, role: 'admin', expired: false },
    { t: 'read', as: 'member', node: 3, path: 'chunk' },
    { t: 'read', as: 'member', node: 2, path: 'history' },
  ],
  // A password link without its password, then with it.
  [
    { t: 'put', by: 'owner', at: 0, size: 300, append: false },
    { t: 'link', node: 1, password: true },
    { t: 'read', as: 'link-bare', node: 1, path: 'chunk' },
    { t: 'read', as: 'link', node: 1, path: 'version' },
  ],
  // A link, then no link; nobody, always refused.
  [
    { t: 'link', node: 0, password: false },
    { t: 'read', as: 'link', node: 0, path: 'node' },
    { t: 'read', as: 'nobody', node: 0, path: 'node' },
    { t: 'unshare', share: 0 },
    { t: 'read', as: 'link', node: 0, path: 'node' },
  ],
];

interface MNode {
  keys: NodeKeys;
  kind: 'file' | 'folder';
  folder: string;
  version: string;
  /** Every version this node had, oldest first (stale bases are drawn from these). */
  versions: string[];
  mode?: 'replace' | 'append';
  plain?: Uint8Array;
  /** The version carrying the content (a create or replace: a move carries no pages, ra.drive.manifest-shape), and its first chunk. */
  contentVersion?: string;
  firstChunk?: string;
  records: number[];
  trimmed: number;
  alive: boolean;
}
interface MShare {
  id: string;
  node: string;
  member: boolean;
  role: Role;
  link?: string;
  /** A password link: its verifier. */
  verifier?: Uint8Array;
  live: boolean;
}

/** What each role grants, as its name says (ra.drive.roles, the deployed system's vocabulary). */
const GRANTS: Record<Role, readonly Act[]> = {
  read: ['read'],
  write: ['read', 'write', 'create', 'append'],
  admin: ['read', 'write', 'create', 'append'],
  append: ['append'],
  create: ['create'],
};

/** The model: the tree, the shares, the append positions and chains, the changes not yet read. */
class Model {
  readonly nodes = new Map<string, MNode>();
  readonly shares: MShare[] = [];
  readonly chains = new Map<string, { sequence: number; hash: string }>();
  /**
   * Nodes of the accepted commits document 3 names (manifests, records, trims) since the last
   * changes read, in order; and nodes whose create was refused, which no change may name.
   */
  pending: string[] = [];
  readonly neverMade = new Set<string>();
  lastPosition = new Map<string, number>();

  live(kind?: 'file' | 'folder', mode?: 'append'): MNode[] {
    return [...this.nodes.values()].filter((n) => n.alive && (!kind || n.kind === kind) && (!mode || n.mode === mode));
  }

  roles(as: 'member' | 'link', node: string, link?: string): Set<Role> {
    const above = new Set<string>();
    for (let at = this.nodes.get(node); at && !above.has(at.keys.node); at = this.nodes.get(at.folder)) above.add(at.keys.node);
    return new Set(this.shares.filter((s) => s.live && above.has(s.node) && (as === 'member' ? s.member : s.link === link)).map((s) => s.role));
  }

  /** Whether `by` may `act` on `node`; undefined where the roles' names leave it open (a read by append or create). */
  may(by: Who, node: string, act: Act): boolean | undefined {
    if (by === 'owner') return true;
    const roles = [...this.roles('member', node)];
    if (roles.some((r) => GRANTS[r].includes(act))) return true;
    return act === 'read' && roles.length > 0 ? undefined : false;
  }
}

const pick = <T>(list: readonly T[], i: number): T | undefined => (list.length === 0 ? undefined : list[i % list.length]);
const bytes = (n: number) => new Uint8Array(randomBytes(n));
const same = (a: Uint8Array | undefined, b: Uint8Array | undefined) => a !== undefined && b !== undefined && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
const shown = (r: HttpResponse | undefined) => (r ? `${r.status}` : 'not sent');

interface Run {
  s: DriveSession;
  owner: RelayIdentity;
  member: RelayIdentity;
  drive: string;
  m: Model;
  /** The changes cursor after the last read. */
  cursor: string;
  /** The password of password links (its KDF is slow: one per sequence). */
  password: { salt: Uint8Array; verifier: Uint8Array; verifierHash: string; key: Uint8Array };
}

/** Uploads through the missing list, then commits: the answer that refused, the commit's, or what went wrong. */
async function send(x: Run, by: RelayIdentity, chunks: readonly Chunk[], body: Obj): Promise<HttpResponse | string> {
  const problem = await x.s.drive.uploadChunks(x.drive, x.s.actor(by), chunks);
  if (problem) return problem.answer ?? problem.text;
  return x.s.drive.commit(x.drive, x.s.actor(by), body);
}

/** A file's content read back through its content version's pages and chunks, opened by the owner. */
async function content(x: Run, n: MNode): Promise<Uint8Array | string> {
  const actor = x.s.actor(x.owner);
  const version = n.contentVersion ?? n.version;
  const v = await x.s.drive.get(x.drive, `/nodes/${n.keys.node}/versions/${version}`, actor);
  const manifest = bodyOf(v);
  if (!ok(v) || !manifest) return `GET its head version answered ${said(v)}`;
  const parts: Uint8Array[] = [];
  for (const page of (manifest.pages as string[] | undefined) ?? []) {
    const p = await x.s.drive.get(x.drive, `/nodes/${n.keys.node}/versions/${version}/pages/${page}`, actor);
    if (!ok(p)) return `GET page ${page} answered ${said(p)}`;
    for (const ref of (bodyOf(p)?.chunks as Obj[] | undefined) ?? []) {
      const c = await x.s.drive.chunk(x.drive, actor, n.keys.node, version, String(ref.id));
      const plain = ok(c) ? decryptChunk(x.s.profile, x.drive, n.keys, new Uint8Array(c.body)) : undefined;
      if (!plain) return `GET chunk ${String(ref.id)} answered ${said(c)}, or it did not open`;
      parts.push(plain);
    }
  }
  return new Uint8Array(Buffer.concat(parts));
}

/** Who commits as `by`. */
const authorOf = (x: Run, by: Who): RelayIdentity => (by === 'owner' ? x.owner : x.member);

/** Judges an answer against whether the model allows the command; moves the model when it was taken. */
function judged(trace: string[], what: string, allowed: boolean | undefined, r: HttpResponse | string, apply: () => void): string | undefined {
  if (typeof r === 'string') return `${what}: ${r}`;
  trace.push(`${what}: ${r.status}`);
  if (r.status >= 500) return `${what} answered ${said(r)}`;
  if (allowed === true && !ok(r)) return `${what} is allowed and answered ${said(r)}`;
  if (allowed === false && r.status < 400) return `${what} is not allowed and answered ${said(r)}`;
  if (ok(r)) apply();
  return undefined;
}

/** Runs one command: undefined when it matched the model (and the model moved), else what differed. */
async function step(x: Run, c: Cmd, trace: string[]): Promise<string | undefined> {
  switch (c.t) {
    case 'mkdir':
    case 'put':
    case 'replace':
    case 'append':
    case 'trim':
      return writeContent(x, c, trace);
    case 'move':
    case 'remove':
    case 'share':
    case 'link':
    case 'unshare':
      return restructure(x, c, trace);
    case 'read':
      return read(x, c, trace);
    case 'changes':
      return changes(x, trace);
  }
}

/** Creating nodes and writing content: create, replace, append, trim. */
async function writeContent(x: Run, c: Extract<Cmd, { t: 'mkdir' | 'put' | 'replace' | 'append' | 'trim' }>, trace: string[]): Promise<string | undefined> {
  const { s, m, drive } = x;
  switch (c.t) {
    case 'mkdir':
    case 'put': {
      const into = pick(m.live('folder'), c.at)!;
      const file = c.t === 'put';
      const keys = nodeKeys(undefined, file);
      const mode = c.t === 'put' ? (c.append ? 'append' : 'replace') : undefined;
      // An append file starts empty; its content comes as records.
      const plain = mode === 'replace' && c.t === 'put' ? bytes(c.size) : undefined;
      const chunks = plain ? encryptContent(s.profile, drive, keys, plain) : [];
      const body = create(s.profile, {
        drive,
        author: authorOf(x, c.by),
        keys,
        kind: file ? 'file' : 'folder',
        at: { folder: into.keys, name: hex16() },
        ownerEncryption: x.owner.encryption.publicKey,
        chunks,
        ...(mode ? { mode } : {}),
      });
      const version = String((body.manifest as Obj).version);
      const allowed = m.may(c.by, into.keys.node, 'create');
      if (!allowed) m.neverMade.add(keys.node);
      return judged(trace, `${c.by} creates ${file ? `${mode} file` : 'folder'} ${keys.node}`, allowed, await send(x, authorOf(x, c.by), chunks, body), () => {
        m.nodes.set(keys.node, {
          keys,
          kind: file ? 'file' : 'folder',
          folder: into.keys.node,
          version,
          versions: [version],
          ...(mode ? { mode } : {}),
          ...(mode === 'replace' ? { plain, contentVersion: version, ...(chunks[0] ? { firstChunk: chunks[0].id } : {}) } : {}),
          records: [],
          trimmed: 0,
          alive: true,
        });
        m.pending.push(keys.node);
      });
    }
    case 'replace': {
      const n = pick(m.live('file'), c.file);
      if (!n || n.mode !== 'replace') return undefined;
      const stale = c.stale && n.versions.length > 1 ? n.versions[n.versions.length - 2]! : undefined;
      const plain = bytes(c.size);
      const chunks = encryptContent(s.profile, drive, n.keys, plain);
      const body = replace(s.profile, { drive, author: authorOf(x, c.by), keys: n.keys, parent: stale ?? n.version, chunks });
      const r = await send(x, authorOf(x, c.by), chunks, body);
      if (typeof r === 'string') return `${c.by} replaces ${n.keys.node}: ${r}`;
      if (stale && m.may(c.by, n.keys.node, 'write')) {
        trace.push(`${c.by} replaces ${n.keys.node} on old base ${stale}: ${r.status}`);
        return r.status === 409 && r.text().includes(n.version) ? undefined : `a replace on the old base ${stale} answered ${said(r)}, not 409 with the head ${n.version}`;
      }
      const version = String((body.manifest as Obj).version);
      return judged(trace, `${c.by} replaces ${n.keys.node}`, m.may(c.by, n.keys.node, 'write'), r, () => {
        Object.assign(n, { version, plain, contentVersion: version, firstChunk: chunks[0]?.id, versions: [...n.versions, version] });
        m.pending.push(n.keys.node);
      });
    }
    case 'append': {
      const n = pick(m.live('file', 'append'), c.file);
      if (!n) return undefined;
      const by = authorOf(x, c.by);
      const chain = m.chains.get(`${n.keys.node} ${by.identity}`) ?? { sequence: 0, hash: '' };
      const chunks = c.size > 0 ? encryptContent(s.profile, drive, n.keys, bytes(c.size)) : [];
      const r0 = record(s.profile, { drive, node: n.keys, author: by, sequence: chain.sequence + 1, previous: chain.hash, ...(chunks.length > 0 ? { chunks } : { payload: bytes(16) }) });
      return judged(trace, `${c.by} appends to ${n.keys.node}`, m.may(c.by, n.keys.node, 'append'), await send(x, by, chunks, { id: hex16(), records: [r0] }), () => {
        m.chains.set(`${n.keys.node} ${by.identity}`, { sequence: chain.sequence + 1, hash: recordHash(s.profile, r0) });
        const position = (m.lastPosition.get(n.keys.node) ?? 0) + 1;
        m.lastPosition.set(n.keys.node, position);
        n.records.push(position);
        m.pending.push(n.keys.node);
      });
    }
    case 'trim': {
      const n = pick(m.live('file', 'append'), c.file);
      if (!n) return undefined;
      const before = m.lastPosition.get(n.keys.node) ?? 1;
      const body = { id: hex16(), trim: { node: n.keys.node, before: Math.max(1, before), snapshot: { node: n.keys.node, version: n.version } } };
      return judged(trace, `${c.by} trims ${n.keys.node} before ${before}`, m.may(c.by, n.keys.node, 'write'), await send(x, authorOf(x, c.by), [], body), () => {
        n.trimmed = Math.max(n.trimmed, before);
        m.pending.push(n.keys.node);
      });
    }
  }
}

/** Changing the tree and who may see it: move, remove, share, link, unshare. */
async function restructure(x: Run, c: Extract<Cmd, { t: 'move' | 'remove' | 'share' | 'link' | 'unshare' }>, trace: string[]): Promise<string | undefined> {
  const { s, m, drive } = x;
  switch (c.t) {
    case 'move': {
      const n = pick(m.live('file'), c.file);
      const to = pick(m.live('folder'), c.to)!;
      if (!n) return undefined;
      const body = move(s.profile, { drive, author: authorOf(x, c.by), keys: n.keys, kind: 'file', parent: n.version, to: to.keys, name: hex16(), ...(n.mode ? { mode: n.mode } : {}) });
      const version = String((body.manifest as Obj).version);
      const allowed = m.may(c.by, n.keys.node, 'write') && m.may(c.by, to.keys.node, 'create');
      return judged(trace, `${c.by} moves ${n.keys.node} to ${to.keys.node}`, allowed, await send(x, authorOf(x, c.by), [], body), () => {
        Object.assign(n, { version, folder: to.keys.node, versions: [...n.versions, version] });
        m.pending.push(n.keys.node);
      });
    }
    case 'remove': {
      const n = pick(m.live('file'), c.file);
      if (!n) return undefined;
      const body = remove(s.profile, { drive, author: authorOf(x, c.by), node: n.keys.node, kind: 'file', parent: n.version, ...(n.mode ? { mode: n.mode } : {}) });
      return judged(trace, `${c.by} removes ${n.keys.node}`, m.may(c.by, n.keys.node, 'write'), await send(x, authorOf(x, c.by), [], body), () => {
        n.alive = false;
        m.pending.push(n.keys.node);
      });
    }
    case 'share':
    case 'link': {
      const n = pick(m.live(), c.node)!;
      const link = c.t === 'link' ? randomBytes(16).toString('hex') : undefined;
      const role = c.t === 'share' ? c.role : 'read';
      const expired = c.t === 'share' && c.expired;
      const password = c.t === 'link' && c.password ? x.password : undefined;
      const made = share(s.profile, {
        drive,
        issuer: x.owner,
        node: n.keys,
        role,
        ...(link ? { link } : { member: { identity: x.member.identity, encryption: x.member.encryption.publicKey } }),
        ...(expired ? { expires: new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z') } : {}),
        ...(password ? { password: { salt: password.salt, verifierHash: password.verifierHash, key: password.key } } : {}),
      });
      const what = `owner shares ${n.keys.node} ${role}${expired ? ' (expired)' : ''} with ${link ? `${password ? 'password ' : ''}link ${link}` : 'the member'}`;
      return judged(trace, what, true, await x.s.drive.commit(drive, s.actor(x.owner), made.body), () => {
        m.shares.push({
          id: String((made.body.share as Obj).id),
          node: n.keys.node,
          member: !link,
          role,
          ...(link ? { link } : {}),
          ...(password ? { verifier: password.verifier } : {}),
          live: !expired,
        });
      });
    }
    case 'unshare': {
      const sh = pick(
        m.shares.filter((x) => x.live),
        c.share,
      );
      if (!sh) return undefined;
      return judged(trace, `owner unshares ${sh.id}`, true, await x.s.drive.unshare(drive, s.actor(x.owner), sh.id), () => {
        sh.live = false;
      });
    }
  }
}

/** A node's head as owner, member or link holder: answered to whom the model allows, with the model's head. */
async function read(x: Run, c: Extract<Cmd, { t: 'read' }>, trace: string[]): Promise<string | undefined> {
  const { m } = x;
  const n = pick(m.live(), c.node)!;
  const held = m.shares.filter((s) => s.link).at(-1);
  if ((c.as === 'link' || c.as === 'link-bare') && !held) return undefined;
  const link = held?.link;
  const actor: DriveActor =
    c.as === 'owner'
      ? x.s.actor(x.owner)
      : c.as === 'member'
        ? x.s.actor(x.member)
        : c.as === 'link'
          ? { link: link!, ...(held?.verifier ? { verifier: held.verifier } : {}) }
          : c.as === 'link-bare'
            ? { link: link! }
            : { none: true };
  const byLink = c.as === 'link' || (c.as === 'link-bare' && !held?.verifier);
  const allowed = c.as === 'owner' ? true : c.as === 'member' ? m.may('member', n.keys.node, 'read') : byLink ? m.roles('link', n.keys.node, link).size > 0 : false;
  // The owner reads the head (and below, the content); others one read path.
  const path: Path = c.as === 'owner' || (c.path === 'chunk' && !n.firstChunk) ? 'node' : c.path;
  const r =
    path === 'chunk'
      ? await x.s.drive.chunk(x.drive, actor, n.keys.node, n.contentVersion, n.firstChunk!)
      : path === 'version'
        ? await x.s.drive.get(x.drive, `/nodes/${n.keys.node}/versions/${n.version}`, actor)
        : await x.s.drive.node(x.drive, actor, n.keys.node, path === 'node' ? '' : `/${path}`);
  const what = `${c.as} reads ${path} of ${n.keys.node}`;
  trace.push(`${what}: ${shown(r)}`);
  if (r.status >= 500) return `${what} answered ${said(r)}`;
  if (allowed === false) return r.status >= 400 ? undefined : `${what}, which no live share allows, answered ${said(r)}`;
  if (allowed === undefined) return undefined;
  if (!ok(r)) return `${what} is allowed and answered ${said(r)}`;
  if (['node', 'history', 'version'].includes(path) && !r.text().includes(n.version)) return `${what} answered ${said(r)}, without its head ${n.version}`;
  if (c.as !== 'owner') return undefined;
  if (n.mode === 'replace') {
    const back = await content(x, n);
    if (typeof back === 'string') return `reading ${n.keys.node}'s content: ${back}`;
    if (!same(back, n.plain)) return `${n.keys.node}'s content read back (${back.length} bytes) differs from the last accepted write (${n.plain!.length} bytes)`;
  }
  if (n.mode === 'append') {
    const t = await x.s.drive.node(x.drive, actor, n.keys.node, '/records');
    const got = ((bodyOf(t)?.records as Obj[] | undefined) ?? []).map((e) => Number(e.position));
    const want = n.records.filter((p) => p >= n.trimmed);
    if (!ok(t) || JSON.stringify(got) !== JSON.stringify(want)) return `${n.keys.node}'s records answered ${said(t)}: positions ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  }
  return undefined;
}

/** The owner's changes since the last read: every accepted commit's node, in order; none of a refused create. */
async function changes(x: Run, trace: string[]): Promise<string | undefined> {
  const seen: string[] = [];
  let cursor = x.cursor;
  for (let i = 0; i < 20; i++) {
    const r = await x.s.drive.changes(x.drive, x.s.actor(x.owner), cursor);
    const b = bodyOf(r);
    if (!ok(r) || !Array.isArray(b?.changes)) return `GET changes?cursor=${cursor} answered ${said(r)}`;
    for (const c of b.changes as Obj[]) seen.push(String(c.node));
    cursor = String(b.cursor);
    if (!b.more) break;
  }
  trace.push(`changes: ${seen.length}`);
  let at = 0;
  for (const node of x.m.pending) {
    at = seen.indexOf(node, at);
    if (at < 0) return `the changes since the last read (${JSON.stringify(seen)}) do not list the accepted commits' nodes in order (${JSON.stringify(x.m.pending)})`;
    at += 1;
  }
  const ghost = seen.find((n) => x.m.neverMade.has(n));
  if (ghost) return `the changes list ${ghost}, whose create was refused`;
  x.m.pending = [];
  x.cursor = cursor;
  return undefined;
}

/** The password of the model's password links, derived once (argon2id is slow) when first asked for. */
let modelPassword: Promise<Run['password']> | undefined;
function passwordOnce(): Promise<Run['password']> {
  modelPassword ??= (async () => {
    const salt = new Uint8Array(randomBytes(16));
    return { salt, ...(await linkSecrets('model password', salt)) };
  })();
  return modelPassword;
}

export function driveModelCheck(t: RelayTarget): Check {
  const check = suiteProperty('drive', {
    id: 'drive/model',
    lane: 'drive',
    title: `random sequences of up to ${MAX_COMMANDS} drive commands (create, upload, replace on the head or an old base, move, remove, append, trim, share in any role and maybe expired, link with or without a password, unshare, read any path as owner, member or link holder with or without the password, changes) answer as a model of the tree and its shares says`,
    rules: ['ra.drive.owner', 'ra.drive.members', 'ra.drive.stale-base', 'ra.drive.nodes', 'ra.drive.changes', 'ra.drive.link-auth'],
    context: ['ra.drive.roles', 'ra.drive.commit', 'ra.drive.record', 'ra.drive.share', 'ra.drive.missing', 'ra.drive.link-kdf', 'ra.drive.versions'],
    timeoutMs: 120_000,
    arbitrary: fc.array(command, { minLength: 1, maxLength: MAX_COMMANDS }),
    examples: EXAMPLES,
    predicate: async (cmds, ctx): Promise<PropertyVerdict> => {
      const s = new DriveSession(t, ctx.signal);
      const trace: string[] = [];
      try {
        const [{ id: owner, root }, member] = [await s.owner(), await s.identity()];
        const m = new Model();
        m.nodes.set(root.keys.node, { keys: root.keys, kind: 'folder', folder: '', version: root.version, versions: [root.version], records: [], trimmed: 0, alive: true });
        m.pending.push(root.keys.node);
        const x: Run = { s, owner, member, drive: owner.identity, m, cursor: '0', password: await passwordOnce() };
        for (const c of [...cmds, { t: 'changes' as const }]) {
          const problem = await step(x, c, trace);
          if (problem) return { ok: false, detail: `${trace.join('; ')}: ${problem}`, evidence: s.evidence() };
        }
        // Finally every live node read back as the owner: nothing refused left a trace, nothing accepted was lost.
        for (let i = 0; i < m.live().length; i++) {
          const problem = await read(x, { t: 'read', as: 'owner', node: i, path: 'node' }, trace);
          if (problem) return { ok: false, detail: `${trace.join('; ')}: ${problem}`, evidence: s.evidence() };
        }
        return true;
      } finally {
        await s.close();
      }
    },
  });
  return { ...check, run: (ctx) => check.run({ ...ctx, runs: Math.min(Math.max(ctx.runs, EXAMPLES.length), MAX_SEQUENCES) }) };
}
