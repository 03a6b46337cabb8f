// What each commit operation must land on (spec/facets/drive.yaml, binding commit-targets; project
// decisions, ra.drive.commit-validated, ra.drive.tree and ra.drive.unshare): records only on a live
// append file, a trim only up to a committed snapshot, a share only on a live node to someone
// other than the owner and under a new share id, an unshare only of a live share. The owner sends
// each to the wrong target; each is refused 4xx and the drive's changes do not move, and the same
// operation on its right target is taken.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { hex16, record, recordHash, remove, resigned, share } from '../../../actors/drive/objects.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));

const WRONG = [
  'records-on-folder',
  'records-on-replace-file',
  'records-on-unknown-node',
  'trim-unknown-snapshot',
  'trim-unknown-node',
  'share-to-owner',
  'share-on-removed-node',
  'share-id-reused',
  'unshare-unknown',
  'unshare-twice',
] as const;

export function commitTargets(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/commit-targets',
    title: `each commit operation sent to the wrong target (${WRONG.join(', ')}) is refused 4xx and moves nothing; on its right target it is taken`,
    rules: ['ra.drive.commit-validated', 'ra.drive.tree', 'ra.drive.unshare'],
    context: ['ra.drive.commit', 'ra.drive.changes'],
    cells: WRONG.map((value) => ({ rule: 'ra.drive.commit-validated' as RuleId, facet: 'commit-targets', value, operation: 'driveCommit' })),
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const me = s.actor(owner);
      const [folder, plain, { log }, member, gone] = await Promise.all([
        s.folder(owner, root.keys, 'docs'),
        s.file(owner, root.keys, 'plain', text('replace-mode content')),
        s.log(owner, root.keys, 'log'),
        s.identity(),
        s.folder(owner, root.keys, 'gone'),
      ]);
      const rm = await s.drive.commit(drive, me, remove(s.profile, { drive, author: owner, node: gone.keys.node, kind: 'folder', parent: gone.version }));
      if (!e.that(ok(rm), `removing an empty folder answered ${said(rm)}`)) return;
      const to = { identity: member.identity, encryption: member.encryption.publicKey };
      const live = await s.share(owner, { node: folder.keys, role: 'read', member: to });
      const ended = await s.share(owner, { node: folder.keys, role: 'read', member: to });
      const un = await s.unshare(owner, String(ended.share.id));
      if (!e.that(ok(un), `the first unshare answered ${said(un)}`)) return;
      const tail = bodyOf(await s.drive.node(drive, me, log.keys.node, '/records'));
      const first = ((tail?.records as Obj[] | undefined) ?? [])[0];
      const previous = first ? recordHash(s.profile, (first.record as Obj | undefined) ?? first) : '';
      const appendTo = (keys: typeof log.keys, sequence = 1, prev = '') => ({
        id: hex16(),
        records: [record(s.profile, { drive, node: keys, author: owner, sequence, previous: prev, payload: text('a record') })],
      });
      const reused = share(s.profile, { drive, issuer: owner, node: folder.keys, role: 'read', member: to }).body;
      (reused.share as Obj).id = String(live.share.id);
      const wrong: Record<(typeof WRONG)[number], Obj> = {
        'records-on-folder': appendTo(folder.keys),
        'records-on-replace-file': appendTo(plain.keys),
        'records-on-unknown-node': appendTo({ ...log.keys, node: hex16() }),
        'trim-unknown-snapshot': { id: hex16(), trim: { node: log.keys.node, before: 2, snapshot: { node: log.keys.node, version: hex16() } } },
        'trim-unknown-node': { id: hex16(), trim: { node: hex16(), before: 2, snapshot: { node: log.keys.node, version: log.version } } },
        'share-to-owner': share(s.profile, { drive, issuer: owner, node: folder.keys, role: 'read', member: { identity: owner.identity, encryption: owner.encryption.publicKey } }).body,
        'share-on-removed-node': share(s.profile, { drive, issuer: owner, node: gone.keys, role: 'read', member: to }).body,
        'share-id-reused': { ...reused, share: resigned(s.profile, 'share', reused.share as Obj, owner.seed) },
        'unshare-unknown': { id: hex16(), unshare: { id: randomBytes(16).toString('hex') } },
        'unshare-twice': { id: hex16(), unshare: { id: String(ended.share.id) } },
      };
      const cursor = () => s.lastChange(drive, me);
      const before = await cursor();
      for (const part of WRONG) {
        const r = await s.drive.commit(drive, me, wrong[part]);
        e.that(r.status >= 400 && r.status < 500, `${part} answered ${said(r)}`);
      }
      const after = await cursor();
      e.that(after.at === before.at, `the refused commits moved the drive's changes: before ${before.shown}, after ${after.shown}`);
      // The same operations on their right targets.
      const rights: Array<[string, Obj]> = [
        ['records on the append file', appendTo(log.keys, 2, previous)],
        ['a trim up to its committed version', { id: hex16(), trim: { node: log.keys.node, before: 1, snapshot: { node: log.keys.node, version: log.version } } }],
        ['a share on a live node to a member', share(s.profile, { drive, issuer: owner, node: folder.keys, role: 'read', member: to }).body],
        ['an unshare of the live share', { id: hex16(), unshare: { id: String(live.share.id) } }],
      ];
      for (const [what, body] of rights) {
        const r = await s.drive.commit(drive, me, body);
        e.that(ok(r), `${what} answered ${said(r)}`);
      }
    },
  });
}
