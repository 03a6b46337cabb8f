// The drive's two paged listings as the project answers them (document 3 gives each one table
// line and no body): the changes after a cursor (ra.drive.changes-body) and a node's append tail
// after a position (ra.drive.nodes-body). Each is read without its parameter, with parameters that
// are no decimal, and past a page; a member's changes name only nodes it may read, and a caller
// holding no share is refused.
import type { Check } from '../../../run/model.ts';
import { hex16, record, recordHash } from '../../../actors/drive/objects.ts';
import { refusedWith } from '../../../run/answers.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));
/** Parameters that are no decimal sequence or position: letters, a sign, a fraction, an exponent, digits with letters either side. */
const NOT_DECIMAL = ['abc', '-1', '1.5', '1e3', 'abc1', '1abc', ' 1'];

function changesListing(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/changes-listing',
    title:
      "a manifest's change carries its version; the changes read without a cursor are those from 0; a cursor that is no decimal is 400; a member following the cursor is told of the nodes it may read and of no other (nor of shares and unshares on those others), and a link holder of its link's node alone; a caller holding no share is refused 403 at the changes and the root; the answer is application/json",
    rules: ['ra.drive.changes-body'],
    context: ['ra.drive.changes', 'ra.drive.roles'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const me = s.actor(id);
      const [open, closed] = [await s.folder(id, root.keys, 'open'), await s.folder(id, root.keys, 'closed')];
      const [member, stranger] = [await s.identity(), await s.identity()];
      await s.share(id, { node: open.keys, role: 'read', member: { identity: member.identity, encryption: member.encryption.publicKey } });
      const [inside, outside] = [await s.file(id, open.keys, 'in.txt', text('in')), await s.file(id, closed.keys, 'out.txt', text('out'))];
      // Shares of nodes the member may not read (another member's, a link's, one undone) are not its to hear of either.
      const other = await s.identity();
      await s.share(id, { node: closed.keys, role: 'read', member: { identity: other.identity, encryption: other.encryption.publicKey } });
      const linked = await s.share(id, { node: outside.keys, role: 'read', link: hex16() });
      const undone = await s.drive.commit(drive, me, { id: hex16(), unshare: { id: String(linked.share.id) } });
      if (!e.that(ok(undone), `the owner's unshare of a link answered ${said(undone)}`)) return;

      const bare = await s.drive.get(drive, '/changes', me);
      const zero = await s.drive.changes(drive, me, 0);
      e.that(ok(bare) && JSON.stringify(bodyOf(bare)) === JSON.stringify(bodyOf(zero)), `the changes without a cursor answered ${said(bare)}, not what cursor=0 answers: ${said(zero)}`);
      e.that(/^application\/json\b/.test(String(zero.headers['content-type'])), `the changes answered content-type ${JSON.stringify(zero.headers['content-type'])}, not application/json`);
      const made = ((bodyOf(zero)?.changes as Obj[] | undefined) ?? []).find((c) => c.node === inside.keys.node);
      e.that(made?.version === inside.version, `the change that created ${inside.keys.node} is ${JSON.stringify(made)}, not one carrying its version ${inside.version}`);
      const last = Number(bodyOf(zero)?.cursor);
      const past = await s.drive.changes(drive, me, String(last + 10));
      e.that(ok(past) && (bodyOf(past)?.changes as unknown[] | undefined)?.length === 0, `cursor=${last + 10}, past the last change, answered ${said(past)}`);
      for (const cursor of NOT_DECIMAL) {
        const r = await s.drive.get(drive, `/changes?cursor=${encodeURIComponent(cursor)}`, me);
        e.that(refusedWith(r, 400, 'invalid_request'), `cursor=${JSON.stringify(cursor)} answered ${said(r)}, not 400 invalid_request`);
      }

      const named = new Set<string>();
      let cursor: unknown = 0;
      for (let page = 0; page < 10; page++) {
        const r = await s.drive.changes(drive, s.actor(member), String(cursor));
        const b = bodyOf(r);
        if (!e.that(ok(r) && Array.isArray(b?.changes), `the member's changes?cursor=${String(cursor)} answered ${said(r)}`)) return;
        for (const c of b!.changes as Obj[]) named.add(String(c.node));
        cursor = b!.cursor;
        if (!b!.more) break;
      }
      const readable = [open.keys.node, inside.keys.node];
      e.that(
        readable.every((n) => named.has(n)) && [...named].every((n) => readable.includes(n)),
        `a reader of one folder was told of nodes ${[...named].join(', ') || 'none'}, not exactly the folder and its file ${readable.join(', ')} (the root ${root.keys.node}, the other folder ${closed.keys.node} and its file ${outside.keys.node} are not its to read)`,
      );
      // A link holder, like a member, hears of its link's node alone.
      const link = hex16();
      await s.share(id, { node: inside.keys, role: 'read', link });
      const heard = await s.drive.changes(drive, { link }, 0);
      const linkNodes = new Set(((bodyOf(heard)?.changes as Obj[] | undefined) ?? []).map((c) => String(c.node)));
      e.that(
        ok(heard) && [...linkNodes].every((n) => n === inside.keys.node),
        `a holder of a link to ${inside.keys.node} was told by the changes of nodes ${[...linkNodes].join(', ') || 'none'}: ${said(heard)}`,
      );
      for (const [what, r] of [
        ['the changes', await s.drive.changes(drive, s.actor(stranger), 0)],
        ['the root', await s.drive.root(drive, s.actor(stranger))],
      ] as const)
        e.that(refusedWith(r, 403, 'not_authorized'), `a caller holding no share read ${what}: ${said(r)}, not 403 not_authorized`);
    },
  });
}

