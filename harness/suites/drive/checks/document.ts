// What document 3 itself decides about the drive (its table and "Drive API" prose): the owner may
// do anything and nobody unproven anything; members what their roles allow, from any relay; a
// stale base is refused 409 with the head; the missing list, the changes cursor, the reads; the
// event stream filtered and closed on revocation; links public and their headers. The formats
// these checks speak are the project's (spec/drive.yaml), cited as context.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { DriveActor } from '../../../actors/drive/client.ts';
import { sessionCheck, type CheckSpec } from '../../../run/check.ts';
import { decryptChunk, encryptContent, groupRoster, move, openContentKey, openShareKey, remove, replace, rosterHeader, type NodeKeys } from '../../../actors/drive/objects.ts';
import { linkSecrets } from '../../../impl/noble-drive.ts';
import { solvePow } from '../../../actors/drive/link.ts';
import { readNodeView } from '../../../actors/drive/view.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { DriveSession, bodyOf, groupOnPeer, headNames, ok, refused, said, type RelayTarget } from '../driver.ts';

type Obj = Record<string, unknown>;
const FORMATS: RuleId[] = ['ra.drive.commit', 'ra.drive.manifest', 'ra.drive.chunk', 'ra.drive.missing-body', 'ra.drive.commit-answer'];
const text = (s: string) => new Uint8Array(Buffer.from(s));
const same = (a: Uint8Array | undefined, b: Uint8Array | undefined) => a !== undefined && b !== undefined && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

export function driveCheck(t: RelayTarget, spec: CheckSpec<DriveSession>): Check {
  return sessionCheck({ suite: 'drive', open: (signal) => new DriveSession(t, signal) }, { lane: 'drive', ...spec, context: [...FORMATS, ...(spec.context ?? [])] });
}

/** Reads a file's first chunk through its head version and opens it with `keys`. */
async function readBack(s: DriveSession, drive: string, actor: Parameters<DriveSession['drive']['get']>[2], node: string, keys: NodeKeys): Promise<{ plain?: Uint8Array; problem?: string }> {
  const head = await s.drive.node(drive, actor, node);
  const version = readNodeView(bodyOf(head))?.version;
  if (!ok(head) || !version) return { problem: `GET the node answered ${said(head)}` };
  const v = await s.drive.get(drive, `/nodes/${node}/versions/${version}`, actor);
  const manifest = bodyOf(v);
  if (!ok(v) || !manifest) return { problem: `GET its version answered ${said(v)}` };
  const page = await s.drive.get(drive, `/nodes/${node}/versions/${version}/pages/${String((manifest.pages as string[])[0])}`, actor);
  const ref = ((bodyOf(page)?.chunks as Obj[] | undefined) ?? [])[0];
  if (!ok(page) || !ref) return { problem: `GET its first page answered ${said(page)}` };
  const c = await s.drive.chunk(drive, actor, node, version, String(ref.id));
  if (!ok(c)) return { problem: `GET its chunk answered ${said(c)}` };
  const content = keys.content ?? openContentKey(s.profile, manifest, keys.private);
  const plain = content ? decryptChunk(s.profile, drive, { ...keys, content }, new Uint8Array(c.body)) : undefined;
  return plain ? { plain } : { problem: 'the chunk read back does not open with the file key (its bytes changed)' };
}

