// The project's decisions where document 3 shows the drive's endpoints only (spec/rules
// ra.drive.*, origin project): bodies, codes, the 409's head, retries, chunk checks and access,
// caching, quota, link opens, validation that stores nothing, roles, the tree, unsharing.
import { createHash, randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { streamAnswer } from './cells.ts';
import { create, encryptContent, groupRoster, nodeKeys, pageHash, remove, replace, resigned, rosterHeader, rotate } from '../../../actors/drive/objects.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bodyOf, groupOnPeer, ok, said, type RelayTarget } from '../driver.ts';
import { failOnServerError, refusedWith } from '../../../run/answers.ts';
import { driveCheck } from './document.ts';
import { placesCheck, treeCheck } from './tree.ts';
import { CheckSkip } from '../../../run/verdict.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));

function conflictBody(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/conflict-body',
    title: 'a stale base answers 409 `conflict` with `head` {node, version, seq} naming the current head and the sequence that made it',
    rules: ['ra.drive.conflict-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'a', text('a'));
      const first = await s.drive.commit(id.identity, s.actor(id), replace(s.profile, { drive: id.identity, author: id, keys: f.keys, parent: f.version, chunks: f.chunks }));
      const won = String((bodyOf(first) ?? {}).version);
      const seq = (bodyOf(first) ?? {}).seq;
      const stale = await s.drive.commit(id.identity, s.actor(id), replace(s.profile, { drive: id.identity, author: id, keys: f.keys, parent: f.version, chunks: f.chunks }));
      const head = bodyOf(stale)?.head as Obj | undefined;
      e.that(
        refusedWith(stale, 409, 'conflict') && head?.node === f.keys.node && head.version === won && head.seq === seq,
        `the stale commit answered ${said(stale)}; the head is version ${won} at seq ${String(seq)}`,
      );
    },
  });
}

function idempotent(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/idempotent',
    title: 'a retried commit (same request id) answers the first result again, {id, seq, node, version}, and is applied once',
    rules: ['ra.drive.commit-idempotent', 'ra.drive.commit-answer'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const k = nodeKeys();
      const body = create(s.profile, { drive: id.identity, author: id, keys: k, kind: 'folder', at: { folder: root.keys, name: 'once' }, ownerEncryption: id.encryption.publicKey });
      const [a, b] = [await s.drive.commit(id.identity, s.actor(id), body), await s.drive.commit(id.identity, s.actor(id), body)];
      const first = bodyOf(a);
      e.that(ok(a) && first?.id === body.id && typeof first?.seq === 'number' && first?.node === k.node && first?.version === (body.manifest as Obj).version, `the commit answered ${said(a)}`);
      e.that(b.status === a.status && b.text() === a.text(), `the retry answered ${said(b)}, not the first result`);
      const changes = await s.drive.changes(id.identity, s.actor(id), 0);
      const about = ((bodyOf(changes)?.changes as Obj[] | undefined) ?? []).filter((c) => c.node === k.node);
      e.that(about.length === 1, `the changes list the retried commit ${about.length} times`);
    },
  });
}

function chunkUpload(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/chunk-upload',
    title:
      'a chunk whose bytes do not hash to its name is refused 400 `chunk_mismatch`, a size off the grid and a name that is no lowercase digest (capitals, a digit more, a letter before) 400 `invalid_request`, and none is stored; an upload answers 201 `{id, size}`, a second upload of the stored chunk 200 with the same body',
    rules: ['ra.drive.chunk-upload'],
    run: async (s, e) => {
      const { id } = await s.owner();
      const keys = nodeKeys(undefined, true);
      const [c] = encryptContent(s.profile, id.identity, keys, text('chunk'));
      const bad = await s.drive.putChunk(id.identity, s.actor(id), { id: createHash('sha256').update('other').digest('hex'), bytes: c!.bytes });
      e.that(refusedWith(bad, 400, 'chunk_mismatch'), `a mismatched chunk answered ${said(bad)}`);
      const odd = new Uint8Array(randomBytes(5000));
      const off = await s.drive.putChunk(id.identity, s.actor(id), { id: createHash('sha256').update(odd).digest('hex'), bytes: odd });
      e.that(refusedWith(off, 400, 'invalid_request'), `a 5000-byte chunk answered ${said(off)}, not 400 invalid_request`);
      // The chunk's own digest in capitals: no name of a chunk, whatever its bytes hash to.
      for (const [what, name] of [
        ['its digest in capitals', c!.id.toUpperCase()],
        ['its digest and a digit more', `${c!.id}0`],
        ['a letter and its digest', `x${c!.id}`],
      ] as const) {
        const r = await s.drive.putChunk(id.identity, s.actor(id), { id: name, bytes: c!.bytes });
        e.that(refusedWith(r, 400, 'invalid_request'), `a chunk named by ${what} answered ${said(r)}, not 400 invalid_request`);
      }
      const first = await s.drive.putChunk(id.identity, s.actor(id), c!);
      const again = await s.drive.putChunk(id.identity, s.actor(id), c!);
      e.that(first.status === 201 && again.status === 200, `two uploads of one chunk answered ${first.status} then ${again.status}, expected 201 then 200`);
      for (const [which, r] of [
        ['first', first],
        ['second', again],
      ] as const)
        e.that(bodyOf(r)?.id === c!.id && bodyOf(r)?.size === c!.bytes.length, `the ${which} upload answered ${said(r)}, not {id: ${c!.id}, size: ${c!.bytes.length}}`);
    },
  });
}

