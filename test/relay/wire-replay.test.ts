// Issue 26: the deployed client's own wire forms against the reference relay. Every recorded
// request shape of ../shared/interop/poweur/wire/ (read where it lies) is sent again to a reference
// relay started with `--service-name poweur`, with fresh keys, signatures and ids (replay.ts); each
// 2xx reply must carry every field the row says the client reads, and the status must be the
// recorded one where the row's answer served the client, a success where the row records one of
// the reference's forms the client does not use (its `mismatch`), and never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileFor } from '../../protocol/common/profile.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { DriveSession } from '../../harness/suites/drive/driver.ts';
import { expectedFields, FILES, loadRows, missingFields, shapeOf, type Exchange, type FileName, type Row } from './wire-replay/transcripts.ts';
import { replayRow, safe, World } from './wire-replay/replay.ts';

let run: RelayReferenceRun;
beforeAll(async () => {
  run = await startRelayReference({ profile: profileFor('poweur') });
}, 60_000);
afterAll(async () => {
  await run?.stop();
});

/** The status a replayed exchange must answer, or undefined when the row does not decide one. */
function wanted(row: Row, e: Exchange): ((status: number) => boolean) | undefined {
  const ok = (s: number) => s >= 200 && s < 300;
  if (row.reference_answer_ok) return (s) => s === e.status;
  // The reference's own form refused the client's: the client's form now works.
  if (row.mismatch) return ok(e.status) ? (s) => s === e.status : ok;
  return undefined;
}

/** Every problem with replaying `file`'s rows, as lines (none when all hold). */
async function problems(file: FileName): Promise<string[]> {
  const s = new DriveSession(run.target);
  const w = new World(s);
  // Identities whose registration is a recorded exchange are made without registering them.
  for (const row of loadRows(file))
    for (const e of row.exchanges)
      if (e.method === 'POST' && e.path === '/identities') w.unregistered.add(/^\{([a-z]+)\}$/.exec(String((e.request_body as { identity?: unknown }).identity))?.[1] ?? '');
  const out: string[] = [];
  try {
    for (const row of loadRows(file)) {
      const results = await replayRow(w, row);
      row.exchanges.forEach((e, i) => {
        const r = results[i]!;
        const where = `${row.operation}: ${e.method} ${shapeOf(e.path)}`;
        if ('skipped' in r) return void out.push(`${where}: ${r.skipped}`);
        const status = r.answer.status;
        const said = `${status} ${r.answer.text().slice(0, 200)}`;
        if (status >= 500) out.push(`${where} answered ${said}`);
        const want = wanted(row, e);
        if (want && !want(status)) out.push(`${where} answered ${said}; recorded ${e.status}${row.mismatch ? ' (a mismatch the reference now serves)' : ''}`);
        if (status >= 200 && status < 300) {
          const lacking = missingFields(safe(r.answer) ?? {}, expectedFields(row, e));
          if (safe(r.answer) && lacking.length > 0) out.push(`${where} answered without ${lacking.join(', ')}: ${said}`);
        }
      });
    }
  } finally {
    await s.close();
  }
  return out;
}

describe('the deployed client’s wire transcripts, replayed against the reference (--service-name poweur)', () => {
  for (const file of FILES)
    it(`${file}.json`, async () => {
      expect(await problems(file)).toEqual([]);
    }, 60_000);
});