function ownerRoundTrip(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/owner/round-trip',
    title:
      "the owner uploads what the missing list asks for, commits a file, and reads its node, version, page and chunk back as written; moved into a folder, it is among the folder's children and no longer the root's",
    rules: ['ra.drive.owner', 'ra.drive.missing', 'ra.drive.versions', 'ra.drive.nodes'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const plain = text(`hello ${randomBytes(8).toString('hex')}`);
      const f = await s.file(id, root.keys, 'hello.txt', plain);
      const again = await s.drive.missing(id.identity, s.actor(id), f.chunks);
      const listed = (bodyOf(again)?.missing as unknown[] | undefined) ?? [];
      e.that(ok(again) && listed.length === 0, `asking again for a chunk the drive holds answered ${said(again)} (it must not be listed)`);
      const back = await readBack(s, id.identity, s.actor(id), f.keys.node, f.keys);
      e.that(same(back.plain, plain), back.problem ?? 'the content read back differs from what was written');
      const kids = await s.drive.node(id.identity, s.actor(id), root.keys.node, '/children');
      e.that(ok(kids) && kids.text().includes(f.keys.node), `the root's children answered ${said(kids)}, without the new file`);
      const hist = await s.drive.node(id.identity, s.actor(id), f.keys.node, '/history');
      e.that(ok(hist) && hist.text().includes(f.version), `the file's history answered ${said(hist)}, without its version`);
      // A move takes the file out of the root's children and into the folder's.
      const dest = await s.folder(id, root.keys, 'into');
      const moved = await s.drive.commit(
        id.identity,
        s.actor(id),
        move(s.profile, { drive: id.identity, author: id, keys: f.keys, kind: 'file', parent: f.version, to: dest.keys, name: 'hello.txt' }),
      );
      if (!e.that(ok(moved), `moving the file into a folder answered ${said(moved)}`)) return;
      const [from, into] = await Promise.all([root.keys.node, dest.keys.node].map((n) => s.drive.node(id.identity, s.actor(id), n, '/children')));
      e.that(ok(from!) && !from!.text().includes(f.keys.node), `after the file moved into a folder, the root's children answered ${said(from!)}, still with the file`);
      e.that(ok(into!) && into!.text().includes(f.keys.node), `after the file moved into a folder, the folder's children answered ${said(into!)}, without the file`);
    },
  });
}

function unauthenticated(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/owner/proof-required',
    title:
      "without the owner's proof (none, another key signing for the owner, or the proof of an identity nothing resolves) the drive refuses to answer or change anything; the drive of an identity nothing resolves is refused 4xx",
    rules: ['ra.drive.owner'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'secret.txt', text('secret'));
      const impostor = { identity: id.identity, seed: new Uint8Array(randomBytes(32)) };
      // A caller whose X-Svc-Identity nothing resolves: its proof cannot be checked.
      const nobody = await s.unresolvable();
      const unresolved = { identity: nobody, seed: new Uint8Array(randomBytes(32)) };
      // A relay may refuse it a challenge already (document 3 does not say): then it proves nothing at all.
      const challenged = (await s.relay.get(`/auth/challenge?identity=${encodeURIComponent(nobody)}`)).status === 200;
      const callers: Array<[string, DriveActor]> = [
        ['no proof', { none: true }],
        ['another key', impostor],
        ...(challenged ? [[`the proof of ${nobody}, which nothing resolves`, unresolved] as [string, DriveActor]] : []),
      ];
      for (const [what, actor] of callers) {
        const r = await s.drive.node(id.identity, actor, f.keys.node);
        e.that(refused(r), `reading a node with ${what} answered ${said(r)}`);
        const w = await s.drive.commit(
          id.identity,
          actor,
          replace(s.profile, { drive: id.identity, author: { identity: id.identity, seed: actor === impostor ? impostor.seed : id.seed }, keys: f.keys, parent: f.version, chunks: f.chunks }),
        );
        e.that(refused(w), `a commit with ${what} answered ${said(w)}`);
      }
      const head = await s.drive.node(id.identity, s.actor(id), f.keys.node);
      e.that(head.text().includes(f.version), `after the refused commits the file's head is ${head.text().slice(0, 200)}`);
      // The drive of an identity nothing resolves, asked by it: there is no drive to answer.
      const none = await s.drive.get(nobody, '', challenged ? unresolved : { none: true });
      e.that(refused(none), `GET /drive/${nobody}, an identity nothing resolves, answered ${said(none)}, not a 4xx`);
    },
  });
}

