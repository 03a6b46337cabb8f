// An owner's drive on a reference relay, opened and warmed, and files uploaded to it as the CLI
// uploads them (missing list, PUTs, commit), every request signed and serialized before its clock
// starts: what the disk rows of ./drive.ts and the Ceph rows of ./drive-s3.ts both measure.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { Authority } from '../harness/actors/authority/index.ts';
import { create, encryptContent, nodeKeys, type Chunk, type NodeKeys } from '../harness/actors/drive/objects.ts';
import { newRelayIdentity, signedRequestHeaders, type RelayIdentity } from '../harness/actors/relay/index.ts';
import type { ReferenceChild } from '../harness/run/spawn.ts';
import { encodeBase64url } from '../protocol/common/base64.ts';
import { defaultProfile as profile } from '../protocol/common/profile.ts';
import { runLoad, serialize } from './loadgen.ts';

type Obj = Record<string, unknown>;

export const FILES = Number(process.env.BENCH_DRIVE_FILES ?? 8);
/** MiB of plaintext per file in the upload rows. */
const FILE_MIB = Number(process.env.BENCH_DRIVE_FILE_MIB ?? 8);
export const UPLOAD_CONCURRENCY = Number(process.env.BENCH_DRIVE_UPLOAD_CONCURRENCY ?? 8);
/** An owner's drive on one relay, its root committed, every route's code run once (untimed). */
export interface DriveSession {
  url: string;
  owner: RelayIdentity;
  root: NodeKeys;
  signed: Signed;
  commitRequest: (body: Obj) => { text: string; raw: Buffer };
}

export async function openDrive(authority: Authority, relay: ReferenceChild, md5: boolean): Promise<DriveSession> {
  const host = new URL(relay.url).host;
  const owner = newRelayIdentity(`drive-${Date.now().toString(36)}-${host.replace(/\W/g, '')}.id.test`);
  await authority.publish({
    identity: owner.identity,
    seed: owner.seed,
    encryptionPublicKey: `x25519:${encodeBase64url(owner.encryption.publicKey)}`,
    relay: host,
    cacheControl: 'max-age=300',
  });
  const drive = owner.identity;
  const base = `/drive/${encodeURIComponent(drive)}`;
  const signed: Signed = (method, path, body, headers) =>
    serialize(host, { method, path, headers: { ...headers, ...signedRequestHeaders(profile, { identity: drive, seed: owner.seed, method, path, body }) }, body });
  const commitRequest = (body: Obj) => {
    const text = JSON.stringify(body);
    return { text, raw: signed('POST', `${base}/commit`, text, { 'content-type': 'application/json' }) };
  };
  const root = nodeKeys();
  const rootCommit = commitRequest(create(profile, { drive, author: owner, keys: root, kind: 'folder', at: {}, ownerEncryption: owner.encryption.publicKey }));
  await expectAll(relay.url, [rootCommit.raw], 1, 200, 'the root');
  const session = { url: relay.url, owner, root, signed, commitRequest };
  await upload(relay.url, prepareUpload(session, 1, 2, 64 * 1024 - 4, md5));
  const warmCommits = Array.from({ length: 200 }, (_, i) => commitRequest(folder(owner, root, `warm${i}`)).raw);
  await expectAll(relay.url, warmCommits, 8, 200, 'warm-up commits');
  return session;
}

export const mib = (r: number) => r / 2 ** 20;

/** Chunk count per file for a chunk size, so every row moves about FILES x FILE_MIB MiB. */
export const chunksPerFile = (kib: number) => Math.max(1, Math.round((FILE_MIB * 1024) / kib));

export type Signed = (method: string, path: string, body: string | Uint8Array, headers: Record<string, string>) => Buffer;

interface PreparedFile {
  chunks: Chunk[];
  /** POST chunks/missing, signed. */
  missing: { url: string; headers: Record<string, string>; body: string };
  /** The PUTs the missing list should name, by path (to the relay; none when uploads go to object storage). */
  puts: Map<string, Buffer>;
  /** Each chunk's bytes, by id: for an upload URL the relay names only once asked. */
  byId: Map<string, Uint8Array>;
  commit: Buffer;
}

/**
 * Files of `chunks` encrypted chunks of `plain` plaintext bytes each, with every request of their
 * upload signed. With `md5` the missing list names each chunk's MD5, so a relay on object storage
 * answers presigned PUTs to the store for them (their requests are serialized once the URLs are
 * known, inside the clock: a copy of the bytes, small next to sending them).
 */
