// System files (document 3, System files): owner-only reads and writes, validated on write, and in
// the profile the project's paths, ETag and If-Match, and the inbox policy the relay enforces with
// them (contacts.json and inbox-policy.json).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { relayCheck } from '../check.ts';
import { codeOf, pickupOf, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import { expectInbox, mail } from './messaging.ts';
import { ack, adminEnvelope, archive, now, signingKey, type RelayIdentity } from '../../../actors/relay/index.ts';
import { sign } from '../../../impl/noble.ts';
import { driveString } from '../../../impl/noble-drive.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';

/** Its own lane: fresh identities only, overlapping the suite's other checks. */
export const LANE = 'relay/system';
const PROFILE = 'public/profile.json';
const CONTACTS = 'relay/contacts.json';
export const POLICY = 'relay/inbox-policy.json';
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const profileDoc = (name: string) => JSON.stringify({ version: 1, display_name: name });

function writeReadDeleteCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/system/write-read-delete',
    lane: LANE,
    title: 'the owner writes a system document, reads back what it wrote, deletes it, and then finds nothing',
    rules: ['ra.system.files'],
    run: async (s, e) => {
      const id = await s.identity();
      const put = await s.relay.systemFile(id, 'PUT', PROFILE, profileDoc('Ada'));
      if (!e.that(ok(put), `PUT ${PROFILE} answered ${said(put)}`)) return;
      const got = await s.relay.systemFile(id, 'GET', PROFILE);
      e.that(got.status === 200 && JSON.stringify(safeJson(got)) === profileDoc('Ada'), `GET ${PROFILE} answered ${said(got)}`);
      const del = await s.relay.systemFile(id, 'DELETE', PROFILE);
      e.that(ok(del), `DELETE ${PROFILE} answered ${said(del)}`);
      const after = await s.relay.systemFile(id, 'GET', PROFILE);
      e.that(after.status >= 400 && after.status < 500, `GET after the delete answered ${said(after)}`);
    },
  });
}

function ownerOnlyCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/system/owner-only',
    lane: LANE,
    title: "system documents refuse (401) a request without the owner's proof or signed by another key, and such a write changes nothing",
    rules: ['ra.system.files'],
    run: async (s, e) => {
      const id = await s.identity();
      await s.relay.systemFile(id, 'PUT', PROFILE, profileDoc('Owner'));
      const other = new Uint8Array(randomBytes(32));
      for (const [what, auth] of [
        ['no proof', { mode: 'none' as const }],
        ['another key', { mode: 'challenge' as const, seed: other }],
      ] as const) {
        const r = await s.relay.systemFile(id, 'GET', PROFILE, undefined, { auth });
        e.that(r.status === 401, `GET with ${what} answered ${said(r)}, expected 401`);
        const w = await s.relay.systemFile(id, 'PUT', PROFILE, profileDoc('Intruder'), { auth });
        e.that(w.status === 401, `PUT with ${what} answered ${said(w)}, expected 401`);
      }
      const kept = await s.relay.systemFile(id, 'GET', PROFILE);
      e.that(JSON.stringify(safeJson(kept)) === profileDoc('Owner'), `after the refused writes the document is ${kept.text().slice(0, 120)}`);
    },
  });
}

function validatedCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/system/validated',
    lane: LANE,
    title: 'a contacts list naming one identity twice, or an inbox policy of an unknown mode, is refused 400 and the stored document is kept',
    rules: ['ra.system.validated'],
    run: async (s, e) => {
      const id = await s.identity();
      const good = JSON.stringify({ version: 1, contacts: [{ identity: 'bob.example.org', state: 'accepted' }] });
      await s.relay.systemFile(id, 'PUT', CONTACTS, good);
      const dup = JSON.stringify({
        version: 1,
        contacts: [
          { identity: 'bob.example.org', state: 'accepted' },
          { identity: 'BOB.example.org', state: 'blocked' },
        ],
      });
      const r = await s.relay.systemFile(id, 'PUT', CONTACTS, dup);
      e.that(r.status === 400, `a contacts list naming bob twice answered ${said(r)}, expected 400`);
      const kept = await s.relay.systemFile(id, 'GET', CONTACTS);
      e.that(JSON.stringify(safeJson(kept)) === good, `after the refused write contacts.json is ${kept.text().slice(0, 160)}`);
      const mode = await s.relay.systemFile(id, 'PUT', POLICY, JSON.stringify({ version: 1, mode: 'everyone' }));
      e.that(mode.status === 400, `an inbox policy of mode "everyone" answered ${said(mode)}, expected 400`);
    },
  });
}

function profileSystemPathsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/system-files',
    lane: LANE,
    title: 'the system documents live at the project paths with an ETag; If-Match on another version answers 412 precondition_failed and changes nothing',
    rules: ['ra.system.paths', 'ra.system.etag'],
    run: async (s, e) => {
      const id = await s.identity();
      const unknown = await s.relay.systemFile(id, 'PUT', 'relay/secrets.json', '{}');
      e.that(unknown.status === 404 && codeOf(unknown) === 'not_found', `an unknown path answered ${said(unknown)}, expected 404 not_found`);
      const first = await s.relay.systemFile(id, 'PUT', PROFILE, profileDoc('One'));
      const etag = first.headers.etag;
      if (!e.that(first.status === 200 && typeof etag === 'string', `PUT answered ${said(first)} with ETag ${JSON.stringify(etag)}`)) return;
      const stale = await s.relay.systemFile(id, 'PUT', PROFILE, profileDoc('Two'), { headers: { 'if-match': '"stale"' } });
      e.that(stale.status === 412 && codeOf(stale) === 'precondition_failed', `If-Match on another version answered ${said(stale)}, expected 412 precondition_failed`);
      const kept = await s.relay.systemFile(id, 'GET', PROFILE);
      e.that(JSON.stringify(safeJson(kept)) === profileDoc('One') && kept.headers.etag === etag, `after the 412 the document is ${kept.text().slice(0, 120)}`);
      const fresh = await s.relay.systemFile(id, 'PUT', PROFILE, profileDoc('Three'), { headers: { 'if-match': etag! } });
      e.that(fresh.status === 200, `If-Match on the stored version answered ${said(fresh)}`);
    },
  });
}

function profileInboxPolicyCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/inbox-policy',
    lane: LANE,
    title: 'under contacts_only a message from an accepted contact is delivered, one from anyone else refused 403 not_authorized; a blocked sender is refused under any mode; acks pass either',
    rules: ['ra.inbox.policy'],
    run: async (s, e) => {
      const [owner, friend, stranger] = [await s.identity(), await s.identity(), await s.identity()];
      const contacts = { version: 1, contacts: [{ identity: friend.identity, state: 'accepted' }] };
      await s.relay.systemFile(owner, 'PUT', CONTACTS, JSON.stringify(contacts));
      await s.relay.systemFile(owner, 'PUT', POLICY, JSON.stringify({ version: 1, mode: 'contacts_only' }));
      const fromFriend = await s.relay.send(mail(s, friend, owner, 'hello'));
      e.that(fromFriend.status === 202, `a message from an accepted contact answered ${said(fromFriend)}`);
      const fromStranger = await s.relay.send(mail(s, stranger, owner, 'hello'));
      e.that(fromStranger.status === 403 && codeOf(fromStranger) === 'not_authorized', `under contacts_only a stranger's message answered ${said(fromStranger)}, expected 403 not_authorized`);
      // Acks are not filtered: the recipient's own mail, acknowledged, comes back whatever its policy.
      const acks = [ack(s.profile, stranger, owner.identity, 'm_under_contacts_only')];
      const ackUnderPolicy = await s.relay.ack(acks[0]!);
      e.that(ackUnderPolicy.status === 202, `under contacts_only a stranger's ack answered ${said(ackUnderPolicy)}, not 202 (acks are not filtered)`);
      await s.relay.systemFile(owner, 'PUT', POLICY, JSON.stringify({ version: 1, mode: 'open' }));
      await s.relay.systemFile(owner, 'PUT', CONTACTS, JSON.stringify({ version: 1, contacts: [{ identity: stranger.identity, state: 'blocked' }] }));
      const blocked = await s.relay.send(mail(s, stranger, owner, 'again'));
      e.that(blocked.status === 403, `a blocked sender's message under mode open answered ${said(blocked)}, expected 403`);
      acks.push(ack(s.profile, stranger, owner.identity, 'm_from_the_blocked'));
      const ackBlocked = await s.relay.ack(acks[1]!);
      e.that(ackBlocked.status === 202, `a blocked sender's ack answered ${said(ackBlocked)}, not 202 (acks are not filtered)`);
      const p = pickupOf(await s.relay.pickup(owner));
      if (typeof p === 'string') return e.fail(p);
      const got = new Set(p.acks.map((x) => x.id));
      e.that(
        acks.every((k) => got.has(k.id)),
        `the owner's pickup holds acks ${JSON.stringify([...got])}, not both acks from the stranger`,
      );
    },
  });
}