function membersReadOnly(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/members/read-only',
    title: 'a member with `read` on a folder reads a file in it but cannot commit there, and an identity with no share can do neither',
    rules: ['ra.drive.members'],
    context: ['ra.drive.roles', 'ra.drive.share'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const docs = await s.folder(id, root.keys, 'docs');
      const plain = text('shared words');
      const f = await s.file(id, docs.keys, 'a.txt', plain);
      const [reader, stranger] = [await s.identity(), await s.identity()];
      await s.share(id, { node: docs.keys, role: 'read', member: { identity: reader.identity, encryption: reader.encryption.publicKey } });
      const back = await readBack(s, id.identity, s.actor(reader), f.keys.node, f.keys);
      e.that(same(back.plain, plain), back.problem ? `the reader: ${back.problem}` : 'the reader read other content');
      const w = await s.drive.commit(id.identity, s.actor(reader), replace(s.profile, { drive: id.identity, author: reader, keys: f.keys, parent: f.version, chunks: f.chunks }));
      e.that(refused(w), `a commit by the read-only member answered ${said(w)}`);
      const r = await s.drive.node(id.identity, s.actor(stranger), f.keys.node);
      e.that(refused(r), `a read by an identity with no share answered ${said(r)}`);
      const head = await s.drive.node(id.identity, s.actor(id), f.keys.node);
      e.that(head.text().includes(f.version), `after the refused commit the head is ${head.text().slice(0, 200)}`);
    },
  });
}

function remoteMember(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/members/remote',
    title: 'a member homed on another relay authenticates at the drive with the same challenge headers, opens its share and reads the file',
    rules: ['ra.drive.remote-members'],
    context: ['ra.drive.roles', 'ra.drive.share', 'ra.drive.seal'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const plain = text('for a friend elsewhere');
      const f = await s.file(id, root.keys, 'far.txt', plain);
      const friend = await s.identity('peer');
      await s.share(id, { node: f.keys, role: 'read', member: { identity: friend.identity, encryption: friend.encryption.publicKey } });
      const list = await s.drive.get(id.identity, '/shares', s.actor(friend));
      const mine = ((bodyOf(list)?.shares as Obj[] | undefined) ?? []).find((x) => x.node === f.keys.node);
      const key = mine ? openShareKey(s.profile, mine, friend.encryption.privateKey) : undefined;
      if (!e.that(ok(list) && key !== undefined, `the friend's share list answered ${said(list)}; no share of the file whose key opens`)) return;
      const back = await readBack(s, id.identity, s.actor(friend), f.keys.node, { node: f.keys.node, private: key!, public: f.keys.public });
      e.that(same(back.plain, plain), back.problem ?? 'the friend read other content');
    },
  });
}

function groupMembers(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/members/group',
    title:
      "a member of a group identity on another relay reads what the group's share allows with the group's signed roster, and not without it, with a roster the group did not sign, or one that does not list it",
    rules: ['ra.drive.group-members'],
    context: ['ra.drive.group-roster', 'ra.drive.remote-members'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const team = await s.folder(id, root.keys, 'team');
      const plain = text('for the group');
      const f = await s.file(id, team.keys, 'plan.txt', plain);
      const [group, member, outsider] = [await s.identity('peer'), await s.identity('peer'), await s.identity('peer')];
      await s.share(id, { node: team.keys, role: 'read', member: { identity: group.identity, encryption: group.encryption.publicKey } });
      const signedBy = (signer: typeof group) => rosterHeader(groupRoster(s.profile, group.identity, signer, { members: [member.identity], admins: [group.identity], epoch: 0 }));
      const roster = signedBy(group);
      const back = await readBack(s, id.identity, { ...s.actor(member), roster }, f.keys.node, f.keys);
      e.that(same(back.plain, plain), back.problem ? `the group's member, with the roster: ${back.problem}` : 'the member read other content');
      for (const [what, actor] of [
        ['without the roster', s.actor(member)],
        ['with a roster signed by the member itself', { ...s.actor(member), roster: signedBy(member) }],
        ['not listed in the roster', { ...s.actor(outsider), roster }],
      ] as const) {
        const r = await s.drive.node(id.identity, actor, f.keys.node);
        e.that(refused(r), `a read by a caller ${what} answered ${said(r)}`);
      }
    },
  });
}

