// A node's head is spent as a base by the first commit on it (spec/facets/drive.yaml, kind once):
// twenty writers commit on one base at once and exactly one wins, every other answer is 409 with
// the winner's head, and committing on the spent base again is 409 too; the head is the winner.
import type { Check } from '../../../run/model.ts';
import { encryptContent, replace } from '../../../actors/drive/objects.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import { headNames, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

const WAYS = 20;
const text = (s: string) => new Uint8Array(Buffer.from(s));

export function commitsOnce(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/matrix/single-winner',
    title: `${WAYS} commits on one base at once (the owner and write members): exactly one wins, the others and a replay on the spent base answer 409 with the winner's head`,
    rules: ['ra.drive.stale-base'],
    context: ['ra.drive.conflict-body', 'ra.drive.roles'],
    cells: [
      { rule: 'ra.drive.stale-base', facet: 'once', value: 'race', operation: 'driveCommit' },
      { rule: 'ra.drive.stale-base', facet: 'once', value: 'replay', operation: 'driveCommit' },
    ],
    lane: 'drive-once',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const f = await s.file(owner, root.keys, 'contended', text('v1'));
      // Spread over four writers: an identity holds at most 16 live challenges (limits.challenges_per_identity_max).
      const writers: RelayIdentity[] = [owner, ...(await Promise.all([s.identity(), s.identity(), s.identity()]))];
      await Promise.all(writers.slice(1).map((w) => s.share(owner, { node: root.keys, role: 'write', member: { identity: w.identity, encryption: w.encryption.publicKey } })));
      const chunks = encryptContent(s.profile, drive, f.keys, text('v2'));
      const up = await s.drive.upload(drive, s.actor(owner), chunks);
      if (up) return e.fail(up);
      const bodies = Array.from({ length: WAYS }, (_, i) => {
        const author = writers[i % writers.length]!;
        return { author, body: replace(s.profile, { drive, author, keys: f.keys, parent: f.version, chunks }) };
      });
      const answers = await Promise.all(bodies.map((b) => s.drive.commit(drive, s.actor(b.author), b.body)));
      const won = answers.map((r, i) => (ok(r) ? i : -1)).filter((i) => i >= 0);
      if (!e.that(won.length === 1, `${WAYS} commits on one base: ${won.length} won (${answers.map((r) => r.status).join(' ')})`)) return;
      const head = String((bodies[won[0]!]!.body.manifest as Record<string, unknown>).version);
      const lost = answers.filter((r, i) => i !== won[0] && !(r.status === 409 && headNames(r, head)));
      e.that(lost.length === 0, `${lost.length} losing commits did not answer 409 with the winner's head ${head}: ${lost.slice(0, 3).map(said).join('; ')}`);
      const replay = await s.drive.commit(drive, s.actor(owner), replace(s.profile, { drive, author: owner, keys: f.keys, parent: f.version, chunks }));
      e.that(replay.status === 409 && headNames(replay, head), `a commit on the spent base answered ${said(replay)}`);
      const now = await s.drive.node(drive, s.actor(owner), f.keys.node);
      e.that(now.text().includes(head), `the head after the race is not the winner ${head}: ${said(now)}`);
    },
  });
}