function chunkAccess(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/chunk-access',
    title: "a chunk is served only through a version that references it: another file's chunk through this file, or an uploaded but unreferenced chunk, answers 404",
    rules: ['ra.drive.chunk-access'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const [a, b] = [await s.file(id, root.keys, 'a', text('a')), await s.file(id, root.keys, 'b', text('b'))];
      const cross = await s.drive.chunk(id.identity, s.actor(id), b.keys.node, b.version, a.chunks[0]!.id);
      e.that(cross.status === 404, `file a's chunk through file b's version answered ${said(cross)}`);
      const [loose] = encryptContent(s.profile, id.identity, nodeKeys(undefined, true), text('loose'));
      await s.drive.upload(id.identity, s.actor(id), [loose!]);
      const byHash = await s.drive.chunk(id.identity, s.actor(id), a.keys.node, undefined, loose!.id);
      e.that(byHash.status === 404, `an unreferenced chunk by its hash answered ${said(byHash)}`);
    },
  });
}

function caching(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/cache',
    title: 'versions, pages and chunks are cacheable as immutable; node answers, the event stream and a link answer are no-store',
    rules: ['ra.drive.cache'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'c', text('c'));
      const m = (await s.drive.get(id.identity, `/nodes/${f.keys.node}/versions/${f.version}`, s.actor(id))).headers['cache-control'];
      const c = (await s.drive.chunk(id.identity, s.actor(id), f.keys.node, f.version, f.chunks[0]!.id)).headers['cache-control'];
      const n = (await s.drive.node(id.identity, s.actor(id), f.keys.node)).headers['cache-control'];
      e.that(/immutable/.test(m ?? '') && /immutable/.test(c ?? ''), `a version answered cache-control ${m}, a chunk ${c}`);
      e.that(n === 'no-store', `a node answered cache-control ${n}`);
      // The other answers that are not immutable: the event stream, and a link's public answer.
      const stream = await s.drive.events(id.identity, s.actor(id));
      await stream.close();
      const link = randomBytes(16).toString('hex');
      await s.share(id, { node: f.keys, role: 'read', link });
      const l = (await s.drive.link(id.identity, link)).headers['cache-control'];
      e.that(stream.headers['cache-control'] === 'no-store' && l === 'no-store', `the event stream answered cache-control ${stream.headers['cache-control']}, a link answer ${l}`);
    },
  });
}

function quota(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/quota',
    title: 'an upload past the quota is refused 507 `quota_exceeded` and the bytes used do not change',
    rules: ['ra.drive.quota'],
    timeoutMs: 60_000,
    run: async (s, e) => {
      const { id } = await s.owner();
      const read = await s.drive.root(id.identity, s.actor(id));
      failOnServerError(read, 'reading the drive');
      const root = bodyOf(read);
      const q = Number(root?.quota);
      if (!(q > 0 && q <= 16 * 1024 * 1024)) throw new CheckSkip(`the quota is ${String(root?.quota)} bytes: filling it is not checked above 16 MiB`);
      const keys = nodeKeys(undefined, true);
      let refusedAt: Awaited<ReturnType<typeof s.drive.putChunk>> | undefined;
      for (let i = 0; i < 8 && !refusedAt; i++) {
        const [c] = encryptContent(s.profile, id.identity, keys, new Uint8Array(randomBytes(4 * 1024 * 1024 - 8)), 1, 4 * 1024 * 1024);
        const r = await s.drive.putChunk(id.identity, s.actor(id), c!);
        if (!ok(r)) refusedAt = r;
      }
      const before = Number(bodyOf(await s.drive.root(id.identity, s.actor(id)))?.used);
      e.that(refusedAt !== undefined && refusedWith(refusedAt, 507, 'quota_exceeded'), `past the quota an upload answered ${refusedAt ? said(refusedAt) : 'nothing but success'}`);
      e.that(before <= q, `the drive holds ${before} bytes, over its quota ${q}`);
    },
  });
}