function staleBase(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/commit/stale-base',
    title: 'two writers commit on one base at once: exactly one wins, the other gets 409 carrying the winning head, and the head is the winner',
    rules: ['ra.drive.stale-base'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'race.txt', text('v1'));
      const bodies = ['v2a', 'v2b'].map((v) => {
        const chunks = encryptContent(s.profile, id.identity, f.keys, text(v));
        return { chunks, body: replace(s.profile, { drive: id.identity, author: id, keys: f.keys, parent: f.version, chunks }) };
      });
      for (const b of bodies) await s.drive.upload(id.identity, s.actor(id), b.chunks);
      const answers = await Promise.all(bodies.map((b) => s.drive.commit(id.identity, s.actor(id), b.body)));
      const winners = answers.filter(ok);
      const losers = answers.filter((r) => r.status === 409);
      if (!e.that(winners.length === 1 && losers.length === 1, `the two commits answered ${answers.map(said).join(' and ')}; expected one 200 and one 409`)) return;
      const won = String((bodies[answers.indexOf(winners[0]!)]!.body.manifest as Obj).version);
      e.that(headNames(losers[0]!, won), `the 409 does not carry the head (${won}): ${said(losers[0]!)}`);
      const stale = await s.drive.commit(id.identity, s.actor(id), replace(s.profile, { drive: id.identity, author: id, keys: f.keys, parent: f.version, chunks: f.chunks }));
      e.that(stale.status === 409 && headNames(stale, won), `a third commit on the old base answered ${said(stale)}`);
      const head = await s.drive.node(id.identity, s.actor(id), f.keys.node);
      e.that(head.text().includes(won), `the head after the race is ${head.text().slice(0, 200)}, not the winner ${won}`);
    },
  });
}

/** "`409` with head on a stale base": every operation that names a base, not only a replace. */
function staleBaseOperations(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/commit/stale-base-operations',
    title:
      "after a node's head moves on, a replace, a move and a remove of it (a file and a folder) on the old base each answer 409 carrying the head, and the node stays where it is, unremoved, at that head",
    rules: ['ra.drive.stale-base'],
    context: ['ra.drive.commit', 'ra.drive.conflict-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const me = s.actor(id);
      const [dest, f, folder] = [await s.folder(id, root.keys, 'dest'), await s.file(id, root.keys, 'stale.txt', text('v1')), await s.folder(id, root.keys, 'stale')];
      for (const [what, made, kind] of [
        ['file', f, 'file'],
        ['folder', folder, 'folder'],
      ] as const) {
        // The head moves on: a rename in place.
        const moved = await s.drive.commit(drive, me, move(s.profile, { drive, author: id, keys: made.keys, kind, parent: made.version, to: root.keys, name: `${what}-renamed` }));
        if (!e.that(ok(moved), `renaming the ${what} answered ${said(moved)}`)) return;
        const head = String(bodyOf(moved)?.version ?? bodyOf(await s.drive.node(drive, me, made.keys.node))?.version);
        // A remove last: one wrongly applied leaves nothing for the others to judge.
        const stale = [
          ...(kind === 'file' ? [['a replace', replace(s.profile, { drive, author: id, keys: made.keys, parent: made.version, chunks: f.chunks })] as const] : []),
          ['a move', move(s.profile, { drive, author: id, keys: made.keys, kind, parent: made.version, to: dest.keys, name: `${what}-moved` })],
          ['a remove', remove(s.profile, { drive, author: id, node: made.keys.node, kind, parent: made.version })],
        ] as const;
        for (const [how, body] of stale) {
          const r = await s.drive.commit(drive, me, body);
          e.that(r.status === 409 && headNames(r, head), `${how} of the ${what} on its old base ${made.version} answered ${said(r)}, not 409 carrying the head ${head}`);
        }
        const now = await s.drive.node(drive, me, made.keys.node);
        const view = bodyOf(now);
        e.that(
          ok(now) && now.text().includes(head) && view?.removed !== true && (view?.folder === undefined || view.folder === root.keys.node),
          `after the refused commits on its old base the ${what} answered ${said(now)}, not its head ${head} in the root, unremoved`,
        );
      }
    },
  });
}

