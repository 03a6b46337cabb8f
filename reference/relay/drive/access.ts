// Who calls a drive and what they may do (document 3, Drive API): the owner anything; a member,
// homed here or on another relay, what the roles of its live shares on the node and its ancestors
// allow (ra.drive.roles); a link holder what the link's role allows, after its verifier and
// proof-of-work (ra.drive.link-auth, ra.drive.link-opens). Members and the owner prove themselves
// with the challenge headers (or a signed request), checked with the keys lookup() finds.
import { createHash, randomBytes } from 'node:crypto';
import { decodeBase64Any } from '../../../protocol/common/base64.ts';
import { checkPow, clampPowBits } from '../../../protocol/relay/drive/pow.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { HttpError, ruleError } from '../../shared/errors.ts';
import type { RelayContext } from '../config.ts';
import { lookup, type Known, type DirectoryContext } from '../directory.ts';
import type { OwnerCall } from '../inbox.ts';
import type { RelayState } from '../state.ts';
import type { ChunkStore } from './chunks.ts';
import { rosterGroup, type GroupsContext } from './groups.ts';
import type { DriveEvents } from './events.ts';
import type { DriveStore, NodeRow, ShareRow } from './store.ts';
import { ALLOW, type Action, type DriveSeams, type Role } from './roles.ts';

/** What this module uses of the relay's context. */
export type AccessContext = Pick<RelayContext, 'auth' | 'config' | 'now' | 'state'> & DirectoryContext & GroupsContext;

export { ALLOW, type Action, type DriveSeams, type Role } from './roles.ts';

/** A member's `groups`: group identities whose roster it presented (ra.drive.group-members). */
export type Caller = { kind: 'owner'; known: Known } | { kind: 'member'; known: Known; groups: string[] } | { kind: 'link'; share: ShareRow };

/** What every drive handler gets. */
export interface Drive {
  ctx: AccessContext;
  store: DriveStore;
  chunks: ChunkStore;
  events: DriveEvents;
  links: LinkTokens;
  quota: number;
}

export const RULE_SEAMS: DriveSeams = {
  allows: (action, roles) => ALLOW[action].some((r) => roles.has(r)),
  covers: (_d, _drive, share, lineage) => lineage.some((n) => n.node === share.node),
  expired: (share, now) => share.expires_at !== null && share.expires_at <= now,
  verifies: (hash, sent) => {
    const verifier = decodeBase64Any(sent ?? '');
    return verifier !== undefined && createHash('sha256').update(verifier).digest('hex') === hash;
  },
  ownerUnproven: () => false,
  admits: () => true,
  roster: (header) => header,
  rosterPasses: (_check, holds) => holds(),
  epochChecked: () => true,
  worked: async (live, solves) => (await live()) && solves(),
  spent: (share) => share.downloads > 0 && share.used >= share.downloads,
  spendOpen: (spend) => spend(),
  chunkServed: (referenced) => referenced(),
  held: (stored) => stored,
  changesAfter: (cursor) => cursor,
  changeFiltered: () => true,
  endsRevoked: () => true,
  commitsWhole: () => true,
  onHead: (parent, head) => parent === head,
  memberShares: (shares) => shares,
  nodeSharesFrom: (lineage) => lineage,
};

/** The drive's seams: the rule's, with a variant's replacements when one is configured. */
export const driveSeams = (config: Pick<RelayContext['config'], 'driveSeams'>): DriveSeams => (config.driveSeams ? { ...RULE_SEAMS, ...config.driveSeams } : RULE_SEAMS);
const seams = (d: Drive): DriveSeams => driveSeams(d.ctx.config);

/** The drive of `identity`, hosted here; 404 otherwise. */
export async function hostedDrive(d: Drive, identity: string): Promise<string> {
  const known = await lookup(d.ctx, identity);
  if (!known?.local) throw ruleError(404, 'ra.errors.not-found', `${identity} has no drive here`);
  return known.identity;
}

