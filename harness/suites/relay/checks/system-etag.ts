// Every side of a system document's ETag (a project decision, ra.system.etag): a write answers
// the stored version's ETag in its header and body and a read the same; `If-Match` is honoured on
// PUT and DELETE alike, as a list (any entry naming the stored version passes) and as `*` (anything
// stored passes, nothing stored does not); a 412 changes nothing, and a DELETE that passes answers
// 204 (ra.system.paths). A document over its size is 413
// (ra.errors.payload-too-large) and stores nothing.
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { codeOf, safeJson, said, type RelayTarget } from '../driver.ts';
import { LANE } from './system-files.ts';

const PROFILE = 'public/profile.json';
const doc = (name: string) => JSON.stringify({ version: 1, display_name: name });
/** Writers racing on one version. */
const RACE = 20;
const failed = (r: HttpResponse) => r.status === 412 && codeOf(r) === 'precondition_failed';

export function systemEtagCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/system-if-match',
    lane: LANE,
    title:
      'a write answers the ETag a read then gives; If-Match passes on any listed ETag that is the stored one and on * with something stored, and fails 412 on * with nothing stored and on a stale ETag, for PUT and DELETE, changing nothing; of writers or deleters racing on one version one wins and the rest are 412; an oversized document is 413',
    rules: ['ra.system.etag', 'ra.system.paths'],
    context: ['ra.system.files', 'ra.errors.payload-too-large'],
    run: async (s, e) => {
      const id = await s.identity();
      const read = async () => {
        const r = await s.relay.systemFile(id, 'GET', PROFILE);
        return { r, body: r.status === 200 ? JSON.stringify(safeJson(r)) : undefined, etag: r.headers.etag };
      };
      // Signed requests: racers would outrun the challenges an identity may hold at once (16).
      const auth = { mode: 'signed-request' } as const;
      const put = (name: string, ifMatch?: string) => s.relay.systemFile(id, 'PUT', PROFILE, doc(name), { auth, ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }) });
      const del = (ifMatch?: string) => s.relay.systemFile(id, 'DELETE', PROFILE, undefined, { auth, ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }) });

      // Nothing stored: * fails on a write and a delete; a delete without If-Match finds nothing.
      const starNew = await put('Star', '*');
      e.that(failed(starNew), `PUT with If-Match: * and nothing stored answered ${said(starNew)}, not 412 precondition_failed`);
      const starGone = await del('*');
      e.that(failed(starGone), `DELETE with If-Match: * and nothing stored answered ${said(starGone)}, not 412 precondition_failed`);
      const none = await read();
      e.that(none.r.status === 404, `after the refused writes ${PROFILE} reads ${said(none.r)}, not 404`);
      const missing = await del();
      e.that(missing.status === 404, `DELETE of a document never written answered ${said(missing)}, not 404`);

      // A write answers its ETag (header and body); the read gives the same.
      const first = await put('One');
      const etag = first.headers.etag;
      const answer = safeJson(first) as Record<string, unknown> | undefined;
      if (
        !e.that(first.status === 200 && typeof etag === 'string' && answer?.etag === etag && String(answer.path).endsWith(PROFILE), `the first PUT answered ${said(first)} with ETag ${String(etag)}`)
      )
        return;
      const one = await read();
      e.that(one.body === doc('One') && one.etag === etag, `the read after the PUT gives ${said(one.r)} with ETag ${String(one.etag)}, not ${etag}`);

      // If-Match as a list, and *.
      const listed = await put('Two', `"stale-1", ${etag!} , "stale-2"`);
      const etag2 = listed.headers.etag;
      e.that(listed.status === 200 && typeof etag2 === 'string' && etag2 !== etag, `If-Match listing the stored ETag among others answered ${said(listed)}`);
      const star = await put('Three', '*');
      const etag3 = star.headers.etag;
      e.that(star.status === 200 && typeof etag3 === 'string', `If-Match: * with a document stored answered ${said(star)}`);

      // Stale: a PUT and a DELETE each 412, the document as it was.
      const stalePut = await put('Four', `${etag!}, "stale"`);
      e.that(failed(stalePut), `PUT with If-Match naming only earlier ETags answered ${said(stalePut)}, not 412 precondition_failed`);
      const staleDel = await del(etag2!);
      e.that(failed(staleDel), `DELETE with If-Match naming an earlier ETag answered ${said(staleDel)}, not 412 precondition_failed`);
      const kept = await read();
      e.that(
        kept.body === doc('Three') && kept.etag === etag3,
        `after the refused PUT and DELETE the document reads ${said(kept.r)} with ETag ${String(kept.etag)}, not the third write's ${String(etag3)}`,
      );

      // Oversized: 413, nothing stored.
      const big = await s.relay.systemFile(id, 'PUT', PROFILE, JSON.stringify({ version: 1, display_name: 'x'.repeat(limits.system_file_max_bytes) }));
      e.that(big.status === 413, `a document over ${limits.system_file_max_bytes} bytes answered ${said(big)}, not 413`);
      const afterBig = await read();
      e.that(afterBig.etag === etag3, `after the oversized PUT the document's ETag is ${String(afterBig.etag)}, not ${String(etag3)}`);

      // Raced: writes naming one stored version, then deletes naming the next: one of each wins, the rest 412.
      const writes = await Promise.all(Array.from({ length: RACE }, (_, i) => put(`Racer ${i}`, etag3!)));
      const wrote = writes.filter((r) => r.status === 200);
      e.that(
        wrote.length === 1 && writes.every((r) => r.status === 200 || failed(r)),
        `${RACE} PUTs naming one stored ETag answered ${writes.map((r) => r.status).join(' ')}: not one 200 and the rest 412`,
      );
      const latest = wrote[0]?.headers.etag ?? '';
      const deletes = await Promise.all(Array.from({ length: RACE }, () => del(` "stale", ${latest}`)));
      const deleted = deletes.filter((r) => r.status === 204);
      e.that(
        deleted.length === 1 && deletes.every((r) => deleted.includes(r) || failed(r)),
        `${RACE} DELETEs naming the stored ETag answered ${deletes.map((r) => r.status).join(' ')}: not one 204 and the rest 412`,
      );
      const after = await read();
      e.that(after.r.status === 404, `after the DELETE ${PROFILE} reads ${said(after.r)}, not 404`);
    },
  });
}
