// The event streams (GET /events/:identity): `ready` on open, a payload-free `message` event when
// mail arrives for the identity, a keepalive comment every 25 s, at most MAX_STREAMS_PER_IDENTITY
// open streams per identity (429 beyond), counted across the relay's processes (state slots that
// a live stream renews with its keepalive, so a dead process's free themselves). Nothing is replayed on reconnect: the pickup is where
// delivery happens (ra.events.no-replay). Mail accepted by any process of the relay is announced
// through its state's fan-out, so a stream held by another process hears of it too.
import { randomBytes } from 'node:crypto';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import type { RelayState } from './state.ts';

const encoder = new TextEncoder();
const KEEPALIVE_MS = limits.event_keepalive_seconds * 1000;

/** A stream's slot lives three keepalives unless renewed. */
const SLOT_TTL_MS = 3 * KEEPALIVE_MS;

export interface StreamSlot {
  renew(): void;
  release(): void;
}

/** One of `max` stream slots under `key`, shared by the relay's processes; undefined when all are taken. */
export async function streamSlot(state: RelayState, key: string, max: number): Promise<StreamSlot | undefined> {
  const id = randomBytes(9).toString('base64url');
  if (!(await state.claimSlot(key, id, max, SLOT_TTL_MS))) return undefined;
  return {
    renew: () => void state.renewSlot(key, id, SLOT_TTL_MS).catch(() => undefined),
    release: () => void state.releaseSlot(key, id).catch(() => undefined),
  };
}

interface Stream {
  send(chunk: string): void;
  close(): void;
}

export class EventHub {
  readonly #streams = new Map<string, Set<Stream>>();

  constructor(
    readonly state: RelayState,
    readonly maxStreams: number,
    readonly now: () => number,
  ) {
    state.subscribe((e) => {
      if (e.kind === 'message') this.#deliver(e.identity, e.id);
    });
  }

  /** A new stream's body, or undefined when the identity has its maximum open. */
  async open(identity: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
    const slot = await streamSlot(this.state, `streams:${identity}`, this.maxStreams);
    if (!slot) return undefined;
    let stream: Stream | undefined;
    let timer: ReturnType<typeof setInterval> | undefined;
    const set = this.#streams.get(identity) ?? new Set<Stream>();
    this.#streams.set(identity, set);
    let ended = false;
    const end = () => {
      if (timer) clearInterval(timer);
      if (stream) set.delete(stream);
      if (set.size === 0) this.#streams.delete(identity);
      if (!ended) slot.release();
      ended = true;
    };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        let closed = false;
        stream = {
          send: (chunk) => {
            if (!closed) controller.enqueue(encoder.encode(chunk));
          },
          close: () => {
            if (closed) return;
            closed = true;
            end();
            controller.close();
          },
        };
        set.add(stream);
        stream.send(frame('ready', { type: 'ready', identity, timestamp: formatRfc3339(this.now()) }));
        timer = setInterval(() => {
          stream?.send(': keepalive\n\n');
          slot.renew();
        }, KEEPALIVE_MS);
        timer.unref?.();
        signal?.addEventListener('abort', () => stream?.close(), { once: true });
      },
      cancel: () => end(),
    });
    return body;
  }

  /** Mail arrived for `identity`: one `message` event on each of its open streams, on every process. */
  message(identity: string, messageId: string): void {
    this.state.publish({ kind: 'message', identity, id: messageId });
  }

  #deliver(identity: string, messageId: string): void {
    const set = this.#streams.get(identity);
    if (!set) return;
    const f = frame('message', { type: 'message', identity, message_id: messageId, timestamp: formatRfc3339(this.now()) });
    for (const s of set) s.send(f);
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const set of this.#streams.values()) for (const s of [...set]) s.close();
  }
}

function frame(event: string, data: Record<string, unknown>): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