function changesCursor(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/changes/cursor',
    title: 'following the changes cursor from 0 sees every commit once, in order, and nothing after the last',
    rules: ['ra.drive.changes'],
    context: ['ra.drive.changes-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const made = [root];
      for (const n of ['one', 'two', 'three']) made.push(await s.file(id, root.keys, n, text(n)));
      const seen: string[] = [];
      let cursor: unknown = 0;
      for (let i = 0; i < 10; i++) {
        const r = await s.drive.changes(id.identity, s.actor(id), String(cursor));
        const b = bodyOf(r);
        if (!e.that(ok(r) && Array.isArray(b?.changes), `GET changes?cursor=${String(cursor)} answered ${said(r)}`)) return;
        for (const c of b!.changes as Obj[]) seen.push(String(c.node));
        if (!b!.more) {
          cursor = b!.cursor;
          break;
        }
        cursor = b!.cursor;
      }
      const want = made.map((m) => m.keys.node);
      e.that(JSON.stringify(seen) === JSON.stringify(want), `the changes named nodes ${JSON.stringify(seen)}, expected ${JSON.stringify(want)} (every commit once, in order)`);
      const after = await s.drive.changes(id.identity, s.actor(id), String(cursor));
      e.that(ok(after) && ((bodyOf(after)?.changes as unknown[] | undefined) ?? []).length === 0, `after the last cursor the changes answered ${said(after)}`);
    },
  });
}

function eventsFiltered(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/events/filtered',
    title: 'the owner hears drive.changed for every commit; a member shared one folder hears of commits there and not of another folder',
    rules: ['ra.drive.events'],
    context: ['ra.drive.changed-event'],
    timeoutMs: 30_000,
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const [open, closed] = [await s.folder(id, root.keys, 'open'), await s.folder(id, root.keys, 'closed')];
      const member = await s.identity();
      await s.share(id, { node: open.keys, role: 'read', member: { identity: member.identity, encryption: member.encryption.publicKey } });
      const [ownerStream, memberStream] = [await s.drive.events(id.identity, s.actor(id)), await s.drive.events(id.identity, s.actor(member))];
      try {
        if (!e.that(ownerStream.status === 200 && memberStream.status === 200, `the streams answered ${ownerStream.status} and ${memberStream.status}`)) return;
        const hidden = await s.file(id, closed.keys, 'hidden.txt', text('no'));
        const shown = await s.file(id, open.keys, 'shown.txt', text('yes'));
        const about = (n: string) => (ev: { event: string; raw: string }) => ev.event === 'drive.changed' && ev.raw.includes(n);
        const heard = await ownerStream.next(about(shown.keys.node), 5000).then(
          () => true,
          () => false,
        );
        e.that(heard && ownerStream.events.some(about(hidden.keys.node)), 'the owner did not hear drive.changed for both commits');
        const memberHeard = await memberStream.next(about(shown.keys.node), 5000).then(
          () => true,
          () => false,
        );
        e.that(memberHeard, 'the member did not hear drive.changed for the commit in its shared folder');
        e.that(!memberStream.events.some(about(hidden.keys.node)), 'the member heard of a commit in a folder not shared with it');
      } finally {
        await ownerStream.close();
        await memberStream.close();
      }
    },
  });
}

