// Who may do what, across the whole matrix (spec/facets/drive.yaml, kind who): every principal
// document 3 distinguishes on a drive (the owner, each role, an expired and an unshared share, a
// group member through the roster and one the roster no longer lists, a member homed on the peer
// and a caller homed there with no share, a link holder with and without its password, a
// stranger, no proof at all) uses every drive operation on one tree made once; the allowed
// succeed, the others are refused and change nothing (read back as the owner). Uses beside the
// shared folder (its sibling, its parent) are refused to all but the owner: a share on a folder
// grants what is below it and nothing beside it. The roles' meanings are the deployed system's
// (ra.drive.roles, context); a role's name decides only what it plainly names (append appends,
// create creates, read reads), the rest is the profile's.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { DriveActor } from '../../../actors/drive/client.ts';
import {
  create,
  encryptContent,
  pageHash,
  pagesOf,
  groupRoster,
  hex16,
  move,
  nodeKeys,
  record,
  recordHash,
  remove,
  replace,
  rosterHeader,
  share,
  type Author,
  type Chunk,
} from '../../../actors/drive/objects.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { DriveSession, bodyOf, ok, said, type Made, type RelayTarget } from '../driver.ts';
import { answerOf, judge, pool, streamAnswer, type Answer, type Expectation } from './cells.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));

export const PRINCIPALS = [
  'owner',
  'read',
  'write',
  'admin',
  'append',
  'create',
  'expired',
  'unshared',
  'group-member',
  'removed-member',
  'remote-member',
  'remote-stranger',
  'link',
  'link-no-password',
  'stranger',
  'no-proof',
] as const;
export type Principal = (typeof PRINCIPALS)[number];

const READS = ['root', 'changes', 'node', 'children', 'history', 'records', 'version', 'page', 'chunk', 'record-chunk', 'shares', 'node-shares', 'events'] as const;
const WRITES = ['missing', 'chunk-put', 'create', 'replace', 'move', 'remove', 'append', 'trim', 'share', 'unshare'] as const;
const BESIDE = ['sibling-node', 'sibling-chunk', 'sibling-create', 'sibling-move', 'parent-node'] as const;
export type UseName = (typeof READS)[number] | (typeof WRITES)[number] | (typeof BESIDE)[number];

export const OPERATION: Record<UseName, string> = {
  root: 'driveRoot',
  changes: 'driveChanges',
  node: 'driveNode',
  children: 'driveChildren',
  history: 'driveHistory',
  records: 'driveRecords',
  version: 'driveVersion',
  page: 'drivePage',
  chunk: 'driveVersionChunk',
  'record-chunk': 'driveRecordChunk',
  shares: 'driveShares',
  'node-shares': 'driveNodeShares',
  events: 'driveEvents',
  missing: 'driveMissing',
  'chunk-put': 'driveChunkPut',
  create: 'driveCommit',
  replace: 'driveCommit',
  move: 'driveCommit',
  remove: 'driveCommit',
  append: 'driveCommit',
  trim: 'driveCommit',
  share: 'driveCommit',
  unshare: 'driveCommit',
  'sibling-node': 'driveNode',
  'sibling-chunk': 'driveVersionChunk',
  'sibling-create': 'driveCommit',
  'sibling-move': 'driveCommit',
  'parent-node': 'driveNode',
};

/** The facet (spec/facets/drive.yaml) a use's cells belong to: uses the document judges alike. */
export const FACET_OF: Record<UseName, string> = {
  root: 'overview',
  changes: 'overview',
  shares: 'overview',
  node: 'read',
  children: 'read',
  history: 'read',
  records: 'read',
  version: 'read',
  page: 'read',
  chunk: 'read',
  'record-chunk': 'read',
  'node-shares': 'read',
  events: 'read',
  missing: 'upload',
  'chunk-put': 'upload',
  create: 'create',
  replace: 'modify',
  move: 'modify',
  remove: 'modify',
  append: 'append',
  // A trim discards records: it modifies the file, which appending does not.
  trim: 'modify',
  share: 'share',
  unshare: 'share',
  'sibling-node': 'beside',
  'sibling-chunk': 'beside',
  'sibling-create': 'beside',
  'sibling-move': 'beside',
  'parent-node': 'beside',
};

