// The tree's rules (spec/rules ra.drive.tree, a project decision where document 3 shows the commit
// only): one root, a folder, created once; nodes created in or moved into a live folder, never
// below themselves; a node's kind and version ids fixed; names unique in a folder; a folder with
// live children not removed (409). Each refusal changes nothing.
import type { Check } from '../../../run/model.ts';
import { create, move, nodeKeys, remove, replace, resigned, type NodeKeys } from '../../../actors/drive/objects.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { refusedWith } from '../../../run/answers.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));

/** `body`'s manifest with its version set to `version`, signed again by its author's key. */
function withVersion(s: { profile: Parameters<typeof resigned>[0] }, body: Obj, version: string, seed: Uint8Array): Obj {
  return { ...body, manifest: resigned(s.profile, 'manifest', { ...(body.manifest as Obj), version }, seed) };
}

export function treeCheck(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/tree',
    title:
      "a name taken in a folder, and removing a folder with live children, answer 409 `conflict`; a second root, moving or removing the root, moving a folder below itself, creating in a file or a removed folder, a kind that is not the node's, a version id the node already has and a file as a first root answer 400 `invalid_request` and change nothing",
    rules: ['ra.drive.tree', 'ra.drive.conflict-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const docs = await s.folder(id, root.keys, 'docs');
      const inner = await s.folder(id, docs.keys, 'inner');
      const drive = id.identity;
      const [file, gone] = await Promise.all([s.file(id, root.keys, 'plain', text('a file, not a folder')), s.folder(id, root.keys, 'gone')]);
      const rmGone = await s.drive.commit(drive, s.actor(id), remove(s.profile, { drive, author: id, node: gone.keys.node, kind: 'folder', parent: gone.version }));
      if (!e.that(ok(rmGone), `removing an empty folder answered ${said(rmGone)}`)) return;
      // The file's second version, on which a replace naming its first version's id is tried.
      const next = replace(s.profile, { drive, author: id, keys: file.keys, parent: file.version, chunks: file.chunks });
      const r2 = await s.drive.commit(drive, s.actor(id), next);
      if (!e.that(ok(r2), `replacing the file answered ${said(r2)}`)) return;
      const second = String((next.manifest as Obj).version);
      const folderIn = (into: typeof root.keys) =>
        create(s.profile, { drive, author: id, keys: nodeKeys(), kind: 'folder', at: { folder: into, name: 'x' }, ownerEncryption: id.encryption.publicKey });
      const tries: Array<[string, Record<string, unknown>, 400 | 409]> = [
        ['a second root', create(s.profile, { drive, author: id, keys: nodeKeys(), kind: 'folder', at: {}, ownerEncryption: id.encryption.publicKey }), 409],
        ['moving the root', move(s.profile, { drive, author: id, keys: root.keys, kind: 'folder', parent: root.version, to: docs.keys, name: 'root' }), 400],
        ['removing the root', remove(s.profile, { drive, author: id, node: root.keys.node, kind: 'folder', parent: root.version }), 400],
        ['moving a folder into its own child', move(s.profile, { drive, author: id, keys: docs.keys, kind: 'folder', parent: docs.version, to: inner.keys, name: 'loop' }), 400],
        ['creating a folder inside a file', folderIn(file.keys), 400],
        ['creating a folder inside a removed folder', folderIn(gone.keys), 400],
        ['moving a file that calls itself a folder', move(s.profile, { drive, author: id, keys: file.keys, kind: 'folder', parent: second, to: docs.keys, name: 'renamed' }), 400],
        // A replace whose new version is the id of a version the node already has.
        ['a replace reusing a version id', withVersion(s, replace(s.profile, { drive, author: id, keys: file.keys, parent: second, chunks: file.chunks }), file.version, id.seed), 400],
      ];
      // A drive's first root is a folder: another identity's first commit, a file at the root, is refused.
      const fresh = await s.identity();
      const fileRoot = create(s.profile, { drive: fresh.identity, author: fresh, keys: nodeKeys(undefined, true), kind: 'file', at: {}, ownerEncryption: fresh.encryption.publicKey });
      const fr = await s.drive.commit(fresh.identity, s.actor(fresh), fileRoot);
      e.that(refusedWith(fr, 400, 'invalid_request'), `a file as a drive's first root answered ${said(fr)}, expected 400`);
      const before = await s.lastChange(drive, s.actor(id));
      for (const [what, body, status] of tries) {
        const r = await s.drive.commit(drive, s.actor(id), body);
        e.that(refusedWith(r, status, status === 409 ? 'conflict' : 'invalid_request'), `${what} answered ${said(r)}, expected ${status}`);
        // A second root's head is the root's (ra.drive.conflict-body).
        if (what === 'a second root')
          e.that(
            (bodyOf(r)?.head as Obj | undefined)?.node === root.keys.node && (bodyOf(r)?.head as Obj | undefined)?.version === root.version,
            `a second root's 409 names head ${said(r)}, not the root ${root.keys.node} at ${root.version}`,
          );
      }
      const after = await s.lastChange(drive, s.actor(id));
      e.that(after.at === before.at, `the refused tree changes moved the drive's changes: before ${before.shown}, after ${after.shown}`);
      const dup = await s.drive.commit(
        id.identity,
        s.actor(id),
        create(s.profile, { drive: id.identity, author: id, keys: nodeKeys(), kind: 'folder', at: { folder: root.keys, name: 'docs' }, ownerEncryption: id.encryption.publicKey }),
      );
      e.that(refusedWith(dup, 409, 'conflict'), `creating a second "docs" answered ${said(dup)}`);
      const rm = await s.drive.commit(id.identity, s.actor(id), remove(s.profile, { drive: id.identity, author: id, node: docs.keys.node, kind: 'folder', parent: docs.version }));
      e.that(refusedWith(rm, 409, 'conflict'), `removing a folder with a child answered ${said(rm)}`);
    },
  });
}

