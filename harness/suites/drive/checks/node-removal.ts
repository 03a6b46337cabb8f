// What removing a node ends (spec/facets/drive.yaml, lifecycle node-removal; project decisions,
// ra.drive.tree and ra.drive.nodes-body): after the owner removes a file, a write member's replace
// and append on it are refused, as is the owner's, and its folder no longer lists it.
import type { Check } from '../../../run/model.ts';
import { encryptContent, hex16, record, remove, replace } from '../../../actors/drive/objects.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

const text = (s: string) => new Uint8Array(Buffer.from(s));

export function nodeRemoval(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/node-removal',
    title: "after a file is removed, replaces and appends on it are refused (the owner's and a write member's), its node reads removed, and its folder no longer lists it",
    rules: ['ra.drive.tree', 'ra.drive.nodes-body'],
    cells: [
      { rule: 'ra.drive.tree' as RuleId, facet: 'node-removal', value: 'write', operation: 'driveCommit' },
      { rule: 'ra.drive.nodes-body' as RuleId, facet: 'node-removal', value: 'children', operation: 'driveChildren' },
    ],
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const [folder, member] = await Promise.all([s.folder(owner, root.keys, 'docs'), s.identity()]);
      const [file, log] = await Promise.all([s.file(owner, folder.keys, 'gone', text('soon removed')), s.file(owner, folder.keys, 'log', new Uint8Array(0), { mode: 'append' })]);
      await s.share(owner, { node: folder.keys, role: 'write', member: { identity: member.identity, encryption: member.encryption.publicKey } });
      for (const [f, mode] of [
        [file, 'replace'],
        [log, 'append'],
      ] as const) {
        const r = await s.drive.commit(drive, s.actor(owner), remove(s.profile, { drive, author: owner, node: f.keys.node, kind: 'file', parent: f.version, mode }));
        if (!e.that(ok(r), `removing ${mode} file answered ${said(r)}`)) return;
      }
      const chunks = encryptContent(s.profile, drive, file.keys, text('after removal'));
      await s.drive.upload(drive, s.actor(owner), chunks);
      for (const [who, id] of [
        ['the owner', owner],
        ['the write member', member],
      ] as const) {
        const head = await s.drive.node(drive, s.actor(owner), file.keys.node);
        const version = String((JSON.parse(head.text()) as { version?: unknown }).version);
        const w = await s.drive.commit(drive, s.actor(id), replace(s.profile, { drive, author: id, keys: file.keys, parent: version, chunks }));
        e.that(w.status >= 400 && w.status < 500, `${who}'s replace of the removed file answered ${said(w)}`);
        const a = await s.drive.commit(drive, s.actor(id), { id: hex16(), records: [record(s.profile, { drive, node: log.keys, author: id, sequence: 1, previous: '', payload: text('late') })] });
        e.that(a.status >= 400 && a.status < 500, `${who}'s append to the removed file answered ${said(a)}`);
      }
      const gone = await s.drive.node(drive, s.actor(owner), file.keys.node);
      e.that(ok(gone) && (bodyOf(gone) as { removed?: unknown } | undefined)?.removed === true, `the removed file's node answered ${said(gone)}, not its head with removed true`);
      const kids = await s.drive.node(drive, s.actor(owner), folder.keys.node, '/children');
      e.that(ok(kids) && !kids.text().includes(file.keys.node) && !kids.text().includes(log.keys.node), `after the removals the folder lists ${said(kids)}`);
    },
  });
}
