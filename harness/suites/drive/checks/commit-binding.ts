// What a commit is bound to (spec/facets/drive.yaml, binding commit-parts; a project decision,
// ra.drive.commit-validated): a manifest, an append record and a share each name this drive and
// their caller as author or issuer, a manifest's pages are exactly its content and every chunk it
// references is stored here at its size, a record continues its author's chain. The owner commits
// each with one part swapped for another valid one (signed again where the swap is signed); each
// is refused and stores nothing (the drive's changes do not move), while the commit as made is
// taken.
import type { Check } from '../../../run/model.ts';
import { create, encryptContent, hex16, nodeKeys, pageHash, record, recordHash, resigned, share, type Author } from '../../../actors/drive/objects.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));

const MANIFEST = ['drive', 'author', 'author-signed-by-caller', 'signed-field', 'chunk-size', 'chunk-elsewhere', 'pages'] as const;
const RECORD = ['drive', 'node', 'author', 'author-signed-by-caller', 'signature', 'previous', 'sequence', 'chunk'] as const;
const SHARE = ['issuer'] as const;

export function commitBinding(t: RelayTarget): Check {
  const cell = (value: string) => ({ rule: 'ra.drive.commit-validated' as RuleId, facet: 'commit-parts', value, operation: 'driveCommit' });
  return driveCheck(t, {
    id: 'drive/profile/commit-binding',
    title: `a commit with one bound part swapped for another valid one is refused 4xx and stores nothing: a manifest's ${MANIFEST.join(', ')}; a record's ${RECORD.join(', ')}; a share's ${SHARE.join(', ')}`,
    rules: ['ra.drive.commit-validated'],
    context: ['ra.drive.manifest', 'ra.drive.record', 'ra.drive.share', 'ra.drive.changes'],
    cells: [...MANIFEST.map((p) => cell(`manifest-${p}`)), ...RECORD.map((p) => cell(`record-${p}`)), ...SHARE.map((p) => cell(`share-${p}`))],
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const [other, elsewhere, { log }] = await Promise.all([s.identity(), s.owner(), s.log(owner, root.keys, 'log')]);
      const me = s.actor(owner);
      const cursor = () => s.lastChange(drive, me);

      // A file of one chunk, uploaded here; the other owner's drive holds a chunk this one lacks.
      const keys = nodeKeys(undefined, true);
      const chunks = encryptContent(s.profile, drive, keys, text('bound content'));
      const foreign = encryptContent(s.profile, elsewhere.id.identity, keys, text('stored in another drive'));
      const [up, upElsewhere] = await Promise.all([s.drive.upload(drive, me, chunks), s.drive.upload(elsewhere.id.identity, s.actor(elsewhere.id), foreign)]);
      if (!e.that(up === undefined && upElsewhere === undefined, `uploading the chunks failed: ${up ?? upElsewhere ?? ''}`)) return;
      const at = { folder: root.keys, name: 'bound' };
      const base = (o: { chunks?: typeof chunks; author?: Author } = {}) =>
        create(s.profile, { drive, author: o.author ?? owner, keys, kind: 'file', at, ownerEncryption: owner.encryption.publicKey, chunks: o.chunks ?? chunks });
      const withManifest = (b: Obj, change: (m: Obj) => void, resign = true): Obj => {
        const m = { ...(b.manifest as Obj) };
        change(m);
        return { ...b, manifest: resign ? resigned(s.profile, 'manifest', m, owner.seed) : m };
      };
      const repaged = (b: Obj): Obj => withManifest(b, (m) => void (m.pages = (b.pages as Obj[]).map((p) => pageHash(s.profile, p))));
      const withPage = (b: Obj, change: (ref: Obj) => void): Obj => {
        const pages = (b.pages as Obj[]).map((p) => ({ ...p, chunks: (p.chunks as Obj[]).map((c) => ({ ...c })) }));
        change((pages[0]!.chunks as Obj[])[0]!);
        return { ...b, pages };
      };
      const manifests: Record<(typeof MANIFEST)[number], () => Obj> = {
        // A folder (no pages, whose drive the chunks would name too) made for the other drive.
        drive: () => create(s.profile, { drive: elsewhere.id.identity, author: owner, keys: nodeKeys(), kind: 'folder', at, ownerEncryption: owner.encryption.publicKey }),
        author: () => base({ author: other }),
        'author-signed-by-caller': () => base({ author: { identity: other.identity, seed: owner.seed } }),
        'signed-field': () => withManifest(base(), (m) => void (m.version = hex16()), false),
        // The page names the stored chunk at another size on the grid (the page hashed into the manifest again).
        'chunk-size': () => repaged(withPage(base(), (ref) => void (ref.size = Number(ref.size) + 2 * limits.drive_chunk_padding_bytes))),
        'chunk-elsewhere': () => base({ chunks: foreign }),
        pages: () => ({ ...base(), pages: [] }),
      };

      const before = await cursor();
      for (const part of MANIFEST) {
        const r = await s.drive.commit(drive, me, manifests[part]());
        e.that(r.status >= 400 && r.status < 500, `a manifest whose ${part} was swapped answered ${said(r)}`);
      }
      const node = await s.drive.node(drive, me, keys.node);
      e.that(node.status === 404, `after the refused manifests their node answered ${said(node)}`);

      // Records: the owner's second record on its log, one part swapped at a time.
      const logChunks = encryptContent(s.profile, drive, log.keys, text('second record'));
      const up2 = await s.drive.upload(drive, me, logChunks);
      if (!e.that(up2 === undefined, `uploading the record's chunks failed: ${up2 ?? ''}`)) return;
      const tail = await s.drive.node(drive, me, log.keys.node, '/records');
      const first = ((bodyOf(tail)?.records as Obj[] | undefined) ?? [])[0];
      const previous = first ? recordHash(s.profile, (first.record as Obj | undefined) ?? first) : '';
      const next = (o: Partial<Parameters<typeof record>[1]> = {}) => record(s.profile, { drive, node: log.keys, author: owner, sequence: 2, previous, chunks: logChunks, ...o });
      const unstored = encryptContent(s.profile, drive, log.keys, text('never uploaded'));
      const records: Record<(typeof RECORD)[number], () => Obj[]> = {
        drive: () => [resigned(s.profile, 'record', { ...next(), drive: elsewhere.id.identity }, owner.seed)],
        node: () => [next(), record(s.profile, { drive, node: nodeKeys(undefined, true), author: owner, sequence: 3, previous: recordHash(s.profile, next()) })],
        author: () => [record(s.profile, { drive, node: log.keys, author: other, sequence: 1, previous: '' })],
        'author-signed-by-caller': () => [record(s.profile, { drive, node: log.keys, author: { identity: other.identity, seed: owner.seed }, sequence: 1, previous: '' })],
        signature: () => [next({ author: { identity: owner.identity, seed: other.seed } })],
        previous: () => [next({ previous: recordHash(s.profile, next()) })],
        sequence: () => [next({ sequence: 3 })],
        chunk: () => [next({ chunks: unstored })],
      };
      for (const part of RECORD) {
        const r = await s.drive.commit(drive, me, { id: hex16(), records: records[part]() });
        e.that(r.status >= 400 && r.status < 500, `a record whose ${part} was swapped answered ${said(r)}`);
      }

      // A share the owner commits, issued and signed by another identity.
      const member = { identity: other.identity, encryption: other.encryption.publicKey };
      const foreignShare = share(s.profile, { drive, issuer: other, node: root.keys, role: 'admin', member });
      const sh = await s.drive.commit(drive, me, foreignShare.body);
      e.that(sh.status >= 400 && sh.status < 500, `a share issued by another identity answered ${said(sh)}`);

      const after = await cursor();
      e.that(after.at === before.at, `the refused commits moved the drive's changes: before ${before.shown}, after ${after.shown}`);
      // The commits as made are taken: nothing above was refused for a reason of its own.
      const [m, r] = await Promise.all([s.drive.commit(drive, me, base()), s.drive.commit(drive, me, { id: hex16(), records: [next()] })]);
      e.that(ok(m), `the manifest as made answered ${said(m)}`);
      e.that(ok(r), `the record as made answered ${said(r)}`);
    },
  });
}