/** The rule deciding a principal's cells. */
export const RULE_OF: Record<Principal, RuleId> = {
  owner: 'ra.drive.owner',
  'no-proof': 'ra.drive.owner',
  read: 'ra.drive.members',
  write: 'ra.drive.members',
  admin: 'ra.drive.members',
  append: 'ra.drive.members',
  create: 'ra.drive.members',
  expired: 'ra.drive.members',
  unshared: 'ra.drive.members',
  stranger: 'ra.drive.members',
  'group-member': 'ra.drive.group-members',
  'removed-member': 'ra.drive.group-members',
  'remote-member': 'ra.drive.remote-members',
  'remote-stranger': 'ra.drive.remote-members',
  link: 'ra.drive.link-auth',
  'link-no-password': 'ra.drive.link-auth',
};

const NOTHING: readonly Principal[] = ['expired', 'unshared', 'removed-member', 'remote-stranger', 'link-no-password', 'stranger', 'no-proof'];
const READERS: readonly Principal[] = ['owner', 'read', 'write', 'admin', 'group-member', 'remote-member', 'link'];

/**
 * What the document decides of `p` using `use` (undefined: left to the profile). Uploads by
 * readers and sharing by writers are the project's (ra.drive.roles, ra.drive.chunk-upload), as
 * are reads by the append and create roles, whose shares carry no node key.
 */
export function expected(p: Principal, use: UseName): Expectation | undefined {
  if (p === 'owner') return 'allowed';
  if ((BESIDE as readonly string[]).includes(use)) return 'refused';
  if (NOTHING.includes(p)) return use === 'root' || use === 'changes' || use === 'shares' ? (p === 'expired' || p === 'unshared' ? (use === 'shares' ? undefined : 'hidden') : 'hidden') : 'refused';
  if ((READS as readonly string[]).includes(use)) return READERS.includes(p) ? (use === 'root' ? undefined : 'allowed') : undefined;
  const writer = p === 'write' || p === 'admin';
  switch (use) {
    case 'missing':
    case 'chunk-put':
      return writer || p === 'append' || p === 'create' ? 'allowed' : undefined;
    case 'create':
      return writer || p === 'create' ? 'allowed' : 'refused';
    case 'append':
      return writer || p === 'append' ? 'allowed' : 'refused';
    case 'share':
    case 'unshare':
      return p === 'admin' ? 'allowed' : p === 'write' ? undefined : 'refused';
    default:
      return writer ? 'allowed' : 'refused';
  }
}

export const ALL_USES: readonly UseName[] = [...READS, ...WRITES, ...BESIDE];

/**
 * What the project decides (ra.drive.roles) of the cells the document leaves open: sharing by
 * writers, uploads by those who may only read, and the append and create roles' reads.
 */
export function profileExpected(p: Principal, use: UseName): Expectation | undefined {
  if (expected(p, use) !== undefined) return undefined;
  if (p === 'write' && (use === 'share' || use === 'unshare')) return 'refused';
  if ((use === 'missing' || use === 'chunk-put') && (['read', 'group-member', 'remote-member', 'link'] as Principal[]).includes(p)) return 'refused';
  if ((p === 'append' || p === 'create') && (['node', 'children', 'history', 'records', 'version', 'page', 'chunk', 'record-chunk', 'node-shares'] as UseName[]).includes(use)) return 'refused';
  return undefined;
}

/** The who cells the matrix fills: one per principal and operation the document decides. */
function claimed() {
  const seen = new Set<string>();
  const cells: Array<{ rule: RuleId; facet: string; value: string; operation: string }> = [];
  for (const p of PRINCIPALS)
    for (const use of ALL_USES) {
      if (expected(p, use) === undefined) continue;
      // The owner's uses beside the share are its uses of the same operations anywhere.
      const facet = FACET_OF[use] === 'beside' && RULE_OF[p] === 'ra.drive.owner' ? FACET_OF[use === 'sibling-create' ? 'create' : use === 'sibling-move' ? 'move' : 'node'] : FACET_OF[use];
      const cell = { rule: RULE_OF[p], facet, value: p, operation: OPERATION[use] };
      const key = JSON.stringify(cell);
      if (!seen.has(key)) cells.push(cell);
      seen.add(key);
    }
  return cells;
}

interface Tree {
  owner: RelayIdentity;
  drive: string;
  root: Made;
  shared: Made;
  sub: Made;
  dest: Made;
  file: Made;
  /** The first page of the file's version, and content for it the owner uploaded (the refused replaces name it). */
  page: string;
  spare: Chunk[];
  log: Made;
  logChunk: Chunk;
  /** The hash of the owner's record on the append file (its next record follows it). */
  ownerChain: string;
  sibling: Made;
  other: Made;
  /** Nodes the refused moves and removes aim at. */
  movable: Made;
  keep: Made;
  /** Targets of the principals allowed to write, each its own. */
  own: Map<Principal, { file: Made; movable: Made; removable: Made; outbound: Made; victim?: string }>;
  /** A share nobody but the owner and admins may end. */
  victim: string;
  beneficiary: { identity: string; encryption: Uint8Array };
  actors: Map<Principal, { actor: DriveActor; author: Author }>;
}

