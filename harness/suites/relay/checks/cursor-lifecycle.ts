// What a consume ends (spec/facets/relay-core.yaml, ra.pickup.cursor, lifecycle consume): a cursor
// read "reads without forgetting", so the same read again returns the same mail; "POST
// /messages/:identity/consume with `through` and `ack_through` (cursors) then drops them", so
// after it neither a cursor read nor a drain returns that mail. The reply's cursor fields are
// "not shown", so they are learned from the reply: the string or number fields beside messages and
// acks, the one whose name speaks of acks being the acks' (the deployed `cursor` and `ack_cursor`
// are a profile matter, ra.pickup.cursor-names).
import type { Check } from '../../../run/model.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, pickupOf, said, type RelayTarget } from '../driver.ts';
import { ack } from '../../../actors/relay/index.ts';
import { mail } from './messaging.ts';

const ids = (p: ReturnType<typeof pickupOf>): string[] => (typeof p === 'string' ? [] : p.messages.map((m) => String(m.id)));
const ackIds = (p: ReturnType<typeof pickupOf>): string[] => (typeof p === 'string' ? [] : p.acks.map((a) => String(a.id)));

export function cursorLifecycle(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/cursor-consume',
    title:
      'a cursor read returns the pending mail and returns it again (nothing forgotten); a read since the cursor it returned gives what came after; after a consume through its cursor, neither a cursor read nor a drain returns it',
    rules: ['ra.pickup.cursor'],
    context: ['ra.pickup.cursor-names', 'ra.pickup.drain'],
    cells: (['cursor-read', 'drain'] as const).map((value) => ({ rule: 'ra.pickup.cursor' as const, facet: 'consume', value, operation: 'pickup' })),
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const sent = [mail(s, a, b, 'one'), mail(s, a, b, 'two')];
      for (const m of sent) {
        const r = await s.relay.send(m);
        if (r.status !== 202) throw new CheckFailure(`POST /messages answered ${said(r)}, not 202`);
      }
      const want = sent.map((m) => String(m.id));
      const read = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      if (typeof read === 'string') return e.fail(read);
      if (
        !e.that(
          want.every((id) => ids(read).includes(id)),
          `a cursor read from 0 returned ${ids(read).join(', ') || 'nothing'}, not ${want.join(', ')}`,
        )
      )
        return;
      const again = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      e.that(
        want.every((id) => ids(again).includes(id)),
        `the same cursor read again returned ${typeof again === 'string' ? again : ids(again).join(', ') || 'nothing'}: it forgot what it read`,
      );
      const { cursor, ackCursor } = cursorsOf(read.body);
      if (cursor === undefined) throw new CheckFailure(`the cursor read's reply names no cursor (a string or number field beside messages and acks): ${JSON.stringify(read.body).slice(0, 300)}`);
      // since=<the cursor returned>: what came after it, not what the read that returned it already had.
      const later = mail(s, a, b, 'three');
      const sentLater = await s.relay.send(later);
      if (sentLater.status !== 202) throw new CheckFailure(`POST /messages answered ${said(sentLater)}, not 202`);
      const onward = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, String(cursor)));
      e.that(
        typeof onward !== 'string' && ids(onward).includes(String(later.id)) && !want.some((id) => ids(onward).includes(id)),
        `a cursor read since the cursor ${String(cursor)} the first read returned gave ${typeof onward === 'string' ? onward : ids(onward).join(', ') || 'nothing'}, not the later message ${String(later.id)} alone`,
      );
      const c = await s.relay.consume(b, { through: cursor, ack_through: ackCursor }, { mode: 'signed-request' });
      if (!e.that(c.status >= 200 && c.status < 300, `consume through the read's cursor answered ${said(c)}`)) return;
      const afterRead = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      e.that(
        typeof afterRead !== 'string' && !want.some((id) => ids(afterRead).includes(id)),
        `after the consume a cursor read from 0 returned ${typeof afterRead === 'string' ? afterRead : ids(afterRead).join(', ')}`,
      );
      const drained = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
      e.that(typeof drained !== 'string' && !want.some((id) => ids(drained).includes(id)), `after the consume a drain returned ${typeof drained === 'string' ? drained : ids(drained).join(', ')}`);
    },
  });
}