function recordsListing(t: RelayTarget): Check {
  const max = limits.drive_listing_max_entries;
  return driveCheck(t, {
    id: 'drive/profile/records-listing',
    title: `a node's records read without \`after\` are those after 0; ${max + 1} records are a page of ${max} with more, then the last one without, and the page after the first record all the rest without more; an \`after\` that is no decimal is 400`,
    rules: ['ra.drive.nodes-body'],
    context: ['ra.drive.nodes'],
    timeoutMs: 60_000,
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const me = s.actor(id);
      const { log } = await s.log(id, root.keys, 'long.log');
      const tail = async (query: string) => s.drive.node(drive, me, log.keys.node, `/records${query}`);
      const first = ((bodyOf(await tail('?after=0'))?.records as Obj[] | undefined) ?? [])[0];
      if (!e.that(first !== undefined, `the log's one record is not listed: ${said(await tail('?after=0'))}`)) return;
      // Records 2 to max+1, one commit of them (the batch limit allows it), each chaining the last.
      let previous = recordHash(s.profile, (first!.record as Obj | undefined) ?? first!);
      const records: Obj[] = [];
      for (let sequence = 2; sequence <= max + 1; sequence++) {
        const r = record(s.profile, { drive, node: log.keys, author: id, sequence, previous, payload: text(`r${sequence}`) });
        records.push(r);
        previous = recordHash(s.profile, r);
      }
      const appended = await s.drive.commit(drive, me, { id: hex16(), records });
      if (!e.that(ok(appended), `appending ${records.length} records answered ${said(appended)}`)) return;

      const bare = await tail('');
      const page = bodyOf(bare);
      const listed = (page?.records as Obj[] | undefined) ?? [];
      e.that(
        ok(bare) && listed.length === max && page?.more === true,
        `the records without after answered ${listed.length} records and more ${String(page?.more)} (${said(bare)}), not ${max} and more true`,
      );
      const positions = listed.map((r) => r.position as number);
      e.that(
        positions.every((p, i) => i === 0 || p > positions[i - 1]!),
        `the records' positions are not in order: ${positions.slice(0, 5).join(', ')}…`,
      );
      const rest = await tail(`?after=${positions.at(-1)}`);
      const restBody = bodyOf(rest);
      const left = (restBody?.records as Obj[] | undefined) ?? [];
      e.that(
        ok(rest) && left.length === 1 && restBody?.more === false,
        `after position ${positions.at(-1)} the records answered ${left.length} and more ${String(restBody?.more)} (${said(rest)}), not the last one and more false`,
      );
      // After the first record exactly a page's worth remain: all of them, and no more.
      const whole = await tail(`?after=${positions[0]}`);
      const wholeBody = bodyOf(whole);
      const exact = (wholeBody?.records as Obj[] | undefined) ?? [];
      e.that(
        ok(whole) && exact.length === max && wholeBody?.more === false,
        `after the first record (${max} left) the records answered ${exact.length} and more ${String(wholeBody?.more)} (${said(whole)}), not ${max} and more false`,
      );
      for (const after of NOT_DECIMAL) {
        const r = await tail(`?after=${encodeURIComponent(after)}`);
        e.that(refusedWith(r, 400, 'invalid_request'), `after=${JSON.stringify(after)} answered ${said(r)}, not 400 invalid_request`);
      }
    },
  });
}