function linkOpens(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/link-opens',
    title:
      "two links of one download each, on two two-chunk files, each serve their file's first chunk, then (1.5 s later, the other's download started between) its second; neither serves the other's file or its own node, a first chunk again answers 410 `link_gone`, and a spent link's answer 404",
    rules: ['ra.drive.link-opens', 'ra.drive.links-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const files = await Promise.all(['once.bin', 'twice.bin'].map((name) => s.file(id, root.keys, name, new Uint8Array(randomBytes(70_000)))));
      if (
        !e.that(
          files.every((f) => f.chunks.length === 2),
          `the files have ${files.map((f) => f.chunks.length).join(' and ')} chunks, not 2`,
        )
      )
        return;
      const links = files.map(() => randomBytes(16).toString('hex'));
      await Promise.all(files.map((f, i) => s.share(id, { node: f.keys, role: 'read', link: links[i]!, caps: { downloads: 1 } })));
      const info = bodyOf(await s.drive.link(drive, links[0]!));
      e.that(info?.opens_left === 1 && info.pow === null && info.kdf === '' && info.node === files[0]!.keys.node, `the link answered ${JSON.stringify(info)}`);
      const read = (i: number, file: number, chunk: number) => s.drive.chunk(drive, { link: links[i]! }, files[file]!.keys.node, files[file]!.version, files[file]!.chunks[chunk]!.id);
      // Each download's first chunk spends its link's one open, the two downloads interleaved.
      for (const i of [0, 1]) {
        const r = await read(i, i, 0);
        e.that(ok(r), `link ${i + 1}'s download, its first chunk, answered ${said(r)}`);
      }
      await new Promise((r) => setTimeout(r, 1500));
      for (const i of [0, 1]) {
        const r = await read(i, i, 1);
        e.that(ok(r), `link ${i + 1}'s download, its second chunk 1.5 s later, answered ${said(r)}`);
      }
      for (const i of [0, 1]) {
        const other = await read(i, 1 - i, 1);
        e.that(refusedWith(other, 410, 'link_gone'), `link ${i + 1}, spent, reading the other file's second chunk answered ${said(other)}, not 410 link_gone`);
        const again = await read(i, i, 0);
        e.that(refusedWith(again, 410, 'link_gone'), `link ${i + 1}, spent, reading its file's first chunk again (a second download) answered ${said(again)}, not 410 link_gone`);
      }
      // The rest of a download is its chunks: the node itself is not, once the last open is spent.
      const node = await s.drive.node(drive, { link: links[0]! }, files[0]!.keys.node);
      e.that(refusedWith(node, 410, 'link_gone'), `link 1, spent, reading its file's node answered ${said(node)}, not 410 link_gone`);
      const after = await s.drive.link(drive, links[0]!);
      e.that(refusedWith(after, 404, 'not_found'), `after the download the link answer answered ${said(after)}, not 404 not_found`);
    },
  });
}

function linkDownloadVersion(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/link-download-version',
    title:
      "a link of one download whose last open started a download of a file's second version serves that version's second chunk, and answers 410 `link_gone` to the first version's second chunk: the rest of a download is its own version's",
    rules: ['ra.drive.link-opens'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const f = await s.file(id, root.keys, 'two versions.bin', new Uint8Array(randomBytes(70_000)));
      const chunks = encryptContent(s.profile, drive, f.keys, new Uint8Array(randomBytes(70_000)));
      const up = await s.drive.upload(drive, s.actor(id), chunks);
      if (!e.that(up === undefined && f.chunks.length === 2 && chunks.length === 2, `the second version's two chunks: ${up ?? `${chunks.length} chunks`}`)) return;
      const second = await s.drive.commit(drive, s.actor(id), replace(s.profile, { drive, author: id, keys: f.keys, parent: f.version, chunks }));
      const version = String(bodyOf(second)?.version ?? '');
      if (!e.that(ok(second) && version !== '', `the second version's commit answered ${said(second)}`)) return;
      const link = randomBytes(16).toString('hex');
      await s.share(id, { node: f.keys, role: 'read', link, caps: { downloads: 1 } });
      const read = (v: string, c: string) => s.drive.chunk(drive, { link }, f.keys.node, v, c);
      const first = await read(version, chunks[0]!.id);
      if (!e.that(ok(first), `the second version's first chunk (the link's one download) answered ${said(first)}`)) return;
      const older = await read(f.version, f.chunks[1]!.id);
      e.that(refusedWith(older, 410, 'link_gone'), `the first version's second chunk, after the last open started the second version's download, answered ${said(older)}, not 410 link_gone`);
      const rest = await read(version, chunks[1]!.id);
      e.that(ok(rest), `the second version's second chunk (the rest of the download) answered ${said(rest)}`);
    },
  });
}