/** Authenticates the caller of a drive request. */
export async function callerOf(d: Drive, drive: string, call: OwnerCall): Promise<Caller> {
  const ids = d.ctx.config.profile.ids;
  const link = call.req.headers.get(ids.header_link);
  if (link !== null) return { kind: 'link', share: await linkShare(d, drive, link, call.req.headers, call.target) };
  const claimed = call.req.headers.get(ids.header_identity);
  if (claimed === null && seams(d).ownerUnproven(drive)) return { kind: 'owner', known: (await lookup(d.ctx, drive))! };
  if (claimed === null)
    throw ruleError(401, 'ra.errors.challenge-invalid', `the drive needs the challenge headers (${ids.header_identity}, ${ids.header_challenge}, ${ids.header_signature}) or ${ids.header_link}`);
  const known = await lookup(d.ctx, claimed);
  if (!known) throw ruleError(401, 'ra.errors.challenge-invalid', `${claimed} cannot be resolved, so its proof cannot be checked`);
  if (!seams(d).admits(known)) throw ruleError(401, 'ra.errors.challenge-invalid', `${claimed} is not homed here`);
  await d.ctx.auth.owner(known.identity, { headers: call.req.headers, method: call.req.method, target: call.target, body: call.body }, async () => known.keys);
  if (known.identity === drive) return { kind: 'owner', known };
  const roster = seams(d).roster(call.req.headers.get(ids.header_group_roster));
  const groups = roster === null ? [] : [await rosterGroup(d.ctx, roster, known.identity, seams(d))];
  return { kind: 'member', known, groups };
}

async function linkShare(d: Drive, drive: string, link: string, headers: Headers, target: string): Promise<ShareRow> {
  const ids = d.ctx.config.profile.ids;
  const share = /^[0-9a-f]{32}$/.test(link) ? await d.store.shareByLink(drive, link) : undefined;
  if (!share) throw new HttpError(403, 'not_authorized', `${ids.header_link} names no live link of this drive`, 'ra.drive.link-auth');
  if (gone(d, share) && !(await finishing(d, share, target))) throw ruleError(410, 'ra.drive.link-opens', 'the link has expired or has no opens left');
  const body = JSON.parse(share.body) as { verifier_hash?: string; pow?: number };
  if (body.verifier_hash) {
    if (!seams(d).verifies(body.verifier_hash, headers.get(ids.header_link_verifier)))
      throw new HttpError(403, 'not_authorized', `a password link needs the right ${ids.header_link_verifier}`, 'ra.drive.link-auth');
  }
  if ((body.pow ?? 0) > 0) {
    const [token = '', solution = ''] = (headers.get(ids.header_link_pow) ?? '').split('.', 2);
    if (
      !(await seams(d).worked(
        () => d.links.live(share.id, token),
        () => checkPow(token, solution, clampPowBits(body.pow!)),
      ))
    )
      throw new HttpError(403, 'not_authorized', `this link asks for ${ids.header_link_pow}: <token>.<solution> solving its link answer's token`, 'ra.drive.link-opens');
  }
  return share;
}

/** How long the rest of a download may follow the read of its first chunk that spent the last open. */
const DOWNLOAD_WINDOW_MS = 10 * 60_000;

/** Where a download under a link started (its first chunk's read), kept DOWNLOAD_WINDOW_MS in the relay's state. */
interface Download {
  node: string;
  version?: string;
}
const downloadKey = (share: string) => `drive-download:${share}`;

/** The link's open just spent started a download of `node` (at `version`, or its records). */
export async function downloadStarted(d: Drive, share: string, open: Download): Promise<void> {
  await d.ctx.state.putValue(downloadKey(share), JSON.stringify(open), DOWNLOAD_WINDOW_MS);
}

/**
 * A download spends its open on its first chunk (ra.drive.link-opens), so a link whose last open
 * that read spent still reads the rest of that version (or the node's records), unexpired,
 * for DOWNLOAD_WINDOW_MS, at any of the relay's processes; whether the chunk belongs to it is
 * the chunk handler's check.
 */
