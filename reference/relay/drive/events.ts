// The drive's event streams (GET /drive/:identity/events): `ready` on open, `drive.changed` after
// each durable commit to a node the stream's caller may read (ra.drive.events,
// ra.drive.changed-event), a keepalive comment every 25 s; when a member's last share ends, one
// `drive.revoked` and the stream closes (ra.drive.events-revocation, ra.drive.revoked-event).
// A share that expires ends too, with no request to mark the moment: each member's stream asks
// every EXPIRY_POLL_MS whether it still holds a live share, and closes when it does not (without
// `drive.revoked`, which names the share an unshare ended; the member's share carries its expiry).
// Advisory: nothing is replayed, a reader resumes from `changes` at its cursor. Both events go
// through the relay state's fan-out, so every process tells its own streams; each judges what
// its listeners may see against the shared database, which the commit reached first.
import { formatRfc3339 } from '../../../protocol/common/time.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { streamSlot } from '../events.ts';
import type { RelayState } from '../state.ts';

const encoder = new TextEncoder();
const KEEPALIVE_MS = limits.event_keepalive_seconds * 1000;
/** How often a member's stream looks for its last share's expiry (a share's `expires` is in whole seconds). */
const EXPIRY_POLL_MS = 1000;

/** Who holds a stream: the owner, a member by identity, or a link by its share id. */
export interface Listener {
  who: string;
  /** The groups whose rosters the listener presented (a group's revocation reaches it too). */
  groups: readonly string[];
  /** Whether this listener may see a change of `node` now. */
  sees: (node: string) => Promise<boolean>;
  /** Whether it still holds any live share (a member of a group may hold its own). */
  holds: () => Promise<boolean>;
}

interface Stream extends Listener {
  send(chunk: string): void;
  close(): void;
  /** Runs `step` after the steps queued before it (each judges against the database, so answers may come back out of order). */
  after(step: () => Promise<void>): void;
}

export class DriveEvents {
  readonly #streams = new Map<string, Set<Stream>>();

  constructor(
    readonly state: RelayState,
    readonly maxStreams: number,
    readonly now: () => number,
  ) {
    state.subscribe((e) => {
      if (e.kind === 'drive.changed') this.#changed(e.drive, e.change, e.unfiltered);
      else if (e.kind === 'drive.revoked') this.#revoked(e.drive, e.who, e.share);
    });
  }

  /** A new stream's body, or undefined when this listener has its maximum open on the drive. */
  async open(drive: string, listener: Listener, signal?: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
    // Counted across the relay's processes, as the mail streams are (../events.ts).
    const slot = await streamSlot(this.state, `drive-streams:${drive}:${listener.who}`, this.maxStreams);
    if (!slot) return undefined;
    const set = this.#streams.get(drive) ?? new Set<Stream>();
    this.#streams.set(drive, set);
    let stream: Stream | undefined;
    let timer: ReturnType<typeof setInterval> | undefined;
    let poll: ReturnType<typeof setInterval> | undefined;
    let ended = false;
    const end = () => {
      if (timer) clearInterval(timer);
      if (poll) clearInterval(poll);
      if (stream) set.delete(stream);
      if (set.size === 0) this.#streams.delete(drive);
      if (!ended) slot.release();
      ended = true;
    };
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        let closed = false;
        let queue = Promise.resolve();
        stream = {
          ...listener,
          after: (step) => {
            queue = queue.then(step).catch(() => stream?.close());
          },
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
        stream.send(frame('ready', { type: 'ready', identity: drive, timestamp: formatRfc3339(this.now()) }));
        timer = setInterval(() => {
          stream?.send(': keepalive\n\n');
          slot.renew();
        }, KEEPALIVE_MS);
        timer.unref?.();
        // The owner holds its drive for good; a link's stream is the link's, not a member's shares.
        if (listener.who !== drive && !listener.who.startsWith('link:')) {
          poll = setInterval(() => stream?.after(async () => (closed || (await stream!.holds()) ? undefined : stream!.close())), EXPIRY_POLL_MS);
          poll.unref?.();
        }
        signal?.addEventListener('abort', () => stream?.close(), { once: true });
      },
      cancel: () => end(),
    });
  }

  /** A durable commit: `drive.changed` to every stream whose listener may see the node. */
  changed(drive: string, change: Record<string, unknown> & { node: string }, unfiltered = false): void {
    this.state.publish({ kind: 'drive.changed', drive, change, unfiltered });
  }

  #changed(drive: string, change: Record<string, unknown> & { node: string }, unfiltered: boolean): void {
    const set = this.#streams.get(drive);
    if (!set) return;
    const f = frame('drive.changed', { type: 'drive.changed', identity: drive, timestamp: formatRfc3339(this.now()), drive: { drive, ...change } });
    for (const s of set) s.after(async () => (unfiltered || (await s.sees(change.node)) ? s.send(f) : undefined));
  }

  /** `who` (a member or a group) lost its last share: `drive.revoked`, then the streams left with nothing close. */
  revoked(drive: string, who: string, share: string): void {
    this.state.publish({ kind: 'drive.revoked', drive, who, share });
  }

  #revoked(drive: string, who: string, share: string): void {
    const set = this.#streams.get(drive);
    if (!set) return;
    const f = frame('drive.revoked', { type: 'drive.revoked', identity: drive, timestamp: formatRfc3339(this.now()), drive: { drive, share } });
    for (const s of [...set]) {
      if (s.who !== who && !s.groups.includes(who)) continue;
      s.after(async () => {
        if (await s.holds()) return;
        s.send(f);
        s.close();
      });
    }
  }

  closeAll(): void {
    for (const set of this.#streams.values()) for (const s of [...set]) s.close();
  }
}

function frame(event: string, data: Record<string, unknown>): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
