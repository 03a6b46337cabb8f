// The project's decisions on the owner surface, judged across their matrix (profile checks,
// spec/facets/relay-owner.yaml): the group roster a group identity keeps as a system document
// (each signed list or value altered alone after signing, signed by a member or by a stranger, its member
// cap at 1000 and 1001), the system document's size cap at 64 KiB and one byte more, and the
// inbox policy's matching of senders against contacts.json (case, near misses, a contact removed).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { now, type RelayIdentity } from '../../../actors/relay/index.ts';
import { learnSystemPath } from '../../../actors/relay/owner.ts';
import { sign } from '../../../impl/noble.ts';
import { driveString } from '../../../impl/noble-drive.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { expectInbox, mail } from './messaging.ts';
import { CheckFailure, safeJson, said, type RelayTarget, type Session } from '../driver.ts';

const LANE = 'relay/owner-profile';
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const refused = (r: HttpResponse) => r.status >= 400 && r.status < 500;

/** A group identity's roster signed by `by` over `signed`, sent with `sent` laid over it. */
function roster(s: Session, group: RelayIdentity, signed: Record<string, unknown>, by: RelayIdentity = group, sent: Record<string, unknown> = {}): string {
  const doc: Record<string, unknown> = { group: group.identity, owner: group.identity, members: [group.identity], admins: [group.identity], epoch: 2, updated_at: now(), ...signed };
  return JSON.stringify({ ...doc, signature: encodeBase64url(sign(by.seed, driveString(s.profile, 'group-roster', doc))), ...sent });
}

/** group and owner must name the identity itself (in any case), so they have no other valid value to swap. */
const PARTS = ['members', 'admins', 'epoch', 'updated-at', 'signer-member', 'signer-stranger'] as const;

function rosterMatrixCheck(t: RelayTarget): Check {
  const max = limits.drive_group_max_members;
  return relayCheck(t, {
    id: 'relay/profile/roster-matrix',
    lane: LANE,
    title: `a group identity's roster with one signed part altered after signing (members, admins, epoch, updated_at), or signed by a member or a stranger, is refused 400 and its epoch unchanged; ${max} members are taken, ${max + 1} refused`,
    rules: ['ra.system.group-roster'],
    cells: [
      ...PARTS.map((value) => ({ rule: 'ra.system.group-roster' as const, facet: 'binding', value, operation: 'systemPut' })),
      { rule: 'ra.system.group-roster', facet: 'limit', value: 'at', operation: 'systemPut' },
      { rule: 'ra.system.group-roster', facet: 'limit', value: 'past', operation: 'systemPut' },
    ],
    run: async (s, e) => {
      const [group, member, stranger] = await Promise.all([s.identity(), s.identity(), s.identity()]);
      const members = [group.identity, member.identity];
      const first = roster(s, group, { members, epoch: 3 });
      const { path, answer } = await learnSystemPath(s.relay, group, 'public/group-roster.json', first);
      if (!e.that(ok(answer), `the group's own roster (epoch 3) answered ${said(answer)}`)) return;
      const altered: Record<(typeof PARTS)[number], string> = {
        members: roster(s, group, { members, epoch: 4 }, group, { members: [...members, stranger.identity] }),
        admins: roster(s, group, { members, epoch: 4 }, group, { admins: [group.identity, member.identity] }),
        epoch: roster(s, group, { members, epoch: 4 }, group, { epoch: 9 }),
        'updated-at': roster(s, group, { members, epoch: 4 }, group, { updated_at: now(60) }),
        'signer-member': roster(s, group, { members, epoch: 4 }, member),
        'signer-stranger': roster(s, group, { members, epoch: 4 }, stranger),
      };
      for (const part of PARTS) {
        const r = await s.relay.systemFile(group, 'PUT', path, altered[part]);
        e.that(r.status === 400, `a roster whose ${part} differs from what was signed answered ${said(r)}, expected 400`);
      }
      const epoch = await s.relay.get(`/groups/${encodeURIComponent(group.identity)}/epoch`);
      e.that((safeJson(epoch) as { epoch?: unknown } | undefined)?.epoch === 3, `after the refused rosters the group's epoch answered ${said(epoch)}, expected 3`);
      const kept = await s.relay.systemFile(group, 'GET', path);
      e.that(kept.text() === first, `after the refused rosters the stored one reads ${said(kept)}`);
      const names = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? group.identity : `m${i}-${randomBytes(3).toString('hex')}.example.org`));
      const atCap = await s.relay.systemFile(group, 'PUT', path, roster(s, group, { members: names(max), epoch: 5 }));
      e.that(ok(atCap), `a roster of ${max} members answered ${said(atCap)}`);
      const pastCap = await s.relay.systemFile(group, 'PUT', path, roster(s, group, { members: names(max + 1), epoch: 6 }));
      e.that(pastCap.status === 400, `a roster of ${max + 1} members answered ${said(pastCap)}, expected 400`);
    },
  });
}