async function finishing(d: Drive, share: ShareRow, target: string): Promise<boolean> {
  const stored = await d.ctx.state.value(downloadKey(share.id));
  const open = stored === undefined ? undefined : (JSON.parse(stored) as Download);
  if (!open || expired(d, share)) return false;
  const m = /^\/drive\/[^/]+\/nodes\/([0-9a-f]{32})(?:\/versions\/([0-9a-f]{32}))?\/chunks\/[0-9a-f]{64}$/.exec(target.split('?')[0]!);
  return m !== null && m[1] === open.node && m[2] === open.version;
}

/** An expired link, or one with no opens left. */
export function gone(d: Drive, share: ShareRow): boolean {
  if (expired(d, share)) return true;
  return seams(d).spent(share);
}

/** The node and its folders up to the root, nearest first (a bounded walk: a tree, never a loop). */
export async function lineage(d: Drive, drive: string, node: string): Promise<NodeRow[]> {
  const out: NodeRow[] = [];
  const seen = new Set<string>();
  for (let at = await d.store.node(drive, node); at && !seen.has(at.node); at = at.folder ? await d.store.node(drive, at.folder) : undefined) {
    seen.add(at.node);
    out.push(at);
  }
  return out;
}

/** The roles `caller` holds on `node` (the union over its live shares on the node and its ancestors). */
export async function rolesOn(d: Drive, drive: string, caller: Caller, node: string): Promise<Set<Role>> {
  if (caller.kind === 'owner') return new Set(['read', 'write', 'admin', 'append', 'create']);
  const above = await lineage(d, drive, node);
  const holds = async (s: ShareRow) => (await seams(d).covers(d, drive, s, above)) && !expired(d, s);
  const shares = await sharesOfCaller(d, drive, caller);
  const held = await Promise.all(shares.map(holds));
  return new Set(shares.filter((_, i) => held[i]).map((s) => s.role as Role));
}

/** The live shares a member or link holder calls with: its own, and those of the groups it proved. */
export async function sharesOfCaller(d: Drive, drive: string, caller: Exclude<Caller, { kind: 'owner' }>): Promise<ShareRow[]> {
  if (caller.kind === 'link') return [caller.share];
  const lists = await Promise.all([caller.known.identity, ...caller.groups].map((who) => d.store.sharesOf(drive, who)));
  return lists.flat();
}

const expired = (d: Drive, s: ShareRow) => seams(d).expired(s, d.ctx.now());

export async function may(d: Drive, drive: string, caller: Caller, node: string, action: Action): Promise<boolean> {
  return seams(d).allows(action, await rolesOn(d, drive, caller, node));
}

export async function require(d: Drive, drive: string, caller: Caller, node: string, action: Action): Promise<void> {
  if (!(await may(d, drive, caller, node, action))) throw new HttpError(403, 'not_authorized', `the caller may not ${action} here (ra.drive.roles)`, 'ra.drive.roles');
}

/** Any live share at all (the owner always): who may open the drive's stream, list shares, upload. */
export async function anyRole(d: Drive, drive: string, caller: Caller): Promise<Set<Role>> {
  if (caller.kind === 'owner') return new Set(['read', 'write', 'admin', 'append', 'create']);
  return new Set((await sharesOfCaller(d, drive, caller)).filter((s) => !expired(d, s)).map((s) => s.role as Role));
}

/** Proof-of-work tokens a link's answer hands out, good for a while at any of the relay's processes (ra.drive.link-opens). */
export class LinkTokens {
  constructor(readonly state: RelayState) {}

  async issue(share: string): Promise<string> {
    const token = randomBytes(16).toString('base64url');
    await this.state.putValue(`drive-pow:${token}`, share, limits.drive_link_pow_token_seconds * 1000);
    return token;
  }

  async live(share: string, token: string): Promise<boolean> {
    return token !== '' && (await this.state.value(`drive-pow:${token}`)) === share;
  }
}
