// A drive writer's objects, built and encrypted with the harness's own @noble implementation
// (harness/impl/noble-drive.ts, from spec/drive.yaml): node keys, chunks, pages, signed manifests
// (create, replace, move, remove), append records and shares (member or link). The relay sees
// only ciphertext; a reader opens what it reads with the keys the seals carry. Signatures are
// deterministic, so they are made on node:crypto (relay/envelope.ts says why).
import { randomBytes } from 'node:crypto';
import { x25519 } from '../../impl/x25519.ts';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { limits } from '../../../schemas/ts/limits.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { signEd25519 as sign } from '../../../protocol/common/ed25519.ts';
import { context, driveString, hashOf, linkPrivateKey, nameHash, openChunk, openSeal, recordContext, sealChunk, sealDomainOf, sealTo, sha256Hex } from '../../impl/noble-drive.ts';

type Obj = Record<string, unknown>;
export const hex16 = (): string => randomBytes(16).toString('hex');
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const NOW = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A node's X25519 key pair and (for a file) its content key. */
export interface NodeKeys {
  node: string;
  private: Uint8Array;
  public: Uint8Array;
  content?: Uint8Array;
}

export function nodeKeys(node = hex16(), file = false): NodeKeys {
  const priv = x25519.utils.randomSecretKey();
  return { node, private: priv, public: x25519.getPublicKey(priv), ...(file ? { content: new Uint8Array(randomBytes(32)) } : {}) };
}

/** Who signs: an identity (its name and seed). */
export interface Author {
  identity: string;
  seed: Uint8Array;
}

export interface Chunk {
  id: string;
  size: number;
  bytes: Uint8Array;
}

/** Plaintext split into encrypted chunks of at most `size` bytes under the node's content key. */
export function encryptContent(profile: Profile, drive: string, keys: NodeKeys, plaintext: Uint8Array, generation = 1, size = 64 * 1024): Chunk[] {
  const out: Chunk[] = [];
  for (let at = 0; at < plaintext.length || at === 0; at += size) {
    const bytes = sealChunk(profile, keys.content!, plaintext.subarray(at, at + size), context(drive, keys.node, 'content', generation), new Uint8Array(randomBytes(24)));
    out.push({ id: sha256Hex(bytes), size: bytes.length, bytes });
    if (plaintext.length === 0) break;
  }
  return out;
}

export function decryptChunk(profile: Profile, drive: string, keys: NodeKeys, bytes: Uint8Array, generation = 1): Uint8Array | undefined {
  return openChunk(profile, keys.content!, bytes, context(drive, keys.node, 'content', generation));
}

/** The pages of a chunk list: 1024 references each, the last one partial. */
export function pagesOf(profile: Profile, drive: string, node: string, chunks: readonly Pick<Chunk, 'id' | 'size'>[]): { pages: Obj[]; hashes: string[] } {
  const pages: Obj[] = [];
  for (let i = 0; i < chunks.length; i += limits.drive_page_max_refs)
    pages.push({ format: 1, drive, node, chunks: chunks.slice(i, i + limits.drive_page_max_refs).map((c) => ({ id: c.id, size: c.size })) });
  return { pages, hashes: pages.map((p) => hashOf(profile, 'page', p)) };
}

const signed = (profile: Profile, which: 'manifest' | 'record' | 'share' | 'group-roster', o: Obj, seed: Uint8Array): Obj => ({ ...o, signature: b64(sign(seed, driveString(profile, which, o))) });

/** `o` signed again by `seed` after a change (its old signature dropped): a check's hand-made variant. */
export function resigned(profile: Profile, which: 'manifest' | 'record' | 'share' | 'group-roster', o: Obj, seed: Uint8Array): Obj {
  const { signature: _old, ...rest } = o;
  return signed(profile, which, rest, seed);
}

/** A chunk-list page's address (ra.drive.manifest-pages). */
export const pageHash = (profile: Profile, page: Obj): string => hashOf(profile, 'page', page);

interface Placement {
  /** The containing folder's keys (absent for the root). */
  folder?: NodeKeys;
  name?: string;
}

