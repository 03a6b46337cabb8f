// Fixed-window buckets: per sender and per relay for messages and acks, per IP for availability
// lookups (charged several units a call against the IP's bucket). Charged before any signature is
// checked (ra.relay.rate-before-signature); a spent bucket answers 429 with its scope, window,
// limit and reset time (ra.messages.rate-limit-body). The counters live in the relay's state
// (state.ts), so the processes of one relay share each bucket.
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { HttpError } from '../shared/errors.ts';
import type { RelayState, Spent } from './state.ts';

export type Scope = 'sender' | 'global' | 'ip';

export class RateLimits {
  constructor(
    readonly state: RelayState,
    readonly limits: Readonly<Record<Scope, number>>,
    readonly windowSeconds: number,
    readonly now: () => number,
  ) {}

  /**
   * Charges `units` to each named bucket, or throws the 429 of the first one spent (charging
   * nothing). In memory it answers synchronously (undefined), so the envelope path awaits nothing.
   */
  charge(keys: ReadonlyArray<readonly [Scope, string]>, units = 1): Promise<void> | undefined {
    const spent = this.state.charge(
      keys.map(([scope, key]) => ({ id: `${scope}|${key}`, limit: this.limits[scope] })),
      units,
      this.windowSeconds * 1000,
    );
    if (spent instanceof Promise) return spent.then((s) => this.#refuse(keys, s));
    this.#refuse(keys, spent);
    return undefined;
  }

  #refuse(keys: ReadonlyArray<readonly [Scope, string]>, spent: Spent | undefined): void {
    if (!spent) return;
    const scope = keys[spent.spent]![0];
    throw new HttpError(429, 'rate_limit_exceeded', `the ${scope} bucket of ${this.limits[scope]} per ${this.windowSeconds} s is spent`, 'ra.messages.rate-limit-body', {
      'retry-after': String(Math.max(0, Math.ceil((spent.resetAt - this.now()) / 1000))),
    }).withBody({
      scope,
      window: this.windowSeconds,
      limit: this.limits[scope],
      reset_at: formatRfc3339(spent.resetAt),
    });
  }
}
