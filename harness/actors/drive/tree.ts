// A drive seen as paths, derived from what the drive holds and one key: the owner opens the root's
// node key with its encryption key, a member (or link holder) opens a share's sealed node key with
// its own (or the link's) key, and every folder's key opens its children's names and node keys.
// Nothing is cached between calls: a CLI run starts from the drive each time.
import { x25519 } from '../../impl/x25519.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { context, openSeal, sealDomainOf } from '../../impl/noble-drive.ts';
import type { HttpResponse } from '../http.ts';
import type { DriveActor, DriveClient } from './client.ts';
import { create, decryptChunk, encryptContent, nodeKeys, openContentKey, openShareKey, replace, type Author, type Chunk, type NodeKeys } from './objects.ts';
import { readNodeView } from './view.ts';

type Obj = Record<string, unknown>;
const CHUNK = 1024 * 1024;

/** The relay refused a request (its answer is kept), or the drive does not hold what was asked. */
export class DriveRefused extends Error {
  constructor(
    message: string,
    readonly answer?: HttpResponse,
  ) {
    super(answer ? `${message}: the relay answered ${answer.status} ${answer.text().slice(0, 300)}` : message);
  }
}

/** A node the caller opened: its keys, its head (the relay's node answer) and its name when known. */
export interface Opened {
  node: string;
  kind: 'file' | 'folder';
  keys: NodeKeys;
  head: { version: string; manifest: Obj };
  name: string;
}

const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const bodyOf = (r: HttpResponse): Obj => r.json() as Obj;
const keysOf = (node: string, priv: Uint8Array): NodeKeys => ({ node, private: priv, public: x25519.getPublicKey(priv) });

export class DriveTree {
  constructor(
    readonly client: DriveClient,
    readonly drive: string,
    readonly actor: DriveActor,
  ) {}

  get profile() {
    return this.client.profile;
  }