export function prepareUpload(session: DriveSession, files: number, chunks: number, plain: number, md5: boolean): PreparedFile[] {
  const { owner, root, signed, commitRequest } = session;
  const drive = owner.identity;
  const base = `/drive/${encodeURIComponent(drive)}`;
  return Array.from({ length: files }, (_, f) => {
    const keys = nodeKeys(undefined, true);
    const plaintext = new Uint8Array(Buffer.alloc(chunks * plain, f + 1));
    const list = encryptContent(profile, drive, keys, plaintext, 1, plain);
    const refs = list.map((c) => ({ id: c.id, size: c.size, ...(md5 ? { md5: createHash('md5').update(c.bytes).digest('base64') } : {}) }));
    const body = JSON.stringify({ chunks: refs });
    const path = `${base}/chunks/missing`;
    return {
      chunks: list,
      byId: new Map(list.map((c) => [c.id, c.bytes])),
      missing: {
        url: path,
        headers: { 'content-type': 'application/json', ...signedRequestHeaders(profile, { identity: drive, seed: owner.seed, method: 'POST', path, body }) },
        body,
      },
      puts: md5 ? new Map() : new Map(list.map((c) => [`${base}/chunks/${c.id}`, signed('PUT', `${base}/chunks/${c.id}`, c.bytes, { 'content-type': 'application/octet-stream' })])),
      commit: commitRequest(create(profile, { drive, author: owner, keys, kind: 'file', at: { folder: root, name: `file-${keys.node}` }, ownerEncryption: owner.encryption.publicKey, chunks: list }))
        .raw,
    };
  });
}

/**
 * Missing lists (each must name every chunk: at the prepared PUT's path on the relay, or at an
 * upload URL elsewhere, object storage), the PUTs, the commits: seconds.
 */
export async function upload(url: string, files: PreparedFile[], phases: { missing?: number; put?: number; commit?: number } = {}): Promise<number> {
  const agent = new Agent({ connections: files.length });
  const origin = new URL(url).origin;
  const t0 = performance.now();
  try {
    const puts: Buffer[] = [];
    const elsewhere = new Map<string, Buffer[]>();
    await Promise.all(
      files.map(async (f) => {
        const res = await request(`${url}${f.missing.url}`, { method: 'POST', headers: f.missing.headers, body: f.missing.body, dispatcher: agent });
        const answer = (await res.body.json()) as { missing?: Array<{ id?: string; upload?: { url?: string; headers?: Record<string, string> } }> };
        if (res.statusCode !== 200 || answer.missing?.length !== f.chunks.length) throw new Error(`chunks/missing answered ${res.statusCode}: ${JSON.stringify(answer).slice(0, 300)}`);
        for (const m of answer.missing) {
          const to = new URL(String(m.upload?.url), url);
          const bytes = f.byId.get(String(m.id));
          if (to.origin !== origin && bytes) {
            const list = elsewhere.get(to.origin) ?? [];
            list.push(serialize(to.host, { method: 'PUT', path: `${to.pathname}${to.search}`, headers: m.upload?.headers ?? {}, body: bytes }));
            elsewhere.set(to.origin, list);
            continue;
          }
          const put = f.puts.get(to.pathname);
          if (!put) throw new Error(`chunks/missing named ${String(m.upload?.url)}, no chunk of the file`);
          puts.push(put);
        }
      }),
    );
    const t1 = performance.now();
    phases.missing = (t1 - t0) / 1000;
    if (puts.length) await expectAll(url, puts, UPLOAD_CONCURRENCY, 201, 'chunk PUTs');
    for (const [to, list] of elsewhere) await expectAll(to, list, UPLOAD_CONCURRENCY, 200, `chunk PUTs to ${to}`);
    const t2 = performance.now();
    await expectAll(
      url,
      files.map((f) => f.commit),
      files.length,
      200,
      'file commits',
    );
    const t3 = performance.now();
    phases.put = (t2 - t1) / 1000;
    phases.commit = (t3 - t2) / 1000;
    return (t3 - t0) / 1000;
  } finally {
    await agent.close();
  }
}

export function folder(owner: RelayIdentity, root: NodeKeys, name: string): Obj {
  return create(profile, { drive: owner.identity, author: owner, keys: nodeKeys(), kind: 'folder', at: { folder: root, name }, ownerEncryption: owner.encryption.publicKey });
}

export async function expectAll(url: string, requests: Buffer[], connections: number, status: number, what: string): Promise<{ seconds: number }> {
  const load = await runLoad(url, requests, connections);
  const ok = load.statuses.get(status) ?? 0;
  if (ok !== requests.length) throw new Error(`${what}: ${requests.length - ok} of ${requests.length} not ${status} (${JSON.stringify([...load.statuses])}): ${load.firstFailure}`);
  return load;
}
