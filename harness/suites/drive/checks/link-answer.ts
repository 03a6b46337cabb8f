// The link answer's members (the project's decision, spec/rules ra.drive.links-body): "`kdf` and
// `salt` empty without a password, `pow` ... null, `opens_left` null when unlimited", and the
// share's `expires` as signed. Judged on both kinds of link, and on opens_left before and after a
// download spends an open.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
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

export function linkAnswerChecks(t: RelayTarget): Check[] {
  return [linkAnswer(t)];
}
