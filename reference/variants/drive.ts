// The reference relay's drive broken on the wire, one rule each (see wire.ts): bugs found from
// outside by driving the deployed system's own client against the reference (issue 26, item 4).
import { profileFor } from '../../protocol/common/profile.ts';
import { answer, editJson, jsonAnswer, withBody, type Next, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;
/** Node's default limit on a request's headers, all together. */
const NODE_HEADERS = 16 * 1024;

const chunkPut = (req: Request, url: URL) => req.method === 'PUT' && /^\/drive\/[^/]+\/chunks\/[0-9a-f]{64}$/.test(url.pathname);

/**
 * Chunk uploads seen with what else was in flight for the same chunk when each arrived: `edit`
 * rewrites the answer of an upload that overlapped another of its chunk.
 */
function overlapping(edit: (res: Response) => Response | Promise<Response>): Wire {
  const inFlight = new Map<string, number>();
  return async (req: Request, next: Next) => {
    const url = new URL(req.url);
    if (!chunkPut(req, url)) return next(req);
    const key = url.pathname;
    const others = inFlight.get(key) ?? 0;
    inFlight.set(key, others + 1);
    try {
      const res = await next(req);
      return others > 0 || (inFlight.get(key) ?? 0) > 1 ? await edit(res) : res;
    } finally {
      const left = (inFlight.get(key) ?? 1) - 1;
      if (left === 0) inFlight.delete(key);
      else inFlight.set(key, left);
    }
  };
}

export const DRIVE_WIRE: Record<string, WireVariant> = {
  // "20 parallel PUTs of one new chunk answer up to 20 `201`s. One must create; the rest are `200`."
  'chunk-created-twice': {
    rule: 'ra.drive.chunk-upload',
    what: 'an upload of a chunk that overlapped another upload of it answers 201 as if it created it',
    wire: overlapping((res) => (res.status === 200 ? withBody(res, res.body, 201) : res)),
  },
  // "parallel uploads of one and the same chunk are refused `507` far below the quota. Each upload
  // in flight holds its bytes; the hold should be per chunk."
  'quota-per-upload': {
    rule: 'ra.drive.quota',
    what: 'an upload of a chunk that overlapped another upload of it is refused 507, its bytes counted twice',
    wire: overlapping((res) => (res.status === 200 || res.status === 201 ? jsonAnswer({ error: 'quota_exceeded', detail: 'the drive would hold more than its quota' }, 507) : res)),
  },
  // "a correctly signed roster of 600 members (25 KB of base64url) gets `431`, because Node's
  // 16 KiB header limit sits below the project's own `drive_group_max_members` of 1000."
  'roster-header-16k': {
    rule: 'ra.drive.group-roster-size',
    what: "a request whose group roster does not fit in Node's default 16 KiB of headers is refused a bare 431",
    wire: answer(
      (req) => (req.headers.get(ids.header_group_roster)?.length ?? 0) > NODE_HEADERS - 1024,
      () => new Response(null, { status: 431 }),
    ),
  },
  // "caps signed into every share (`bytes`, `files`, `records`, `per_hour`) are carried and ignored"
  // (the project now says so): a relay that drops them instead.
  'share-caps-dropped': {
    rule: 'ra.drive.share-caps',
    what: 'shares are listed without the caps they were signed with',
    wire: editJson(
      (req, url) => req.method === 'GET' && /^\/drive\/[^/]+\/(nodes\/[0-9a-f]{32}\/)?shares$/.test(url.pathname),
      (b) => {
        for (const share of Array.isArray(b.shares) ? (b.shares as Array<Record<string, unknown>>) : []) share.caps = {};
      },
      [200],
    ),
  },
};
