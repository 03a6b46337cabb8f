// The project's poll exchange beyond its replies (ns.transport.poll-shape, a project decision:
// document 1 shows no poll fields): a malformed body is a 400 missing_field, and of polls racing on
// one approved cross-device transaction exactly one signs the starting browser in.
import type { Check } from '../../../run/model.ts';
import { isCode } from '../../../run/answers.ts';
import { rpCheck } from '../check.ts';
import { accepted, envelopeOf, safeJson, said, sign, type RpTarget } from '../driver.ts';
import { RESUME_RACE } from './transactions.ts';

function profilePollMalformedCheck(target: RpTarget): Check {
  // Each is not a JSON object with a non-empty string poll_secret (the last is not UTF-8).
  const bodies: Array<[string, string | Uint8Array]> = [
    ['not JSON', 'poll_secret=x'],
    ['null', 'null'],
    ['an array', '[]'],
    ['no poll_secret', '{}'],
    ['an empty poll_secret', '{"poll_secret":""}'],
    ['a numeric poll_secret', '{"poll_secret":42}'],
    ['bytes that are not UTF-8', Uint8Array.from([0x7b, 0xff, 0x7d])],
  ];
  return rpCheck(target, {
    id: 'rp/profile/poll-malformed',
    title: 'a poll body that is not a JSON object with a non-empty string poll_secret answers 400 missing_field',
    rules: ['ns.transport.poll-shape'],
    context: ['ns.transport.poll'],
    run: async (s, e) => {
      const url = await s.pollUrl();
      for (const [what, body] of bodies) {
        const r = await s.client(false).post(url, body, { headers: { 'content-type': 'application/json', accept: 'application/json' } });
        const env = envelopeOf(r);
        e.that(r.status === 400 && typeof env !== 'string' && isCode(env.error, 'missing_field'), `a poll with ${what} answered ${said(r)}, expected 400 missing_field`);
      }
    },
  });
}

function profilePollRaceCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/profile/poll-race',
    title: `${RESUME_RACE} concurrent polls of one approved cross-device transaction each answer completed, and exactly one signs the starting browser in`,
    rules: ['ns.transport.poll-shape'],
    context: ['ns.start.contract', 'ns.transaction.cross-device', 'ns.transaction.poll'],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      const d = await s.deliver(t.request, sign(s.profile, t.request, who), { match: t.matchCode });
      if (!e.that(accepted(d), `the delivery answered ${said(d)}`)) return;
      const answers = await Promise.all(Array.from({ length: RESUME_RACE }, () => s.poll(t.pollSecret)));
      const completed = JSON.stringify({ status: 'completed', identity: who.identity });
      const other = answers.find((a) => a.status !== 200 || JSON.stringify(safeJson(a)) !== completed);
      e.that(other === undefined, `a concurrent poll answered ${other ? said(other) : ''}, expected 200 ${completed}`);
      const won = answers.filter((a) => a.setCookies.length > 0);
      e.that(won.length === 1, `${won.length} of ${RESUME_RACE} concurrent polls set a cookie, expected exactly 1 (the one that completed the transaction)`);
    },
  });
}

export function pollChecks(target: RpTarget): Check[] {
  return [profilePollMalformedCheck(target), profilePollRaceCheck(target)];
}
