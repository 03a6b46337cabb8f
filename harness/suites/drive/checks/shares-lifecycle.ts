// What ends a share ends every use of it (spec/facets/drive.yaml, kinds lifecycle and window): a
// member unshared, a member whose share expires, a group member the group's roster no longer
// lists, a link unshared and a link that expires each read, list, read a chunk, write and follow
// the events before the event (the window's inside), and after it every one of those uses is
// refused; the unshared member's open stream closes. One tree, every principal judged at once.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { CheckSkip } from '../../../run/verdict.ts';
import type { DriveActor } from '../../../actors/drive/client.ts';
import type { SseStream } from '../../../actors/relay/sse.ts';
import { encryptContent, groupRoster, replace, rosterHeader } from '../../../actors/drive/objects.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { DriveSession, said, type Made, type RelayTarget } from '../driver.ts';
import { answerOf, judge, pool, streamAnswer, type Answer } from './cells.ts';
import { driveCheck } from './document.ts';

const text = (s: string) => new Uint8Array(Buffer.from(s));
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How far ahead the expiring shares expire: room for the uses inside the window. */
const EXPIRY_AHEAD_MS = 5000;

/** A use of a share, the operation it is, and whether the principal's role writes. */
const USES = ['read', 'children', 'chunk-read', 'write', 'events-stream'] as const;
type Use = (typeof USES)[number];
const OPERATION: Record<Use, string> = { read: 'driveNode', children: 'driveChildren', 'chunk-read': 'driveVersionChunk', write: 'driveCommit', 'events-stream': 'driveEvents' };

interface Holder {
  /** The lifecycle event that ends what it holds. */
  event: 'unshare' | 'share-expiry' | 'roster-change' | 'link-unshare' | 'link-expiry';
  rule: RuleId;
  before: DriveActor;
  after: DriveActor[];
  author?: RelayIdentity;
  /** Its own file to write (a write role), and the head its last accepted write left. */
  file?: Made;
  head?: string;
  share?: string;
  stream?: SseStream;
}

const uses = (h: Holder): Use[] => USES.filter((u) => (u === 'write' ? h.file !== undefined : u !== 'events-stream' || !h.event.startsWith('link')));

/** The lifecycle cells the check fills. */
export function lifecycleCells(): Array<{ rule: RuleId; facet: string; value: string; operation: string }> {
  const shapes: Array<Pick<Holder, 'event' | 'rule'> & { writes: boolean }> = [
    { event: 'unshare', rule: 'ra.drive.members', writes: true },
    { event: 'share-expiry', rule: 'ra.drive.members', writes: true },
    { event: 'roster-change', rule: 'ra.drive.group-members', writes: false },
    { event: 'link-unshare', rule: 'ra.drive.link-auth', writes: false },
    { event: 'link-expiry', rule: 'ra.drive.link-auth', writes: false },
  ];
  const cells = shapes.flatMap((h) =>
    USES.filter((u) => (u === 'write' ? h.writes : u !== 'events-stream' || !h.event.startsWith('link'))).map((u) => ({ rule: h.rule, facet: h.event, value: u, operation: OPERATION[u] })),
  );
  const window = (['inside', 'outside'] as const).flatMap((value) =>
    ['driveNode', 'driveChildren', 'driveVersionChunk', 'driveCommit'].map((operation) => ({ rule: 'ra.drive.members' as RuleId, facet: 'share-expiry-window', value, operation })),
  );
  return [...cells, ...window, { rule: 'ra.drive.events-revocation', facet: 'lifecycle', value: 'events-stream', operation: 'driveEvents' }];
}

async function tryUse(s: DriveSession, drive: string, owner: RelayIdentity, folder: Made, file: Made, h: Holder, actor: DriveActor, u: Use): Promise<Answer> {
  switch (u) {
    case 'read':
      return answerOf(await s.drive.node(drive, actor, file.keys.node));
    case 'children':
      return answerOf(await s.drive.node(drive, actor, folder.keys.node, '/children'));
    case 'chunk-read':
      return answerOf(await s.drive.chunk(drive, actor, file.keys.node, file.version, file.chunks[0]!.id));
    case 'events-stream':
      return streamAnswer(s.drive, drive, actor);
    case 'write': {
      const own = h.file!;
      const chunks = encryptContent(s.profile, drive, own.keys, text(`written ${randomBytes(4).toString('hex')}`));
      const up = await s.drive.upload(drive, s.actor(owner), chunks);
      if (up) throw new Error(up);
      const body = replace(s.profile, { drive, author: h.author!, keys: own.keys, parent: h.head ?? own.version, chunks });
      const r = await s.drive.commit(drive, actor, body);
      if (r.status >= 200 && r.status < 300) h.head = String((body.manifest as Record<string, unknown>).version);
      return answerOf(r);
    }
  }
}