function eventsRevocation(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/events/closed-on-revocation',
    title:
      "when the member's share ends, its drive event stream closes; so does a group member's, reading through the group's roster, when the group's share ends, and a link holder's when the link is unshared; a member of two shares keeps its stream when one ends, and loses it when the last does",
    rules: ['ra.drive.events-revocation'],
    context: ['ra.drive.group-members'],
    timeoutMs: 30_000,
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const member = await s.identity();
      // A group on the peer relay (when there is one), its member following the drive through the group's signed roster.
      const grouped = t.peerUrl ? await groupOnPeer(s) : undefined;
      if (!grouped) s.note('no peer relay given (--relay-peer): the group member is not followed');
      const to = (m: typeof member) => ({ identity: m.identity, encryption: m.encryption.publicKey });
      const ended = async (who: string, grant: () => Promise<{ share: Record<string, unknown> }>, actor: DriveActor) => {
        const sh = await grant();
        const stream = await s.drive.events(id.identity, actor);
        try {
          if (!e.that(stream.status === 200, `${who}'s stream answered ${stream.status}`)) return;
          const r = await s.unshare(id, String(sh.share.id));
          if (!e.that(ok(r), `the unshare answered ${said(r)}`)) return;
          for (let i = 0; i < 50 && !stream.ended; i++) await new Promise((res) => setTimeout(res, 100));
          e.that(stream.ended, `${who}'s stream is still open 5 s after its share ended`);
          const after = await s.drive.node(id.identity, actor, root.keys.node);
          e.that(refused(after), `after the unshare ${who}'s read answered ${said(after)}`);
        } finally {
          await stream.close();
        }
      };
      // The other side: a member that keeps a share keeps its stream until its last share ends.
      const keeps = async () => {
        const two = await s.identity();
        const as = { identity: two.identity, encryption: two.encryption.publicKey };
        const [first, last] = [await s.share(id, { node: root.keys, role: 'read', member: as }), await s.share(id, { node: root.keys, role: 'read', member: as })];
        const stream = await s.drive.events(id.identity, s.actor(two));
        try {
          if (!e.that(stream.status === 200, `the member of two shares' stream answered ${stream.status}`)) return;
          await s.unshare(id, String(first.share.id));
          await new Promise((res) => setTimeout(res, 3000));
          e.that(!stream.ended, 'the stream of a member that still holds a share closed when its other share ended');
          await s.unshare(id, String(last.share.id));
          for (let i = 0; i < 50 && !stream.ended; i++) await new Promise((res) => setTimeout(res, 100));
          e.that(stream.ended, "the member's stream is still open 5 s after its last share ended");
        } finally {
          await stream.close();
        }
      };
      await Promise.all([
        ended('the member', () => s.share(id, { node: root.keys, role: 'read', member: to(member) }), s.actor(member)),
        ...(grouped ? [ended("the group's member", () => s.share(id, { node: root.keys, role: 'read', member: to(grouped.group) }), { ...s.actor(grouped.member), roster: grouped.roster })] : []),
        // A link is a share too: its holder's stream closes when the link is unshared.
        (async () => {
          const link = randomBytes(16).toString('hex');
          await ended('the link holder', () => s.share(id, { node: root.keys, role: 'read', link }), { link });
        })(),
        keeps(),
      ]);
    },
  });
}

