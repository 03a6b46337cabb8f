// Drive chunks in S3-compatible object storage (--drive-s3; tested on Ceph's RADOS Gateway 16.2):
// one object per chunk, `<drive>/<id>` in one bucket. Clients upload straight to the store through
// presigned PUT URLs that sign the chunk's Content-MD5 and Content-Length (the store refuses other
// bytes, 400 BadDigest) and `If-None-Match: *` (create-only: a stored chunk is never replaced, 412).
// The store checks MD5, not SHA-256, and MD5 collides: so an uploaded object is recorded
// (drive_chunks, the only way a commit may reference it) only once the relay has read it back and
// its SHA-256 is its name (settle). Reads redirect to presigned GETs.
import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ChunkStore } from './chunks.ts';

/**
 * The AWS SDK, imported by the start of a relay that keeps its chunks in S3 (S3Chunks.ensureBucket,
 * awaited before the relay is built), never by another: loading it costs a start 0.4 s of CPU.
 */
type Sdk = typeof import('@aws-sdk/client-s3') & Pick<typeof import('@aws-sdk/s3-request-presigner'), 'getSignedUrl'>;
let loaded: Sdk | undefined;
const sdk = (): Sdk => {
  if (!loaded) throw new Error('S3Chunks: the AWS SDK is loaded by S3Chunks.ensureBucket, at the relay start');
  return loaded;
};

export interface S3Location {
  /** http(s)://host[:port] of the S3 endpoint. */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface Upload {
  method: 'PUT';
  url: string;
  headers: Record<string, string>;
}

/** How long a presigned upload URL lives; a reservation is settled a minute after. */
export const UPLOAD_TTL_SECONDS = 600;
/** How long a presigned read URL lives (the redirect itself is not cached). */
const READ_TTL_SECONDS = 300;

/**
 * `http(s)://host:port/bucket` with the keys from the environment (DRIVE_S3_ACCESS_KEY,
 * DRIVE_S3_SECRET_KEY, optional DRIVE_S3_REGION), so they never show in a process list.
 */
export function s3Location(url: string, env: NodeJS.ProcessEnv = process.env): S3Location {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--drive-s3 ${url} is not a URL (http(s)://host:port/bucket)`);
  }
  const bucket = u.pathname.replace(/^\/|\/$/g, '');
  if (!/^https?:$/.test(u.protocol) || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || u.username || u.search)
    throw new Error(`--drive-s3 is http(s)://host:port/bucket (a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens), not ${url}`);
  const accessKeyId = env.DRIVE_S3_ACCESS_KEY;
  const secretAccessKey = env.DRIVE_S3_SECRET_KEY;
  if (!accessKeyId || !secretAccessKey) throw new Error('--drive-s3 needs DRIVE_S3_ACCESS_KEY and DRIVE_S3_SECRET_KEY in the environment');
  return { endpoint: u.origin, bucket, region: env.DRIVE_S3_REGION ?? 'us-east-1', accessKeyId, secretAccessKey };
}

const statusOf = (error: unknown) => (error instanceof sdk().S3ServiceException ? error.$metadata.httpStatusCode : undefined);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('base64');

export class S3Chunks implements ChunkStore {
  readonly #s3: S3Client;
  readonly #bucket: string;
  /** One settle or put at a time per object: a delete of bad bytes never races a later good upload. */
  readonly #locks = new Map<string, Promise<unknown>>();
  /** Upload URLs this process handed out and has not settled, per drive, with when they lapse (their bytes are held in the relay's state: ./quota.ts). */
  readonly #issued = new Map<string, Map<string, number>>();

  constructor(readonly at: S3Location) {
    this.#bucket = at.bucket;
    this.#s3 = new (sdk().S3Client)({
      endpoint: at.endpoint,
      region: at.region,
      forcePathStyle: true,
      credentials: { accessKeyId: at.accessKeyId, secretAccessKey: at.secretAccessKey },
      // Only what the store checks: Ceph 16.2 knows Content-MD5, not the newer flexible checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** Makes the bucket unless it exists (ours already, from an earlier start): once, at the relay's start. */
  static async ensureBucket(at: S3Location): Promise<void> {
    loaded ??= { ...(await import('@aws-sdk/client-s3')), getSignedUrl: (await import('@aws-sdk/s3-request-presigner')).getSignedUrl };
    const chunks = new S3Chunks(at);
    try {
      await chunks.#s3.send(new (sdk().CreateBucketCommand)({ Bucket: at.bucket }));
    } catch (error) {
      if (!(error instanceof sdk().S3ServiceException && (error.name === 'BucketAlreadyOwnedByYou' || error.name === 'BucketAlreadyExists'))) throw error;
    } finally {
      chunks.close();
    }
  }

  close(): void {
    this.#s3.destroy();
  }

  #key(drive: string, id: string): string {
    return `${drive}/${id}`;
  }

