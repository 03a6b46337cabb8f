// A drive's quota (ra.drive.quota) counts its stored chunk bytes and the bytes held against it:
// chunk uploads in flight and upload URLs promised for chunks that may arrive in object storage
// without the relay. Holds live in the relay's state (./state.ts), so the relay's processes count
// one another's. A hold is taken before the check that counts it, so two uploads racing at two
// processes both see both (and at worst both are refused), never both admitted past the quota.
import { ruleError } from '../../shared/errors.ts';
import type { Drive } from './access.ts';
import { UPLOAD_TTL_SECONDS } from './s3-chunks.ts';
import { randomBytes } from 'node:crypto';

const key = (drive: string) => `drive-quota:${drive}`;
const urlHold = (chunk: string) => `url:${chunk}`;
/** Each upload in flight holds under its own id (its hold ends with it), prefixed by its chunk's. */
const putHold = (chunk: string) => `put:${chunk}:`;
const PUT_HOLD = /^put:([^:]+):/;
/** How long an upload in flight may hold its bytes (a client that stalls loses its hold, not the relay). */
const UPLOAD_HOLD_MS = 10 * 60_000;
/** An upload URL's hold outlives the URL by a minute: its upload is settled then (handlers.settleLapsed). */
const URL_HOLD_MS = (UPLOAD_TTL_SECONDS + 60) * 1000;

const over = (d: Drive) => ruleError(507, 'ra.drive.quota', `the drive would hold more than its quota of ${d.quota} bytes`);

/** The bytes held against `drive`'s quota, leaving out the upload URLs of `exceptUrls`. */
async function heldBytes(d: Drive, drive: string, exceptUrls: Iterable<string> = []): Promise<number> {
  const except = new Set([...exceptUrls].map(urlHold));
  let sum = 0;
  // Parallel uploads of one chunk store its bytes once: they count once, however many are in flight.
  const uploads = new Map<string, number>();
  for (const [id, bytes] of await d.ctx.state.holds(key(drive))) {
    if (except.has(id)) continue;
    const chunk = PUT_HOLD.exec(id)?.[1];
    if (chunk === undefined) sum += bytes;
    else uploads.set(chunk, Math.max(bytes, uploads.get(chunk) ?? 0));
  }
  for (const bytes of uploads.values()) sum += bytes;
  return sum;
}

/**
 * The bytes of upload URLs promised for `drive`: chunks that may be in object storage already,
 * without the relay (it learns of them at the commit). `GET /drive/:identity` counts them in the
 * bytes used, so a client sees its upload counted as soon as it is made, on disk and on S3 alike.
 */
export async function promisedBytes(d: Drive, drive: string): Promise<number> {
  let sum = 0;
  for (const [id, bytes] of await d.ctx.state.holds(key(drive))) if (id.startsWith(urlHold(''))) sum += bytes;
  return sum;
}

/** Throws 507 unless `adding` more bytes fit beside what is stored and held. */
export async function mustFit(d: Drive, drive: string, adding: number, exceptUrls: Iterable<string> = []): Promise<void> {
  if ((await d.store.meta(drive)).used + (await heldBytes(d, drive, exceptUrls)) + adding > d.quota) throw over(d);
}

/** Holds an upload URL's bytes (until settled or lapsed). */
export function holdUrl(d: Drive, drive: string, chunk: string, size: number): Promise<void> {
  return d.ctx.state.hold(key(drive), urlHold(chunk), size, URL_HOLD_MS);
}

/** The bytes an upload URL for `chunk` holds, when one is live. */
export async function urlHeld(d: Drive, drive: string, chunk: string): Promise<number | undefined> {
  return (await d.ctx.state.holds(key(drive))).get(urlHold(chunk));
}

export function dropUrl(d: Drive, drive: string, chunk: string): Promise<void> {
  return d.ctx.state.unhold(key(drive), urlHold(chunk));
}

/** Runs an upload of `bytes` holding them against the quota, after checking they fit (507 otherwise). */
export async function withinQuota<T>(d: Drive, drive: string, chunk: string, bytes: number, upload: () => Promise<T>): Promise<T> {
  const id = `${putHold(chunk)}${randomBytes(9).toString('base64url')}`;
  await d.ctx.state.hold(key(drive), id, bytes, UPLOAD_HOLD_MS);
  try {
    // Counted with its own hold, not with a URL promised for this very chunk.
    await mustFit(d, drive, 0, [chunk]);
    return await upload();
  } finally {
    await d.ctx.state.unhold(key(drive), id).catch(() => undefined);
  }
}
