// What the harness's own side did wrong while checks ran, so a failure it caused is never
// reported as the target failing a rule (docs/harness.md, "Stable verdicts").
//
// Two witnesses, both on the harness's side of the wire, where the harness knows for sure:
// - its own process: a timer that should tick every 100 ms; a tick later than STALL_MS means the
//   harness (with the test authority it runs in process, its DNS and HTTPS) could not run, so a
//   target waiting on it saw silence that was not the target's doing;
// - the test authority: every answer a target gave up on before the authority finished it (the
//   target closed the connection first, or dropped the TLS handshake), other than the answers a
//   check held back on purpose (a fault it injected).
// The runner asks, for a failed check, what happened during its run; when anything did, the check
// runs again, and a check whose every attempt met an environment fault is an error naming it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ErrorCause } from './model.ts';

export interface EnvironmentFault {
  /** performance.now() when it was seen. */
  at: number;
  /** How long it lasted, ms (a stall's length; 0 for an instant event). */
  durationMs: number;
  cause: ErrorCause;
  detail: string;
  /** The check attempt that found it in its own run (it spoils only that attempt); none: the whole process's. */
  owner?: object;
}

/** A stall longer than this is one the check's helpers could not hide: the reference resolvers wait 5 s, the authority's DNS clients 1 s. */
export const STALL_MS = 1000;
const TICK_MS = 100;
const KEPT = 2000;

const faults: EnvironmentFault[] = [];
let watchers = 0;
let timer: NodeJS.Timeout | undefined;

/** Records a fault the harness's side caused (the authority calls this for an answer given up on). */
export function reportEnvironmentFault(cause: ErrorCause, detail: string, durationMs = 0): void {
  faults.push({ at: performance.now(), durationMs, cause, detail });
  if (faults.length > KEPT) faults.splice(0, faults.length - KEPT);
}

/** Which check attempt runs in this async context (the runner's token for it). */
const owners = new AsyncLocalStorage<object>();

/** Runs `fn` as the attempt `owner`: faults it reports with reportOwnFault spoil it alone. */
export function asOwner<T>(owner: object, fn: () => T): T {
  return owners.run(owner, fn);
}

/**
 * Records a fault a check found in its own run (it outlived a declared life, its set-up took too
 * long): unlike a stall, it says nothing of the checks running beside it.
 */
export function reportOwnFault(cause: ErrorCause, detail: string): void {
  reportEnvironmentFault(cause, detail);
  const owner = owners.getStore();
  if (owner) faults[faults.length - 1]!.owner = owner;
}

/** Starts watching the harness's own process for stalls; the returned function stops it (counted, so nested runs share one timer). */
export function watchEnvironment(): () => void {
  if (watchers++ === 0) {
    let last = performance.now();
    timer = setInterval(() => {
      const now = performance.now();
      const late = now - last - TICK_MS;
      last = now;
      if (late >= STALL_MS)
        reportEnvironmentFault('harness-stalled', `the harness could not run for ${Math.round(late)} ms (CPU starved or blocked): its test authority and clients answered nobody meanwhile`, late);
    }, TICK_MS);
    timer.unref();
  }
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--watchers === 0) clearInterval(timer);
  };
}

/**
 * The faults that overlap [start, end] (performance.now() times). A stall is seen when it ends,
 * so one that began inside the window and was seen shortly after still counts: the window is
 * widened by one tick. A fault a check owns counts only for that check (`owner`).
 */
export function faultsBetween(start: number, end: number, owner?: object): EnvironmentFault[] {
  return faults.filter((f) => f.at - f.durationMs <= end + TICK_MS && f.at >= start && (f.owner === undefined || f.owner === owner));
}