function placed(profile: Profile, drive: string, node: string, generation: number, at: Placement, keys: NodeKeys, ownerEncryption: Uint8Array): Obj {
  if (!at.folder) return { folder: '', name_hash: '', node_key: sealTo(sealDomainOf(profile, 'key'), ownerEncryption, keys.private, context(drive, node, 'node-key', generation)) };
  return {
    folder: at.folder.node,
    name: sealTo(sealDomainOf(profile, 'name'), at.folder.public, utf8ToBytes(at.name!.normalize('NFC')), context(drive, node, 'name', generation)),
    name_hash: nameHash(profile, at.folder.private, at.name!)!,
    node_key: sealTo(sealDomainOf(profile, 'key'), at.folder.public, keys.private, context(drive, node, 'node-key', generation)),
  };
}

function manifest(profile: Profile, author: Author, fields: Obj): Obj {
  const m: Obj = { format: 1, version: hex16(), parent: '', author: author.identity, generation: 1, mode: '', folder: '', name_hash: '', count: 0, pages: [], ...fields };
  return signed(profile, 'manifest', m, author.seed);
}

/** A `create` commit body: a folder (no content) or a file with its chunks' pages. */
export function create(
  profile: Profile,
  o: { drive: string; author: Author; keys: NodeKeys; kind: 'file' | 'folder'; at: Placement; ownerEncryption: Uint8Array; chunks?: readonly Chunk[]; mode?: 'replace' | 'append' },
): Obj {
  const { pages, hashes } = pagesOf(profile, o.drive, o.keys.node, o.chunks ?? []);
  const content =
    o.kind === 'file'
      ? {
          mode: o.mode ?? 'replace',
          content_key: sealTo(sealDomainOf(profile, 'key'), o.keys.public, o.keys.content!, context(o.drive, o.keys.node, 'content-key', 1)),
          count: o.chunks?.length ?? 0,
          pages: hashes,
        }
      : {};
  const m = manifest(profile, o.author, {
    drive: o.drive,
    node: o.keys.node,
    operation: 'create',
    kind: o.kind,
    ...placed(profile, o.drive, o.keys.node, 1, o.at, o.keys, o.ownerEncryption),
    ...content,
  });
  return { id: hex16(), manifest: m, pages };
}

/** A `replace` of a file's content on `parent` (the base version). */
export function replace(profile: Profile, o: { drive: string; author: Author; keys: NodeKeys; parent: string; chunks: readonly Chunk[] }): Obj {
  const { pages, hashes } = pagesOf(profile, o.drive, o.keys.node, o.chunks);
  const m = manifest(profile, o.author, { drive: o.drive, node: o.keys.node, parent: o.parent, operation: 'replace', kind: 'file', mode: 'replace', count: o.chunks.length, pages: hashes });
  return { id: hex16(), manifest: m, pages };
}

export function move(profile: Profile, o: { drive: string; author: Author; keys: NodeKeys; kind: 'file' | 'folder'; parent: string; to: NodeKeys; name: string; mode?: string }): Obj {
  const at = placed(profile, o.drive, o.keys.node, 1, { folder: o.to, name: o.name }, o.keys, new Uint8Array(32));
  const m = manifest(profile, o.author, { drive: o.drive, node: o.keys.node, parent: o.parent, operation: 'move', kind: o.kind, mode: o.kind === 'file' ? (o.mode ?? 'replace') : '', ...at });
  return { id: hex16(), manifest: m, pages: [] };
}

/** A folder's `rotate` on `parent`: its node key sealed anew to `to` (its folder's public key, or the owner's encryption key for the root). */
export function rotate(profile: Profile, o: { drive: string; author: Author; keys: NodeKeys; parent: string; to: Uint8Array }): Obj {
  const nodeKey = sealTo(sealDomainOf(profile, 'key'), o.to, o.keys.private, context(o.drive, o.keys.node, 'node-key', 1));
  const m = manifest(profile, o.author, { drive: o.drive, node: o.keys.node, parent: o.parent, operation: 'rotate', kind: 'folder', node_key: nodeKey });
  return { id: hex16(), manifest: m, pages: [] };
}

export function remove(profile: Profile, o: { drive: string; author: Author; node: string; kind: 'file' | 'folder'; parent: string; mode?: string }): Obj {
  const m = manifest(profile, o.author, { drive: o.drive, node: o.node, parent: o.parent, operation: 'remove', kind: o.kind, mode: o.kind === 'file' ? (o.mode ?? 'replace') : '' });
  return { id: hex16(), manifest: m, pages: [] };
}

