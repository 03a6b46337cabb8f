// The event stream: `ready` on open, a payload-free `message` event when mail arrives, nothing
// replayed on reconnect (the pickup is where delivery happens), and the per-identity stream cap.
import type { Check } from '../../../run/model.ts';
import type { RelayIdentity, SseEvent, SseStream } from '../../../actors/relay/index.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck, type Expect } from '../check.ts';
import { isObject, pickupOf, said, type RelayTarget, type Session } from '../driver.ts';
import { mail } from './messaging.ts';
import { ack } from '../../../actors/relay/index.ts';

const WAIT_MS = 5000;
/** How late past its 25 s a keepalive may come (scheduling, a busy machine). */
const KEEPALIVE_SLACK_S = 5;

/** Opens `cap` streams for `who` into `open`; what went wrong, if one was refused. */
async function fillToCap(s: Session, who: RelayIdentity, cap: number, open: SseStream[]): Promise<string | undefined> {
  for (let i = 0; i < cap; i++) {
    const st = await s.relay.events(who);
    open.push(st);
    if (st.status !== 200) return `stream ${i + 1} of ${cap}: ${st.status} ${st.body ?? ''}`;
  }
  return undefined;
}

/**
 * Opens an event stream for each of `who`, runs `body` once every one answered 200 (a failure
 * naming the first that did not, otherwise), and closes them all whatever happened.
 */
export async function withStreams<const W extends readonly RelayIdentity[]>(s: Session, e: Expect, who: W, body: (streams: { [K in keyof W]: SseStream }) => Promise<unknown>): Promise<void> {
  const streams = (await Promise.all(who.map((x) => s.relay.events(x)))) as { [K in keyof W]: SseStream };
  try {
    const refused = streams.findIndex((st) => st.status !== 200);
    if (refused >= 0) return e.fail(`GET /events/${who[refused]!.identity} (stream ${refused + 1} of ${who.length}): ${streams[refused]!.status} ${streams[refused]!.body ?? ''}`);
    await body(streams);
  } finally {
    await Promise.all(streams.map((st) => st.close()));
  }
}

export function eventChecks(t: RelayTarget): Check[] {
  return [
    relayCheck(t, {
      id: 'relay/events/stream',
      title: 'GET /events/:identity opens a 200 event stream that sends ready, then a message event (no payload) when mail arrives',
      rules: ['ra.events.stream'],
      run: async (s, e) => {
        const [a, b] = [await s.identity(), await s.identity()];
        await withStreams(s, e, [b], async ([stream]) => {
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
        });
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
          const refused = await fillToCap(s, b, cap, open);
          if (refused) return e.fail(refused);
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
    everyStreamCheck(t),
    closeFreesCheck(t),
    keepaliveCheck(t),
    eventNamesCheck(t),
    eventPerMessageCheck(t),
  ];
}

/** Which mail fires an event is the project's: each message stored, once (issue 25's run of messages.ts). */
function eventPerMessageCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/event-per-message',
    title: 'the message event fires once per message stored: a message sent again while it waits, and an ack, fire none',
    rules: ['ra.events.message-only'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      await withStreams(s, e, [b], async ([st]) => {
        const announced = () => st.events.filter((x) => isObject(x.data) && x.data.type === 'message').map((x) => (x.data as Record<string, unknown>).message_id);
        const [first, last] = [mail(s, a, b, 'first'), mail(s, a, b, 'last')];
        const k = ack(s.profile, a, b.identity, 'm_acked_to_b');
        for (const [what, send] of [
          ['the message', () => s.relay.send(first)],
          ['the same message again', () => s.relay.send(first)],
          ['an ack', () => s.relay.ack(k)],
          ['a last message', () => s.relay.send(last)],
        ] as const) {
          const r = await send();
          if (!e.that(r.status === 202, `${what}: ${said(r)}, not 202`)) return;
        }
        // Frames come in order: once the last message's event is in, every earlier one is too.
        if (!(await st.until(() => announced().includes(last.id), WAIT_MS))) return e.fail(`the last message's event never came (events: ${JSON.stringify(announced())})`);
        e.that(JSON.stringify(announced()) === JSON.stringify([first.id, last.id]), `the stream announced ${JSON.stringify(announced())}, not ${JSON.stringify([first.id, last.id])}`);
      });
    },
  });
}

function everyStreamCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/events/every-stream',
    title: "mail is announced on each of the identity's open streams, and still on one after its sibling closes; never on another identity's",
    rules: ['ra.events.stream'],
    run: async (s, e) => {
      const [a, b, c] = await Promise.all([s.identity(), s.identity(), s.identity()]);
      await withStreams(s, e, [b, b, c], async ([first, second, other]) => {
        const heard = (st: SseStream, id: unknown) =>
          st
            .next((x) => isObject(x.data) && x.data.type === 'message' && x.data.message_id === id, WAIT_MS)
            .then(
              () => true,
              () => false,
            );
        const m = mail(s, a, b);
        e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
        const [one, two] = await Promise.all([heard(first, m.id), heard(second, m.id)]);
        e.that(one && two, `with two streams open, the message event came on ${one ? 'the first only' : two ? 'the second only' : 'neither'}`);
        await first.close();
        const later = mail(s, a, b);
        e.that((await s.relay.send(later)).status === 202, 'the later message was not accepted');
        e.that(await heard(second, later.id), 'after one of two streams closed, the other heard no message event for the next mail');
        const leaked = other.events.filter((x) => isObject(x.data) && x.data.type === 'message');
        e.that(leaked.length === 0, `another identity's stream announced ${JSON.stringify(leaked.map((x) => x.data))}`);
      });
    },
  });
}

function closeFreesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/events/close-frees',
    title: 'a closed stream no longer counts toward MAX_STREAMS_PER_IDENTITY: at the cap, closing one lets another open, and closing all lets the cap open again',
    rules: ['ra.events.max-streams'],
    cells: [{ rule: 'ra.events.max-streams', facet: 'close', value: 'place', operation: 'events' }],
    run: async (s, e) => {
      const b = await s.identity();
      const cap = t.declared.maxStreams ?? limits.max_streams_per_identity_default;
      const open: SseStream[] = [];
      // A relay notices a closed connection a moment later: a reopening is retried for a while.
      const reopen = async (what: string): Promise<boolean> => {
        let last: SseStream | undefined;
        for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await sleep(200)) {
          last = await s.relay.events(b);
          if (last.status === 200) return (void open.push(last), true);
        }
        e.fail(`${what}: ${last?.status} ${last?.body ?? ''} for ${WAIT_MS / 1000} s`);
        return false;
      };
      try {
        const refused = await fillToCap(s, b, cap, open);
        if (refused) return e.fail(refused);
        await open.shift()!.close();
        if (!(await reopen(`at the cap of ${cap}, one stream closed, then another opened`))) return;
        await Promise.all(open.splice(0).map((st) => st.close()));
        for (let i = 0; i < cap; i++) if (!(await reopen(`every stream closed, then stream ${i + 1} of ${cap} opened`))) return;
      } finally {
        await Promise.all(open.map((st) => st.close()));
      }
    },
  });
}

function keepaliveCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/events/keepalive',
    title: 'an idle stream receives a keepalive comment frame within 25 seconds (and a little slack) of opening',
    rules: ['ra.events.keepalive'],
    cells: [{ rule: 'ra.events.keepalive', facet: 'window', value: 'inside', operation: 'events' }],
    // It mostly waits, on a stream no other check touches.
    lane: 'relay-keepalive',
    timeoutMs: (limits.event_keepalive_seconds + KEEPALIVE_SLACK_S + 10) * 1000,
    run: async (s, e) => {
      const b = await s.identity();
      await withStreams(s, e, [b], async ([stream]) => {
        const opened = Date.now();
        const got = await stream.until(() => stream.comments.length > 0, (limits.event_keepalive_seconds + KEEPALIVE_SLACK_S) * 1000);
        e.that(
          got,
          `no comment frame in ${((Date.now() - opened) / 1000).toFixed(1)} s on an idle stream${stream.ended ? ' (the relay ended it)' : ''}; keepalive every ${limits.event_keepalive_seconds} s`,
        );
      });
    },
  });
}

function eventNamesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/event-names',
    title: 'each frame names its event as the deployed relay does: `event: ready`, then `event: message`',
    rules: ['ra.events.frame-names'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      await withStreams(s, e, [b], async ([stream]) => {
        const typed = (type: string) => (x: SseEvent) => isObject(x.data) && x.data.type === type;
        const ready = await stream.next(typed('ready'), WAIT_MS).catch((err: Error) => e.stop(`no ready frame: ${err.message}`));
        e.that(ready.event === 'ready', `the ready frame: ${JSON.stringify(ready.raw)}`);
        const m = mail(s, a, b);
        e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
        const ev = await stream.next(typed('message'), WAIT_MS).catch((err: Error) => e.stop(`no message frame: ${err.message}`));
        e.that(/^event: ?message$/m.test(ev.raw), `the message frame: ${JSON.stringify(ev.raw)}`);
      });
    },
  });
}
