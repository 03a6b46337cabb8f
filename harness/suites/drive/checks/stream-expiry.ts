// A member's drive event stream closes when its last share passes its signed `expires`
// (spec/facets/drive.yaml, ra.drive.events-revocation, lifecycle share-expiry): "closes on
// revocation", and an expired share grants nothing. No request marks the moment, so a relay that
// ends streams only on an unshare leaves this one open; nothing else happens on the drive here.
import type { Check } from '../../../run/model.ts';
import { CheckSkip } from '../../../run/verdict.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { driveCheck } from './document.ts';
import type { RelayTarget } from '../driver.ts';

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How far ahead the share expires: room to open the stream inside its window. */
const EXPIRY_AHEAD_MS = 3000;
/** How long after the expiry the stream may take to close (as after an unshare). */
const CLOSE_WITHIN_MS = 5000;

export function streamExpiry(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/matrix/stream-expiry',
    title: "a member's event stream, open while its only share lives, closes once that share passes its signed `expires`",
    rules: ['ra.drive.events-revocation'],
    context: ['ra.drive.members', 'ra.drive.share', 'ra.drive.events'],
    cells: [{ rule: 'ra.drive.events-revocation' as RuleId, facet: 'share-expiry', value: 'events-stream', operation: 'driveEvents' }],
    lane: 'drive-lifecycle',
    timeoutMs: 30_000,
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const [folder, member] = await Promise.all([s.folder(owner, root.keys, 'for a while'), s.identity()]);
      const expires = Math.ceil((Date.now() + EXPIRY_AHEAD_MS) / 1000) * 1000;
      await s.share(owner, { node: folder.keys, role: 'read', member: { identity: member.identity, encryption: member.encryption.publicKey }, expires: rfc3339(expires) });
      const stream = await s.drive.events(drive, s.actor(member));
      try {
        if (Date.now() >= expires) throw new CheckSkip(`opening the stream took past the share's expiry (${EXPIRY_AHEAD_MS} ms ahead): too slow to judge here`);
        if (!e.that(stream.status === 200, `the member's stream answered ${stream.status} ${stream.body ?? ''} while its share lived`)) return;
        await sleep(Math.max(0, expires - Date.now()));
        for (let waited = 0; waited < CLOSE_WITHIN_MS && !stream.ended; waited += 100) await sleep(100);
        e.that(
          stream.ended,
          `the member's event stream is still open ${CLOSE_WITHIN_MS / 1000} s after its only share expired (events so far: ${stream.events.map((x) => x.event).join(', ') || 'none'})`,
        );
      } finally {
        await stream.close();
      }
    },
  });
}
