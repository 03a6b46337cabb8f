// Members of a group identity (document 3, Drive API): a caller proves itself with its own
// challenge headers and adds X-Svc-Group-Roster, the group's signed roster; the drive then treats
// it as the group for the group's shares (ra.drive.group-members). A roster is taken only when the
// group signed it, lists the caller, and is not older than the group's public epoch
// (ra.drive.group-roster-check), so a member removed in a later epoch cannot replay an old one.
import { decodeBase64Any } from '../../../protocol/common/base64.ts';
import { verifyDrive } from '../../../protocol/relay/drive/sign.ts';
import { HttpError, ruleError } from '../../shared/errors.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { lookup, relayBase, type DirectoryContext } from '../directory.ts';
import { systemDocument, type SystemReadContext } from '../system-files.ts';
import type { RelayContext } from '../config.ts';
import { parseJson } from '../../shared/json.ts';

/** What this module uses of the relay's context. */
export type GroupsContext = Pick<RelayContext, 'config'> & DirectoryContext & SystemReadContext;

type Obj = Record<string, unknown>;
const ROSTER_FILE = 'public/group-roster.json';
const refuse = (detail: string) => new HttpError(403, 'not_authorized', `the group roster is not taken: ${detail}`, 'ra.drive.group-roster-check');
const norm = (v: unknown) => (typeof v === 'string' ? v.trim().toLowerCase() : '');

/** The drive's seams a roster is checked through (access.ts's DriveSeams). */
interface RosterSeams {
  rosterPasses(check: 'listed' | 'signed', holds: () => boolean): boolean;
  epochChecked(group: string): boolean;
}

/** The group whose shares `caller` may use, from its X-Svc-Group-Roster header value. */
export async function rosterGroup(ctx: GroupsContext, header: string, caller: string, seams: RosterSeams): Promise<string> {
  if (header.length > limits.drive_group_roster_header_max_bytes)
    throw ruleError(431, 'ra.drive.group-roster-size', `${ctx.config.profile.ids.header_group_roster} is longer than ${limits.drive_group_roster_header_max_bytes} characters`);
  const bytes = decodeBase64Any(header);
  const parsed = bytes ? parseJson(bytes) : undefined;
  if (!parsed?.ok) throw new HttpError(400, 'invalid_request', `${ctx.config.profile.ids.header_group_roster} is base64url JSON (a signed group roster)`, 'ra.drive.group-roster-check');
  const roster = parsed.value;
  if (typeof roster !== 'object' || roster === null || Array.isArray(roster)) throw refuse('it is not a roster object');
  const r = roster as Obj;
  const group = norm(r.group);
  if (!group || norm(r.owner) !== group) throw refuse('its group and owner are not the same identity');
  const members = Array.isArray(r.members) ? r.members.map(norm) : [];
  if (!seams.rosterPasses('listed', () => members.includes(caller))) throw refuse(`it does not list ${caller}`);
  const known = await lookup(ctx, group);
  if (!known) throw refuse(`${group} cannot be resolved`);
  if (!seams.rosterPasses('signed', () => known.keys.some((k) => verifyDrive(ctx.config.profile, 'group-roster', r, k)))) throw refuse(`its signature does not verify with ${group}'s keys`);
  const epoch = typeof r.epoch === 'number' ? r.epoch : 0;
  if (seams.epochChecked(group)) {
    const current = known.local ? await localEpoch(ctx, group) : await remoteEpoch(known.relay, group);
    if (current === undefined) throw refuse(`${group}'s public epoch could not be learned from its relay`);
    if (epoch < current) throw refuse(`its epoch ${epoch} is below the group's current epoch ${current}`);
  }
  return group;
}

async function localEpoch(ctx: GroupsContext, group: string): Promise<number> {
  const stored = await systemDocument(ctx, group, ROSTER_FILE);
  return stored && Array.isArray(stored.admins) && typeof stored.epoch === 'number' ? stored.epoch : 0;
}

async function remoteEpoch(relay: string | undefined, group: string): Promise<number | undefined> {
  if (!relay) return undefined;
  try {
    const res = await fetch(`${relayBase(relay)}/groups/${encodeURIComponent(group)}/epoch`, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5_000) });
    const body = res.status === 200 ? ((await res.json()) as Obj) : undefined;
    return typeof body?.epoch === 'number' ? body.epoch : undefined;
  } catch {
    return undefined;
  }
}