function linkDownloadRecords(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/link-download-records',
    title:
      "a folder link of one download whose last open started the download of an append file's record serves that record's second chunk, and answers 410 `link_gone` to another append file's record chunks under the folder: the rest of a download is its own node's",
    rules: ['ra.drive.link-opens'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const [a, b] = await Promise.all(['a.log', 'b.log'].map((name) => s.log(id, root.keys, name, new Uint8Array(randomBytes(70_000)))));
      if (!e.that(a!.chunks.length === 2 && b!.chunks.length === 2, `each record has two chunks: ${a!.chunks.length} and ${b!.chunks.length}`)) return;
      const link = randomBytes(16).toString('hex');
      await s.share(id, { node: root.keys, role: 'read', link, caps: { downloads: 1 } });
      const read = (f: typeof a, i: number) => s.drive.chunk(drive, { link }, f!.log.keys.node, undefined, f!.chunks[i]!.id);
      const first = await read(a, 0);
      if (!e.that(ok(first), `a.log's record's first chunk (the link's one download) answered ${said(first)}`)) return;
      for (const [what, i] of [
        ["b.log's record's second chunk", 1],
        ["b.log's record's first chunk", 0],
      ] as const) {
        const other = await read(b, i);
        e.that(refusedWith(other, 410, 'link_gone'), `${what}, after the last open started a.log's download, answered ${said(other)}, not 410 link_gone`);
      }
      const rest = await read(a, 1);
      e.that(ok(rest), `a.log's record's second chunk (the rest of the download) answered ${said(rest)}`);
    },
  });
}

