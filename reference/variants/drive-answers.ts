// The reference relay's drive broken in what it answers, one rule each (see wire.ts): bugs that
// show on the wire, once hidden --break flags read inside the drive's handlers (issue 28: "the
// broken variants out of the request path").
import { profileFor } from '../../protocol/common/profile.ts';
import { codeOf } from '../shared/errors.ts';
import { answer, editJson, jsonAnswer, withBody, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;
const get = (pattern: RegExp) => (req: Request, url: URL) => req.method === 'GET' && pattern.test(url.pathname);
const NODE_CHUNK = /^\/drive\/[^/]+\/nodes\/[0-9a-f]{32}(\/versions\/[0-9a-f]{32})?\/chunks\/[0-9a-f]{64}$/;

/** A chunk read through a node, served with its last byte changed. */
const alteredChunks: Wire = async (req, next) => {
  const res = await next(req);
  if (!get(NODE_CHUNK)(req, new URL(req.url)) || res.status !== 200) return res;
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length > 0) bytes[bytes.length - 1]! ^= 1;
  return withBody(res, bytes);
};

export const DRIVE_ANSWER_WIRE: Record<string, WireVariant> = {
  'root-no-root': {
    rule: 'ra.drive.root',
    what: "the drive's answer leaves its root out",
    wire: editJson(get(/^\/drive\/[^/]+$/), (b) => ({ ...b, root: null }), [200]),
  },
  'children-empty': {
    rule: 'ra.drive.nodes',
    what: 'a folder lists no children',
    wire: editJson(get(/^\/drive\/[^/]+\/nodes\/[^/]+\/children$/), (b) => ({ ...b, children: [] }), [200]),
  },
  'links-authenticated': {
    rule: 'ra.drive.links',
    what: 'the public link answer wants the challenge headers',
    wire: answer(
      (req, url) => get(/^\/drive\/[^/]+\/links\/[^/]+$/)(req, url) && !req.headers.get(ids.header_identity),
      () => jsonAnswer({ error: codeOf('ra.errors.challenge-invalid'), detail: 'authenticate first', rule: 'ra.errors.challenge-invalid' }, 401),
    ),
  },
  'listing-first-page-only': {
    rule: 'ra.drive.changes-body',
    what: 'a listing asked with `limit` says its first page is the last (children cursor "", changes more false)',
    wire: editJson(
      (req, url) => url.searchParams.has('limit') && get(/^\/drive\/[^/]+\/(changes|nodes\/[^/]+\/children)$/)(req, url),
      (b) => ('children' in b ? { ...b, cursor: '' } : { ...b, more: false }),
      [200],
    ),
  },
  // A blind broken server (round 2, drive-02, written without the suites): "answers `opens_left` as the cap, not the cap minus opens used".
  'link-opens-left-cap': {
    rule: 'ra.drive.links',
    what: "a link's answer gives the opens it had when first asked, however many were used since",
    wire: (() => {
      const first = new Map<string, unknown>();
      return editJson(
        get(/^\/drive\/[^/]+\/links\/[^/]+$/),
        (b, _res, req) => {
          const key = new URL(req.url).pathname;
          if (!first.has(key)) first.set(key, b.opens_left);
          return { ...b, opens_left: first.get(key) };
        },
        [200],
      );
    })(),
  },
  // A blind broken server (round 2, drive-06, written without the suites): "chunks are looked up by hash across all drives, not within one drive".
  'missing-across-drives': {
    rule: 'ra.drive.missing',
    what: 'the missing list leaves out a chunk any drive on the relay holds',
    wire: (() => {
      const held = new Set<string>();
      return async (req, next) => {
        const url = new URL(req.url);
        const res = await next(req);
        const put = /^\/drive\/[^/]+\/chunks\/([0-9a-f]{64})$/.exec(url.pathname);
        if (req.method === 'PUT' && put && res.status >= 200 && res.status < 300) held.add(put[1]!);
        if (req.method !== 'POST' || !/^\/drive\/[^/]+\/chunks\/missing$/.test(url.pathname) || res.status !== 200) return res;
        const b = (await res.clone().json()) as { missing?: Array<{ id?: string }> };
        return Array.isArray(b.missing) ? withBody(res, JSON.stringify({ ...b, missing: b.missing.filter((m) => !held.has(String(m.id))) })) : res;
      };
    })(),
  },
  // Over S3 a chunk is a redirect to the store, which the wire does not rewrite: run it on files.
  'chunk-bytes-altered': {
    rule: 'ra.drive.versions',
    what: 'a chunk is served with its last byte changed',
    wire: alteredChunks,
  },
};