function systemSizeCheck(t: RelayTarget): Check {
  const max = limits.system_file_max_bytes;
  return relayCheck(t, {
    id: 'relay/profile/system-size',
    lane: LANE,
    title: `a system document of ${max} bytes as written is taken, one of ${max + 1} refused and the stored one kept`,
    rules: ['ra.system.paths'],
    cells: [
      { rule: 'ra.system.paths', facet: 'limit', value: 'at', operation: 'systemPut' },
      { rule: 'ra.system.paths', facet: 'limit', value: 'past', operation: 'systemPut' },
    ],
    run: async (s, e) => {
      const owner = await s.identity();
      // Padded with white space after the document: the same JSON, `bytes` long as sent.
      const sized = (bytes: number, who: string) => {
        const doc = JSON.stringify({ version: 1, contacts: [{ identity: `${who}.example.org`, state: 'accepted' }] });
        return doc + ' '.repeat(bytes - Buffer.byteLength(doc));
      };
      const { path, answer } = await learnSystemPath(s.relay, owner, 'relay/contacts.json', sized(max, 'at-cap'));
      if (answer.status === 404) throw new CheckFailure(`no path form of contacts.json was found: ${said(answer)}`);
      e.that(ok(answer), `a contacts.json of ${max} bytes answered ${said(answer)}`);
      const past = await s.relay.systemFile(owner, 'PUT', path, sized(max + 1, 'past-cap'));
      e.that(refused(past), `a contacts.json of ${max + 1} bytes answered ${said(past)}, expected a refusal`);
      const kept = await s.relay.systemFile(owner, 'GET', path);
      e.that(kept.text().includes('at-cap.example.org'), `after the refused write contacts.json reads ${said(kept)}`);
    },
  });
}

function inboxPolicyMatrixCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/inbox-policy-matrix',
    lane: LANE,
    title:
      'under contacts_only a sender listed in upper case is delivered, one whose ID merely ends like a listed contact is refused 403; a sender blocked in upper case is refused; a contact taken off the list is then refused, and nothing refused reaches the inbox',
    rules: ['ra.inbox.policy'],
    cells: [
      { rule: 'ra.inbox.policy', facet: 'normalization', value: 'upper-case', operation: 'postMessage' },
      { rule: 'ra.inbox.policy', facet: 'normalization', value: 'near-miss', operation: 'postMessage' },
      { rule: 'ra.inbox.policy', facet: 'lifecycle', value: 'contact', operation: 'postMessage' },
    ],
    run: async (s, e) => {
      const [owner, friend, lookalike, foe] = await Promise.all([s.identity(), s.identity(), s.identity(), s.identity()]);
      const contacts = (entries: Array<[string, string]>) => JSON.stringify({ version: 1, contacts: entries.map(([identity, state]) => ({ identity, state })) });
      // The lookalike's ID minus its first character: a valid service ID that is only its suffix.
      const list = contacts([
        [friend.identity.toUpperCase(), 'accepted'],
        [lookalike.identity.slice(1), 'accepted'],
        [foe.identity.toUpperCase(), 'blocked'],
      ]);
      const { path: contactsPath, answer } = await learnSystemPath(s.relay, owner, 'relay/contacts.json', list);
      if (!e.that(ok(answer), `the owner's contacts.json answered ${said(answer)}`)) return;
      const { answer: policy } = await learnSystemPath(s.relay, owner, 'relay/inbox-policy.json', JSON.stringify({ version: 1, mode: 'contacts_only' }));
      if (!e.that(ok(policy), `the owner's inbox-policy.json (contacts_only) answered ${said(policy)}`)) return;
      const fromFriend = mail(s, friend, owner, 'listed in upper case');
      const delivered = await s.relay.send(fromFriend);
      e.that(delivered.status === 202, `a message from a contact listed in upper case answered ${said(delivered)}, expected 202`);
      const near = await s.relay.send(mail(s, lookalike, owner, 'a suffix is not me'));
      e.that(near.status === 403, `a message from ${lookalike.identity}, whose ID only ends like the contact ${lookalike.identity.slice(1)}, answered ${said(near)}, expected 403`);
      const blocked = await s.relay.send(mail(s, foe, owner, 'blocked in upper case'));
      e.that(blocked.status === 403, `a message from a sender blocked in upper case answered ${said(blocked)}, expected 403`);
      const removed = await s.relay.systemFile(owner, 'PUT', contactsPath, contacts([[foe.identity, 'blocked']]));
      if (!e.that(ok(removed), `taking the friend off contacts.json answered ${said(removed)}`)) return;
      const after = await s.relay.send(mail(s, friend, owner, 'no longer a contact'));
      e.that(after.status === 403, `a message from a contact taken off the list answered ${said(after)}, expected 403`);
      await expectInbox(s, e, owner, [fromFriend]);
    },
  });
}

function keystoreCapCheck(t: RelayTarget): Check {
  const max = limits.keystore_enrollments_max;
  return relayCheck(t, {
    id: 'relay/profile/keystore-cap',
    lane: LANE,
    title: `an identity's keystore takes ${max} enrollments and refuses one more (400), while another identity still enrolls; replacing an enrollment at the cap is taken`,
    rules: ['ra.keystore.enrollment-shape'],
    cells: ['at', 'past', 'other-scope'].map((value) => ({ rule: 'ra.keystore.enrollment-shape' as const, facet: 'limit', value, operation: 'keystoreEnroll' })),
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const enrollment = (n: number) => ({
        enrollment_id: `cap-${n}`,
        kind: 'recovery-kit',
        wrap: 'passphrase',
        wrapped: JSON.stringify({ iv: randomBytes(12).toString('base64url'), ciphertext: randomBytes(32).toString('base64url') }),
      });
      const answers = await Promise.all(Array.from({ length: max }, (_, i) => s.relay.keystoreEnroll(owner, enrollment(i))));
      const refusedAt = answers.findIndex((r) => r.status !== 200);
      e.that(refusedAt === -1, `enrollment ${refusedAt + 1} of ${max} answered ${said(answers[refusedAt] ?? answers[0]!)}, expected 200`);
      const past = await s.relay.keystoreEnroll(owner, enrollment(max));
      e.that(past.status === 400, `enrollment ${max + 1} answered ${said(past)}, expected 400`);
      const again = await s.relay.keystoreEnroll(owner, enrollment(0));
      e.that(again.status === 200, `replacing an enrollment at the cap answered ${said(again)}, expected 200`);
      const elsewhere = await s.relay.keystoreEnroll(other, enrollment(0));
      e.that(elsewhere.status === 200, `another identity's enrollment while the first is at its cap answered ${said(elsewhere)}, expected 200`);
    },
  });
}

export function ownerProfileMatrixChecks(t: RelayTarget): Check[] {
  return [rosterMatrixCheck(t), systemSizeCheck(t), inboxPolicyMatrixCheck(t), keystoreCapCheck(t)];
}
