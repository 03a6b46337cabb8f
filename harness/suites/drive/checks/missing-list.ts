// The missing list as the project answers it (ra.drive.missing-body; document 3 gives
// `POST /drive/:identity/chunks/missing` one table line): what the list asks for is read whole, in
// request order, each chunk once, the held ones left out, each with the relay's own relative
// upload URL; a list that is not one (none, too many, a name or a size that is no chunk's, an md5
// that is no MD5, a body that is no JSON object) is 400 and promises nothing.
import { createHash, randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { encryptContent, nodeKeys } from '../../../actors/drive/objects.ts';
import { refusedWith } from '../../../run/answers.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;

function missingList(t: RelayTarget): Check {
  const max = limits.drive_missing_max_chunks;
  return driveCheck(t, {
    id: 'drive/profile/missing-list',
    title: `the missing list answers the chunks asked for in order, each once, without the held ones, each with the relay's relative PUT, ${max} of them all; no chunks, ${max + 1}, a name or size that is no chunk's, an md5 that is no MD5 and a body that is no object are 400; a list past the quota is 507`,
    rules: ['ra.drive.missing-body', 'ra.drive.quota'],
    context: ['ra.drive.missing'],
    run: async (s, e) => {
      const { id } = await s.owner();
      const drive = id.identity;
      const me = s.actor(id);
      const keys = nodeKeys(undefined, true);
      const chunk = (x: string) => encryptContent(s.profile, drive, keys, new Uint8Array(Buffer.from(x)))[0]!;
      const [held, a, b] = [chunk('held'), chunk('a'), chunk('b')];
      const stored = await s.drive.putChunk(drive, me, held);
      if (!e.that(ok(stored), `uploading a chunk answered ${said(stored)}`)) return;
      const ref = (c: typeof a) => ({ id: c.id, size: c.size });
      const md5 = (c: typeof a) => createHash('md5').update(c.bytes).digest('base64');

      const asked = await s.drive.post(drive, '/chunks/missing', me, { chunks: [ref(b), ref(held), ref(a), ref(b)] });
      const listed = ((bodyOf(asked)?.missing as Obj[] | undefined) ?? []).map((m) => m.id);
      e.that(ok(asked) && JSON.stringify(listed) === JSON.stringify([b.id, a.id]), `asking b, the held chunk, a and b again answered ${said(asked)}: ${JSON.stringify(listed)}, not [b, a]`);
      const upload = ((bodyOf(asked)?.missing as Obj[] | undefined) ?? [])[0]?.upload as Obj | undefined;
      e.that(
        upload?.method === 'PUT' && upload.url === `/drive/${encodeURIComponent(drive)}/chunks/${b.id}` && (upload.headers as Obj | undefined)?.['content-type'] === 'application/octet-stream',
        `b's upload is ${JSON.stringify(upload)}, not a PUT of application/octet-stream to the relay's own relative /drive/${drive}/chunks/${b.id}`,
      );
      const withMd5 = await s.drive.post(drive, '/chunks/missing', me, { chunks: [{ ...ref(a), md5: md5(a) }] });
      e.that(ok(withMd5) && ((bodyOf(withMd5)?.missing as Obj[] | undefined) ?? [])[0]?.id === a.id, `a chunk with its md5 answered ${said(withMd5)}`);

      const many = Array.from({ length: max + 1 }, () => ({ id: randomBytes(32).toString('hex'), size: a.size }));
      // Exactly the most a list may name: all of them listed (when the quota holds them).
      const quota = Number(bodyOf(await s.drive.root(drive, me))?.quota);
      if (quota >= held.size + max * a.size) {
        const full = await s.drive.post(drive, '/chunks/missing', me, { chunks: many.slice(0, max) });
        const count = ((bodyOf(full)?.missing as unknown[] | undefined) ?? []).length;
        e.that(ok(full) && count === max, `a list of ${max} chunks answered ${count} listed (${said(full)}), not all ${max}`);
      }
      // What the drive counts now (an md5 list may have promised bytes to object storage): the refused lists change nothing.
      const usedBefore = bodyOf(await s.drive.root(drive, me))?.used;
      const wrong: Array<[string, unknown]> = [
        ['no chunks', { chunks: [] }],
        [`${max + 1} chunks`, { chunks: many }],
        ['a name in capitals', { chunks: [{ ...ref(a), id: a.id.toUpperCase() }] }],
        ['a name one digit short', { chunks: [{ ...ref(a), id: a.id.slice(1) }] }],
        ['a name one digit long', { chunks: [{ ...ref(a), id: `${a.id}0` }] }],
        ['a name after a letter', { chunks: [{ ...ref(a), id: `x${a.id}` }] }],
        ['a size off the chunk grid', { chunks: [{ ...ref(a), size: a.size + 1 }] }],
        ['a size as text', { chunks: [{ ...ref(a), size: String(a.size) }] }],
        ['an md5 that is hex', { chunks: [{ ...ref(a), md5: createHash('md5').update(a.bytes).digest('hex') }] }],
        ['an md5 one character short', { chunks: [{ ...ref(a), md5: md5(a).slice(1) }] }],
        ['an md5 after a letter', { chunks: [{ ...ref(a), md5: `x${md5(a)}` }] }],
        ['an md5 before a letter', { chunks: [{ ...ref(a), md5: `${md5(a)}x` }] }],
        ['a chunk that is null', { chunks: [null] }],
        ['a good chunk beside a bad name', { chunks: [ref(a), { ...ref(b), id: b.id.toUpperCase() }] }],
        ['chunks that are no list', { chunks: ref(a) }],
        ['a list that is no object', [ref(a)]],
      ];
      for (const [what, body] of wrong) {
        const r = await s.drive.post(drive, '/chunks/missing', me, body as Obj);
        e.that(refusedWith(r, 400, 'invalid_request'), `${what}: the missing list answered ${said(r)}, not 400 invalid_request`);
      }
      // Chunks of the largest size, enough of them to pass the quota: the list itself is refused.
      const big = limits.drive_chunk_max_bytes;
      const past = Math.ceil(quota / big) + 1;
      if (past <= max) {
        const over = await s.drive.post(drive, '/chunks/missing', me, { chunks: Array.from({ length: past }, () => ({ id: randomBytes(32).toString('hex'), size: big })) });
        e.that(refusedWith(over, 507, 'quota_exceeded'), `${past} chunks of ${big} bytes, past the quota of ${quota}: the missing list answered ${said(over)}, not 507 quota_exceeded`);
      } else s.note(`the quota of ${quota} bytes takes more than ${max} chunks of the largest size: a list past it is not asked`);
      const used = bodyOf(await s.drive.root(drive, me))?.used;
      e.that(used === usedBefore, `after the refused lists the drive counts ${String(used)} bytes, not the ${String(usedBefore)} it counted before them`);
    },
  });
}

export function missingListChecks(t: RelayTarget): Check[] {
  return [missingList(t)];
}