/** Where nodes live after each commit: the root, a folder's children, a name held through a replace. */
export function placesCheck(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/tree-places',
    title:
      "a caller other than the owner cannot create an empty drive's root; a create reusing a node's id is 409, a replace of no node 404; a folder lists a file created in it, keeps it and its name through a replace, and gives it up on a move; a folder with children moves; the drive's root stays the first; a manifest's answer has no positions",
    rules: ['ra.drive.tree', 'ra.drive.nodes-body', 'ra.drive.root-body', 'ra.drive.commit-answer'],
    run: async (s, e) => {
      const [{ id, root }, fresh, stranger] = await Promise.all([s.owner(), s.identity(), s.identity()]);
      const drive = id.identity;
      const me = s.actor(id);
      // An empty drive's root: not the stranger's to create; its owner's still.
      const strangers = await s.drive.commit(
        fresh.identity,
        s.actor(stranger),
        create(s.profile, { drive: fresh.identity, author: stranger, keys: nodeKeys(), kind: 'folder', at: {}, ownerEncryption: fresh.encryption.publicKey }),
      );
      e.that(refusedWith(strangers, 403, 'not_authorized'), `a stranger creating the root of an empty drive answered ${said(strangers)}, expected 403 not_authorized`);
      const own = await s.drive.commit(
        fresh.identity,
        s.actor(fresh),
        create(s.profile, { drive: fresh.identity, author: fresh, keys: nodeKeys(), kind: 'folder', at: {}, ownerEncryption: fresh.encryption.publicKey }),
      );
      e.that(ok(own), `after it, the owner creating its root answered ${said(own)}`);

      const [docs, dest, away] = await Promise.all([s.folder(id, root.keys, 'docs'), s.folder(id, root.keys, 'dest'), s.folder(id, root.keys, 'away')]);
      const file = await s.file(id, docs.keys, 'f', text('placed'));
      const children = async (folder: NodeKeys) => s.drive.node(drive, me, folder.node, '/children');
      const listed = async (folder: NodeKeys, node: string) => (await children(folder)).text().includes(node);
      e.that(await listed(docs.keys, file.keys.node), `after a file was created in it, the folder lists ${said(await children(docs.keys))}`);
      const reused = create(s.profile, {
        drive,
        author: id,
        keys: { ...nodeKeys(undefined, true), node: file.keys.node },
        kind: 'folder',
        at: { folder: dest.keys, name: 'other name' },
        ownerEncryption: id.encryption.publicKey,
      });
      const again = await s.drive.commit(drive, me, reused);
      e.that(refusedWith(again, 409, 'conflict'), `a create reusing an existing node's id answered ${said(again)}, expected 409`);
      const nowhere = await s.drive.commit(drive, me, replace(s.profile, { drive, author: id, keys: nodeKeys(undefined, true), parent: file.version, chunks: file.chunks }));
      e.that(refusedWith(nowhere, 404, 'not_found'), `a replace of a node that does not exist answered ${said(nowhere)}, expected 404`);

      const next = replace(s.profile, { drive, author: id, keys: file.keys, parent: file.version, chunks: file.chunks });
      const r = await s.drive.commit(drive, me, next);
      e.that(ok(r) && Array.isArray(bodyOf(r)?.positions) && (bodyOf(r)?.positions as unknown[]).length === 0, `the replace answered ${said(r)}, not 200 with empty positions`);
      e.that(await listed(docs.keys, file.keys.node), `after the replace the folder lists ${said(await children(docs.keys))}`);
      const taken = await s.drive.commit(
        drive,
        me,
        create(s.profile, { drive, author: id, keys: nodeKeys(), kind: 'folder', at: { folder: docs.keys, name: 'f' }, ownerEncryption: id.encryption.publicKey }),
      );
      e.that(refusedWith(taken, 409, 'conflict'), `after the replace, creating another "f" beside it answered ${said(taken)}, expected 409`);

      const moved = await s.drive.commit(drive, me, move(s.profile, { drive, author: id, keys: file.keys, kind: 'file', parent: String((next.manifest as Obj).version), to: dest.keys, name: 'f' }));
      e.that(ok(moved), `moving the file answered ${said(moved)}`);
      e.that(
        !(await listed(docs.keys, file.keys.node)) && (await listed(dest.keys, file.keys.node)),
        `after the move the old folder lists ${said(await children(docs.keys))} and the new ${said(await children(dest.keys))}`,
      );
      const takenThere = await s.drive.commit(
        drive,
        me,
        create(s.profile, { drive, author: id, keys: nodeKeys(), kind: 'folder', at: { folder: dest.keys, name: 'f' }, ownerEncryption: id.encryption.publicKey }),
      );
      e.that(refusedWith(takenThere, 409, 'conflict'), `after the move, creating another "f" in its new folder answered ${said(takenThere)}, expected 409`);
      await s.folder(id, docs.keys, 'inner');
      const folderMove = await s.drive.commit(drive, me, move(s.profile, { drive, author: id, keys: docs.keys, kind: 'folder', parent: docs.version, to: away.keys, name: 'docs' }));
      e.that(ok(folderMove), `moving a folder with a child answered ${said(folderMove)}`);
      const top = await s.drive.root(drive, me);
      e.that(ok(top) && bodyOf(top)?.root === root.keys.node, `after the creates the drive answered ${said(top)}, not root ${root.keys.node}`);
    },
  });
}