  #locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.#locks.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.#locks.set(key, tail);
    void tail.then(() => {
      if (this.#locks.get(key) === tail) this.#locks.delete(key);
    });
    return run;
  }

  /** A relay-side upload (PUT /drive/:id/chunks/:hash; the caller checked the hash). */
  put(drive: string, id: string, bytes: Uint8Array): Promise<'stored' | 'exists'> {
    return this.#locked(this.#key(drive, id), async () => {
      if (await this.#create(drive, id, bytes)) return 'stored';
      // Someone created it first (an upload URL): kept if its bytes are the chunk, else replaced.
      const held = await this.#read(drive, id);
      if (held && sha256(held) === id) return 'exists';
      await this.#s3.send(new (sdk().DeleteObjectCommand)({ Bucket: this.#bucket, Key: this.#key(drive, id) }));
      if (!(await this.#create(drive, id, bytes))) throw new Error(`chunk ${id} of ${drive} was created again while being replaced`);
      return 'stored';
    });
  }

  /** true when created, false when the object already existed (412). */
  async #create(drive: string, id: string, bytes: Uint8Array): Promise<boolean> {
    try {
      await this.#s3.send(new (sdk().PutObjectCommand)({ Bucket: this.#bucket, Key: this.#key(drive, id), Body: bytes, ContentMD5: md5(bytes), ContentLength: bytes.length, IfNoneMatch: '*' }));
      return true;
    } catch (error) {
      if (statusOf(error) === 412) return false;
      throw error;
    }
  }

  async #read(drive: string, id: string): Promise<Uint8Array | undefined> {
    try {
      const r = await this.#s3.send(new (sdk().GetObjectCommand)({ Bucket: this.#bucket, Key: this.#key(drive, id) }));
      return r.Body ? await r.Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  get(drive: string, id: string): Promise<Uint8Array | undefined> {
    return this.#read(drive, id);
  }

  /**
   * Where the client PUTs a chunk of `size` bytes whose MD5 is `contentMd5` (base64): the URL's
   * signature covers the Content-MD5, the Content-Length and If-None-Match, so only those bytes
   * are stored, and only if the object does not exist yet.
   */
  async uploadUrl(drive: string, id: string, size: number, contentMd5: string): Promise<Upload> {
    const command = new (sdk().PutObjectCommand)({ Bucket: this.#bucket, Key: this.#key(drive, id), ContentMD5: contentMd5, ContentLength: size, IfNoneMatch: '*' });
    // The conditional header stays a header (signed), not a query parameter the store would ignore.
    const url = await sdk().getSignedUrl(this.#s3, command, { expiresIn: UPLOAD_TTL_SECONDS, unhoistableHeaders: new Set(['if-none-match']) });
    return { method: 'PUT', url, headers: { 'content-md5': contentMd5, 'if-none-match': '*' } };
  }

  /** A presigned GET of a chunk, answered as an immutable octet stream. */
  readUrl(drive: string, id: string, cacheControl: string): Promise<string> {
    const command = new (sdk().GetObjectCommand)({ Bucket: this.#bucket, Key: this.#key(drive, id), ResponseCacheControl: cacheControl, ResponseContentType: 'application/octet-stream' });
    return sdk().getSignedUrl(this.#s3, command, { expiresIn: READ_TTL_SECONDS });
  }

  /**
   * Reads an uploaded object back: 'ok' (its SHA-256 is `id` and `record` took its size, under the
   * object's lock), 'absent', or 'bad' (deleted, so a right upload can take its place).
   */
  settle(drive: string, id: string, record: (size: number) => Promise<boolean>): Promise<'ok' | 'absent' | 'bad'> {
    return this.#locked(this.#key(drive, id), async () => {
      const held = await this.#read(drive, id);
      if (!held) return 'absent';
      if (sha256(held) === id && (await record(held.length))) return 'ok';
      await this.#s3.send(new (sdk().DeleteObjectCommand)({ Bucket: this.#bucket, Key: this.#key(drive, id) }));
      return 'bad';
    });
  }

  /** Remembers an upload URL handed out, to settle once it lapses (`until`, ms). */
  track(drive: string, id: string, until: number): void {
    let m = this.#issued.get(drive);
    if (!m) this.#issued.set(drive, (m = new Map()));
    m.set(id, until);
  }

  release(drive: string, id: string): void {
    const m = this.#issued.get(drive);
    if (m?.delete(id) && m.size === 0) this.#issued.delete(drive);
  }

  /** Upload URLs that lapsed before `now` (ms): to settle. */
  expired(now: number): Array<{ drive: string; id: string }> {
    const out: Array<{ drive: string; id: string }> = [];
    for (const [drive, m] of this.#issued) for (const [id, until] of m) if (until < now) out.push({ drive, id });
    return out;
  }
}
