// What each applied commit answers, and the change it leaves (project decisions: ra.drive.commit-answer,
// ra.drive.changes-body, ra.drive.conflict-body, ra.drive.record, ra.drive.share). Records answer
// the last record's `position`, every record's `positions` and the node's `head`; a trim, a share
// and an unshare answer the node's `head` and no positions, a share and an unshare the share's id;
// each leaves one change naming its operation. An author's record at a sequence it already used is
// a stale base (409, with the author's last `sequence` and `hash`); one past a gap is refused 400.
// Records of two nodes in one commit, a record with neither chunks nor a sealed payload, and shares
// the share rule refuses (a member and a link, an administering link, another drive's share) are
// refused 4xx and move nothing.
import type { Check } from '../../../run/model.ts';
import { hex16, record, recordHash, resigned, share } from '../../../actors/drive/objects.ts';
import { refusedWith } from '../../../run/answers.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));
const isPosition = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 0;

export function commitAnswers(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/commit-answers',
    title:
      "records answer their positions and the head, a trim, a share and an unshare the head and no positions, each leaving one change that names its operation; a trim keeps the record at its position; a reused author sequence is a 409 with the author's last sequence and hash, a gap a 400; records of two nodes, a record with no content and shares the share rule refuses are refused",
    rules: ['ra.drive.commit-answer', 'ra.drive.changes-body', 'ra.drive.conflict-body', 'ra.drive.record', 'ra.drive.share', 'ra.drive.commit'],
    context: ['ra.drive.stale-base'],
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const me = s.actor(owner);
      const [folder, { log }, member] = await Promise.all([s.folder(owner, root.keys, 'shared'), s.log(owner, root.keys, 'log'), s.identity()]);
      const tail = bodyOf(await s.drive.node(drive, me, log.keys.node, '/records'));
      const first = ((tail?.records as Obj[] | undefined) ?? [])[0];
      const firstHash = first ? recordHash(s.profile, (first.record as Obj | undefined) ?? first) : '';
      const rec = (sequence: number, previous: string, payload: string | null = `record ${sequence}`, node = log.keys) =>
        record(s.profile, { drive, node, author: owner, sequence, previous, ...(payload === null ? {} : { payload: text(payload) }) });
      const lastChange = async (): Promise<Obj | undefined> => {
        const changes = (bodyOf(await s.drive.changes(drive, me, 0))?.changes as Obj[] | undefined) ?? [];
        return changes.at(-1);
      };
      /** The answer's own parts, and the change it left: `operation` on `node`. */
      const answered = async (what: string, r: Awaited<ReturnType<typeof s.drive.commit>>, sent: Obj, node: string, operation: string, parts: (a: Obj) => boolean): Promise<void> => {
        const a = bodyOf(r);
        e.that(ok(r) && a?.id === sent.id && Number.isInteger(a?.seq) && a?.node === node && parts(a), `${what} answered ${said(r)}`);
        const c = await lastChange();
        e.that(c?.seq === a?.seq && c?.node === node && c?.operation === operation, `the change ${what} left is ${JSON.stringify(c)}, not ${operation} of ${node} at seq ${String(a?.seq)}`);
        // The change carries the commit's position and share where it has one, and no null.
        const carried = (['position', 'share'] as const).filter((k) => a?.[k] !== undefined);
        e.that(
          c !== undefined && carried.every((k) => c[k] === a![k]) && Object.values(c).every((v) => v !== null),
          `the change ${what} left is ${JSON.stringify(c)}: not its ${carried.join(' and ') || 'fields'} as answered (${carried.map((k) => `${k} ${JSON.stringify(a![k])}`).join(', ')}), or a field is null`,
        );
      };

      // Two records at once: the last one's position, both positions in order, the node's head.
      const second = rec(2, firstHash);
      const third = rec(3, recordHash(s.profile, second));
      const appended = { id: hex16(), records: [second, third] };
      await answered('two records', await s.drive.commit(drive, me, appended), appended, log.keys.node, 'append', (a) => {
        const positions = a.positions as unknown[];
        return (
          isPosition(a.position) &&
          Array.isArray(positions) &&
          positions.length === 2 &&
          positions.every(isPosition) &&
          positions[1] === a.position &&
          positions[0] === a.position - 1 &&
          a.head === log.version
        );
      });

      // The author's sequence 3 again is a stale base; 5 after 3 is a gap.
      const again = await s.drive.commit(drive, me, { id: hex16(), records: [rec(3, recordHash(s.profile, second), 'another third')] });
      const head = bodyOf(again)?.head as Obj | undefined;
      e.that(
        refusedWith(again, 409, 'conflict') && head?.node === log.keys.node && head.sequence === 3 && head.hash === recordHash(s.profile, third),
        `a record at the author's used sequence 3 answered ${said(again)}, not 409 with the author's sequence 3 and hash ${recordHash(s.profile, third)}`,
      );
      const gap = await s.drive.commit(drive, me, { id: hex16(), records: [rec(5, recordHash(s.profile, third))] });
      e.that(gap.status === 400, `a record at sequence 5 after 3 answered ${said(gap)}, not 400`);

      // Commits the record and share rules refuse: nothing moves.
      const before = await lastChange();
      const to = { identity: member.identity, encryption: member.encryption.publicKey };
      const memberShare = share(s.profile, { drive, issuer: owner, node: folder.keys, role: 'read', member: to }).body;
      const reshare = (change: (o: Obj) => Obj) => ({ id: hex16(), share: resigned(s.profile, 'share', change({ ...(memberShare.share as Obj) }), owner.seed) });
      const fourth = rec(4, recordHash(s.profile, third));
      const refused: Array<[string, Obj]> = [
        ['a record with neither chunks nor a sealed payload', { id: hex16(), records: [rec(4, recordHash(s.profile, third), null)] }],
        ['records of two nodes in one commit', { id: hex16(), records: [fourth, rec(5, recordHash(s.profile, fourth), 'elsewhere', folder.keys)] }],
        ['a share naming a member and a link', reshare((o) => ({ ...o, id: hex16(), link: hex16() }))],
        ['a link share that administers', share(s.profile, { drive, issuer: owner, node: folder.keys, role: 'admin', link: hex16() }).body],
        ['a share naming another drive', reshare((o) => ({ ...o, id: hex16(), drive: member.identity }))],
      ];
      for (const [what, body] of refused) {
        const r = await s.drive.commit(drive, me, body);
        e.that(r.status >= 400 && r.status < 500, `${what} answered ${said(r)}`);
      }
      const after = await lastChange();
      e.that(after?.seq === before?.seq, `the refused commits moved the drive's changes from ${JSON.stringify(before)} to ${JSON.stringify(after)}`);

      // A trim, a share and an unshare: the node's head, no positions; a share and an unshare name the share.
      const shareId = String((memberShare.share as Obj).id);
      const trim = { id: hex16(), trim: { node: log.keys.node, before: 2, snapshot: { node: log.keys.node, version: log.version } } };
      const unshare = { id: hex16(), unshare: { id: shareId } };
      const others: Array<[string, Obj, { node: string; version: string }, string, string | undefined]> = [
        ['a trim', trim, { node: log.keys.node, version: log.version }, 'trim', undefined],
        ['a share', memberShare, { node: folder.keys.node, version: folder.version }, 'share', shareId],
        ['an unshare', unshare, { node: folder.keys.node, version: folder.version }, 'unshare', shareId],
      ];
      for (const [what, body, node, operation, named] of others) {
        const noPositions = (a: Obj) => Array.isArray(a.positions) && a.positions.length === 0;
        await answered(what, await s.drive.commit(drive, me, body), body, node.node, operation, (a) => a.head === node.version && noPositions(a) && (named === undefined || a.share === named));
      }
      // The trim drops the records before its position and keeps the one at it.
      const kept = ((bodyOf(await s.drive.node(drive, me, log.keys.node, '/records'))?.records as Obj[] | undefined) ?? []).map((r) => r.position);
      e.that(JSON.stringify(kept) === '[2,3]', `after a trim before 2 the records hold positions ${JSON.stringify(kept)}, not [2,3]`);
    },
  });
}