export const PROMPT = vocabulary.message_types.auth_request;
/** A sign-in prompt as a bridge sends it: typed, with a signed expiry `expiresInS` ahead (null: none). */
export const prompt = (s: Session, from: RelayIdentity, to: RelayIdentity, expiresInS: number | null = 120) =>
  mail(s, from, to, JSON.stringify({ version: 1 }), { type: PROMPT, ...(expiresInS === null ? {} : { expiresAt: now(expiresInS) }) });
/** A policy trusting `service` for sign-in prompts, listed after another service: the list is searched, not its first entry read. */
export const trusting = (service: RelayIdentity, mode = 'open') => JSON.stringify({ version: 1, mode, trusted_auth_services: ['another-service.id.test', service.identity.toUpperCase()] });

function authRequestTrustedCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/inbox/auth-request-trusted',
    lane: LANE,
    title: `a ${PROMPT} reaches the inbox from a service the user lists in trusted_auth_services, and is dropped from anyone else`,
    rules: ['ob.push.trusted'],
    context: ['ra.system.files'],
    run: async (s, e) => {
      const [owner, service, other] = [await s.identity(), await s.identity(), await s.identity()];
      const put = await s.relay.systemFile(owner, 'PUT', POLICY, trusting(service));
      if (!e.that(ok(put), `PUT ${POLICY} with trusted_auth_services answered ${said(put)}`)) return;
      const untrusted = prompt(s, other, owner);
      const fromOther = await s.relay.send(untrusted);
      e.that(fromOther.status < 500, `a prompt from an untrusted sender answered ${said(fromOther)}`);
      const trusted = prompt(s, service, owner);
      const fromService = await s.relay.send(trusted);
      if (!e.that(fromService.status === 202, `a prompt from the trusted service answered ${said(fromService)}`)) return;
      // Exactly the trusted one: the other must not be in the inbox, whatever its answer was.
      await expectInbox(s, e, owner, [trusted]);
    },
  });
}

function profileAuthRequestCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/auth-request',
    lane: LANE,
    title: `a dropped ${PROMPT} is answered 202 like a stored one; a trusted service's prompt passes contacts_only, and a blocked sender stays refused`,
    rules: ['ra.inbox.auth-request'],
    run: async (s, e) => {
      const [owner, service, other] = [await s.identity(), await s.identity(), await s.identity()];
      await s.relay.systemFile(owner, 'PUT', POLICY, trusting(service, 'contacts_only'));
      const dropped = await s.relay.send(prompt(s, other, owner));
      e.that(dropped.status === 202, `a prompt from an untrusted sender answered ${said(dropped)}, expected 202 (dropped unseen)`);
      const kept = prompt(s, service, owner);
      const fromService = await s.relay.send(kept);
      e.that(fromService.status === 202, `under contacts_only a trusted service's prompt answered ${said(fromService)}, expected 202`);
      await expectInbox(s, e, owner, [kept]);
      await s.relay.systemFile(owner, 'PUT', CONTACTS, JSON.stringify({ version: 1, contacts: [{ identity: service.identity, state: 'blocked' }] }));
      const blocked = await s.relay.send(prompt(s, service, owner));
      e.that(blocked.status === 403, `a trusted but blocked service's prompt answered ${said(blocked)}, expected 403`);
    },
  });
}

function profileAuthRequestExpiryCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/auth-request-expiry',
    lane: LANE,
    title: `a ${PROMPT} without expires_at, expired, or expiring more than ${limits.auth_request_ttl_max_seconds} s ahead is refused 400 invalid_request`,
    rules: ['ra.inbox.auth-request-expiry'],
    run: async (s, e) => {
      const [owner, service] = [await s.identity(), await s.identity()];
      await s.relay.systemFile(owner, 'PUT', POLICY, trusting(service));
      for (const [what, ahead] of [
        ['without expires_at', null],
        ['expired 5 s ago', -5],
        [`expiring ${limits.auth_request_ttl_max_seconds + 120} s ahead`, limits.auth_request_ttl_max_seconds + 120],
      ] as const) {
        const r = await s.relay.send(prompt(s, service, owner, ahead));
        e.that(r.status === 400 && codeOf(r) === 'invalid_request', `a prompt ${what} answered ${said(r)}, expected 400 invalid_request`);
      }
      await expectInbox(s, e, owner, []);
    },
  });
}

