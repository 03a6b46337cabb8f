// The project's cursor forms (ra.pickup.cursor-forms): what a cursor may look like, what a consume
// body may omit, and that the ack cursor spends acks as the message cursor spends messages.
import type { Check } from '../../../run/model.ts';
import { ack, type RelayIdentity } from '../../../actors/relay/index.ts';
import { relayCheck, type Expect } from '../check.ts';
import { codeOf, isObject, pickupOf, safeJson, said, type Session, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';

const SIGNED = { mode: 'signed-request' } as const;
/** Cursors in no form the project gives: not decimal, decimal with a prefix or a suffix, empty, 16 digits. */
const BAD_CURSORS = ['abc', '5x', 'x5', '', '1'.repeat(16), '-1', '1.5'];

async function read(s: Session, who: RelayIdentity, since: string) {
  return pickupOf(await s.relay.pickup(who, SIGNED, since));
}

const ids = (list: Record<string, unknown>[]) => list.map((x) => String(x.id ?? x.message_id));

export function cursorFormsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/cursor-forms',
    title:
      'a since, through or ack_through that is not a decimal cursor, or a consume body that is not JSON, is 400 invalid_request and drops nothing; a consume may omit ack_through; the ack cursor spends acks; a many-digit cursor reads on',
    rules: ['ra.pickup.cursor-forms'],
    context: ['ra.pickup.cursor', 'ra.pickup.cursor-names'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const m = mail(s, a, b, 'kept');
      e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
      const refused = (what: string, status: number, code: string | undefined) => e.that(status === 400 && code === 'invalid_request', `${what}: ${status} ${code ?? ''}, not 400 invalid_request`);
      for (const since of BAD_CURSORS) {
        const r = await s.relay.pickup(b, SIGNED, since);
        refused(`since=${JSON.stringify(since)}`, r.status, codeOf(r));
      }
      const bodies: Array<[string, Record<string, unknown> | string]> = [
        ['a body that is not JSON', '{"through": '],
        ['through as a number', { through: 5 }],
        ...BAD_CURSORS.map((c): [string, Record<string, unknown>] => [`through ${JSON.stringify(c)}`, { through: c }]),
        ...BAD_CURSORS.map((c): [string, Record<string, unknown>] => [`ack_through ${JSON.stringify(c)}`, { through: '0', ack_through: c }]),
      ];
      for (const [what, body] of bodies) {
        const r = await s.relay.consume(b, body, SIGNED);
        refused(`consume with ${what}`, r.status, codeOf(r));
      }
      const kept = await read(s, b, '0');
      if (typeof kept === 'string') return e.fail(kept);
      e.that(ids(kept.messages).includes(String(m.id)), `after the refused consumes the message is gone: ${said(await s.relay.pickup(b, SIGNED, '0'))}`);
      await acksSpent(s, e, a, b, m.id);
      await manyDigits(s, e, a, b);
    },
  });
}

/** b acks a's message: a's ack cursor, consumed as ack_through, drops the ack; a consume without ack_through (the deployed client's form) drops none. */
async function acksSpent(s: Session, e: Expect, a: RelayIdentity, b: RelayIdentity, messageId: unknown): Promise<void> {
  const k = ack(s.profile, b, a.identity, String(messageId));
  e.that((await s.relay.ack(k)).status === 202, 'the ack was not accepted');
  const first = await read(s, a, '0');
  if (typeof first === 'string') return e.fail(first);
  const ackCursor = first.body.ack_cursor;
  e.that(first.acks.length === 1 && typeof ackCursor === 'string', `a's read: ${JSON.stringify(first.body)}`);
  const omitted = await s.relay.consume(a, { through: first.body.cursor }, SIGNED);
  const ob = safeJson(omitted);
  e.that(omitted.status === 200 && isObject(ob) && ob.acks_consumed === 0, `consume without ack_through: ${said(omitted)}, not 200 with acks_consumed 0`);
  const still = await read(s, a, '0');
  e.that(typeof still !== 'string' && still.acks.length === 1, `after a consume without ack_through the ack is gone: ${typeof still === 'string' ? still : JSON.stringify(still.body)}`);
  const spent = await s.relay.consume(a, { through: '0', ack_through: ackCursor }, SIGNED);
  const sb = safeJson(spent);
  e.that(spent.status === 200 && isObject(sb) && sb.acks_consumed === 1, `consume with ack_through ${String(ackCursor)}: ${said(spent)}, not 200 with acks_consumed 1`);
  const after = await read(s, a, '0');
  e.that(typeof after !== 'string' && after.acks.length === 0, `after consuming through the ack cursor: ${typeof after === 'string' ? after : JSON.stringify(after.body)}`);
}

/** Reads on from a cursor of two digits or more: the relay's own cursors grow past one digit. */
async function manyDigits(s: Session, e: Expect, a: RelayIdentity, b: RelayIdentity): Promise<void> {
  let cursor = '0';
  for (let i = 0; i < 12 && cursor.length < 2; i++) {
    e.that((await s.relay.send(mail(s, a, b, `pad ${i}`))).status === 202, 'a padding message was not accepted');
    const r = await read(s, b, '0');
    if (typeof r === 'string') return e.fail(r);
    cursor = String(r.body.cursor);
  }
  if (cursor.length < 2) return e.fail(`the cursor stayed ${cursor} after 12 messages`);
  const last = mail(s, a, b, 'after the cursor');
  e.that((await s.relay.send(last)).status === 202, 'the last message was not accepted');
  const on = await read(s, b, cursor);
  e.that(
    typeof on !== 'string' && ids(on.messages).join() === String(last.id),
    `since=${cursor}: ${typeof on === 'string' ? on : JSON.stringify(ids(on.messages))}, not only the message sent after it`,
  );
}