function linksPublic(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/links/public',
    title: 'how to open a link is answered to anyone, without authentication: its salt, KDF, proof-of-work and opens left, one fewer after an open',
    rules: ['ra.drive.links'],
    context: ['ra.drive.links-body', 'ra.drive.pow'],
    // The password's argon2id (64 MiB, 3 passes, in JS) takes seconds, many on a loaded machine.
    timeoutMs: 90_000,
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'public.txt', text('to anyone'));
      const salt = new Uint8Array(randomBytes(16));
      const secrets = await linkSecrets('correct horse', salt);
      const link = randomBytes(16).toString('hex');
      await s.share(id, { node: f.keys, role: 'read', link, caps: { downloads: 3 }, password: { salt, verifierHash: secrets.verifierHash, key: secrets.key }, pow: 8 });
      const r = await s.drive.link(id.identity, link);
      const b = bodyOf(r);
      e.that(r.status === 200 && b !== undefined, `GET links/:link without authentication answered ${said(r)}`);
      const body = r.text();
      e.that(body.includes(Buffer.from(salt).toString('base64url')), `the link answer does not carry the salt: ${body.slice(0, 300)}`);
      e.that(body.includes('argon2id'), `the link answer does not name the KDF: ${body.slice(0, 300)}`);
      e.that(Object.values(b ?? {}).includes(3), `the link answer does not say the 3 opens left: ${body.slice(0, 300)}`);
      // "opens left": after one open, what is left, not the cap (a link without password or work, opened by a chunk read).
      const plain = randomBytes(16).toString('hex');
      await s.share(id, { node: f.keys, role: 'read', link: plain, caps: { downloads: 3 } });
      const before = Object.values(bodyOf(await s.drive.link(id.identity, plain)) ?? {});
      const read = await s.drive.chunk(id.identity, { link: plain }, f.keys.node, f.version, f.chunks[0]!.id);
      const after = await s.drive.link(id.identity, plain);
      e.that(
        ok(read) && before.includes(3) && !before.includes(2) && Object.values(bodyOf(after) ?? {}).includes(2),
        `a link of 3 opens, opened once (${said(read)}), answered ${said(after)}, not the 2 opens left`,
      );
    },
  });
}

function linkHeaders(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/links/verifier',
    title:
      "a password link holder is refused 4xx without the right verifier (none, another, the right one with a byte more, the link's verifier_hash, text that is no base64) and reads the file with it (and the work the link asks for)",
    rules: ['ra.drive.link-auth'],
    context: ['ra.drive.link-kdf', 'ra.drive.link-opens', 'ra.drive.pow'],
    timeoutMs: 90_000,
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const plain = text('behind a password');
      const f = await s.file(id, root.keys, 'locked.txt', plain);
      const salt = new Uint8Array(randomBytes(16));
      const secrets = await linkSecrets('open sesame', salt);
      const link = randomBytes(16).toString('hex');
      await s.share(id, { node: f.keys, role: 'read', link, password: { salt, verifierHash: secrets.verifierHash, key: secrets.key }, pow: 8 });
      const info = bodyOf(await s.drive.link(id.identity, link));
      const pow = info?.pow as Obj | null | undefined;
      const solution = pow && typeof pow.token === 'string' ? solvePow(pow.token, Number(pow.bits), 1 << 22) : undefined;
      const holder = (verifier?: Uint8Array | string) => ({ link, ...(verifier !== undefined ? { verifier } : {}), ...(solution ? { pow: solution } : {}) });
      // Wrong ones near and far: none, zeros, the right one with a byte more, the hash the link
      // stores (what a relay comparing the header with it takes), and text that is no base64.
      const wrongs: Array<[string, Uint8Array | string | undefined]> = [
        ['no verifier', undefined],
        ['a verifier of 32 zero bytes', new Uint8Array(32)],
        ['the right verifier with a byte appended', new Uint8Array([...secrets.verifier, 0])],
        ["the link's verifier_hash itself", secrets.verifierHash],
        ['a verifier that is not base64', '*** not base64 ***'],
      ];
      for (const [what, verifier] of wrongs) {
        const r = await s.drive.node(id.identity, holder(verifier), f.keys.node);
        e.that(refused(r), `${what} answered ${said(r)}, not a 4xx`);
      }
      const back = await readBack(s, id.identity, holder(secrets.verifier), f.keys.node, f.keys);
      e.that(same(back.plain, plain), back.problem ?? 'the link holder read other content');
    },
  });
}