/** The tree, its shares and every principal's credentials. */
async function plant(s: DriveSession): Promise<Tree> {
  // The principals' identities and the link's password (argon2id) come while the tree is built.
  const people = Promise.all([...Array.from({ length: 10 }, () => s.identity()), s.identity('peer'), s.identity('peer'), s.identity('peer'), s.stranger()]);
  const salt = new Uint8Array(randomBytes(16));
  const password = import('../../../impl/noble-drive.ts').then(({ linkSecrets }) => linkSecrets('matrix password', salt));
  const { id: owner, root } = await s.owner();
  const drive = owner.identity;
  const [shared, sibling] = await Promise.all([s.folder(owner, root.keys, 'shared'), s.folder(owner, root.keys, 'sibling')]);
  const [sub, dest, log, other] = await Promise.all([
    s.folder(owner, shared.keys, 'sub'),
    s.folder(owner, shared.keys, 'dest'),
    s.file(owner, shared.keys, 'log', new Uint8Array(0), { mode: 'append' }),
    s.file(owner, sibling.keys, 'o.txt', text('beside the share')),
  ]);
  const writers = ['owner', 'write', 'admin'] as const;
  const [movable, keep, file, ...mine] = await Promise.all([
    s.folder(owner, sub.keys, 'movable'),
    s.folder(owner, sub.keys, 'keep'),
    s.file(owner, sub.keys, 'f.txt', text('the shared file')),
    ...writers.flatMap((p) => [s.file(owner, sub.keys, `f-${p}`, text(p)), s.folder(owner, sub.keys, `mv-${p}`), s.folder(owner, sub.keys, `rm-${p}`), s.folder(owner, sub.keys, `out-${p}`)]),
  ]);
  const [logChunk] = encryptContent(s.profile, drive, log.keys, text('a record'));
  const spare = encryptContent(s.profile, drive, file!.keys, text('what a refused replace would write'));
  const problem = await s.drive.upload(drive, s.actor(owner), [logChunk!, ...spare]);
  if (problem) throw new Error(problem);
  const first = record(s.profile, { drive, node: log.keys, author: owner, sequence: 1, previous: '', chunks: [logChunk!] });
  const r = await s.drive.commit(drive, s.actor(owner), { id: hex16(), records: [first] });
  if (!ok(r)) throw new Error(`the owner's append answered ${said(r)}`);
  const [read, write, admin, append, createRole, expired, unshared, removed, stranger, groupMember, group, remote, remoteStranger, beneficiary] = await people;
  const secrets = await password;
  const to = (id: RelayIdentity) => ({ identity: id.identity, encryption: id.encryption.publicKey });
  const link = randomBytes(16).toString('hex');
  const past = new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const made = await Promise.all([
    s.share(owner, { node: shared.keys, role: 'read', member: to(read!) }),
    s.share(owner, { node: shared.keys, role: 'write', member: to(write!) }),
    s.share(owner, { node: shared.keys, role: 'admin', member: to(admin!) }),
    s.share(owner, { node: shared.keys, role: 'append', member: to(append!) }),
    s.share(owner, { node: shared.keys, role: 'create', member: to(createRole!) }),
    s.share(owner, { node: shared.keys, role: 'read', member: to(expired!), expires: past }),
    s.share(owner, { node: shared.keys, role: 'read', member: to(unshared!) }),
    s.share(owner, { node: shared.keys, role: 'read', member: to(group!) }),
    s.share(owner, { node: shared.keys, role: 'read', member: to(remote!) }),
    s.share(owner, { node: shared.keys, role: 'read', link, password: { salt, verifierHash: secrets.verifierHash, key: secrets.key } }),
    s.share(owner, { node: sub.keys, role: 'read', member: to(beneficiary!) }),
    // Shares only the owner and the admin may end, one each.
    s.share(owner, { node: sub.keys, role: 'read', member: to(beneficiary!) }),
    s.share(owner, { node: sub.keys, role: 'read', member: to(beneficiary!) }),
  ]);
  const u = await s.unshare(owner, String(made[6]!.share.id));
  if (!ok(u)) throw new Error(`the unshare answered ${said(u)}`);
  const roster = (members: string[]) => rosterHeader(groupRoster(s.profile, group!.identity, group!, { members, admins: [group!.identity], epoch: 0 }));
  const guest: Author = { identity: `g${randomBytes(8).toString('hex')}.guest.invalid`, seed: new Uint8Array(randomBytes(32)) };
  const as = (id: RelayIdentity, extra: Obj = {}) => ({ actor: { ...s.actor(id), ...extra } as DriveActor, author: id as Author });
  const actors = new Map<Principal, { actor: DriveActor; author: Author }>([
    ['owner', as(owner)],
    ['read', as(read!)],
    ['write', as(write!)],
    ['admin', as(admin!)],
    ['append', as(append!)],
    ['create', as(createRole!)],
    ['expired', as(expired!)],
    ['unshared', as(unshared!)],
    ['group-member', as(groupMember!, { roster: roster([groupMember!.identity]) })],
    ['removed-member', as(removed!, { roster: roster([groupMember!.identity]) })],
    ['remote-member', as(remote!)],
    ['remote-stranger', as(remoteStranger!)],
    ['link', { actor: { link, verifier: secrets.verifier }, author: guest }],
    ['link-no-password', { actor: { link }, author: guest }],
    ['stranger', as(stranger!)],
    ['no-proof', { actor: { none: true }, author: stranger! }],
  ]);
  const victims: Partial<Record<Principal, string>> = { owner: String(made[11]!.share.id), admin: String(made[12]!.share.id) };
  const own = new Map<Principal, { file: Made; movable: Made; removable: Made; outbound: Made; victim?: string }>(
    writers.map((p, i) => [p, { file: mine[4 * i]!, movable: mine[4 * i + 1]!, removable: mine[4 * i + 2]!, outbound: mine[4 * i + 3]!, ...(victims[p] ? { victim: victims[p] } : {}) }]),
  );
  return {
    owner,
    drive,
    root,
    shared,
    sub,
    dest,
    file: file!,
    spare,
    page: pageHash(s.profile, pagesOf(s.profile, drive, file!.keys.node, file!.chunks).pages[0]!),
    log,
    logChunk: logChunk!,
    ownerChain: recordHash(s.profile, first),
    sibling,
    other,
    movable: movable!,
    keep: keep!,
    own,
    victim: String(made[10]!.share.id),
    beneficiary: to(beneficiary!),
    actors,
  };
}

