// A link holder's event stream ends with its link: it hears `drive.revoked` naming the share, then
// closes (a project decision, ra.drive.revoked-event). Document 3 states the closing for members
// only (ra.drive.events-revocation); a link holder gets only what its live link allows
// (ra.drive.link-auth), so the reference gives link holders the same end.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { isObject } from '../../../run/answers.ts';
import { ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

export function linkStreamEnds(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/link-stream-ends',
    title: "when a link is unshared, its holder's open event stream hears drive.revoked naming the share, then closes",
    rules: ['ra.drive.revoked-event'],
    context: ['ra.drive.link-auth', 'ra.drive.events', 'ra.drive.unshare'],
    timeoutMs: 30_000,
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const link = randomBytes(16).toString('hex');
      const made = await s.share(owner, { node: root.keys, role: 'read', link });
      const shareId = String(made.share.id);
      const stream = await s.drive.events(owner.identity, { link });
      try {
        if (!e.that(stream.status === 200, `the link holder's stream answered ${stream.status} ${stream.body ?? ''}`)) return;
        const r = await s.unshare(owner, shareId);
        if (!e.that(ok(r), `the unshare answered ${said(r)}`)) return;
        await stream.until(() => stream.ended, 5000);
        const revoked = stream.events.find((ev) => ev.event === 'drive.revoked');
        const data = revoked?.data;
        const named = isObject(data) && isObject(data.drive) ? data.drive : undefined;
        e.that(
          named?.share === shareId && named.drive === owner.identity,
          `the link holder's stream heard ${JSON.stringify(stream.events.map((ev) => ev.event))}, no drive.revoked naming share ${shareId} of ${owner.identity}`,
        );
        e.that(stream.ended, "the link holder's stream is still open 5 s after its link was unshared");
      } finally {
        await stream.close();
      }
    },
  });
}
