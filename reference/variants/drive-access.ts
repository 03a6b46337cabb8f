// The drive's access decisions broken one way each, found by measuring access.ts and groups.ts
// whole (issue 25: "Each normalization in its variant forms, and near-misses"; "Every operation is
// fuzzed past its authentication: a server never answers 5xx"). Each replaces a decision through
// the relay's `driveSeams`, read at start from SVC_REFERENCE_WIRE=drive/<name>.
import { createHash } from 'node:crypto';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { parseJson } from '../shared/json.ts';
import { RULE_SEAMS, type DriveSeams } from '../relay/drive/access.ts';
import { answer, jsonAnswer, untouched, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;

export interface DriveSeamVariant extends WireVariant {
  seams?: Partial<DriveSeams>;
}

/** A drive request the relay refused with `status` and a detail `detail` matches answered by `make` instead. */
function answeredWhere(status: number, detail: RegExp, make: () => Response): Wire {
  return async (req, next) => {
    const res = await next(req);
    if (res.status !== status || !new URL(req.url).pathname.startsWith('/drive/')) return res;
    const body = (await res
      .clone()
      .json()
      .catch(() => ({}))) as { detail?: unknown };
    return typeof body.detail === 'string' && detail.test(body.detail) ? make() : res;
  };
}

/** What a relay that threw answers. */
const crashed = () => jsonAnswer({ error: 'internal_error', detail: 'internal error' }, 500);

/** A drive request the relay refused with `status` and a detail `detail` matches answered 500, as a relay that threw there would. */
const crashesWhere = (status: number, detail: RegExp): Wire => answeredWhere(status, detail, crashed);

/** The JSON of the request's X-Svc-Group-Roster (base64url), when it sends one that parses. */
function rosterSent(req: Request): { value: unknown } | undefined {
  const header = req.headers.get(ids.header_group_roster);
  const parsed = header === null ? undefined : parseJson(Buffer.from(header, 'base64url'));
  return parsed?.ok ? { value: parsed.value } : undefined;
}

export const DRIVE_ACCESS_WIRE: Record<string, DriveSeamVariant> = {
  // Document 3, Drive API: "Link holders send X-Svc-Link (and X-Svc-Link-Verifier for a
  // password)". The bug: the header is decoded without asking whether it is base64, so text that
  // is not throws, and the holder of a password link is answered 500.
  'link-verifier-crash': {
    rule: 'ra.drive.link-auth',
    what: 'a password link whose X-Svc-Link-Verifier is not base64 is answered 500',
    wire: untouched,
    seams: {
      verifies: (hash, sent) =>
        createHash('sha256')
          .update(decodeBase64Any(sent ?? '')!)
          .digest('hex') === hash,
    },
  },
  // The same sentence. The bug: the header is compared with the verifier hash the link stores, as
  // well as hashed, so whoever reads the link's share (every member listing shares) opens it.
  'link-verifier-hash-accepted': {
    rule: 'ra.drive.link-auth',
    what: 'a password link opens with its stored verifier_hash sent as X-Svc-Link-Verifier',
    wire: untouched,
    seams: { verifies: (hash, sent) => sent === hash || RULE_SEAMS.verifies(hash, sent) },
  },
  // Document 3, Drive API: "Requests carry the challenge headers (`X-Svc-Identity`, ...)". The bug:
  // the caller's keys are read from its lookup without asking whether anything resolved, so an
  // X-Svc-Identity nothing resolves is a 500.
  'drive-unresolved-caller-crash': {
    rule: 'ra.drive.owner',
    what: 'a drive request whose X-Svc-Identity nothing resolves is answered 500',
    wire: crashesWhere(401, / cannot be resolved, so its proof cannot be checked$/),
  },
  // "Each identity has an end-to-end encrypted drive". The bug: the drive's identity is looked up
  // and its home read without asking whether anything resolved, so GET /drive/<nobody> is a 500.
  'drive-unknown-identity-crash': {
    rule: 'ra.drive.owner',
    what: 'a request to the drive of an identity nothing resolves is answered 500',
    wire: crashesWhere(404, / has no drive here$/),
  },
  // ra.drive.refusals (project): "`/drive/:identity` of any other identity (homed on another
  // relay, ...) answers 404". The bug: the relay answers whatever drive it is asked for, an empty
  // one for an identity it does not host.
  'drive-any-identity': {
    rule: 'ra.drive.refusals',
    what: 'the drive of an identity this relay does not host is answered 200, empty',
    wire: answeredWhere(404, / has no drive here$/, () => jsonAnswer({ root: null, used: 0, quota: 0 })),
  },
  // ra.drive.refusals (project): "an `X-Svc-Link` naming no live link of the drive ... 403
  // `not_authorized`". The bug: an unknown link is answered as a missing resource, 404.
  'drive-unknown-link-404': {
    rule: 'ra.drive.refusals',
    what: 'an X-Svc-Link naming no live link is answered 404 not_found',
    wire: answeredWhere(403, / names no live link of this drive$/, () => jsonAnswer({ error: 'not_found', detail: 'no such link' }, 404)),
  },
  // ra.drive.link-opens (project): "a share with `pow` asks every link request for
  // `X-Svc-Link-Pow: <token>.<solution>` ... else 403". The bug: the link answer hands out the
  // work, and nothing asks for it.
  'link-pow-ignored': {
    rule: 'ra.drive.link-opens',
    what: 'a link whose share asks for work reads without X-Svc-Link-Pow',
    wire: untouched,
    seams: { worked: async () => true },
  },
  // The same rule: "solving the token of its link answer". The bug: the solution is checked
  // against whatever token comes with it, so one solved token serves every link, and a token
  // the relay never handed out serves too.
  'link-pow-any-token': {
    rule: 'ra.drive.link-opens',
    what: "a link reads with any solved token, another link's or one never issued",
    wire: untouched,
    seams: { worked: async (_live, solves) => solves() },
  },
  // The same rule: "a wrong verifier is 403 `not_authorized`". The bug: a wrong verifier is
  // answered as a failed authentication, 401.
  'link-verifier-401': {
    rule: 'ra.drive.link-opens',
    what: 'a password link with a wrong verifier is answered 401 unauthorized',
    wire: answeredWhere(403, /^a password link needs the right /, () => jsonAnswer({ error: 'unauthorized', detail: 'wrong verifier' }, 401)),
  },
  // ra.drive.group-roster-size (project): "up to drive_group_roster_header_max_bytes of
  // base64url, reads". The bug: the limit is exclusive, a header of exactly that length refused.
  'roster-size-exclusive': {
    rule: 'ra.drive.group-roster-size',
    what: 'a roster header of exactly drive_group_roster_header_max_bytes characters is answered 431',
    wire: answer(
      (req) => req.headers.get(ids.header_group_roster)?.length === limits.drive_group_roster_header_max_bytes,
      () => jsonAnswer({ error: 'invalid_request', detail: 'the group roster header is too long' }, 431),
    ),
  },
  // ra.drive.group-roster-check (project): "the caller is among its `members` (lowercased,
  // trimmed)". The bug: members are lowercased but not trimmed.
  'roster-members-untrimmed': {
    rule: 'ra.drive.group-roster-check',
    what: 'a roster listing the member between spaces gives nothing (403)',
    wire: answer(
      (req) => {
        const members = (rosterSent(req)?.value as { members?: unknown } | null | undefined)?.members;
        return Array.isArray(members) && members.some((m) => typeof m === 'string' && m !== m.trim());
      },
      () => jsonAnswer({ error: 'not_authorized', detail: 'the group roster is not taken: it does not list the caller' }, 403),
    ),
  },
  // ra.drive.group-roster-check (project): "a roster is taken when it is a group roster object".
  // The bug: the roster's fields are read from whatever the JSON is, so `null` throws: a 500.
  'roster-null-crash': {
    rule: 'ra.drive.group-roster-check',
    what: 'a roster header of the JSON null is answered 500',
    wire: answer((req) => rosterSent(req)?.value === null, crashed),
  },
  // ra.drive.link-opens (project): "except that the download its last open started may read the
  // rest of that version's chunks ... for 10 minutes". The bug: a link with no opens left serves
  // nothing, so the download that spent its last open stops after its first chunk.
  'link-download-cut': {
    rule: 'ra.drive.link-opens',
    what: "a chunk read through a link whose answer is 404 (no opens left) is answered 410, the rest of the last download's chunks too",
    wire: async (req, next) => {
      const url = new URL(req.url);
      const m = /^\/drive\/([^/]+)\/nodes\/[0-9a-f]{32}(?:\/versions\/[0-9a-f]{32})?\/chunks\/[0-9a-f]{64}$/.exec(url.pathname);
      const link = req.headers.get(ids.header_link);
      if (req.method !== 'GET' || !m || link === null) return next(req);
      const answer = await next(new Request(new URL(`/drive/${m[1]}/links/${encodeURIComponent(link)}`, url), { method: 'GET' }));
      return answer.status === 404 ? jsonAnswer({ error: 'link_gone', detail: 'the link has no opens left' }, 410) : next(req);
    },
  },
  // ra.drive.link-opens (project): "a link with no opens left, or past `expires`, answers 410
  // `link_gone`". The bug: only a spent download is gone; a link past its time reads as one with
  // no role, 403, wherever no chunk is read.
  'link-expired-403': {
    rule: 'ra.drive.link-opens',
    what: 'a node read through a link past its expires is answered 403 not_authorized',
    wire: async (req, next) => {
      const res = await next(req);
      const chunk = /\/chunks\/[0-9a-f]{64}$/.test(new URL(req.url).pathname);
      return res.status === 410 && req.headers.has(ids.header_link) && !chunk ? jsonAnswer({ error: 'not_authorized', detail: 'the link gives no role here' }, 403) : res;
    },
  },
};
