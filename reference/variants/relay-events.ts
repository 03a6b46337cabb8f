// The inbox event stream broken on the wire (issue 25's whole-area run of reference/relay/events.ts):
// each edits the stream's frames as they pass, or the count of open streams, the way a relay that
// forgot one part of the stream's life would.
import { limits } from '../../schemas/ts/limits.ts';
import { jsonAnswer, type Wire, type WireVariant } from './kit.ts';

const streamOf = (req: Request): string | undefined => {
  const m = req.method === 'GET' ? /^\/events\/([^/]+)$/.exec(new URL(req.url).pathname) : null;
  return m ? decodeURIComponent(m[1]!) : undefined;
};

/**
 * An open inbox stream's frames passed through `edit` (a frame without its blank line; undefined
 * drops it); `closed` runs when the client ends the stream.
 */
function frames(edit: (identity: string, frame: string) => string | undefined, closed?: (identity: string) => void): Wire {
  return async (req, next) => {
    const res = await next(req);
    const identity = streamOf(req);
    if (identity === undefined || res.status !== 200 || !res.body) return res;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const encoder = new TextEncoder();
    let buffer = '';
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        buffer += value;
        let i;
        while ((i = buffer.indexOf('\n\n')) !== -1) {
          const out = edit(identity, buffer.slice(0, i));
          buffer = buffer.slice(i + 2);
          if (out !== undefined) controller.enqueue(encoder.encode(`${out}\n\n`));
        }
      },
      cancel: async () => {
        closed?.(identity);
        await reader.cancel();
      },
    });
    return new Response(body, { status: 200, headers: res.headers });
  };
}

/** Identities one of whose streams has closed: their other streams hear no more mail. */
const silenced = new Set<string>();
/** Streams each identity has ever opened here: a closed one keeps its place. */
const opened = new Map<string, number>();

export const RELAY_EVENTS_WIRE: Record<string, WireVariant> = {
  'stream-place-kept': {
    // Issue 25: "After each lifecycle event, every use of what it ended."
    rule: 'ra.events.max-streams',
    what: "a closed stream keeps its place in the identity's count: once MAX_STREAMS_PER_IDENTITY have opened, every later one is 429",
    wire: async (req, next) => {
      const identity = streamOf(req);
      if (identity === undefined) return next(req);
      if ((opened.get(identity) ?? 0) >= limits.max_streams_per_identity_default) return jsonAnswer({ error: 'too_many_streams', detail: 'every place is taken (broken variant)' }, 429);
      const res = await next(req);
      if (res.status === 200) opened.set(identity, (opened.get(identity) ?? 0) + 1);
      return res;
    },
  },
  'sibling-close-silences': {
    // Issue 25: "After each lifecycle event, every use of what it ended" (and nothing it did not end).
    rule: 'ra.events.stream',
    what: "closing one of an identity's streams stops the message events of its others",
    wire: frames(
      (identity, frame) => (silenced.has(identity) && /"type"\s*:\s*"message"/.test(frame) ? undefined : frame),
      (identity) => silenced.add(identity),
    ),
  },
  'no-keepalive': {
    // Issue 25: "Each window just inside and just outside."
    rule: 'ra.events.keepalive',
    what: 'the stream sends no keepalive comment',
    wire: frames((_identity, frame) => (frame.startsWith(':') ? undefined : frame)),
  },
  'events-unnamed': {
    rule: 'ra.events.frame-names',
    what: 'frames carry no event: line (ready then dispatches as a message event)',
    wire: frames((_identity, frame) =>
      frame
        .split('\n')
        .filter((line) => !line.startsWith('event:'))
        .join('\n'),
    ),
  },
  'event-per-arrival': {
    rule: 'ra.events.message-only',
    what: 'each message event is sent twice, as a relay that announces every arrival (the message and its resend) would',
    wire: frames((_identity, frame) => (/"type"\s*:\s*"message"/.test(frame) ? `${frame}\n\n${frame}` : frame)),
  },
};