function profileRelayWrittenCheck(t: RelayTarget): Check {
  const IDENTITY = 'relay-written/identity.json';
  const USAGE = 'relay-written/usage.json';
  return relayCheck(t, {
    id: 'relay/profile/relay-written',
    lane: LANE,
    title:
      "the owner reads the relay-written zone (its identity record, its usage) and a PUT or DELETE there is refused 403 not_authorized, the document unchanged; both are in the identity's export beside the owner's documents",
    rules: ['ra.system.relay-written'],
    run: async (s, e) => {
      const [owner, sender] = [await s.identity(), await s.identity()];
      // One message and two acks wait for the owner: usage counts each kind apart.
      await s.relay.send(mail(s, sender, owner, 'counted'));
      for (const m of ['m_counted_1', 'm_counted_2']) await s.relay.ack(ack(s.profile, sender, owner.identity, m));
      const read = await s.relay.systemFile(owner, 'GET', IDENTITY);
      const record = safeJson(read) as Record<string, unknown> | undefined;
      const keys = { signing: `${vocabulary.key_prefixes.signing}${signingKey(owner)}`, encryption: `${vocabulary.key_prefixes.encryption}${encodeBase64url(owner.encryption.publicKey)}` };
      e.that(
        read.status === 200 && record?.identity === owner.identity && record.signing_key === keys.signing && record.encryption_key === keys.encryption,
        `GET ${IDENTITY} answered ${said(read)}, not the owner's registered keys ${keys.signing} and ${keys.encryption}`,
      );
      const usage = await s.relay.systemFile(owner, 'GET', USAGE);
      const pending = (safeJson(usage) as { pending?: { messages?: unknown; acks?: unknown } } | undefined)?.pending;
      e.that(usage.status === 200 && pending?.messages === 1 && pending.acks === 2, `GET ${USAGE} with one message and two acks waiting answered ${said(usage)}`);
      const put = await s.relay.systemFile(owner, 'PUT', IDENTITY, JSON.stringify({ version: 1, identity: 'mallory.example' }));
      e.that(put.status === 403 && codeOf(put) === 'not_authorized', `the owner's PUT ${IDENTITY} answered ${said(put)}, expected 403 not_authorized`);
      const del = await s.relay.systemFile(owner, 'DELETE', USAGE);
      e.that(del.status === 403 && codeOf(del) === 'not_authorized', `the owner's DELETE ${USAGE} answered ${said(del)}, expected 403 not_authorized`);
      const after = await s.relay.systemFile(owner, 'GET', IDENTITY);
      e.that(after.status === 200 && after.text() === read.text(), `after the refused PUT, ${IDENTITY} reads ${said(after)}`);
      // Both are in the identity's export, alone and beside the documents the owner wrote.
      const dir = s.profile.ids.system_dir;
      const exported = async () => {
        const r = await s.relay.post(`/identities/${owner.identity}/export`, { identity: owner.identity, ...adminEnvelope(s.profile, 'identity-export', { identity: owner.identity }, owner.seed) });
        const files = r.status === 200 ? await archive(r.body).catch(() => undefined) : undefined;
        const at = (path: string) => [...(files?.entries() ?? [])].find(([p]) => p.endsWith(`${dir}/${path}`))?.[1];
        return { shown: `${said(r)}, holding ${[...(files?.keys() ?? [])].join(', ') || 'nothing'}`, at };
      };
      const asRead = (text: string | undefined) => text !== undefined && JSON.stringify(JSON.parse(text)) === JSON.stringify(record);
      const alone = await exported();
      e.that(asRead(alone.at(IDENTITY)) && alone.at(USAGE) !== undefined, `the export of an identity that wrote nothing (${alone.shown}) lacks ${IDENTITY} as read or ${USAGE}`);
      await s.relay.systemFile(owner, 'PUT', PROFILE, profileDoc('Exported'));
      const beside = await exported();
      e.that(
        asRead(beside.at(IDENTITY)) && beside.at(USAGE) !== undefined && beside.at(PROFILE) === profileDoc('Exported'),
        `the export (${beside.shown}) lacks ${IDENTITY} as read, ${USAGE} or the written ${PROFILE}`,
      );
    },
  });
}

