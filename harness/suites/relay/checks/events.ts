// The event stream: `ready` on open, a payload-free `message` event when mail arrives, nothing
// replayed on reconnect (the pickup is where delivery happens), and the per-identity stream cap.
import type { Check } from '../../../run/model.ts';
import type { SseStream } from '../../../actors/relay/index.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { isObject, pickupOf, said, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';

const WAIT_MS = 5000;

export function eventChecks(t: RelayTarget): Check[] {
  return [
    relayCheck(t, {
      id: 'relay/events/stream',
      title: 'GET /events/:identity opens a 200 event stream that sends ready, then a message event (no payload) when mail arrives',
      rules: ['ra.events.stream'],
      run: async (s, e) => {
        const [a, b] = [await s.identity(), await s.identity()];
        const stream = await s.relay.events(b);
        try {
          e.that(stream.status === 200, `GET /events: ${stream.status} ${stream.body ?? ''}`);
          if (stream.status !== 200) return;
          e.that(/text\/event-stream/.test(stream.headers['content-type'] ?? ''), `content-type ${stream.headers['content-type'] ?? '(none)'}`);
          const ready = await stream.next((x) => x.event === 'ready' || (isObject(x.data) && x.data.type === 'ready'), WAIT_MS).catch((err: Error) => e.stop(`no ready event: ${err.message}`));
          e.that(isObject(ready.data) && ready.data.type === 'ready' && ready.data.identity === b.identity && typeof ready.data.timestamp === 'string', `ready carries ${JSON.stringify(ready.data)}`);
          const m = mail(s, a, b);
          const r = await s.relay.send(m);
          e.that(r.status === 202, `the message: ${said(r)}`);
          const ev = await stream.next((x) => isObject(x.data) && x.data.type === 'message', WAIT_MS).catch((err: Error) => e.stop(`no message event after a 202: ${err.message}`));
          const d = ev.data as Record<string, unknown>;
          e.that(d.identity === b.identity && d.message_id === m.id && typeof d.timestamp === 'string', `the message event carries ${JSON.stringify(d)}`);
          e.that(!('payload' in d) && !('signature' in d), 'the message event carries the payload');
        } finally {
          await stream.close();
        }
      },
    }),
    relayCheck(t, {
      id: 'relay/events/reconnect',
      title: 'mail that arrives while no stream is open is found by the next pickup; a new stream does not replay it as an event',
      rules: ['ra.events.no-replay'],
      cells: [{ rule: 'ra.events.no-replay', facet: 'disconnect', value: 'message-event', operation: 'events' }],
      run: async (s, e) => {
        const [a, b] = [await s.identity(), await s.identity()];
        const first = await s.relay.events(b);
        await first.close();
        const m = mail(s, a, b);
        e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
        const second = await s.relay.events(b);
        try {
          e.that(second.status === 200, `the reconnect: ${second.status}`);
          // A replay would come first on the new stream: once the event of a later message has
          // arrived (or the wait's deadline has passed), whatever was replayed is in \`events\`.
          const later = mail(s, a, b);
          e.that((await s.relay.send(later)).status === 202, 'the later message was not accepted');
          await second.next((x) => isObject(x.data) && x.data.type === 'message' && x.data.message_id === later.id, WAIT_MS).catch(() => undefined);
          const replayed = second.events.filter((x) => isObject(x.data) && x.data.type === 'message' && x.data.message_id === m.id);
          e.that(replayed.length === 0, 'the reconnected stream replays the message event');
        } finally {
          await second.close();
        }
        const p = pickupOf(await s.relay.pickup(b));
        e.that(typeof p !== 'string' && p.messages.some((x) => x.id === m.id), 'the pickup after reconnecting lacks the message');
      },
    }),
    relayCheck(t, {
      id: 'relay/events/max-streams',
      title: 'beyond MAX_STREAMS_PER_IDENTITY open streams for one identity the relay answers 429; another identity still opens one',
      rules: ['ra.events.max-streams'],
      cells: ['at', 'past', 'other-scope'].map((value) => ({ rule: 'ra.events.max-streams' as const, facet: 'limit', value, operation: 'events' })),
      run: async (s, e) => {
        const [b, c] = await Promise.all([s.identity(), s.identity()]);
        const cap = t.declared.maxStreams ?? limits.max_streams_per_identity_default;
        const open: SseStream[] = [];
        try {
          for (let i = 0; i < cap; i++) {
            const st = await s.relay.events(b);
            open.push(st);
            if (st.status !== 200) return e.fail(`stream ${i + 1} of ${cap}: ${st.status} ${st.body ?? ''}`);
          }
          const over = await s.relay.events(b);
          open.push(over);
          e.that(
            over.status === 429,
            `stream ${cap + 1} (the cap is ${cap}${t.declared.maxStreams === undefined ? ", the project's default; declare the target's with --relay-max-streams" : ''}): ${over.status} ${over.body ?? ''}`,
          );
          // The cap is per identity: another identity's stream opens while this one is at it.
          const other = await s.relay.events(c);
          open.push(other);
          e.that(other.status === 200, `another identity's stream while the first is at its cap: ${other.status} ${other.body ?? ''}, not 200`);
        } finally {
          await Promise.all(open.map((st) => st.close()));
        }
      },
    }),
  ];
}