/** What each refused write would have left behind, read back as the owner at the end. */
interface Traces {
  replaced: string[];
  created: string[];
  shared: string[];
  chunks: Chunk[];
}

/** One use by one principal: its answer (and, for a write, what it would leave). */
async function use(s: DriveSession, t: Tree, p: Principal, name: UseName, traces: Traces): Promise<Answer> {
  const { actor, author } = t.actors.get(p)!;
  const d = t.drive;
  const get = async (rest: string) => answerOf(await s.drive.get(d, rest, actor));
  const commit = async (body: Obj) => answerOf(await s.drive.commit(d, actor, body));
  const mine = t.own.get(p);
  const firstChunk = t.file.chunks[0]!.id;
  switch (name) {
    case 'root':
      return get('');
    case 'changes':
      return get('/changes?cursor=0');
    case 'node':
      return get(`/nodes/${t.file.keys.node}`);
    case 'children':
      return get(`/nodes/${t.sub.keys.node}/children`);
    case 'history':
      return get(`/nodes/${t.file.keys.node}/history`);
    case 'records':
      return get(`/nodes/${t.log.keys.node}/records`);
    case 'version':
      return get(`/nodes/${t.file.keys.node}/versions/${t.file.version}`);
    case 'page':
      return get(`/nodes/${t.file.keys.node}/versions/${t.file.version}/pages/${t.page}`);
    case 'chunk':
      return answerOf(await s.drive.chunk(d, actor, t.file.keys.node, t.file.version, firstChunk));
    case 'record-chunk':
      return answerOf(await s.drive.chunk(d, actor, t.log.keys.node, undefined, t.logChunk.id));
    case 'shares':
      return get('/shares');
    case 'node-shares':
      return get(`/nodes/${t.file.keys.node}/shares`);
    case 'events':
      return streamAnswer(s.drive, d, actor);
    case 'missing': {
      const [c] = encryptContent(s.profile, d, nodeKeys(undefined, true), text(`missing by ${p}`));
      return answerOf(await s.drive.missing(d, actor, [c!]));
    }
    case 'chunk-put': {
      const [c] = encryptContent(s.profile, d, nodeKeys(undefined, true), text(`put by ${p}`));
      if (expected(p, name) !== 'allowed') traces.chunks.push(c!);
      return answerOf(await s.drive.putChunk(d, actor, c!));
    }
    case 'create':
    case 'sibling-create': {
      const keys = nodeKeys();
      if (expected(p, name) !== 'allowed') traces.created.push(keys.node);
      const into = name === 'create' ? t.sub : t.sibling;
      return commit(create(s.profile, { drive: d, author, keys, kind: 'folder', at: { folder: into.keys, name: hex16() }, ownerEncryption: t.owner.encryption.publicKey }));
    }
    case 'replace': {
      const target = mine?.file ?? t.file;
      const chunks = mine ? encryptContent(s.profile, d, target.keys, text(`replaced by ${p}`)) : t.spare;
      const up = mine ? await s.drive.upload(d, s.actor(t.owner), chunks) : undefined;
      if (up) throw new Error(up);
      const body = replace(s.profile, { drive: d, author, keys: target.keys, parent: target.version, chunks });
      if (expected(p, name) !== 'allowed') traces.replaced.push(String((body.manifest as Obj).version));
      return commit(body);
    }
    case 'move': {
      const target = mine?.movable ?? t.movable;
      return commit(move(s.profile, { drive: d, author, keys: target.keys, kind: 'folder', parent: target.version, to: t.dest.keys, name: hex16() }));
    }
    case 'remove': {
      const target = mine?.removable ?? t.keep;
      return commit(remove(s.profile, { drive: d, author, node: target.keys.node, kind: 'folder', parent: target.version }));
    }
    case 'append': {
      const chain = p === 'owner' ? { sequence: 2, previous: t.ownerChain } : { sequence: 1, previous: '' };
      const r = record(s.profile, { drive: d, node: t.log.keys, author, ...chain, payload: text(`by ${p}`) });
      return commit({ id: hex16(), records: [r] });
    }
    case 'trim':
      // Before position 1: nothing is discarded, so an allowed trim leaves the records the end reads back.
      return commit({ id: hex16(), trim: { node: t.log.keys.node, before: 1, snapshot: { node: t.log.keys.node, version: t.log.version } } });
    case 'share': {
      const made = share(s.profile, { drive: d, issuer: author, node: t.sub.keys, role: 'read', member: t.beneficiary });
      if (expected(p, name) !== 'allowed') traces.shared.push(String((made.body.share as Obj).id));
      return commit(made.body);
    }
    case 'unshare':
      return commit({ id: hex16(), unshare: { share: mine?.victim ?? t.victim } });
    case 'sibling-move': {
      // Out of the shared folder into its sibling, where only the owner may create.
      const target = mine?.outbound ?? t.movable;
      return commit(move(s.profile, { drive: d, author, keys: target.keys, kind: 'folder', parent: target.version, to: t.sibling.keys, name: hex16() }));
    }
    case 'sibling-node':
      return get(`/nodes/${t.other.keys.node}`);
    case 'sibling-chunk':
      return answerOf(await s.drive.chunk(d, actor, t.other.keys.node, t.other.version, t.other.chunks[0]!.id));
    case 'parent-node':
      return get(`/nodes/${t.root.keys.node}`);
  }
}

