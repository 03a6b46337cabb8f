// A sign-in prompt's life in the inbox (the project's decision, spec/rules
// ra.inbox.auth-request-expiry): accepted only while it is live, and never shown once its signed
// `expires_at` has passed, even when it was stored before. Found from outside against the
// reference (issue 26, item 4): a stored prompt was handed out at pickup after its expiry.
import type { Check } from '../../../run/model.ts';
import { relayCheck } from '../check.ts';
import { pickupOf, said, type RelayTarget } from '../driver.ts';
import { now } from '../../../actors/relay/index.ts';
import { expectInbox, mail } from './messaging.ts';
import { LANE, POLICY, PROMPT, prompt, trusting } from './system-files.ts';

/** How far ahead the short-lived prompt expires: long enough to be sent and seen, short to wait out. */
const SHORT_S = 3;

function lapsedPromptCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/auth-request-lapsed',
    lane: LANE,
    title: `a stored ${PROMPT} is picked up before its expires_at and never after it, by a cursor read or a drain, while a later-expiring one still is`,
    rules: ['ra.inbox.auth-request-expiry'],
    cells: [
      { rule: 'ra.inbox.auth-request-expiry', facet: 'window', value: 'inside', operation: 'pickup' },
      { rule: 'ra.inbox.auth-request-expiry', facet: 'window', value: 'outside', operation: 'pickup' },
    ],
    timeoutMs: 30_000,
    run: async (s, e) => {
      const [owner, service] = [await s.identity(), await s.identity()];
      const put = await s.relay.systemFile(owner, 'PUT', POLICY, trusting(service));
      if (!e.that(put.status >= 200 && put.status < 300, `PUT ${POLICY} with trusted_auth_services answered ${said(put)}`)) return;
      const [short, long] = [prompt(s, service, owner, SHORT_S), prompt(s, service, owner, 120)];
      for (const p of [short, long]) {
        const sent = await s.relay.send(p);
        if (!e.that(sent.status === 202, `a trusted service's prompt answered ${said(sent)}`)) return;
      }
      const ids = (r: Awaited<ReturnType<typeof s.relay.pickup>>) => {
        const p = pickupOf(r);
        return typeof p === 'string' ? p : p.messages.map((m) => String(m.id));
      };
      const before = ids(await s.relay.pickup(owner, undefined, '0'));
      e.that(Array.isArray(before) && before.includes(String(short.id)) && before.includes(String(long.id)), `before either expired, a cursor read found ${JSON.stringify(before)}`);
      await new Promise((r) => setTimeout(r, (SHORT_S + 1.5) * 1000));
      const read = ids(await s.relay.pickup(owner, undefined, '0'));
      e.that(Array.isArray(read) && !read.includes(String(short.id)) && read.includes(String(long.id)), `after the first expired, a cursor read found ${JSON.stringify(read)}`);
      const drained = ids(await s.relay.pickup(owner));
      e.that(Array.isArray(drained) && !drained.includes(String(short.id)) && drained.includes(String(long.id)), `after the first expired, a drain found ${JSON.stringify(drained)}`);
    },
  });
}

/** Only a prompt is bounded by its expires_at: a message of another type is held whatever it says (issue 25's run of messages.ts). */
function expiresLineCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/expires-line',
    title: `a message of another type than ${PROMPT}, or of none, whose signed expires_at has already passed: accepted and picked up (held for the spool's time, not its expires_at)`,
    rules: ['ra.messages.expires-line'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const past = now(-60);
      const sent = [mail(s, a, b, 'a note', { type: 'net.example.note', expiresAt: past }), mail(s, a, b, 'untyped', { expiresAt: past })];
      for (const m of sent) {
        const r = await s.relay.send(m);
        e.that(r.status === 202, `a message${m.type ? ` of type ${String(m.type)}` : ''} whose expires_at passed: ${said(r)}, not 202`);
      }
      await expectInbox(s, e, b, sent);
    },
  });
}

export function promptChecks(t: RelayTarget): Check[] {
  return [lapsedPromptCheck(t), expiresLineCheck(t)];
}
