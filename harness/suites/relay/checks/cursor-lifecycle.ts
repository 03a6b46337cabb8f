// What a consume ends (spec/facets/relay-core.yaml, ra.pickup.cursor, lifecycle consume): a cursor
// read "reads without forgetting", so the same read again returns the same mail; "POST
// /messages/:identity/consume with `through` and `ack_through` (cursors) then drops them", so
// after it neither a cursor read nor a drain returns that mail. The reply's cursor fields are
// "not shown": the deployed names (`cursor`, `ack_cursor`) are read (ra.pickup.cursor-names).
import type { Check } from '../../../run/model.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, pickupOf, said, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';

const ids = (p: ReturnType<typeof pickupOf>): string[] => (typeof p === 'string' ? [] : p.messages.map((m) => String(m.id)));

export function cursorLifecycle(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/cursor-consume',
    title: 'a cursor read returns the pending mail and returns it again (nothing forgotten); after a consume through its cursor, neither a cursor read nor a drain returns it',
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
      const cursor = read.body.cursor;
      const ackCursor = read.body.ack_cursor ?? '0';
      if (typeof cursor !== 'string' && typeof cursor !== 'number') throw new CheckFailure(`the cursor read's reply names no cursor (read as \`cursor\`): ${JSON.stringify(read.body).slice(0, 300)}`);
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
