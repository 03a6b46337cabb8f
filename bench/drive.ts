// The reference drive (document 3, Drive API), started as a user starts the relay, against floors
// measured in the same run. Target (issue 16): ratio 0.5 or better for the 1 MiB upload and for
// commits.
//
// a. Upload: bytes/s of encrypted chunks (1 MiB, as the CLI writes; and 64 KiB, shown without a
//    target) sent through the missing list (one POST per file, its answers checked against the
//    prepared PUTs), PUT 8 at a time and committed (one create per file), against the same chunk
//    bytes SHA-256-hashed and written to files with fsync in the same filesystem (the data
//    dir's), in this process: the disk's floor under any drive that hashes and keeps what it
//    acknowledges.
// b. Commits: small create commits (a folder each, in the root) per second, concurrent over
//    keep-alive sockets, against bare h3 checking one Ed25519 signature per request
//    (./peers/h3-verify.ts) on bodies of the same size.
//
// Every request is signed (a signed request: timestamp and nonce) and serialized before its clock
// starts (./loadgen.ts); the relay's DNS and document answers are cached, as in ./relay.ts.
import { createHash, generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { open as openFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { startAuthority, type Authority } from '../harness/actors/authority/index.ts';
import { create, encryptContent, nodeKeys, type Chunk, type NodeKeys } from '../harness/actors/drive/objects.ts';
import { newRelayIdentity, signedRequestHeaders, type RelayIdentity } from '../harness/actors/relay/index.ts';
import type { ReferenceChild } from '../harness/run/spawn.ts';
import { encodeBase64url } from '../protocol/common/base64.ts';
import { defaultProfile as profile } from '../protocol/common/profile.ts';
import { runLoad, serialize } from './loadgen.ts';
import { startPeer } from './relay.ts';
import type { BenchRow } from './verifier.ts';
import { cpuWatch, describeCpu, verdict } from './cpu.ts';
import { cephUploadRows } from './drive-s3.ts';
import { spawnBenchRelay } from './engines.ts';

type Obj = Record<string, unknown>;

export const FILES = Number(process.env.BENCH_DRIVE_FILES ?? 8);
/** MiB of plaintext per file in the upload rows. */
const FILE_MIB = Number(process.env.BENCH_DRIVE_FILE_MIB ?? 8);
export const UPLOAD_CONCURRENCY = Number(process.env.BENCH_DRIVE_UPLOAD_CONCURRENCY ?? 8);
const COMMITS = Number(process.env.BENCH_DRIVE_COMMITS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/**
 * Chunk sizes of the upload rows, as padded plaintext (the 4-byte length prefix and the bytes fill
 * whole buckets): 1 MiB, what `svc-conformance drive put` writes (the target's row), and 64 KiB,
 * where the per-request work (a signed request, its Ed25519 verify, the HTTP exchange) bounds the
 * rate rather than the disk (shown, no target).
 */
const SIZES = [
  { kib: 1024, target: 0.5 },
  { kib: 64, target: undefined },
] as const;

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

export async function benchDrive(): Promise<BenchRow[]> {
  const authority = await startAuthority({ profile, ttl: 300 });
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-drive-'));
  let relay: ReferenceChild | undefined;
  try {
    relay = await spawnBenchRelay(authority, ['--data-dir', join(dir, 'relay'), '--drive-quota', String(2 ** 40)]);
    const session = await openDrive(authority, relay, false);

    // a. Upload through the missing list, against hashing and fsyncing the same bytes.
    const uploadRows: BenchRow[] = [];
    let mibFloor = 0;
    for (const size of SIZES) {
      const plain = size.kib * 1024 - 4;
      const files = prepareUpload(session, FILES, chunksPerFile(size.kib), plain, false);
      const bytes = files.reduce((sum, f) => sum + f.chunks.reduce((s, c) => s + c.size, 0), 0);
      const watch = cpuWatch({ relay: relay.proc.pid });
      const phases: { missing?: number; put?: number; commit?: number } = {};
      const uploadRate = bytes / (await upload(relay.url, files, phases));
      const cpu = watch();
      const floors = await diskFloor(
        join(dir, `floor-${size.kib}`),
        files.flatMap((f) => f.chunks.map((c) => c.bytes)),
      );
      const diskRate = bytes / Math.min(floors.sequential, floors.concurrent);
      if (size.kib === 1024) mibFloor = diskRate;
      const what = `${size.kib} KiB chunks`;
      uploadRows.push(
        {
          name: `disk floor, ${what}: SHA-256 + write + fsync each, MiB/s (seq ${mib(bytes / floors.sequential).toFixed(1)}, ${UPLOAD_CONCURRENCY} concurrent ${mib(bytes / floors.concurrent).toFixed(1)})`,
          opsPerSecond: mib(diskRate),
        },
        {
          name: `relay drive upload MiB/s, ${what}: ${FILES} files x ${files[0]!.chunks.length}, missing + PUT (${UPLOAD_CONCURRENCY} concurrent) + commit`,
          opsPerSecond: mib(uploadRate),
          ratio: uploadRate / diskRate,
          ...(size.target !== undefined ? { target: size.target } : {}),
        },
        { name: `    CPU: ${describeCpu(cpu)}`, opsPerSecond: Number.NaN, note: true },
        { name: `    ${verdict(cpu, ['relay'])}`, opsPerSecond: Number.NaN, note: true },
        { name: `    seconds: missing lists ${phases.missing!.toFixed(2)}, PUTs ${phases.put!.toFixed(2)}, commits ${phases.commit!.toFixed(2)}`, opsPerSecond: Number.NaN, note: true },
      );
    }
    // a'. The 1 MiB upload with the chunks on Ceph (./drive-s3.ts), against the same disk floor.
    if (!process.argv.includes('--no-s3')) uploadRows.push(...(await cephUploadRows(authority, mibFloor)));

    // b. Small create commits, against bare h3 with one Ed25519 verify per request.
    const commits = Array.from({ length: COMMITS }, (_, i) => session.commitRequest(folder(session.owner, session.root, `bench${i}`)));
    const load = await expectAll(
      relay.url,
      commits.map((c) => c.raw),
      CONCURRENCY,
      200,
      'create commits',
    );
    const commitRate = COMMITS / load.seconds;
    const peerRate = await peerRateFor(commits.map((c) => c.text));

    return [
      ...uploadRows,
      { name: 'bare h3 + one Ed25519 verify per request (same run, commit-sized bodies)', opsPerSecond: peerRate },
      { name: `relay drive commits/s: create a folder (${CONCURRENCY} concurrent)`, opsPerSecond: commitRate, ratio: commitRate / peerRate, target: 0.5 },
    ];
  } finally {
    await relay?.stop();
    await authority.close();
    await rm(dir, { recursive: true, force: true });
  }
}

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

/** The floor: each chunk hashed, written to its own file and fsynced; one by one, and `UPLOAD_CONCURRENCY` at a time. */
async function diskFloor(dir: string, chunks: Uint8Array[]): Promise<{ sequential: number; concurrent: number }> {
  await mkdir(join(dir, 'seq'), { recursive: true });
  await mkdir(join(dir, 'conc'), { recursive: true });
  let t0 = performance.now();
  for (const bytes of chunks) {
    const fd = openSync(join(dir, 'seq', createHash('sha256').update(bytes).digest('hex')), 'wx');
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
    fsyncSync(fd);
    closeSync(fd);
  }
  const sequential = (performance.now() - t0) / 1000;
  t0 = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < chunks.length; i = next++) {
      const bytes = chunks[i]!;
      const file = await openFile(join(dir, 'conc', createHash('sha256').update(bytes).digest('hex')), 'wx');
      await file.write(bytes);
      await file.sync();
      await file.close();
    }
  };
  await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, worker));
  return { sequential, concurrent: (performance.now() - t0) / 1000 };
}