export function sharesLifecycle(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/matrix/lifecycle',
    title:
      'an unshare, a share expiring, a roster that no longer lists a member, a link unshared and a link expiring each end every use (read, children, chunk read, write, the event stream) from the next request; inside the window every use works',
    rules: ['ra.drive.members', 'ra.drive.group-members', 'ra.drive.link-auth', 'ra.drive.events-revocation'],
    context: ['ra.drive.roles', 'ra.drive.share', 'ra.drive.unshare', 'ra.drive.group-roster'],
    cells: lifecycleCells(),
    lane: 'drive-lifecycle',
    timeoutMs: 60_000,
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const folder = await s.folder(owner, root.keys, 'shared');
      const [file, fileU, fileX] = await Promise.all([
        s.file(owner, folder.keys, 'f', text('read me')),
        s.file(owner, folder.keys, 'fu', text('u writes')),
        s.file(owner, folder.keys, 'fx', text('x writes')),
      ]);
      const [u, x, group, member, other] = await Promise.all([s.identity(), s.identity(), s.identity('peer'), s.identity(), s.stranger()]);
      const to = (id: RelayIdentity) => ({ identity: id.identity, encryption: id.encryption.publicKey });
      const [link, linkX] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
      const [su, , sl] = await Promise.all([
        s.share(owner, { node: folder.keys, role: 'write', member: to(u) }),
        s.share(owner, { node: folder.keys, role: 'read', member: to(group) }),
        s.share(owner, { node: folder.keys, role: 'read', link }),
      ]);
      // The expiring shares last, each judged inside its window first.
      const expires = Math.ceil((Date.now() + EXPIRY_AHEAD_MS) / 1000) * 1000;
      await Promise.all([
        s.share(owner, { node: folder.keys, role: 'write', member: to(x), expires: rfc3339(expires) }),
        s.share(owner, { node: folder.keys, role: 'read', link: linkX, expires: rfc3339(expires) }),
      ]);
      const roster = (members: string[]) => rosterHeader(groupRoster(s.profile, group.identity, group, { members, admins: [group.identity], epoch: 0 }));
      const holders: Holder[] = [
        { event: 'unshare', rule: 'ra.drive.members', before: s.actor(u), after: [s.actor(u)], author: u, file: fileU, share: String(su.share.id) },
        { event: 'share-expiry', rule: 'ra.drive.members', before: s.actor(x), after: [s.actor(x)], author: x, file: fileX },
        {
          event: 'roster-change',
          rule: 'ra.drive.group-members',
          before: { ...s.actor(member), roster: roster([member.identity, other.identity]) },
          // The group's roster after the change lists only the other member; the removed one sends it, or none.
          after: [{ ...s.actor(member), roster: roster([other.identity]) }, s.actor(member)],
        },
        { event: 'link-unshare', rule: 'ra.drive.link-auth', before: { link }, after: [{ link }], share: String(sl.share.id) },
        { event: 'link-expiry', rule: 'ra.drive.link-auth', before: { link: linkX }, after: [{ link: linkX }] },
      ];
      const judgeAll = async (phase: 'before' | 'after', which: Holder[]) => {
        const jobs = which.flatMap((h) => (phase === 'before' ? [h.before] : h.after).flatMap((actor) => uses(h).map((use) => ({ h, actor, use }))));
        const verdicts = await pool(jobs, 8, async ({ h, actor, use }) => {
          const a = await tryUse(s, drive, owner, folder, file, h, actor, use).catch((error: Error) => ({ status: 0, text: '', shown: `no answer (${error.message})` }));
          const problem = a.status === 0 ? a.shown : judge(phase === 'before' ? 'allowed' : 'refused', a);
          return problem ? `${phase} the ${h.event}, ${use} (${OPERATION[use]}) ${problem}` : undefined;
        });
        for (const v of verdicts) if (v) e.fail(v);
      };
      const expiring = holders.filter((h) => h.event.endsWith('expiry'));
      await judgeAll('before', expiring);
      if (Date.now() >= expires) throw new CheckSkip(`the uses inside the expiring shares' window took past their expiry (${EXPIRY_AHEAD_MS} ms): too slow to judge the window here`);
      await judgeAll(
        'before',
        holders.filter((h) => !expiring.includes(h)),
      );
      // The member's stream, open while its share lives, closes when the share ends.
      const unshared = holders[0]!;
      unshared.stream = await s.drive.events(drive, unshared.before);
      try {
        if (!e.that(unshared.stream.status === 200, `the member's stream answered ${unshared.stream.status} before the unshare`)) return;
        for (const h of holders.filter((x) => x.share)) {
          const r = await s.unshare(owner, h.share!);
          if (!e.that(r.status >= 200 && r.status < 300, `the ${h.event} answered ${r.status} ${r.text().slice(0, 200)}`)) return;
        }
        await judgeAll(
          'after',
          holders.filter((h) => h.event === 'unshare' || h.event === 'roster-change' || h.event === 'link-unshare'),
        );
        for (let i = 0; i < 50 && !unshared.stream.ended; i++) await sleep(100);
        e.that(unshared.stream.ended, "the unshared member's event stream is still open 5 s after its share ended");
      } finally {
        await unshared.stream.close();
      }
      await sleep(Math.max(0, expires + 1000 - Date.now()));
      await judgeAll('after', expiring);
      // Nothing a refused write tried is there: each writer's file keeps the head its write inside the window left.
      for (const h of holders.filter((x) => x.file)) {
        const head = await s.drive.node(drive, s.actor(owner), h.file!.keys.node);
        e.that(h.head !== undefined && head.text().includes(h.head), `after the ${h.event} the written file's head is not the write inside the window (${String(h.head)}): ${said(head)}`);
      }
    },
  });
}