/**
 * The two cursors of a consume each drop their own kind: `through` the messages and `ack_through`
 * the acks. Consumed through the later read's message cursor and the earlier read's ack cursor,
 * the ack that came between stays, and the one before is gone.
 */
export function cursorConsumeAcks(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/cursor-consume-acks',
    title: "a consume drops messages through `through` and acks through `ack_through`: an ack after the ack cursor stays, though the message cursor is later; another recipient's mail stays",
    rules: ['ra.pickup.cursor'],
    context: ['ra.pickup.cursor-names'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const deliver = async (...envelopes: Array<{ kind: 'message' | 'ack'; env: ReturnType<typeof mail> }>) => {
        for (const { kind, env } of envelopes) {
          const r = await (kind === 'message' ? s.relay.send(env) : s.relay.ack(env));
          if (r.status !== 202) throw new CheckFailure(`POST /${kind}s answered ${said(r)}, not 202`);
        }
      };
      const [ack1, m1, ack2, m2] = [ack(s.profile, a, b.identity, 'm_one'), mail(s, a, b, 'one'), ack(s.profile, a, b.identity, 'm_two'), mail(s, a, b, 'two')];
      await deliver({ kind: 'ack', env: ack1 }, { kind: 'message', env: m1 });
      const first = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      if (typeof first === 'string') return e.fail(first);
      const { ackCursor } = cursorsOf(first.body);
      // Another recipient's mail, waiting from before the cursor: a consume is the consumer's alone.
      const other = await s.identity();
      const theirs = mail(s, a, other, 'not yours to consume');
      await deliver({ kind: 'message', env: theirs }, { kind: 'ack', env: ack2 }, { kind: 'message', env: m2 });
      const second = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      if (typeof second === 'string') return e.fail(second);
      const { cursor } = cursorsOf(second.body);
      if (cursor === undefined) throw new CheckFailure(`the cursor read's reply names no cursor: ${JSON.stringify(second.body).slice(0, 300)}`);
      const c = await s.relay.consume(b, { through: cursor, ack_through: ackCursor }, { mode: 'signed-request' });
      if (!e.that(c.status >= 200 && c.status < 300, `consume through ${String(cursor)} and ack_through ${String(ackCursor)} answered ${said(c)}`)) return;
      const after = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      if (typeof after === 'string') return e.fail(after);
      e.that(!ids(after).some((id) => id === String(m1.id) || id === String(m2.id)), `after a consume through the later cursor, a read from 0 still returned ${ids(after).join(', ')}`);
      e.that(
        ackIds(after).includes(String(ack2.id)),
        `the ack ${String(ack2.id)}, which came after ack_through ${String(ackCursor)}, is gone after a consume through the later message cursor ${String(cursor)}: the acks held are ${ackIds(after).join(', ') || 'none'}`,
      );
      if (ackCursor !== '0') e.that(!ackIds(after).includes(String(ack1.id)), `the ack ${String(ack1.id)}, through ack_through ${String(ackCursor)}, is still returned after the consume`);
      const kept = pickupOf(await s.relay.pickup(other, { mode: 'signed-request' }, '0'));
      e.that(
        ids(kept).includes(String(theirs.id)),
        `another recipient's message, pending before the consume, is gone after ${b.identity} consumed: its pickup answered ${typeof kept === 'string' ? kept : ids(kept).join(', ') || 'nothing'}`,
      );
    },
  });
}

/** The message and ack cursors of a cursor read's reply, whatever the relay names them (document 3 does not show the names). */
export function cursorsOf(body: Record<string, unknown>): { cursor?: string | number; ackCursor: string | number } {
  const fields = Object.entries(body).filter(([k, v]) => k !== 'messages' && k !== 'acks' && (typeof v === 'string' || typeof v === 'number')) as Array<[string, string | number]>;
  const ack = fields.find(([k]) => /ack/i.test(k));
  const message = fields.find(([k]) => !/ack/i.test(k));
  return { ...(message ? { cursor: message[1] } : {}), ackCursor: ack?.[1] ?? '0' };
}