/** As the owner: nothing a refused use tried is there. */
async function unchanged(s: DriveSession, t: Tree, traces: Traces, appenders: number): Promise<string[]> {
  const owner = s.actor(t.owner);
  const problems: string[] = [];
  const node = async (n: string) => s.drive.node(t.drive, owner, n);
  const head = await node(t.file.keys.node);
  if (!head.text().includes(t.file.version)) problems.push(`the shared file's head is no longer ${t.file.version} after only refused replaces: ${said(head)}`);
  for (const [m, what] of [
    [t.movable, 'moved'],
    [t.keep, 'removed'],
  ] as const) {
    const r = await node(m.keys.node);
    if (!r.text().includes(m.version) || bodyOf(r)?.removed === true) problems.push(`a folder only refused principals ${what} changed: ${said(r)}`);
  }
  for (const n of traces.created) {
    const r = await node(n);
    if (r.status !== 404) problems.push(`a refused create left node ${n}: ${said(r)}`);
  }
  const shares = await node(`${t.sub.keys.node}/shares`);
  if (!shares.text().includes(t.victim)) problems.push(`the share only refused principals tried to end is gone: ${said(shares)}`);
  const stray = traces.shared.find((x) => shares.text().includes(x));
  if (stray) problems.push(`a refused share ${stray} is listed on the folder: ${said(shares)}`);
  const recs = await node(`${t.log.keys.node}/records`);
  const count = ((bodyOf(recs)?.records as unknown[] | undefined) ?? []).length;
  if (count !== 1 + appenders) problems.push(`the append file holds ${count} records, expected ${1 + appenders} (the owner's and the allowed appends'): ${said(recs)}`);
  if (traces.chunks.length > 0) {
    const m = await s.drive.missing(t.drive, owner, traces.chunks);
    const listed = ((bodyOf(m)?.missing as Obj[] | undefined) ?? []).map((x) => x.id);
    const kept = traces.chunks.filter((c) => !listed.includes(c.id));
    if (ok(m) && kept.length > 0) problems.push(`chunks uploaded by refused principals are stored (the owner's missing list leaves out ${kept.map((c) => c.id.slice(0, 12)).join(', ')})`);
  }
  return problems;
}