function folder(owner: RelayIdentity, root: NodeKeys, name: string): Obj {
  return create(profile, { drive: owner.identity, author: owner, keys: nodeKeys(), kind: 'folder', at: { folder: root, name }, ownerEncryption: owner.encryption.publicKey });
}

export async function expectAll(url: string, requests: Buffer[], connections: number, status: number, what: string): Promise<{ seconds: number }> {
  const load = await runLoad(url, requests, connections);
  const ok = load.statuses.get(status) ?? 0;
  if (ok !== requests.length) throw new Error(`${what}: ${requests.length - ok} of ${requests.length} not ${status} (${JSON.stringify([...load.statuses])}): ${load.firstFailure}`);
  return load;
}

/** The peer's rate on bodies of the same size, each signed for it over its own bytes. */
async function peerRateFor(bodies: readonly string[]): Promise<number> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const peer = await startPeer(encodeBase64url(publicKey.export({ format: 'der', type: 'spki' }).subarray(12)));
  try {
    const { host } = new URL(peer.url);
    const requests = bodies.map((b) => {
      const body = JSON.parse(b) as Obj;
      const text = JSON.stringify({ ...body, signature: nodeSign(null, Buffer.from(JSON.stringify(body)), privateKey).toString('base64url') });
      return serialize(host, { method: 'POST', path: '/messages', headers: { 'content-type': 'application/json' }, body: text });
    });
    await runLoad(peer.url, requests.slice(0, 200), 8);
    const load = await runLoad(peer.url, requests, CONCURRENCY);
    const ok = load.statuses.get(202) ?? 0;
    if (ok !== requests.length) throw new Error(`the peer refused ${requests.length - ok}: ${load.firstFailure}`);
    return ok / load.seconds;
  } finally {
    peer.proc.kill('SIGKILL');
  }
}
