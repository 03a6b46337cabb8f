// The reference relay's drive broken one way each, as a drive implementer could ship it (issue 25:
// "broken relays written independently of our suites ... passed the drive suite"). Where the bug
// shows on the wire it is a wire variant (wire.ts); where it is an access decision the wire cannot
// take for the relay (who holds which role on which node, when a share ends), the variant
// replaces that decision through the relay's `driveSeams` (reference/relay/drive/access.ts),
// read at start from SVC_REFERENCE_WIRE=drive/<name>.
import { profileFor } from '../../protocol/common/profile.ts';
import type { DriveSeams } from '../relay/drive/access.ts';
import { RULE_SEAMS } from '../relay/drive/access.ts';
import { DRIVE_ACCESS_WIRE } from './drive-access.ts';
import { editRequest, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;
const pass: Wire = (req, next) => next(req);

export interface DriveVariant extends WireVariant {
  /** Access decisions replaced in the relay (the rest stay the rule's). */
  seams?: Partial<DriveSeams>;
}

/** `/drive/:identity/<rest>` of a request, when it is one. */
function drivePath(url: URL): { drive: string; rest: string } | undefined {
  const m = /^\/drive\/([^/]+)(\/.*)?$/.exec(url.pathname);
  return m ? { drive: decodeURIComponent(m[1]!), rest: m[2] ?? '' } : undefined;
}
const caller = (req: Request) => req.headers.get(ids.header_identity);

/**
 * The stream of a member answered as the relay answers it, but left open when the relay ends it
 * (its `drive.revoked` dropped, keepalives after), until the member goes away; with `keepOpen`,
 * only when that says so at the relay's end (the frames passed as they are).
 */
function heldOpen(res: Response, keepOpen?: () => boolean): Response {
  const upstream = res.body!.getReader();
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      void (async () => {
        const decoder = new TextDecoder();
        let buffered = '';
        for (;;) {
          const { value, done } = await upstream.read().catch(() => ({ value: undefined, done: true as const }));
          if (done) break;
          buffered += decoder.decode(value, { stream: true });
          for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
            const frame = buffered.slice(0, end + 2);
            buffered = buffered.slice(end + 2);
            if (keepOpen || !frame.startsWith('event: drive.revoked')) controller.enqueue(encoder.encode(frame));
          }
        }
        if (cancelled) return;
        if (!keepOpen || keepOpen()) timer = setInterval(() => controller.enqueue(encoder.encode(': keepalive\n\n')), 25_000);
        else controller.close();
      })();
    },
    cancel() {
      cancelled = true;
      clearInterval(timer);
      void upstream.cancel().catch(() => undefined);
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

/** A member's drive event streams never end from the relay's side. */
const streamsHeldOpen: Wire = async (req, next) => {
  const res = await next(req);
  const at = drivePath(new URL(req.url));
  const who = caller(req);
  if (req.method !== 'GET' || at?.rest !== '/events' || who === null || who === at.drive || res.status !== 200 || !res.body) return res;
  return heldOpen(res);
};

/**
 * A member's drive event stream ends only on an unshare: when the relay ends it and no unshare was
 * committed on its drive since it opened (its last share expired), it is held open.
 */
function streamsEndOnUnshareOnly(): Wire {
  const unshared = new Map<string, number>();
  return async (req, next) => {
    const url = new URL(req.url);
    const at = drivePath(url);
    const who = caller(req);
    if (req.method === 'POST' && at?.rest === '/commit') {
      const sent = await req.clone().text();
      const res = await next(req);
      if (res.status < 300 && sent.includes('"unshare"')) unshared.set(at.drive, Date.now());
      return res;
    }
    const opened = Date.now();
    const res = await next(req);
    if (req.method !== 'GET' || at?.rest !== '/events' || who === null || who === at.drive || res.status !== 200 || !res.body) return res;
    return heldOpen(res, () => (unshared.get(at.drive) ?? 0) < opened);
  };
}

/**
 * The first roster a member presented that the relay took is kept for that member on that drive,
 * and sent in place of any other roster (or none) it presents later.
 */
function rosterCached(): Wire {
  const kept = new Map<string, string>();
  return async (req, next) => {
    const at = drivePath(new URL(req.url));
    const who = caller(req);
    if (!at || who === null) return next(req);
    const key = `${at.drive} ${who}`;
    const sent = req.headers.get(ids.header_group_roster);
    const cached = kept.get(key);
    let forwarded = req;
    if (cached !== undefined && sent !== cached) {
      const headers = new Headers(req.headers);
      headers.set(ids.header_group_roster, cached);
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
      forwarded = new Request(req.url, { method: req.method, headers, ...(body !== undefined ? { body } : {}) });
    }
    const res = await next(forwarded);
    if (sent !== null && cached === undefined && res.status >= 200 && res.status < 300) kept.set(key, sent);
    return res;
  };
}

/**
 * A member's chunk requests to another's drive counted against the member's own: the missing list
 * and uploads are taken as the member's own drive's (its challenge does not bind the path), so the
 * drive's bytes used and its quota never see what its members upload.
 */
const quotaPerIdentity: Wire = editRequest(
  (req, url) => {
    const at = drivePath(url);
    const who = caller(req);
    return at !== undefined && who !== null && who !== at.drive && !req.headers.has(ids.header_link) && (at.rest === '/chunks/missing' || /^\/chunks\/[0-9a-f]{64}$/.test(at.rest));
  },
  async (req, url) => {
    const at = drivePath(url)!;
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
    const moved = new URL(`/drive/${encodeURIComponent(caller(req)!)}${at.rest}${url.search}`, url);
    return new Request(moved, { method: req.method, headers: req.headers, ...(body !== undefined ? { body } : {}) });
  },
);

export const DRIVE_MATRIX_WIRE: Record<string, DriveVariant> = {
  // "append role allowed to overwrite": the append role is taken for a writer of the file.
  'append-overwrites': {
    rule: 'ra.drive.members',
    what: 'a member with `append` replaces, moves and removes what its share covers',
    wire: pass,
    seams: { allows: (action, roles) => RULE_SEAMS.allows(action, roles) || (action === 'write' && roles.has('append')) },
  },
  // A blind broken server (drive-01, written without the suites): "a write share is allowed to do what only admin may (create and revoke shares)".
  'write-shares': {
    rule: 'ra.drive.roles',
    what: 'a member with `write` shares and unshares as an admin does',
    wire: pass,
    seams: { allows: (action, roles) => RULE_SEAMS.allows(action, roles) || (action === 'admin' && roles.has('write')) },
  },
  // "create role allowed to modify": creating in a folder is taken for writing there.
  'create-modifies': {
    rule: 'ra.drive.members',
    what: 'a member with `create` replaces, moves and removes nodes below its folder',
    wire: pass,
    seams: { allows: (action, roles) => RULE_SEAMS.allows(action, roles) || (action === 'write' && roles.has('create')) },
  },
  // "a share that grants siblings": the share is resolved to the folder holding the shared node.
  'share-grants-siblings': {
    rule: 'ra.drive.members',
    what: 'a share on a node holds on everything in the folder holding it',
    wire: pass,
    seams: {
      covers: async (d, drive, share, lineage) => {
        const folder = (await d.store.node(drive, share.node))?.folder ?? '';
        return RULE_SEAMS.covers(d, drive, share, lineage) || (folder !== '' && lineage.some((n) => n.folder === folder));
      },
    },
  },
  // "an expired share still readable": expiry stored in milliseconds, compared with seconds.
  'expired-share-live': {
    rule: 'ra.drive.members',
    what: "a share's expiry is compared in the wrong unit, so no share expires",
    wire: pass,
    seams: { expired: (share, now) => share.expires_at !== null && share.expires_at <= Math.floor(now / 1000) },
  },
  // "an unshared member's events stream still open".
  'unshared-stream-open': {
    rule: 'ra.drive.events-revocation',
    what: "a member's drive event stream stays open after its last share ends",
    wire: streamsHeldOpen,
  },
  // The reference before its fix: "today the reference closes streams only on unshare" (a
  // member's stream outlives its last share's expiry).
  'expired-stream-open': {
    rule: 'ra.drive.events-revocation',
    what: "a member's drive event stream closes when its last share is unshared, not when it expires",
    wire: streamsEndOnUnshareOnly(),
  },
  // "a removed roster member still allowed": the first roster taken is cached per member.
  'roster-cached': {
    rule: 'ra.drive.group-members',
    what: "a group member's first roster is kept and used whatever roster (or none) it sends later",
    wire: rosterCached(),
  },
  // "a link without its password opening": the verifier is checked only when one is sent.
  'link-password-optional': {
    rule: 'ra.drive.link-auth',
    what: 'a password link opens without X-Svc-Link-Verifier (a wrong one is still refused)',
    wire: pass,
    seams: { verifies: (hash, sent) => sent === null || RULE_SEAMS.verifies(hash, sent) },
  },
  // "quota counted per identity not per drive".
  'quota-per-identity': {
    rule: 'ra.drive.root',
    what: "a member's uploads to a drive are counted against the member's own drive, not the drive's",
    wire: quotaPerIdentity,
  },
};

/** The seams of the drive variant named in the environment, when one is (and breakage is allowed). */
export async function driveSeamsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<Partial<DriveSeams> | undefined> {
  const name = env.SVC_REFERENCE_WIRE ?? '';
  if (!name.startsWith('drive/') || env.SVC_REFERENCE_ALLOW_BREAKAGE !== '1') return undefined;
  const key = name.slice('drive/'.length);
  return (DRIVE_MATRIX_WIRE[key] ?? DRIVE_ACCESS_WIRE[key])?.seams;
}