function validated(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/commit-validated',
    title:
      'a commit naming a chunk never uploaded, a manifest without its node, an unknown field, a page over its cap, a folder with a mode or a body that is not JSON is refused 400 and stores nothing; a manifest signed by another key is refused 401 `signature_invalid`; a remove without `pages` is taken',
    rules: ['ra.drive.commit-validated'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const keys = nodeKeys(undefined, true);
      const chunks = encryptContent(s.profile, id.identity, keys, text('never uploaded'));
      const body = create(s.profile, { drive: id.identity, author: id, keys, kind: 'file', at: { folder: root.keys, name: 'ghost' }, ownerEncryption: id.encryption.publicKey, chunks });
      const r = await s.drive.commit(id.identity, s.actor(id), body);
      e.that(refusedWith(r, 400, 'invalid_request'), `a commit naming an unknown chunk answered ${said(r)}`);
      const node = await s.drive.node(id.identity, s.actor(id), keys.node);
      e.that(node.status === 404, `after the refused commit its node answered ${said(node)}`);
      const forged = create(s.profile, {
        drive: id.identity,
        author: { identity: id.identity, seed: new Uint8Array(randomBytes(32)) },
        keys: nodeKeys(),
        kind: 'folder',
        at: { folder: root.keys, name: 'forged' },
        ownerEncryption: id.encryption.publicKey,
      });
      const f = await s.drive.commit(id.identity, s.actor(id), forged);
      e.that(refusedWith(f, 401, 'signature_invalid'), `a manifest signed by another key answered ${said(f)}`);
      // Malformed, with an unknown field, a page over its cap: each 400 invalid_request, nothing stored.
      const folder = (name: string) =>
        create(s.profile, { drive: id.identity, author: id, keys: nodeKeys(), kind: 'folder', at: { folder: root.keys, name }, ownerEncryption: id.encryption.publicKey });
      const malformed = folder('malformed');
      delete (malformed.manifest as Obj).node;
      const unknownBody = folder('unknown');
      const unknown: Obj = { ...unknownBody, extra: true };
      const big = nodeKeys(undefined, true);
      const refs = Array.from({ length: limits.drive_page_max_refs + 1 }, () => ({ id: createHash('sha256').update(randomBytes(8)).digest('hex'), size: limits.drive_chunk_min_bytes }));
      const page = { format: 1, drive: id.identity, node: big.node, chunks: refs };
      const overCap = create(s.profile, { drive: id.identity, author: id, keys: big, kind: 'file', at: { folder: root.keys, name: 'big' }, ownerEncryption: id.encryption.publicKey, chunks: [] });
      const overManifest = { ...(overCap.manifest as Obj), count: refs.length, pages: [pageHash(s.profile, page)] };
      const overBody = { id: overCap.id, manifest: resigned(s.profile, 'manifest', overManifest, id.seed), pages: [page] };
      for (const [what, b] of [
        ['a manifest without its node', malformed],
        ['a commit with an unknown field', unknown],
        [`a page of ${refs.length} references (over ${limits.drive_page_max_refs})`, overBody],
      ] as const) {
        const r2 = await s.drive.commit(id.identity, s.actor(id), b);
        e.that(refusedWith(r2, 400, 'invalid_request'), `${what} answered ${said(r2)}, expected 400 invalid_request`);
      }
      // A folder that carries a file's mode (ra.drive.manifest-shape), signed as it is.
      const moded = folder('moded');
      const shaped = { ...moded, manifest: resigned(s.profile, 'manifest', { ...(moded.manifest as Obj), mode: 'replace' }, id.seed) };
      const sh = await s.drive.commit(id.identity, s.actor(id), shaped);
      e.that(refusedWith(sh, 400, 'invalid_request'), `a folder manifest with a mode answered ${said(sh)}, expected 400 invalid_request`);
      // A body that is not JSON at all.
      const raw = await s.drive.http.post(s.drive.path(id.identity, '/commit'), '{"id": "', { headers: { 'content-type': 'application/json', ...(await s.drive.headers(s.actor(id))) } });
      e.that(refusedWith(raw, 400, 'invalid_request'), `a commit body that is not JSON answered ${said(raw)}, expected 400 invalid_request`);
      const kids = await s.drive.node(id.identity, s.actor(id), root.keys.node, '/children');
      e.that(
        ok(kids) && ![big.node, String((unknownBody.manifest as Obj).node), String((moded.manifest as Obj).node)].some((n) => kids.text().includes(n)),
        `after the refused commits the root's children are ${said(kids)}`,
      );
      // `pages` may be left out when there are none: a remove without it is taken.
      const empty = await s.folder(id, root.keys, 'empty');
      const { pages: _none, ...bare } = remove(s.profile, { drive: id.identity, author: id, node: empty.keys.node, kind: 'folder', parent: empty.version });
      const rm = await s.drive.commit(id.identity, s.actor(id), bare);
      e.that(ok(rm), `a remove without \`pages\` answered ${said(rm)}`);
    },
  });
}

function roles(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/roles',
    title:
      'a `write` share on a folder holds below it (the member creates a file in a subfolder); a `read` member is refused 403 `not_authorized` a commit and chunk uploads, an `append` member the event stream',
    rules: ['ra.drive.roles'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const team = await s.folder(id, root.keys, 'team');
      const sub = await s.folder(id, team.keys, 'sub');
      const [writer, reader] = [await s.identity(), await s.identity()];
      await s.share(id, { node: team.keys, role: 'write', member: { identity: writer.identity, encryption: writer.encryption.publicKey } });
      await s.share(id, { node: team.keys, role: 'read', member: { identity: reader.identity, encryption: reader.encryption.publicKey } });
      const made = await s.file(id, sub.keys, 'by-writer', text('w'), { author: writer }).then(
        () => undefined,
        (error: Error) => error.message,
      );
      e.that(made === undefined, `the writer's file in a subfolder: ${made}`);
      const k = nodeKeys();
      const r = await s.drive.commit(
        id.identity,
        s.actor(reader),
        create(s.profile, { drive: id.identity, author: reader, keys: k, kind: 'folder', at: { folder: sub.keys, name: 'nope' }, ownerEncryption: id.encryption.publicKey }),
      );
      e.that(refusedWith(r, 403, 'not_authorized'), `the reader's commit answered ${said(r)}`);
      // The other refusals of a role: a reader uploads no chunk, an appender follows no stream.
      const [c] = encryptContent(s.profile, id.identity, nodeKeys(undefined, true), text('by a reader'));
      for (const [what, answer] of [
        ["the reader's chunks/missing", await s.drive.missing(id.identity, s.actor(reader), [c!])],
        ["the reader's chunk upload", await s.drive.putChunk(id.identity, s.actor(reader), c!)],
      ] as const)
        e.that(refusedWith(answer, 403, 'not_authorized'), `${what} answered ${said(answer)}, not 403 not_authorized`);
      const appender = await s.identity();
      await s.share(id, { node: team.keys, role: 'append', member: { identity: appender.identity, encryption: appender.encryption.publicKey } });
      const stream = await streamAnswer(s.drive, id.identity, s.actor(appender));
      e.that(stream.status === 403 && /"error"\s*:\s*"not_authorized"/.test(stream.text), `the appender's event stream answered ${stream.shown}, not 403 not_authorized`);
    },
  });
}

