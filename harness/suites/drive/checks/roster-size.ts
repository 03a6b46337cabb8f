// How large a group roster the drive reads from its header (the project's decision, spec/rules
// ra.drive.group-roster-size): one of drive_group_max_members members and as many admins, up to
// drive_group_roster_header_max_bytes of base64url, reads; a longer one is refused 431. Found
// from outside against the reference (issue 26, item 4): a signed roster of 600 members got 431
// from the HTTP server's own 16 KiB header limit.
import type { Check } from '../../../run/model.ts';
import { groupRoster, rosterHeader } from '../../../actors/drive/objects.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import { refusedWith } from '../../../run/answers.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { ok, said, type DriveSession, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

const MAX = limits.drive_group_roster_header_max_bytes;
const FULL = limits.drive_group_max_members;

/**
 * The group's signed roster listing `member` among FULL members and the group among FULL admins,
 * each other name padded by `pad` characters and the last member's by `tail` more.
 */
function fullRoster(s: DriveSession, group: RelayIdentity, member: RelayIdentity, pad: number, tail = 0): string {
  const name = (kind: string, i: number) => `${kind}${i}-${'x'.repeat(pad)}.example.test`;
  const others = Array.from({ length: FULL - 1 }, (_, i) => name('m', i));
  others[others.length - 1] = `${'y'.repeat(tail)}${others[others.length - 1]}`;
  const members = [member.identity, ...others];
  const admins = [group.identity, ...Array.from({ length: FULL - 1 }, (_, i) => name('a', i))];
  return rosterHeader(groupRoster(s.profile, group.identity, group, { members, admins, epoch: 0 }));
}

/** A full roster header of exactly `MAX` characters (its JSON lengthened byte by byte), and one just past it. */
function atAndPast(s: DriveSession, group: RelayIdentity, member: RelayIdentity): { at: string; past: string } {
  const base = fullRoster(s, group, member, 0).length;
  // Each character of padding lengthens 2 * FULL - 2 names, by 4/3 in base64url.
  let pad = Math.floor((MAX - base) / (((2 * FULL - 2) * 4) / 3));
  while (fullRoster(s, group, member, pad).length > MAX) pad--;
  // Then one name, a byte at a time: MAX characters of base64url hold MAX * 3 / 4 bytes of JSON.
  const bytes = (header: string) => Buffer.from(header, 'base64url').length;
  let tail = Math.max(0, Math.floor((MAX * 3) / 4) - bytes(fullRoster(s, group, member, pad)));
  while (tail > 0 && fullRoster(s, group, member, pad, tail).length > MAX) tail--;
  return { at: fullRoster(s, group, member, pad, tail), past: fullRoster(s, group, member, pad, tail + 1) };
}

function rosterSize(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/group-roster-size',
    title: `a member reads through a group's share with a roster of ${FULL} members and ${FULL} admins in exactly ${MAX} characters of header; one a byte longer answers 431 \`invalid_request\``,
    rules: ['ra.drive.group-roster-size'],
    context: ['ra.drive.group-members'],
    cells: [
      { rule: 'ra.drive.group-roster-size', facet: 'limit', value: 'at', operation: 'driveNode' },
      { rule: 'ra.drive.group-roster-size', facet: 'limit', value: 'past', operation: 'driveNode' },
    ],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'g.txt', new Uint8Array(Buffer.from('g')));
      const [group, member] = [await s.identity('peer'), await s.identity('peer')];
      await s.share(id, { node: f.keys, role: 'read', member: { identity: group.identity, encryption: group.encryption.publicKey } });
      const { at, past } = atAndPast(s, group, member);
      if (!e.that(at.length === MAX, `the roster built to be ${MAX} characters long is ${at.length}`)) return;
      const read = await s.drive.node(id.identity, { ...s.actor(member), roster: at }, f.keys.node);
      e.that(ok(read), `a read with a full roster of ${at.length} characters answered ${said(read)}`);
      const over = await s.drive.node(id.identity, { ...s.actor(member), roster: past }, f.keys.node);
      e.that(refusedWith(over, 431, 'invalid_request'), `a read with a roster of ${past.length} characters answered ${said(over)}, expected 431 invalid_request`);
    },
  });
}

export function rosterSizeChecks(t: RelayTarget): Check[] {
  return [rosterSize(t)];
}
