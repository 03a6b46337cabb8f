// The `order` facets of the relay's core (spec/facets/relay-core.yaml): document 3 orders the
// checks of POST /messages and /acks, so an envelope with two faults gets the first one's answer.
// encryption_required comes "before signature verification or rate limiting": an unencrypted
// envelope from a sender already over its rate limit is 400 encryption_required, not 429. The
// rate limits run before signature verification: a badly signed envelope over the limit is 429.
// The at-least-one-local rule answers 403 before signature verification.
import type { Check } from '../../../run/model.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { ack, signEnvelope, type Envelope } from '../../../actors/relay/index.ts';
import { relayCheck } from '../check.ts';
import { refusedWith, said, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';
import { throttle } from './matrix-ops.ts';

function envelopeOrderCheck(t: RelayTarget): Check {
  const cap = t.declared.senderLimit ?? limits.relay_rate_sender_max;
  return relayCheck(t, {
    id: 'relay/matrix/order-envelopes',
    title:
      "an envelope with two faults gets the first check's answer: unencrypted from a sender over its rate limit, or unencrypted and badly signed, 400 encryption_required; over the rate limit and badly signed, 429; between two strangers and badly signed, 403",
    rules: ['ra.messages.encryption-required', 'ra.relay.rate-before-signature', 'ra.relay.locality'],
    cells: [
      { rule: 'ra.messages.encryption-required', facet: 'before-rate-limit', value: 'both-faults', operation: 'postMessage' },
      { rule: 'ra.messages.encryption-required', facet: 'before-signature', value: 'both-faults', operation: 'postMessage' },
      { rule: 'ra.relay.rate-before-signature', facet: 'order', value: 'both-faults', operation: 'postMessage' },
      { rule: 'ra.relay.rate-before-signature', facet: 'order', value: 'both-faults', operation: 'postAck' },
      { rule: 'ra.relay.locality', facet: 'order', value: 'both-faults', operation: 'postMessage' },
      { rule: 'ra.relay.locality', facet: 'order', value: 'both-faults', operation: 'postAck' },
    ],
    timeoutMs: 60_000,
    // Spending a bucket is a few hundred requests: in a lane of its own, beside the suite's other checks.
    lane: 'relay/matrix/rate',
    run: async (s, e) => {
      const [a, a2, b, c] = await Promise.all([s.identity(), s.identity(), s.identity(), s.identity()]);
      const declared = t.declared.senderLimit === undefined ? ", the project's default: declare the target's with --relay-sender-limit" : '';
      // The answer that ends a throttle is itself a badly signed envelope over the limit.
      const [byMessages, byAcks] = await Promise.all([throttle(s, 'message', a, b, cap), throttle(s, 'ack', a2, b, cap)]);
      e.that(byMessages !== undefined, `${cap + 10} badly signed messages from one sender were refused one by one, never 429 (the bucket is ${cap}${declared})`);
      e.that(byAcks !== undefined, `${cap + 10} badly signed acks from one sender were refused one by one, never 429 (the bucket is ${cap}${declared})`);
      const unencrypted = (sender = a): Array<[string, Envelope]> => {
        const m = mail(s, sender, b, 'no encryption');
        const { encryption: _all, ...bare } = m;
        void _all;
        const { nonce: _n, ...noNonce } = m.encryption as Record<string, unknown>;
        void _n;
        return [
          ['signed, without encryption', signEnvelope(s.profile, 'message', bare, sender.seed)],
          ['without encryption.nonce, badly signed', { ...m, encryption: noNonce, signature: 'AAAA' }],
        ];
      };
      if (byMessages !== undefined) {
        // The bucket's window may turn between the throttle and the envelope: judged only while the sender is still throttled.
        for (let attempt = 0; attempt < 2; attempt++) {
          const cases = unencrypted();
          const answers = await Promise.all(cases.map(([, env]) => s.relay.send(env)));
          const still = await s.relay.send(mail(s, a, b, 'still throttled'));
          if (still.status !== 429 && attempt === 0) {
            await throttle(s, 'message', a, b, cap);
            continue;
          }
          cases.forEach(([what], i) => e.that(refusedWith(answers[i]!, 400, 'encryption_required'), `${what}, from a sender over its rate limit: ${said(answers[i]!)}, not 400 encryption_required`));
          break;
        }
      }
      for (const [what, env] of unencrypted(c)) {
        const r = await s.relay.send({ ...env, signature: 'AAAA' });
        e.that(refusedWith(r, 400, 'encryption_required'), `${what} (signature made bad): ${said(r)}, not 400 encryption_required`);
      }
      const [x, y] = await Promise.all([s.stranger(), s.stranger()]);
      const m = await s.relay.send({ ...mail(s, x, y), signature: 'AAAA' });
      e.that(m.status === 403, `a badly signed message between two strangers: ${said(m)}, not 403`);
      const k = await s.relay.ack({ ...ack(s.profile, x, y.identity, 'm_strangers'), signature: 'AAAA' });
      e.that(k.status === 403, `a badly signed ack between two strangers: ${said(k)}, not 403`);
    },
  });
}

export function matrixOrderChecks(t: RelayTarget): Check[] {
  return [envelopeOrderCheck(t)];
}