function sharesVisible(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/shares/visible',
    title:
      "a member lists its own share with its sealed key, and not another member's (on the node below, on its own node, on the folder above) nor a link's on its node; a node's shares include those on every ancestor, the root's too",
    rules: ['ra.drive.shares-list', 'ra.drive.node-shares'],
    context: ['ra.drive.shares-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const docs = await s.folder(id, root.keys, 'docs');
      const f = await s.file(id, docs.keys, 'f.txt', text('f'));
      const [a, b, c, d] = [await s.identity(), await s.identity(), await s.identity(), await s.identity()];
      const to = (m: typeof a) => ({ identity: m.identity, encryption: m.encryption.publicKey });
      const sa = await s.share(id, { node: docs.keys, role: 'read', member: to(a) });
      const sb = await s.share(id, { node: f.keys, role: 'read', member: to(b) });
      // "members: their own": not another member's on the same node or above it, nor a link's.
      const others = [
        ["member C's share on A's own folder", await s.share(id, { node: docs.keys, role: 'write', member: to(c) })],
        ["member D's share on the root above A's folder", await s.share(id, { node: root.keys, role: 'read', member: to(d) })],
        ["a link's share on A's folder", await s.share(id, { node: docs.keys, role: 'read', link: randomBytes(16).toString('hex') })],
      ] as const;
      const list = await s.drive.get(id.identity, '/shares', s.actor(a));
      const shares = (bodyOf(list)?.shares as Obj[] | undefined) ?? [];
      const own = shares.find((x) => x.id === sa.share.id);
      e.that(
        ok(list) && own !== undefined && openShareKey(s.profile, own, a.encryption.privateKey) !== undefined,
        `member A's share list answered ${said(list)}, without its share and a key that opens`,
      );
      e.that(!shares.some((x) => x.id === sb.share.id), "member A's list shows member B's share");
      for (const [what, other] of others) e.that(!shares.some((x) => x.id === other.share.id), `member A's list shows ${what}: ${said(list)}`);
      const on = await s.drive.node(id.identity, s.actor(id), f.keys.node, '/shares');
      const rootShare = String(others[1][1].share.id);
      e.that(
        ok(on) && on.text().includes(String(sa.share.id)) && on.text().includes(String(sb.share.id)) && on.text().includes(rootShare),
        `the file's shares answered ${said(on)}; expected its own, its folder's and the root's ${rootShare} (every ancestor's)`,
      );
    },
  });
}

function rootAnswer(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/root',
    title: 'GET /drive/:identity answers the owner its root node, the bytes used and the quota',
    rules: ['ra.drive.root'],
    context: ['ra.drive.root-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      await s.file(id, root.keys, 'x', text('x'));
      const r = await s.drive.root(id.identity, s.actor(id));
      e.that(r.status === 200 && r.text().includes(root.keys.node), `GET /drive/:identity answered ${said(r)}, without the root node ${root.keys.node}`);
      const numbers = Object.values(bodyOf(r) ?? {}).filter((v) => typeof v === 'number' && v > 0);
      e.that(numbers.length >= 2, `the root answer carries no bytes used and quota: ${r.text().slice(0, 200)}`);
    },
  });
}

export function documentChecks(t: RelayTarget): Check[] {
  return [
    ownerRoundTrip(t),
    unauthenticated(t),
    membersReadOnly(t),
    remoteMember(t),
    groupMembers(t),
    staleBase(t),
    staleBaseOperations(t),
    changesCursor(t),
    eventsFiltered(t),
    eventsRevocation(t),
    linksPublic(t),
    linkHeaders(t),
    sharesVisible(t),
    rootAnswer(t),
  ];
}