function unshare(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/unshare',
    title:
      "an unshare marks the shared node and those below it `rotate`, which a replace keeps and a rotation clears, and the member (or a group's member, for the group's share) hears `drive.revoked` before its stream closes",
    rules: ['ra.drive.unshare', 'ra.drive.revoked-event'],
    timeoutMs: 30_000,
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const docs = await s.folder(id, root.keys, 'docs');
      const f = await s.file(id, docs.keys, 'f', text('f'));
      const member = await s.identity();
      // And a group on the peer relay (when there is one), its member following the drive through the group's roster.
      const grouped = t.peerUrl ? await groupOnPeer(s) : undefined;
      if (!grouped) s.note('no peer relay given (--relay-peer): the group member is not followed');
      const hears = async (who: string, holder: typeof member, actor: Parameters<typeof s.drive.events>[1]) => {
        const sh = await s.share(id, { node: docs.keys, role: 'read', member: { identity: holder.identity, encryption: holder.encryption.publicKey } });
        const stream = await s.drive.events(id.identity, actor);
        try {
          await s.unshare(id, String(sh.share.id));
          const ev = await stream.next((x) => x.event === 'drive.revoked', 5000).catch(() => undefined);
          e.that(ev !== undefined && (ev.data as Obj)?.type === 'drive.revoked', `${who}'s stream carried ${JSON.stringify(stream.events.map((x) => x.event))}`);
        } finally {
          await stream.close();
        }
      };
      // The owner follows its drive meanwhile: a revocation that is not its own passes it by.
      const own = await s.drive.events(id.identity, s.actor(id));
      try {
        await hears('the member', member, s.actor(member));
      } finally {
        await own.close();
      }
      if (grouped) await hears("the group's member", grouped.group, { ...s.actor(grouped.member), roster: grouped.roster });
      for (const n of [docs.keys.node, f.keys.node]) {
        const r = bodyOf(await s.drive.node(id.identity, s.actor(id), n));
        e.that(r?.rotate === true, `after the unshare node ${n} answered rotate ${String(r?.rotate)}`);
      }
      // A replace leaves the mark; the folder's rotation (a new node key, nothing else) clears it.
      const drive = id.identity;
      const next = replace(s.profile, { drive, author: id, keys: f.keys, parent: f.version, chunks: f.chunks });
      const rp = await s.drive.commit(drive, s.actor(id), next);
      const afterReplace = bodyOf(await s.drive.node(drive, s.actor(id), f.keys.node));
      e.that(ok(rp) && afterReplace?.rotate === true, `after a replace (${said(rp)}) the file answered rotate ${String(afterReplace?.rotate)}`);
      const rotation = rotate(s.profile, { drive, author: id, keys: docs.keys, parent: docs.version, to: root.keys.public });
      const rt = await s.drive.commit(drive, s.actor(id), rotation);
      const afterRotate = bodyOf(await s.drive.node(drive, s.actor(id), docs.keys.node));
      e.that(ok(rt) && afterRotate?.rotate === false, `after the folder's rotation (${said(rt)}) it answered rotate ${String(afterRotate?.rotate)}`);
      // The root rotates like any folder (it is neither moved nor removed).
      const rr = await s.drive.commit(drive, s.actor(id), rotate(s.profile, { drive, author: id, keys: root.keys, parent: root.version, to: id.encryption.publicKey }));
      e.that(ok(rr), `the root's rotation answered ${said(rr)}`);
    },
  });
}