/** A roster signed by `by` (default the owner), base64url signature (ra.drive.group-roster). */
function roster(s: Session, owner: RelayIdentity, fields: Record<string, unknown>, by: RelayIdentity = owner): string {
  const doc: Record<string, unknown> = { group: owner.identity, owner: owner.identity, members: [], updated_at: now(), ...fields };
  return JSON.stringify({ ...doc, signature: encodeBase64url(sign(by.seed, driveString(s.profile, 'group-roster', doc))) });
}

function profileGroupRosterCheck(t: RelayTarget): Check {
  const ROSTER = 'public/group-roster.json';
  return relayCheck(t, {
    id: 'relay/profile/group-roster',
    lane: LANE,
    title: `${ROSTER} takes the identity's own signed roster and serves it publicly; a roster signed by another key, naming another owner, or a group identity's epoch going back is refused 400`,
    rules: ['ra.system.group-roster'],
    run: async (s, e) => {
      const [group, member, other] = [await s.identity(), await s.identity(), await s.identity()];
      const members = [member.identity, group.identity];
      const v2 = roster(s, group, { members, admins: [group.identity], epoch: 2 });
      const put = await s.relay.systemFile(group, 'PUT', ROSTER, v2);
      if (!e.that(ok(put), `PUT ${ROSTER} with the group identity's own roster (epoch 2) answered ${said(put)}`)) return;
      const served = await s.relay.get(`${t.profile.ids.public_files_path}group-roster.json`, { host: group.identity });
      e.that(served.status === 200 && served.text() === v2, `the roster served at ${t.profile.ids.public_files_path}group-roster.json answered ${said(served)}`);
      for (const [what, body] of [
        ['signed by another key', roster(s, group, { members, admins: [group.identity], epoch: 3 }, other)],
        ['naming another owner', roster(s, group, { owner: other.identity, members }, other)],
        ['with its epoch going back to 1', roster(s, group, { members, admins: [group.identity], epoch: 1 })],
      ] as const) {
        const r = await s.relay.systemFile(group, 'PUT', ROSTER, body);
        e.that(r.status === 400 && codeOf(r) === 'invalid_request', `a roster ${what} answered ${said(r)}, expected 400 invalid_request`);
      }
      const kept = await s.relay.systemFile(group, 'GET', ROSTER);
      e.that(kept.text() === v2, `after the refused writes ${ROSTER} reads ${said(kept)}`);
    },
  });
}

function groupEpochCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/groups/epoch',
    lane: LANE,
    title: "GET /groups/:group/epoch answers without authentication: 0 for an identity that is not a group, then the epoch of the group's roster",
    rules: ['ra.groups.epoch'],
    context: ['ra.system.group-roster'],
    run: async (s, e) => {
      const group = await s.identity();
      const path = `/groups/${encodeURIComponent(group.identity)}/epoch`;
      const epochOf = (r: HttpResponse) => (safeJson(r) as { epoch?: unknown } | undefined)?.epoch;
      const before = await s.relay.get(path);
      e.that(before.status === 200 && epochOf(before) === 0, `before it is a group, ${path} answered ${said(before)}, expected epoch 0`);
      const put = await s.relay.systemFile(group, 'PUT', 'public/group-roster.json', roster(s, group, { members: [group.identity], admins: [group.identity], epoch: 4 }));
      if (!e.that(ok(put), `writing the group identity's roster (epoch 4) answered ${said(put)}`)) return;
      const after = await s.relay.get(path);
      e.that(after.status === 200 && epochOf(after) === 4, `with a roster at epoch 4, ${path} answered ${said(after)}`);
    },
  });
}

function profileGroupEpochCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/group-epoch',
    lane: LANE,
    title: 'GET /groups/:group/epoch answers {group, epoch}, and 404 not_found for an identity the relay does not host',
    rules: ['ra.groups.epoch-body'],
    run: async (s, e) => {
      const group = await s.identity();
      const r = await s.relay.get(`/groups/${encodeURIComponent(group.identity)}/epoch`);
      e.that(r.status === 200 && JSON.stringify(safeJson(r)) === JSON.stringify({ group: group.identity, epoch: 0 }), `the epoch answered ${said(r)}`);
      const stranger = await s.stranger();
      const missing = await s.relay.get(`/groups/${encodeURIComponent(stranger.identity)}/epoch`);
      e.that(missing.status === 404 && codeOf(missing) === 'not_found', `an identity not hosted here answered ${said(missing)}, expected 404 not_found`);
    },
  });
}

function profileGroupRosterReadCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/group-roster-read',
    lane: LANE,
    title:
      "GET /groups/:group answers the group's roster as written to a listed member's and to the group's own signed request, 403 not_authorized to an identity it does not list, 401 to one that does not resolve, 404 for a hosted identity with no roster; relay/group.json names the same document as public/group-roster.json",
    rules: ['ra.system.group-roster'],
    run: async (s, e) => {
      const [group, member, stranger] = [await s.identity(), await s.identity(), await s.identity()];
      const v1 = roster(s, group, { members: [member.identity, group.identity], admins: [group.identity], epoch: 1 });
      const put = await s.relay.systemFile(group, 'PUT', 'relay/group.json', v1);
      if (!e.that(ok(put), `PUT relay/group.json with the group identity's own roster answered ${said(put)}`)) return;
      const stored = await s.relay.systemFile(group, 'GET', 'public/group-roster.json');
      e.that(stored.status === 200 && stored.text() === v1, `after the roster was written as relay/group.json, public/group-roster.json reads ${said(stored)}`);
      const path = `/groups/${encodeURIComponent(group.identity)}`;
      const read = async (who: RelayIdentity) => s.relay.get(path, await s.relay.authHeaders(who, 'GET', path, { mode: 'signed-request' }));
      const byMember = await read(member);
      e.that(byMember.status === 200 && byMember.text() === v1, `a listed member's signed read of ${path} answered ${said(byMember)}, expected the roster as written`);
      const byStranger = await read(stranger);
      e.that(byStranger.status === 403 && codeOf(byStranger) === 'not_authorized', `an unlisted identity's signed read of ${path} answered ${said(byStranger)}, expected 403 not_authorized`);
      // The group reads its own roster even where the roster does not list it.
      const v2 = roster(s, group, { members: [member.identity], admins: [member.identity], epoch: 2 });
      const put2 = await s.relay.systemFile(group, 'PUT', 'public/group-roster.json', v2);
      if (!e.that(ok(put2), `PUT of a roster that does not list the group answered ${said(put2)}`)) return;
      const byGroup = await read(group);
      e.that(byGroup.status === 200 && byGroup.text() === v2, `the group's own signed read of a roster not listing it answered ${said(byGroup)}, expected the roster`);
      // A caller that cannot be resolved is 401; a hosted identity with no roster is 404.
      const headers = await s.relay.authHeaders(stranger, 'GET', path, { mode: 'signed-request' });
      const unknown = await s.relay.get(path, { ...headers, [s.profile.ids.header_identity]: 'nobody.unresolvable.invalid' });
      e.that(unknown.status === 401, `a signed read claiming an identity that does not resolve answered ${said(unknown)}, expected 401`);
      const bare = `/groups/${encodeURIComponent(stranger.identity)}`;
      const noRoster = await s.relay.get(bare, await s.relay.authHeaders(stranger, 'GET', bare, { mode: 'signed-request' }));
      e.that(noRoster.status === 404 && codeOf(noRoster) === 'not_found', `the read of a hosted identity's roster it never wrote answered ${said(noRoster)}, expected 404 not_found`);
    },
  });
}

export function systemFileChecks(t: RelayTarget): Check[] {
  return [
    writeReadDeleteCheck(t),
    ownerOnlyCheck(t),
    validatedCheck(t),
    profileSystemPathsCheck(t),
    profileInboxPolicyCheck(t),
    authRequestTrustedCheck(t),
    profileAuthRequestCheck(t),
    profileAuthRequestExpiryCheck(t),
    profileRelayWrittenCheck(t),
    profileGroupRosterCheck(t),
    groupEpochCheck(t),
    profileGroupEpochCheck(t),
    profileGroupRosterReadCheck(t),
  ];
}