  async #get(what: string, rest: string, max?: number): Promise<HttpResponse> {
    const r = await this.client.get(this.drive, rest, this.actor, max);
    if (!ok(r)) throw new DriveRefused(what, r);
    return r;
  }

  async head(node: string): Promise<{ version: string; manifest: Obj; kind: 'file' | 'folder' }> {
    const head = await this.#headOf(node, bodyOf(await this.#get(`reading node ${node}`, `/nodes/${node}`)));
    return { ...head, kind: head.manifest.kind === 'file' ? 'file' : 'folder' };
  }

  /** The head a node view names, its manifest read from its version when the view does not carry it. */
  async #headOf(node: string, raw: unknown): Promise<{ version: string; manifest: Obj }> {
    const view = readNodeView(raw);
    if (!view || view.node !== node) throw new DriveRefused(`the answer for node ${node} names another node or no head: ${JSON.stringify(raw).slice(0, 200)}`);
    const manifest = view.manifest ?? bodyOf(await this.#get(`version ${view.version} of ${node}`, `/nodes/${node}/versions/${view.version}`));
    return { version: view.version, manifest };
  }

  /**
   * The newest manifest of `node` carrying `field`: a replace carries no name, node key or content
   * key, so those come from the create, move or rotate before it (the history, newest first).
   */
  async #latestWith(node: string, head: { version: string; manifest: Obj }, field: 'name' | 'node_key' | 'content_key'): Promise<Obj> {
    if (head.manifest[field] !== undefined) return head.manifest;
    const versions = (bodyOf(await this.#get(`the history of ${node}`, `/nodes/${node}/history`)).versions as Obj[]) ?? [];
    for (const v of versions) {
      if (v.version === head.version || v.operation === 'replace') continue;
      const m = bodyOf(await this.#get(`version ${String(v.version)} of ${node}`, `/nodes/${node}/versions/${String(v.version)}`));
      if (m[field] !== undefined) return m;
    }
    throw new DriveRefused(`node ${node} has no version carrying its ${field}`);
  }

  /** The owner's root (undefined when the drive has none yet), opened with the owner's encryption key. */
  async ownerRoot(encryptionPrivate: Uint8Array): Promise<Opened | undefined> {
    const root = bodyOf(await this.#get('reading the drive', '')).root;
    if (typeof root !== 'string' || root === '') return undefined;
    const head = await this.head(root);
    // A manifest seals its node key under the same context a share does (drive, node, node-key, generation).
    const priv = openShareKey(this.profile, await this.#latestWith(root, head, 'node_key'), encryptionPrivate);
    if (!priv) throw new DriveRefused("the root's node key does not open with this key file's encryption key");
    return { node: root, kind: 'folder', keys: keysOf(root, priv), head, name: '' };
  }

  /** Creates the owner's root folder. */
  async createRoot(author: Author, ownerEncryption: Uint8Array): Promise<Opened> {
    const keys = nodeKeys();
    const body = create(this.profile, { drive: this.drive, author, keys, kind: 'folder', at: {}, ownerEncryption });
    await this.commit('creating the root', body);
    return { node: keys.node, kind: 'folder', keys, head: { version: String((body.manifest as Obj).version), manifest: body.manifest as Obj }, name: '' };
  }

  /** The shares this caller holds (a member: its own; a link holder: the link's). */
  async shares(): Promise<Obj[]> {
    return (bodyOf(await this.#get('listing shares', '/shares')).shares as Obj[]) ?? [];
  }

  /** A share's node, opened with the key its node key is sealed to. */
  async fromShare(s: Obj, recipientPrivate: Uint8Array): Promise<Opened> {
    const priv = openShareKey(this.profile, s, recipientPrivate);
    if (!priv) throw new DriveRefused(`share ${String(s.id)} carries no node key that opens with this key`);
    const node = String(s.node);
    const head = await this.head(node);
    return { node, kind: head.kind, keys: keysOf(node, priv), head, name: '' };
  }

  /** A folder's live children, their names and node keys opened with the folder's key. */
  async children(folder: Opened): Promise<Opened[]> {
    const list = await this.#listing(folder);
    const out: Opened[] = [];
    for (const c of list) {
      const node = readNodeView(c)?.node ?? '';
      const head = await this.#headOf(node, c);
      const named = await this.#latestWith(node, head, 'name');
      const name = openSeal(sealDomainOf(this.profile, 'name'), folder.keys.private, named.name as Obj, context(this.drive, node, 'name', Number(named.generation)));
      const priv = openShareKey(this.profile, await this.#latestWith(node, head, 'node_key'), folder.keys.private);
      if (!name || !priv) throw new DriveRefused(`child ${node} of ${folder.name || folder.node} does not open with the folder's key`);
      out.push({ node, kind: head.manifest.kind === 'file' ? 'file' : 'folder', keys: keysOf(node, priv), head, name: new TextDecoder().decode(name) });
    }
    return out;
  }

  /** Every page of a folder's listing: a non-empty string `cursor` asks for the next (the deployed client's loop). */
  async #listing(folder: Opened): Promise<Obj[]> {
    const out: Obj[] = [];
    for (let cursor = '', pages = 0; pages < 1000; pages++) {
      const b = bodyOf(await this.#get(`listing ${folder.name || 'the folder'}`, `/nodes/${folder.node}/children${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`));
      out.push(...((b.children as Obj[] | undefined) ?? []));
      if (typeof b.cursor !== 'string' || b.cursor === '' || b.cursor === cursor) return out;
      cursor = b.cursor;
    }
    return out;
  }

  /** Walks `path` (slash-separated names) down from `start`; the nodes on the way, the last one missing when absent. */
  async walk(start: Opened, path: string): Promise<{ found: Opened[]; missing: string[] }> {
    const names = path.split('/').filter((n) => n !== '' && n !== '.');
    const found = [start];
    for (let i = 0; i < names.length; i++) {
      const at = found[found.length - 1]!;
      const next = at.kind === 'folder' ? (await this.children(at)).find((c) => c.name === names[i]!.normalize('NFC')) : undefined;
      if (!next) return { found, missing: names.slice(i) };
      found.push(next);
    }
    return { found, missing: [] };
  }

  async resolve(start: Opened, path: string): Promise<Opened> {
    const { found, missing } = await this.walk(start, path);
    if (missing.length > 0) throw new DriveRefused(`${path}: no ${missing[0]} in ${found.map((f) => f.name).join('/') || '/'}`);
    return found[found.length - 1]!;
  }

  /** A file's content: every page of its head version, every chunk opened with its content key. */
  async read(file: Opened): Promise<Uint8Array> {
    if (file.kind !== 'file') throw new DriveRefused(`${file.name || file.node} is a folder`);
    const content = openContentKey(this.profile, await this.#latestWith(file.node, file.head, 'content_key'), file.keys.private);
    if (!content) throw new DriveRefused(`the content key of ${file.name || file.node} does not open with its node key`);
    const keys = { ...file.keys, content };
    const parts: Uint8Array[] = [];
    const v = file.head.version;
    for (const page of (file.head.manifest.pages as string[]) ?? []) {
      const refs = (bodyOf(await this.#get(`page ${page}`, `/nodes/${file.node}/versions/${v}/pages/${page}`)).chunks as Obj[]) ?? [];
      for (const ref of refs) {
        const c = await this.client.chunk(this.drive, this.actor, file.node, v, String(ref.id));
        if (!ok(c)) throw new DriveRefused(`chunk ${String(ref.id)}`, c);
        const plain = decryptChunk(this.profile, this.drive, keys, new Uint8Array(c.body), Number(file.head.manifest.generation));
        if (!plain) throw new DriveRefused(`chunk ${String(ref.id)} does not open with the file's content key (its bytes changed)`);
        parts.push(plain);
      }
    }
    return Buffer.concat(parts);
  }

  /** Ends a share (DriveClient.unshare: either unshare body). */
  async unshare(share: string): Promise<void> {
    const r = await this.client.unshare(this.drive, this.actor, share);
    if (!ok(r)) throw new DriveRefused(`ending share ${share}`, r);
  }

  async commit(what: string, body: Obj): Promise<Obj> {
    const r = await this.client.commit(this.drive, this.actor, body);
    if (!ok(r)) throw new DriveRefused(what, r);
    return bodyOf(r);
  }

  /** Uploads what the drive lacks, a missing list at a time. */
  async upload(chunks: readonly Chunk[]): Promise<void> {
    for (let i = 0; i < chunks.length; i += limits.drive_missing_max_chunks) {
      const problem = await this.client.upload(this.drive, this.actor, chunks.slice(i, i + limits.drive_missing_max_chunks));
      if (problem) throw new DriveRefused(`uploading: ${problem}`);
    }
  }

  async mkdir(author: Author, into: Opened, name: string): Promise<Opened> {
    const keys = nodeKeys();
    // Only the root's node key is sealed to the owner's encryption key; a child's goes to its folder.
    const body = create(this.profile, { drive: this.drive, author, keys, kind: 'folder', at: { folder: into.keys, name }, ownerEncryption: new Uint8Array(32) });
    await this.commit(`creating folder ${name}`, body);
    return { node: keys.node, kind: 'folder', keys, head: { version: String((body.manifest as Obj).version), manifest: body.manifest as Obj }, name };
  }

  /** Writes `bytes` as `name` in `into`: a new file, or a replace on the existing file's head version. */
  async put(author: Author, into: Opened, name: string, bytes: Uint8Array, existing?: Opened): Promise<{ node: string; version: string; replaced: boolean }> {
    if (existing) {
      if (existing.kind !== 'file') throw new DriveRefused(`${name} is a folder`);
      const content = openContentKey(this.profile, await this.#latestWith(existing.node, existing.head, 'content_key'), existing.keys.private);
      if (!content) throw new DriveRefused(`the content key of ${name} does not open with its node key`);
      const keys = { ...existing.keys, content };
      const chunks = encryptContent(this.profile, this.drive, keys, bytes, Number(existing.head.manifest.generation), CHUNK);
      await this.upload(chunks);
      const body = replace(this.profile, { drive: this.drive, author, keys, parent: existing.head.version, chunks });
      await this.commit(`replacing ${name}`, body);
      return { node: keys.node, version: String((body.manifest as Obj).version), replaced: true };
    }
    const keys = nodeKeys(undefined, true);
    const chunks = encryptContent(this.profile, this.drive, keys, bytes, 1, CHUNK);
    await this.upload(chunks);
    const body = create(this.profile, { drive: this.drive, author, keys, kind: 'file', at: { folder: into.keys, name }, ownerEncryption: new Uint8Array(32), chunks });
    await this.commit(`creating ${name}`, body);
    return { node: keys.node, version: String((body.manifest as Obj).version), replaced: false };
  }
}