function bodies(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/bodies',
    title: 'the root, missing list, changes, node, children, history, records and share answers have the project shapes',
    rules: ['ra.drive.root-body', 'ra.drive.missing-body', 'ra.drive.changes-body', 'ra.drive.nodes-body', 'ra.drive.shares-body', 'ra.drive.changed-event'],
    timeoutMs: 30_000,
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const stream = await s.drive.events(id.identity, s.actor(id));
      try {
        const f = await s.file(id, root.keys, 'shape', text('shape'));
        const r = bodyOf(await s.drive.root(id.identity, s.actor(id)));
        e.that(
          r?.drive === id.identity && r.root === root.keys.node && typeof r.seq === 'number' && typeof r.used === 'number' && typeof r.quota === 'number',
          `the root answered ${JSON.stringify(r)}`,
        );
        const [c] = encryptContent(s.profile, id.identity, nodeKeys(undefined, true), text('m'));
        const m = bodyOf(await s.drive.missing(id.identity, s.actor(id), [c!]));
        const entry = ((m?.missing as Obj[] | undefined) ?? [])[0];
        const up = entry?.upload as Obj | undefined;
        e.that(entry?.id === c!.id && entry.size === c!.size && up?.method === 'PUT' && typeof up.url === 'string' && typeof up.headers === 'object', `the missing list answered ${JSON.stringify(m)}`);
        const ch = bodyOf(await s.drive.changes(id.identity, s.actor(id), 0));
        e.that(Array.isArray(ch?.changes) && typeof ch.cursor === 'number' && ch.more === false, `the changes answered ${JSON.stringify(ch).slice(0, 300)}`);
        const n = bodyOf(await s.drive.node(id.identity, s.actor(id), f.keys.node));
        e.that(
          n?.node === f.keys.node && n.version === f.version && typeof n.seq === 'number' && typeof n.manifest === 'object' && n.removed === false && n.rotate === false,
          `the node answered ${JSON.stringify(n).slice(0, 300)}`,
        );
        const kids = bodyOf(await s.drive.node(id.identity, s.actor(id), root.keys.node, '/children'));
        e.that(Array.isArray(kids?.children) && kids?.cursor === '', `the children answered ${JSON.stringify(kids).slice(0, 200)}`);
        const hist = bodyOf(await s.drive.node(id.identity, s.actor(id), f.keys.node, '/history'));
        e.that(Array.isArray(hist?.versions) && (hist.versions as Obj[])[0]?.version === f.version, `the history answered ${JSON.stringify(hist).slice(0, 200)}`);
        const shares = bodyOf(await s.drive.get(id.identity, '/shares', s.actor(id)));
        e.that(Array.isArray(shares?.shares), `the shares answered ${JSON.stringify(shares).slice(0, 200)}`);
        const ev = await stream.next((x) => x.event === 'drive.changed' && x.raw.includes(f.keys.node), 5000).catch(() => undefined);
        const data = ev?.data as Obj | undefined;
        const inner = data?.drive as Obj | undefined;
        e.that(
          data?.type === 'drive.changed' &&
            data.identity === id.identity &&
            typeof data.timestamp === 'string' &&
            inner?.drive === id.identity &&
            typeof inner.seq === 'number' &&
            inner.node === f.keys.node,
          `drive.changed was ${JSON.stringify(data)}`,
        );
      } finally {
        await stream.close();
      }
    },
  });
}

