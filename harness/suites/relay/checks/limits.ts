// Rate limits: the per-sender bucket is charged before the signature is checked (a flood of badly
// signed envelopes is throttled, not verified), and a 429 reports the bucket.
import type { Check } from '../../../run/model.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { isObject, safeJson, said, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';

export function limitChecks(t: RelayTarget): Check[] {
  return [
    relayCheck(t, {
      id: 'relay/limits/sender-bucket',
      title: 'one sender flooding badly signed messages gets 429 once its bucket is spent (rate limits before the signature), with error, scope, window, limit and reset_at',
      rules: ['ra.relay.rate-before-signature', 'ra.messages.rate-limit-body'],
      timeoutMs: 60_000,
      run: async (s, e) => {
        const [a, b] = [await s.identity(), await s.identity()];
        const cap = t.declared.senderLimit ?? limits.relay_rate_sender_max;
        let limited: Awaited<ReturnType<typeof s.relay.send>> | undefined;
        let sent = 0;
        for (; sent < cap + 5 && !limited; sent++) {
          const r = await s.relay.send({ ...mail(s, a, b, `flood ${sent}`), signature: 'AAAA' });
          if (r.status === 429) limited = r;
          else if (r.status !== 401 && r.status !== 400) return e.fail(`flood message ${sent + 1}: ${said(r)}`);
        }
        if (!limited)
          return e.fail(
            `${sent} badly signed messages from one sender were all refused one by one (never 429; the bucket is ${cap}${t.declared.senderLimit === undefined ? ", the project's default: declare the target's with --relay-sender-limit" : ''})`,
          );
        const body = safeJson(limited);
        e.that(isObject(body) && body.error === 'rate_limit_exceeded', `the 429 body: ${said(limited)}`);
        if (isObject(body)) {
          e.that(body.scope === 'sender' || body.scope === 'global', `scope ${String(body.scope)}`);
          e.that(typeof body.window === 'number' || typeof body.window === 'string', 'no window');
          e.that(typeof body.limit === 'number', 'no limit number');
          e.that(typeof body.reset_at === 'string' && Number.isFinite(Date.parse(body.reset_at)), `reset_at ${String(body.reset_at)}`);
        }
        const good = await s.relay.send(mail(s, a, b, 'after the flood'));
        e.that(good.status === 429, `a well-signed message from the throttled sender: ${said(good)}, not 429 (the bucket is charged before the signature)`);
      },
    }),
  ];
}
