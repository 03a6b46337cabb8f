// A drive's links broken one way each, on the wire (wire.ts), as a drive implementer could ship
// them (issue 25: "Each limit at N and N+1 within its scope, and untouched outside that scope";
// "Each window just inside and just outside"). Each breaks the project's rule of link opens and
// proof-of-work tokens (ra.drive.link-opens), or what ends a link (ra.drive.link-auth), and
// nothing else.
import { profileFor } from '../../protocol/common/profile.ts';
import { jsonAnswer, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;

/** A chunk read through a link: the drive, the node, and the link. */
function linkChunk(req: Request): { drive: string; node: string; link: string } | undefined {
  const link = req.headers.get(ids.header_link);
  const m = /^\/drive\/([^/]+)\/nodes\/([0-9a-f]{32})(?:\/versions\/[0-9a-f]{32})?\/chunks\/[0-9a-f]{64}$/.exec(new URL(req.url).pathname);
  return req.method === 'GET' && link !== null && m ? { drive: m[1]!, node: m[2]!, link } : undefined;
}

const linkGone = () => jsonAnswer({ error: 'link_gone', detail: 'the link has expired or has no opens left' }, 410);

/** Chunks are content-addressed and never change, so a chunk served once is served again from a cache, whatever the link's opens. */
function chunksCached(): Wire {
  const cache = new Map<string, { body: ArrayBuffer; headers: Headers }>();
  return async (req, next) => {
    if (!linkChunk(req)) return next(req);
    const key = new URL(req.url).pathname;
    const res = await next(req);
    if (res.status === 200) {
      const body = await res.arrayBuffer();
      cache.set(key, { body, headers: new Headers(res.headers) });
      return new Response(body, { status: 200, headers: res.headers });
    }
    const kept = cache.get(key);
    return res.status === 410 && kept ? new Response(kept.body.slice(0), { status: 200, headers: kept.headers }) : res;
  };
}

/** The opens are kept on the shared node, not on each link: once one link of a node runs out, every link of that node is gone. */
function opensPerNode(): Wire {
  const spent = new Set<string>();
  return async (req, next) => {
    const at = linkChunk(req);
    if (!at) return next(req);
    const key = `${at.drive} ${at.node}`;
    if (spent.has(key)) return linkGone();
    const res = await next(req);
    if (res.status === 410) spent.add(key);
    return res;
  };
}

/** The open is spent before it is checked: a link refuses the download that spends its last open. */
const lastOpenRefused: Wire = async (req, next) => {
  const at = linkChunk(req);
  const res = await next(req);
  if (!at || res.status !== 200) return res;
  // The link's public answer says how many opens are left after this download (none: 404).
  const info = await next(new Request(new URL(`/drive/${at.drive}/links/${at.link}`, req.url)));
  const left = info.status === 200 ? ((await info.json()) as { opens_left?: unknown }).opens_left : 0;
  return left === 0 ? linkGone() : res;
};

/** A proof-of-work token is taken for a single-use nonce: a second request with it is refused. */
function powTokenOnce(): Wire {
  const used = new Set<string>();
  return async (req, next) => {
    const token = (req.headers.get(ids.header_link_pow) ?? '').split('.', 1)[0]!;
    if (token === '' || !req.headers.has(ids.header_link)) return next(req);
    if (used.has(token)) return jsonAnswer({ error: 'not_authorized', detail: 'this proof-of-work token was spent' }, 403);
    const res = await next(req);
    if (res.status >= 200 && res.status < 300) used.add(token);
    return res;
  };
}

/**
 * Answers to link holders cached by URL and link, and the cache never purged: once a link read a
 * node, its children or a chunk, the same read keeps answering after the link is unshared or expires.
 */
function linkAnswersCached(): Wire {
  const cache = new Map<string, { body: ArrayBuffer; status: number; headers: Headers }>();
  return async (req, next) => {
    const link = req.headers.get(ids.header_link);
    const url = new URL(req.url);
    if (req.method !== 'GET' || link === null || !/^\/drive\/[^/]+\/nodes\//.test(url.pathname)) return next(req);
    const key = `${link} ${url.pathname}${url.search}`;
    const res = await next(req);
    if (res.status === 200) {
      const body = await res.arrayBuffer();
      cache.set(key, { body, status: 200, headers: new Headers(res.headers) });
      return new Response(body, { status: 200, headers: res.headers });
    }
    const kept = cache.get(key);
    return res.status >= 400 && res.status < 500 && kept ? new Response(kept.body.slice(0), { status: kept.status, headers: kept.headers }) : res;
  };
}

export const DRIVE_LINKS_WIRE: Record<string, WireVariant> = {
  // past: a link serves downloads past its opens.
  'link-chunks-cached': {
    rule: 'ra.drive.link-opens',
    what: 'a chunk served once through a link is served again from a cache after the link runs out of opens',
    wire: chunksCached(),
  },
  // other-scope: the count is the node's, not the link's.
  'link-opens-per-node': {
    rule: 'ra.drive.link-opens',
    what: "a link's opens are counted on its node: when one link of a node runs out, the node's other links are gone too",
    wire: opensPerNode(),
  },
  // at: off by one.
  'link-last-open-refused': {
    rule: 'ra.drive.link-opens',
    what: 'a link with N opens refuses its Nth download 410 `link_gone`',
    wire: lastOpenRefused,
  },
  // "a link unshared (or expired) still opening": its answers served from a cache.
  'link-answers-cached': {
    rule: 'ra.drive.link-auth',
    what: "a link's reads are cached by URL and served after the link is unshared or expires",
    wire: linkAnswersCached(),
  },
  // inside: the token's window taken for one use.
  'link-pow-once': {
    rule: 'ra.drive.link-opens',
    what: "a link's proof-of-work token serves one request, not ten minutes of them",
    wire: powTokenOnce(),
  },
};