/** `limit` on the two listings the deployed client pages with it (`changes?cursor=N&limit=100`, `children?cursor=&limit=100`). */
function listingLimits(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/listing-limits',
    title:
      'the changes and the children answer at most `limit` entries, and the pages they lead through hold every entry once, in order; a larger `limit` than a page is a whole page; a `limit` that is no decimal from 1, or a children cursor that is no node id, is 400',
    rules: ['ra.drive.changes-body', 'ra.drive.nodes-body'],
    context: ['ra.drive.changes', 'ra.drive.nodes'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const me = s.actor(id);
      const folder = await s.folder(id, root.keys, 'paged');
      for (const name of ['a', 'b', 'c']) await s.file(id, folder.keys, `${name}.txt`, text(name));
      const kids = (q: string) => s.drive.node(drive, me, folder.keys.node, `/children${q}`);
      const changes = (q: string) => s.drive.get(drive, `/changes${q}`, me);
      const nodesOf = (b: Obj | undefined) => ((b?.children as Obj[] | undefined) ?? []).map((c) => String(c.node ?? c.id));

      const whole = await kids('');
      const all = nodesOf(bodyOf(whole));
      if (!e.that(ok(whole) && all.length === 3 && bodyOf(whole)?.cursor === '', `the folder of three files listed ${said(whole)}`)) return;
      const paged: string[] = [];
      let cursor = '';
      for (let page = 0; page < 4; page++) {
        const r = await kids(`?cursor=${encodeURIComponent(cursor)}&limit=2`);
        const b = bodyOf(r);
        const got = nodesOf(b);
        if (!e.that(ok(r) && got.length <= 2 && typeof b?.cursor === 'string', `children?cursor=${JSON.stringify(cursor)}&limit=2 answered ${said(r)}, not at most 2 children and a string cursor`))
          return;
        paged.push(...got);
        if (b!.cursor === '') break;
        cursor = String(b!.cursor);
      }
      e.that(
        JSON.stringify(paged) === JSON.stringify([...all].sort()),
        `the children in pages of 2 were ${paged.join(', ')}, not the three children once each in node id order (${[...all].sort().join(', ')})`,
      );

      const every = bodyOf(await changes('?cursor=0'));
      const seqs = ((every?.changes as Obj[] | undefined) ?? []).map((c) => Number(c.seq));
      const followed: number[] = [];
      let after: unknown = 0;
      for (let page = 0; page < seqs.length + 1; page++) {
        const r = await changes(`?cursor=${String(after)}&limit=2`);
        const b = bodyOf(r);
        const got = ((b?.changes as Obj[] | undefined) ?? []).map((c) => Number(c.seq));
        if (!e.that(ok(r) && got.length <= 2, `changes?cursor=${String(after)}&limit=2 answered ${said(r)}, not at most 2 changes`)) return;
        followed.push(...got);
        after = b!.cursor;
        if (!b!.more) break;
      }
      e.that(seqs.length > 2 && JSON.stringify(followed) === JSON.stringify(seqs), `the changes in pages of 2 were ${followed.join(', ')}, not those of one read (${seqs.join(', ')})`);
      const large = await changes(`?cursor=0&limit=${limits.drive_listing_max_entries * 5}`);
      e.that(ok(large) && JSON.stringify(bodyOf(large)) === JSON.stringify(every), `limit=${limits.drive_listing_max_entries * 5} answered ${said(large)}, not the whole page`);

      for (const limit of [...NOT_DECIMAL, '0']) {
        for (const [what, r] of [
          ['changes', await changes(`?cursor=0&limit=${encodeURIComponent(limit)}`)],
          ['children', await kids(`?limit=${encodeURIComponent(limit)}`)],
        ] as const)
          e.that(refusedWith(r, 400, 'invalid_request'), `the ${what} with limit=${JSON.stringify(limit)} answered ${said(r)}, not 400 invalid_request`);
      }
      const stray = await kids('?cursor=not-a-node');
      e.that(refusedWith(stray, 400, 'invalid_request'), `the children with cursor="not-a-node" answered ${said(stray)}, not 400 invalid_request`);
    },
  });
}

export function listingChecks(t: RelayTarget): Check[] {
  return [changesListing(t), recordsListing(t), listingLimits(t)];
}
