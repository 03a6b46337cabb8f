// The caps signed into a share (the project's decision, spec/rules ra.drive.share-caps): only
// `downloads` acts (ra.drive.link-opens); `bytes`, `files`, `records` and `per_hour` are carried
// as signed. Found from outside against the reference (issue 26, item 4): the caps were carried
// and ignored without the project saying so.
import type { Check } from '../../../run/model.ts';
import { bodyOf, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const CAPS = { bytes: 1_048_576, files: 3, records: 5, per_hour: 7 };

function capsCarried(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/share-caps',
    title: "the caps signed into a member's share (`bytes`, `files`, `records`, `per_hour`) come back as signed in the member's shares and the node's",
    rules: ['ra.drive.share-caps'],
    context: ['ra.drive.share', 'ra.drive.shares-list'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const folder = await s.folder(id, root.keys, 'capped');
      const member = await s.identity();
      const made = await s.share(id, { node: folder.keys, role: 'write', member: { identity: member.identity, encryption: member.encryption.publicKey }, caps: CAPS });
      const signed = JSON.stringify(made.share.caps);
      for (const [where, path] of [
        ["the member's shares", '/shares'],
        ["the node's shares", `/nodes/${folder.keys.node}/shares`],
      ] as const) {
        const list = await s.drive.get(id.identity, path, s.actor(member));
        const mine = ((bodyOf(list)?.shares as Obj[] | undefined) ?? []).find((x) => x.id === made.share.id);
        e.that(mine !== undefined && JSON.stringify(mine.caps) === signed, `${where} answered ${said(list)}, not the share with caps ${signed}`);
      }
    },
  });
}

export function shareCapsChecks(t: RelayTarget): Check[] {
  return [capsCarried(t)];
}
