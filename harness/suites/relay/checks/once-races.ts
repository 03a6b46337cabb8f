// The `once` facets of what a relay hands out once (spec/facets/relay-core.yaml and
// relay-owner.yaml), raced: an identity's registration ("`409` (already registered here)") and a
// pending message ("both drained on read"), each tried 20 ways at once. The replays, one after the
// other, are the cells of relay/identities/register-refusals and relay/messages/local-delivery.
import type { Check } from '../../../run/model.ts';
import { registration } from '../../../actors/relay/index.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, pickupOf, said, inviteOf, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';

const RACE = 20;

function registerRace(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/once-register',
    title: `${RACE} registrations of one new hosted identity, each signed afresh and sent at once: exactly one answers 201, the others 409`,
    rules: ['ra.identities.conflict'],
    context: ['ra.identities.hosted', 'ra.identities.signature'],
    cells: [{ rule: 'ra.identities.conflict', facet: 'once', value: 'race', operation: 'register' }],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      const id = await s.identity('relay', { register: false });
      const invite = inviteOf(t);
      const bodies = Array.from({ length: RACE }, () => registration(s.profile, id, facts.relayAddress, invite));
      const answers = await Promise.all(bodies.map((b) => s.relay.post('/identities', b)));
      const won = answers.filter((r) => r.status === 201).length;
      const others = answers.filter((r) => r.status !== 201);
      e.that(won === 1, `${won} of ${RACE} registrations sent at once answered 201 (${answers.map((r) => r.status).join(',')}), not exactly 1`);
      const wrong = others.find((r) => r.status !== 409);
      e.that(wrong === undefined, `a registration that lost the race answered ${wrong ? said(wrong) : ''}, not 409`);
    },
  });
}

function drainRace(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/once-drain',
    title: `one pending message and ${RACE} pickups of its inbox at once, each a signed request of its own: exactly one of them returns it`,
    rules: ['ra.pickup.drain'],
    context: ['ra.pickup.auth', 'ra.signed-request'],
    cells: [{ rule: 'ra.pickup.drain', facet: 'once', value: 'race', operation: 'pickup' }],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const m = mail(s, a, b);
      const sent = await s.relay.send(m);
      if (sent.status !== 202) throw new CheckFailure(`POST /messages answered ${said(sent)}, not 202`);
      // Signed requests (each its own nonce): no challenge to fetch first, so the pickups go out together.
      const answers = await Promise.all(Array.from({ length: RACE }, () => s.relay.pickup(b, { mode: 'signed-request' })));
      const refused = answers.find((r) => r.status !== 200);
      if (!e.that(refused === undefined, `a pickup of the ${RACE} answered ${refused ? said(refused) : ''}`)) return;
      const holding = answers.filter((r) => {
        const p = pickupOf(r);
        return typeof p !== 'string' && p.messages.some((x) => x.id === m.id);
      }).length;
      e.that(holding === 1, `${holding} of ${RACE} pickups sent at once returned the one pending message, not exactly 1`);
    },
  });
}

export function onceRaceChecks(t: RelayTarget): Check[] {
  return [registerRace(t), drainRace(t)];
}