/** An author's next append record on a node (chunks, or a sealed payload to the node). */
export function record(profile: Profile, o: { drive: string; node: NodeKeys; author: Author; sequence: number; previous: string; chunks?: readonly Chunk[]; payload?: Uint8Array }): Obj {
  const r: Obj = {
    format: 1,
    drive: o.drive,
    node: o.node.node,
    author: o.author.identity,
    generation: 1,
    sequence: o.sequence,
    previous: o.previous,
    chunks: (o.chunks ?? []).map((c) => ({ id: c.id, size: c.size })),
  };
  if (o.payload) r.sealed = sealTo(sealDomainOf(profile, 'record'), o.node.public, o.payload, recordContext(r));
  return signed(profile, 'record', r, o.author.seed);
}

export const recordHash = (profile: Profile, r: Obj): string => hashOf(profile, 'record', r);

export interface ShareInput {
  drive: string;
  issuer: Author;
  node: NodeKeys;
  role: 'read' | 'write' | 'admin' | 'append' | 'create';
  /** A member (its encryption key receives the node key), or a link. */
  member?: { identity: string; encryption: Uint8Array };
  link?: string;
  caps?: { bytes?: number; files?: number; records?: number; downloads?: number; per_hour?: number };
  password?: { salt: Uint8Array; verifierHash: string; key: Uint8Array };
  pow?: number;
  expires?: string;
}

/** A signed share; the node key is sealed to the member (or, for a link, to a key the link carries). */
export function share(profile: Profile, o: ShareInput): { body: Obj; linkKey?: Uint8Array } {
  const id = hex16();
  const bearing = o.role === 'read' || o.role === 'write' || o.role === 'admin';
  // A link's string carries `linkSecret`; with a password, the key it seals to needs both (ra.drive.link-kdf).
  const linkSecret = o.link ? x25519.utils.randomSecretKey() : undefined;
  const to = o.member?.encryption ?? (linkSecret ? x25519.getPublicKey(linkPrivateKey(profile, linkSecret, o.password?.key)) : undefined);
  const s: Obj = {
    format: 1,
    drive: o.drive,
    id,
    node: o.node.node,
    ...(o.member ? { member: o.member.identity } : { link: o.link }),
    role: o.role,
    generation: 1,
    ...(bearing && to ? { node_key: sealTo(sealDomainOf(profile, 'key'), to, o.node.private, context(o.drive, o.node.node, 'node-key', 1)) } : {}),
    node_public: b64(o.node.public),
    ...(o.expires ? { expires: o.expires } : {}),
    caps: o.caps ?? {},
    ...(o.password ? { kdf: 'argon2id-m65536-t3-p1', salt: b64(o.password.salt), verifier_hash: o.password.verifierHash } : {}),
    ...(o.pow ? { pow: o.pow } : {}),
    issuer: o.issuer.identity,
    issued: NOW(),
  };
  return { body: { id: hex16(), share: signed(profile, 'share', s, o.issuer.seed) }, ...(linkSecret ? { linkKey: linkSecret } : {}) };
}

/** The node private key a share seals to its member (or link key); undefined when it does not open. */
export function openShareKey(profile: Profile, s: Obj, recipientPrivate: Uint8Array): Uint8Array | undefined {
  if (!s.node_key) return undefined;
  return openSeal(sealDomainOf(profile, 'key'), recipientPrivate, s.node_key as Obj, context(String(s.drive), String(s.node), 'node-key', Number(s.generation)));
}

/** A file's content key, opened from its manifest with the node's private key. */
export function openContentKey(profile: Profile, m: Obj, nodePrivate: Uint8Array): Uint8Array | undefined {
  return openSeal(sealDomainOf(profile, 'key'), nodePrivate, m.content_key as Obj, context(String(m.drive), String(m.node), 'content-key', Number(m.generation)));
}

/**
 * A group's roster signed by `signer` (the group itself, for the roster a member presents):
 * `group` and `owner` name the group; `fields` adds members, admins and epoch (ra.drive.group-roster).
 */
export function groupRoster(profile: Profile, group: string, signer: Author, fields: { members: string[]; admins?: string[]; epoch?: number }): Obj {
  return signed(profile, 'group-roster', { group, owner: group, ...fields, updated_at: NOW() }, signer.seed);
}

/** A roster as the X-Svc-Group-Roster header carries it: its JSON, base64url. */
export const rosterHeader = (roster: Obj): string => Buffer.from(JSON.stringify(roster)).toString('base64url');
