// Who sees which shares (the project's decision, spec/rules ra.drive.shares-body): "the owner and
// admins of the node see every share, other members only their own". Document 3 says of a node's
// shares only that they are those "on the node and on its ancestors", so each principal's view of
// them is judged here, in the profile: the owner, an admin through an ancestor, a reader, a reader
// of the node itself, a link holder, and a group's member.
import type { Check } from '../../../run/model.ts';
import { bodyOf, groupOnPeer, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';
import { randomBytes } from 'node:crypto';
import type { DriveActor } from '../../../actors/drive/client.ts';

type Obj = Record<string, unknown>;

function sharesVisible(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/shares-visible',
    title:
      "a node's shares as each principal sees them: the owner and an admin of an ancestor see every share on the node and its ancestors, a reader and a writer of the folder and a reader of the node only their own, a link holder only its link's, a group's member the group's; a member's own list holds its share alone",
    rules: ['ra.drive.shares-body'],
    context: ['ra.drive.node-shares', 'ra.drive.shares-list'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const docs = await s.folder(id, root.keys, 'docs');
      const f = await s.file(id, docs.keys, 'f.txt', new TextEncoder().encode('f'));
      const [reader, nodeReader, admin, writer] = [await s.identity(), await s.identity(), await s.identity(), await s.identity()];
      // A group on the peer relay (when there is one), read by its member through the group's signed roster.
      const grouped = t.peerUrl ? await groupOnPeer(s) : undefined;
      if (!grouped) s.note('no peer relay given (--relay-peer): the group member is not asked');
      const member = (who: typeof reader) => ({ identity: who.identity, encryption: who.encryption.publicKey });
      const link = randomBytes(16).toString('hex');
      const made = {
        reader: await s.share(id, { node: docs.keys, role: 'read', member: member(reader) }),
        nodeReader: await s.share(id, { node: f.keys, role: 'read', member: member(nodeReader) }),
        admin: await s.share(id, { node: docs.keys, role: 'admin', member: member(admin) }),
        writer: await s.share(id, { node: docs.keys, role: 'write', member: member(writer) }),
        link: await s.share(id, { node: f.keys, role: 'read', link }),
        ...(grouped ? { group: await s.share(id, { node: docs.keys, role: 'read', member: member(grouped.group) }) } : {}),
      };
      const every = Object.values(made).map((m) => String(m.share.id));
      const seen = async (actor: Parameters<typeof s.drive.get>[2], path: string) => {
        const r = await s.drive.get(id.identity, path, actor);
        const ids = ((bodyOf(r)?.shares as Obj[] | undefined) ?? []).map((x) => String(x.id));
        return { r, ids: new Set(ids) };
      };
      const exactly = (got: Set<string>, want: string[]) => got.size === want.length && want.every((x) => got.has(x));
      const onNode = `/nodes/${f.keys.node}/shares`;
      const askers: Array<[string, DriveActor, string[]]> = [
        ['the owner', s.actor(id), every],
        ['an admin of the folder', s.actor(admin), every],
        ['a reader of the folder', s.actor(reader), [String(made.reader.share.id)]],
        // Write is one step short of admin: it sees its own share alone.
        ['a writer of the folder', s.actor(writer), [String(made.writer.share.id)]],
        ['a reader of the file', s.actor(nodeReader), [String(made.nodeReader.share.id)]],
        ['a holder of a link to the file', { link }, [String(made.link.share.id)]],
      ];
      if (grouped && made.group)
        askers.push(["a member of a group the folder is shared with, with the group's roster", { ...s.actor(grouped.member), roster: grouped.roster }, [String(made.group.share.id)]]);
      for (const [who, actor, want] of askers) {
        const { r, ids } = await seen(actor, onNode);
        e.that(r.status === 200 && exactly(ids, [...want]), `the file's shares asked by ${who} answered ${said(r)}: ${[...ids].join(', ') || 'none'}, not ${want.join(', ')}`);
      }
      const own = await seen(s.actor(reader), '/shares');
      e.that(own.r.status === 200 && exactly(own.ids, [String(made.reader.share.id)]), `the folder reader's shares answered ${said(own.r)}: ${[...own.ids].join(', ') || 'none'}, not its own alone`);
    },
  });
}

export function sharesVisibleChecks(t: RelayTarget): Check[] {
  return [sharesVisible(t)];
}