/** The same tree and uses, judged where the document is silent and the project decides (ra.drive.roles). */
export function rolesProfile(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/roles-matrix',
    title:
      'a write share neither shares nor unshares; read-only principals upload no chunk; the append and create roles read no node, version, chunk, record or share list; each refused 403 and changing nothing',
    rules: ['ra.drive.roles'],
    context: ['ra.drive.members', 'ra.drive.share'],
    lane: 'drive-roles-profile',
    timeoutMs: 120_000,
    run: async (s, e) => {
      const tree = await plant(s);
      const traces: Traces = { replaced: [], created: [], shared: [], chunks: [] };
      const jobs = PRINCIPALS.flatMap((p) => ALL_USES.filter((u) => profileExpected(p, u) !== undefined).map((u) => ({ p, u })));
      const verdicts = await pool(jobs, 8, async ({ p, u }) => {
        const a = await use(s, tree, p, u, traces).catch((error: Error) => ({ status: 0, text: '', shown: `no answer (${error.message})` }));
        const problem = a.status === 0 ? a.shown : a.status === 403 ? undefined : `is refused 403 by the profile and answered ${a.shown}`;
        return problem ? `${p} ${u} (${OPERATION[u]}) ${problem}` : undefined;
      });
      for (const v of verdicts) if (v) e.fail(v);
      for (const problem of await unchanged(s, tree, traces, 0)) e.fail(problem);
    },
  });
}

export function rolesMatrix(t: RelayTarget): Check {
  const cells = claimed();
  return driveCheck(t, {
    id: 'drive/matrix/who',
    title: `every principal (${PRINCIPALS.join(', ')}) uses every drive operation on one tree: the allowed succeed, the refused are refused and change nothing, and nothing beside the shared folder is granted`,
    rules: ['ra.drive.owner', 'ra.drive.members', 'ra.drive.remote-members', 'ra.drive.group-members', 'ra.drive.link-auth'],
    context: ['ra.drive.roles', 'ra.drive.share', 'ra.drive.group-roster', 'ra.drive.link-kdf', 'ra.drive.record', 'ra.drive.manifest-shape'],
    cells,
    lane: 'drive-matrix',
    // Sixteen principals by every operation: on the clustered reference under CI's load it has taken
    // past a minute.
    timeoutMs: 120_000,
    run: async (s, e) => {
      const tree = await plant(s);
      const traces: Traces = { replaced: [], created: [], shared: [], chunks: [] };
      const secrets = [tree.shared, tree.sub, tree.file, tree.log, tree.sibling, tree.other].map((m) => m.keys.node);
      const jobs = PRINCIPALS.flatMap((p) => ALL_USES.filter((u) => expected(p, u) !== undefined).map((u) => ({ p, u })));
      const verdicts = await pool(jobs, 8, async ({ p, u }) => {
        const a = await use(s, tree, p, u, traces).catch((error: Error) => ({ status: 0, text: '', shown: `no answer (${error.message})` }));
        const problem = a.status === 0 ? a.shown : judge(expected(p, u)!, a, secrets);
        return problem ? `${p} ${u} (${OPERATION[u]}) ${problem}` : undefined;
      });
      for (const v of verdicts) if (v) e.fail(v);
      const appenders = PRINCIPALS.filter((p) => expected(p, 'append') === 'allowed').length;
      for (const problem of await unchanged(s, tree, traces, appenders)) e.fail(problem);
    },
  });
}
