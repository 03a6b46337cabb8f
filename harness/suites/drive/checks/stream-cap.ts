// The cap on a holder's drive streams (the project's decision, spec/rules
// ra.drive.events-max-streams): at MAX_STREAMS_PER_IDENTITY and one past it, for one member,
// with the owner's stream beside (another holder is not counted), and a closed stream freeing
// its place.
import type { Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import type { RelayTarget } from '../driver.ts';
import { cellsOf } from './cells.ts';
import { driveCheck } from './document.ts';

const RULE = 'ra.drive.events-max-streams' as RuleId;

function streamCap(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/stream-cap',
    title: "a member opens MAX_STREAMS_PER_IDENTITY drive streams and the next is refused 429 `too_many_streams`; the owner's stream opens beside them; a closed stream frees its place",
    rules: [RULE],
    cells: cellsOf(RULE, 'limit', ['at', 'past', 'other-scope'], ['driveEvents']),
    run: async (s, e) => {
      const cap = t.declared.maxStreams ?? limits.max_streams_per_identity_default;
      const { id, root } = await s.owner();
      const member = await s.identity();
      await s.share(id, { node: root.keys, role: 'read', member: { identity: member.identity, encryption: member.encryption.publicKey } });
      const open = async (who: typeof member) => s.drive.events(id.identity, s.actor(who));
      const streams = [];
      try {
        for (let i = 0; i < cap; i++) streams.push(await open(member));
        e.that(
          streams.every((x) => x.status === 200),
          `the member's ${cap} streams (the cap) answered ${streams.map((x) => x.status).join(', ')}, not all 200`,
        );
        const past = await open(member);
        streams.push(past);
        e.that(
          past.status === 429 && /"error"\s*:\s*"too_many_streams"/.test(past.body ?? ''),
          `the member's stream past the cap of ${cap} answered ${past.status} ${past.body ?? ''}, not 429 too_many_streams`,
        );
        const owner = await open(id);
        streams.push(owner);
        e.that(owner.status === 200, `the owner's stream beside the member's ${cap} answered ${owner.status} ${owner.body ?? ''}`);
        // Closing one of the member's frees its place (the relay may take a moment to see the close).
        await streams[0]!.close();
        let again = await open(member);
        for (let i = 0; i < 20 && again.status === 429; i++) {
          await new Promise((r) => setTimeout(r, 100));
          again = await open(member);
        }
        streams.push(again);
        e.that(again.status === 200, `after one of the member's streams closed, a new one answered ${again.status} ${again.body ?? ''}, not 200`);
      } finally {
        await Promise.all(streams.map((x) => x.close()));
      }
    },
  });
}

export function streamCapChecks(t: RelayTarget): Check[] {
  return [streamCap(t)];
}
