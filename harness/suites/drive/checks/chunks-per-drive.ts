// "Each identity has an end-to-end encrypted drive": the chunks a drive holds are its own. A chunk
// another drive on the same relay holds is still one this drive lacks (ra.drive.missing), so the
// missing list names it, and the file committed with it serves it back through this drive.
import type { Check } from '../../../run/model.ts';
import { encryptContent, replace } from '../../../actors/drive/objects.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));

function chunksPerDrive(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/chunks/per-drive',
    title: "a chunk another drive on the relay already holds is listed missing by a drive that lacks it, and once uploaded and committed there it is served back through that drive's node",
    rules: ['ra.drive.missing'],
    context: ['ra.drive.versions', 'ra.drive.chunk-upload'],
    run: async (s, e) => {
      const [a, b] = [await s.owner(), await s.owner()];
      const drive = a.id.identity;
      const me = s.actor(a.id);
      const f = await s.file(a.id, a.root.keys, 'mine.txt', text('v1'));
      const chunks = encryptContent(s.profile, drive, f.keys, text('v2, held by another drive first'));
      // The same bytes, uploaded first into the other identity's drive.
      const elsewhere = await s.drive.upload(b.id.identity, s.actor(b.id), chunks);
      if (!e.that(elsewhere === undefined, `uploading the chunks into the other drive: ${elsewhere}`)) return;
      const m = await s.drive.missing(drive, me, chunks);
      const listed = ((bodyOf(m)?.missing as Obj[] | undefined) ?? []).map((x) => x.id);
      e.that(
        ok(m) && chunks.every((c) => listed.includes(c.id)),
        `this drive's missing list for chunks only another drive holds answered ${said(m)}, not every one of ${chunks.map((c) => c.id.slice(0, 12)).join(', ')}`,
      );
      const up = await s.drive.upload(drive, me, chunks);
      if (!e.that(up === undefined, `uploading them into this drive: ${up}`)) return;
      const body = replace(s.profile, { drive, author: a.id, keys: f.keys, parent: f.version, chunks });
      const c = await s.drive.commit(drive, me, body);
      if (!e.that(ok(c), `the replace naming them answered ${said(c)}`)) return;
      const version = String((body.manifest as Obj).version);
      for (const chunk of chunks) {
        const r = await s.drive.chunk(drive, me, f.keys.node, version, chunk.id);
        e.that(ok(r) && Buffer.compare(r.body, Buffer.from(chunk.bytes)) === 0, `chunk ${chunk.id.slice(0, 12)} of the committed version, read through this drive, answered ${said(r)}, not its bytes`);
      }
    },
  });
}

export function chunkDriveChecks(t: RelayTarget): Check[] {
  return [chunksPerDrive(t)];
}
