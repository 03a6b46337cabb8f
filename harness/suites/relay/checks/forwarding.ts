// Routes beyond one message (issue 25's whole-area run of reference/relay/messages.ts): an ack goes
// the way a message does ("Same signature, rate limits and locality rule as messages"), a sender
// no directory knows is refused (not met with a 5xx), and what the recipient's relay refuses is
// not answered as accepted. How a refused forward is reported is the project's
// (ra.errors.relay-unreachable): the refusal passed on.
import type { Check } from '../../../run/model.ts';
import { ack, signEnvelope } from '../../../actors/relay/index.ts';
import { relayCheck } from '../check.ts';
import { codeOf, pickupOf, safeJson, isObject, said, type RelayTarget } from '../driver.ts';
import { expectInbox, mail } from './messaging.ts';
import { withStreams } from './events.ts';

export function ackForwardCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/acks/forward',
    title: "a local identity's ack of a message from an identity homed on the peer relay: 202, forwarded as signed, drained on the original sender's pickup at the peer",
    rules: ['ra.relay.forward', 'ra.acks.accepted'],
    context: ['ra.relay.forward-as-signed'],
    run: async (s, e) => {
      const a = await s.identity('relay');
      const y = await s.identity('peer');
      const k = ack(s.profile, a, y.identity, 'm_from_the_peer');
      const r = await s.relay.ack(k);
      e.that(r.status === 202, `POST /acks at the ack's sender's relay: ${said(r)}, not 202`);
      const p = pickupOf(await s.peer.pickup(y));
      if (typeof p === 'string') return e.fail(p);
      e.that(p.acks.length === 1 && JSON.stringify(p.acks[0]) === JSON.stringify(k), `the original sender's pickup at the peer holds ${JSON.stringify(p.acks).slice(0, 300)}, not the ack as signed`);
    },
  });
}

export function unknownSenderCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/unknown-sender',
    title: 'a message or an ack to a local identity from a sender no directory knows (its key cannot be found), or a message to a recipient no directory knows: refused with a 4xx, never delivered',
    rules: ['ra.messages.signature', 'ra.acks.signature', 'ra.errors.listed-statuses'],
    run: async (s, e) => {
      const b = await s.identity();
      const nobody = s.nobody();
      const m = mail(s, nobody, b, 'from nowhere');
      const answers = await Promise.all([s.relay.send(m), s.relay.ack(ack(s.profile, nobody, b.identity, String(m.id))), s.relay.send(mail(s, b, nobody, 'to nowhere'))]);
      ['a message from', 'an ack from', "a local identity's message to"].forEach((what, i) =>
        e.that(answers[i]!.status >= 400 && answers[i]!.status < 500, `${what} ${nobody.identity}, whom no directory knows: ${said(answers[i]!)}, not a 4xx`),
      );
      const p = pickupOf(await s.relay.pickup(b));
      if (typeof p === 'string') return e.fail(p);
      e.that(p.messages.length === 0 && p.acks.length === 0, `${b.identity}'s pickup holds envelopes from a sender nobody knows: ${JSON.stringify([...p.messages, ...p.acks].map((x) => x.id))}`);
    },
  });
}

export function recipientCaseProfileCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/names-case',
    title: "a message whose recipient is written in capitals is the recipient's: 202, announced on its stream, picked up by it",
    rules: ['ra.names.case'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      await withStreams(s, e, [b], async ([st]) => {
        const m: Record<string, unknown> = { ...mail(s, a, b, 'in capitals'), recipient: b.identity.toUpperCase() };
        const signed = signEnvelope(s.profile, 'message', m, a.seed);
        const r = await s.relay.send(signed);
        e.that(r.status === 202, `a message to ${String(m.recipient)}: ${said(r)}, not 202`);
        const heard = await st.until(() => st.events.some((x) => isObject(x.data) && x.data.message_id === m.id), 5000);
        e.that(heard, `${b.identity}'s stream did not announce the message to ${String(m.recipient)}`);
        await expectInbox(s, e, b, [signed]);
      });
    },
  });
}

export function forwardRefusedProfileCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/forward-refused',
    title: "a message forwarded with a session_id only the sender's relay knows: the peer's 401 session_expired passed on, and nothing delivered",
    rules: ['ra.errors.relay-unreachable'],
    run: async (s, e) => {
      const a = await s.identity('relay');
      const y = await s.identity('peer');
      const seed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const reg = await s.relay.registerSession(a, seed);
      const sessionId = (safeJson(reg) as Record<string, unknown> | undefined)?.session_id;
      if (reg.status !== 201 || typeof sessionId !== 'string') return e.fail(`POST /sessions: ${said(reg)}`);
      const m = mail(s, a, y, 'known at home only', { session: { seed, sessionId } });
      const r = await s.relay.send(m);
      const b = safeJson(r);
      e.that(
        r.status === 401 && codeOf(r) === 'session_expired' && isObject(b) && typeof b.detail === 'string',
        `the peer refuses the session it does not know, which the sender's relay answered ${said(r)}, not 401 session_expired`,
      );
      await expectInbox(s, e, y, [], s.peer);
    },
  });
}
