// A link's life in the profile: its answer and its expiry.
// The link answer's members (the project's decision, spec/rules ra.drive.links-body): "`kdf` and
// `salt` empty without a password, `pow` ... null, `opens_left` null when unlimited", and the
// share's `expires` as signed. Judged on both kinds of link, and on opens_left before and after a
// download spends an open.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { refusedWith } from '../../../run/answers.ts';
import { CheckSkip } from '../../../run/verdict.ts';
import { driveCheck } from './document.ts';

function linkAnswer(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/link-answer',
    title:
      'a link of three downloads with an expiry, and no password, answers kdf and salt empty, pow null, opens_left 3 and then 2 after a download, and its expires; a link of any number of downloads and no expiry answers opens_left null and expires empty',
    rules: ['ra.drive.links-body'],
    context: ['ra.drive.link-opens'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const drive = id.identity;
      const f = await s.file(id, root.keys, 'answered.bin', new Uint8Array(randomBytes(5000)));
      const [counted, open] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
      const expires = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await Promise.all([s.share(id, { node: f.keys, role: 'read', link: counted, caps: { downloads: 3 }, expires }), s.share(id, { node: f.keys, role: 'read', link: open })]);
      const answer = async (link: string) => {
        const r = await s.drive.link(drive, link);
        return { r, b: bodyOf(r) };
      };
      const first = await answer(counted);
      e.that(
        first.r.status === 200 && first.b?.kdf === '' && first.b.salt === '' && first.b.pow === null && first.b.opens_left === 3 && first.b.expires === expires,
        `the link of three downloads answered ${said(first.r)}, not kdf and salt empty, pow null, opens_left 3 and expires ${expires}`,
      );
      const read = await s.drive.chunk(drive, { link: counted }, f.keys.node, f.version, f.chunks[0]!.id);
      if (!e.that(ok(read), `a download through it answered ${said(read)}`)) return;
      const second = await answer(counted);
      e.that(second.b?.opens_left === 2, `after one download the link answered ${said(second.r)}, not opens_left 2`);
      const unlimited = await answer(open);
      e.that(
        unlimited.r.status === 200 && unlimited.b?.opens_left === null && unlimited.b.expires === '',
        `the link of any number of downloads and no expiry answered ${said(unlimited.r)}, not opens_left null and expires empty`,
      );
    },
  });
}

/** How far ahead the expiring link of linkExpired ends: room for its reads inside, little waiting after. */
const LINK_EXPIRY_AHEAD_MS = 4000;

function linkExpired(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/link-expired',
    title:
      "a link of one download past its `expires` answers 410 `link_gone` to a node read it served inside its time and to the rest of the download its last open started there, as does a link of any number of downloads, and its link answer 404; the owner's and the node's share lists, and a member's own, hold such shares inside their time and not past it",
    rules: ['ra.drive.link-opens', 'ra.drive.links-body', 'ra.drive.shares-body'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'brief.bin', new Uint8Array(randomBytes(70_000)));
      if (!e.that(f.chunks.length === 2, `the file has ${f.chunks.length} chunks, not 2`)) return;
      const [link, open] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
      const expires = Math.ceil((Date.now() + LINK_EXPIRY_AHEAD_MS) / 1000) * 1000;
      const until = new Date(expires).toISOString().replace(/\.\d{3}Z$/, 'Z');
      // One link of one download, one of any number: each past its time is gone.
      const member = await s.identity();
      const made = await Promise.all([
        s.share(id, { node: f.keys, role: 'read', link, caps: { downloads: 1 }, expires: until }),
        s.share(id, { node: f.keys, role: 'read', link: open, expires: until }),
        s.share(id, { node: f.keys, role: 'read', member: { identity: member.identity, encryption: member.encryption.publicKey }, expires: until }),
      ]);
      // The lists, inside and past the time: the owner's, the node's and the member's own.
      const listed = async () => {
        const ids = async (path: string, who: typeof member) => JSON.stringify(bodyOf(await s.drive.get(id.identity, path, s.actor(who)))?.shares ?? null);
        const [mine, onNode, own] = [await ids('/shares', id), await ids(`/nodes/${f.keys.node}/shares`, id), await ids('/shares', member)];
        // Each share in each list it belongs to: the links in the owner's and the node's, the member's share in its own.
        return made.flatMap((m, i) => (i < 2 ? [mine, onNode] : [own]).map((list) => list.includes(String(m.share.id))));
      };
      e.that((await listed()).every(Boolean), "inside their time the links are not in the owner's and the node's shares, or the member's share not in its own");
      const node = () => s.drive.node(id.identity, { link }, f.keys.node);
      const unlimited = () => s.drive.node(id.identity, { link: open }, f.keys.node);
      const chunk = (i: number) => () => s.drive.chunk(id.identity, { link }, f.keys.node, f.version, f.chunks[i]!.id);
      // Inside its time: the node, and the first chunk, which spends the link's one open.
      for (const [what, read] of [
        ['a node read', node],
        ['the first chunk read', chunk(0)],
        ['a node read through the link of any number of downloads', unlimited],
      ] as const) {
        const r = await read();
        e.that(ok(r), `${what} through the link inside its time answered ${said(r)}`);
      }
      if (Date.now() >= expires) throw new CheckSkip(`the reads inside the link's time took past its expiry (${LINK_EXPIRY_AHEAD_MS} ms): too slow to judge it here`);
      await new Promise((r) => setTimeout(r, expires + 1000 - Date.now()));
      for (const [what, read] of [
        ['a node read', node],
        ['the second chunk (the rest of the download its last open started)', chunk(1)],
        ['a node read through the link of any number of downloads', unlimited],
      ] as const) {
        const r = await read();
        e.that(refusedWith(r, 410, 'link_gone'), `${what} through the link past its expires answered ${said(r)}, not 410 link_gone`);
      }
      const answer = await s.drive.link(id.identity, link);
      e.that(refusedWith(answer, 404, 'not_found'), `the link answer past its expires answered ${said(answer)}, not 404 not_found`);
      e.that(!(await listed()).some(Boolean), "past their time the links are still in the owner's or the node's shares, or the member's share in its own");
    },
  });
}

export function linkAnswerChecks(t: RelayTarget): Check[] {
  return [linkAnswer(t), linkExpired(t)];
}