function rosterFresh(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/group-roster',
    title:
      "a group member's roster older than the group's public epoch answers 403 `not_authorized`, the current one reads, for a group homed on the peer and one homed on the drive's relay (and one homed there that stored no roster, at epoch 0); a roster listing the member in capitals between spaces reads; one whose group is a number, whose owner is another, without an epoch, of a group nothing resolves, or that is JSON but no object 403, and one that is not base64url JSON 400 `invalid_request`",
    rules: ['ra.drive.group-roster-check'],
    context: ['ra.groups.epoch', 'ra.system.group-roster'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'g.txt', text('g'));
      for (const where of ['peer', 'relay'] as const) {
        const [group, member] = [await s.identity(where), await s.identity(where)];
        await s.share(id, { node: f.keys, role: 'read', member: { identity: group.identity, encryption: group.encryption.publicKey } });
        const at = (epoch: number) => groupRoster(s.profile, group.identity, group, { members: [member.identity], admins: [group.identity], epoch });
        const put = await (where === 'peer' ? s.peer : s.relay).systemFile(group, 'PUT', 'public/group-roster.json', JSON.stringify(at(2)));
        if (!e.that(ok(put), `storing the group's epoch-2 roster at its relay (the ${where}) answered ${said(put)}`)) return;
        const old = await s.drive.node(id.identity, { ...s.actor(member), roster: rosterHeader(at(1)) }, f.keys.node);
        e.that(refusedWith(old, 403, 'not_authorized'), `a read with the epoch-1 roster of a group homed on the ${where} answered ${said(old)}, expected 403 not_authorized`);
        const now = await s.drive.node(id.identity, { ...s.actor(member), roster: rosterHeader(at(2)) }, f.keys.node);
        e.that(ok(now), `a read with the current (epoch-2) roster of a group homed on the ${where} answered ${said(now)}`);
        if (where === 'peer') {
          const junk = await s.drive.node(id.identity, { ...s.actor(member), roster: '%%%' }, f.keys.node);
          e.that(refusedWith(junk, 400, 'invalid_request'), `a roster header that is not base64url JSON answered ${said(junk)}, expected 400 invalid_request`);
          // Members are compared lowercased and trimmed; a roster whose group is no string is no roster of it.
          const spaced = groupRoster(s.profile, group.identity, group, { members: [` ${member.identity.toUpperCase()} `], admins: [group.identity], epoch: 2 });
          const read = await s.drive.node(id.identity, { ...s.actor(member), roster: rosterHeader(spaced) }, f.keys.node);
          e.that(ok(read), `a read with a roster listing the member in capitals between spaces answered ${said(read)}`);
          const numbered = await s.drive.node(id.identity, { ...s.actor(member), roster: rosterHeader({ ...at(2), group: 7 }) }, f.keys.node);
          e.that(refusedWith(numbered, 403, 'not_authorized'), `a read with a roster whose group is the number 7 answered ${said(numbered)}, expected 403 not_authorized`);
          // Signed by the group, yet no roster of it: another owner, no epoch while the group is at 2; and a group nothing resolves.
          const { epoch: _epoch, signature: _signature, ...unnumbered } = at(2);
          const nobody = await s.unresolvable('peer');
          for (const [what, roster] of [
            ['whose owner is the member', resigned(s.profile, 'group-roster', { ...at(2), owner: member.identity }, group.seed)],
            ['without an epoch (the group is at 2)', resigned(s.profile, 'group-roster', unnumbered, group.seed)],
            [`of ${nobody}, which nothing resolves`, groupRoster(s.profile, nobody, { identity: nobody, seed: group.seed }, { members: [member.identity], admins: [nobody], epoch: 2 })],
          ] as const) {
            const r = await s.drive.node(id.identity, { ...s.actor(member), roster: rosterHeader(roster) }, f.keys.node);
            e.that(refusedWith(r, 403, 'not_authorized'), `a read with a roster ${what} answered ${said(r)}, expected 403 not_authorized`);
          }
          for (const json of ['null', '[]', '7', '"roster"']) {
            const r = await s.drive.node(id.identity, { ...s.actor(member), roster: Buffer.from(json).toString('base64url') }, f.keys.node);
            e.that(refusedWith(r, 403, 'not_authorized'), `a read with a roster header of the JSON ${json} (no roster object) answered ${said(r)}, expected 403 not_authorized`);
          }
        }
      }
      // A group homed here that never stored a roster is at epoch 0: a roster of epoch 0 reads.
      const [bare, member] = [await s.identity(), await s.identity()];
      await s.share(id, { node: f.keys, role: 'read', member: { identity: bare.identity, encryption: bare.encryption.publicKey } });
      const first = groupRoster(s.profile, bare.identity, bare, { members: [member.identity], admins: [bare.identity], epoch: 0 });
      const read = await s.drive.node(id.identity, { ...s.actor(member), roster: rosterHeader(first) }, f.keys.node);
      e.that(ok(read), `a read with the epoch-0 roster of a group homed here that stored none answered ${said(read)}`);
    },
  });
}

export function profileChecks(t: RelayTarget): Check[] {
  return [
    conflictBody(t),
    idempotent(t),
    chunkUpload(t),
    chunkAccess(t),
    caching(t),
    quota(t),
    linkOpens(t),
    linkDownloadVersion(t),
    linkDownloadRecords(t),
    validated(t),
    roles(t),
    treeCheck(t),
    placesCheck(t),
    unshare(t),
    rosterFresh(t),
    bodies(t),
  ];
}
