// Fixed-window buckets: per sender and per relay for messages and acks, per IP for availability
// lookups (charged several units a call against the IP's bucket). Charged before any signature is
// checked (ra.relay.rate-before-signature); a spent bucket answers 429 with its scope, window,
// limit and reset time (ra.messages.rate-limit-body).
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { HttpError } from '../shared/errors.ts';

interface Bucket {
  used: number;
  resetAt: number;
}

export type Scope = 'sender' | 'global' | 'ip';

export class RateLimits {
  readonly #buckets = new Map<string, Bucket>();
  #lastSweep = 0;

  constructor(
    readonly limits: Readonly<Record<Scope, number>>,
    readonly windowSeconds: number,
    readonly now: () => number,
  ) {}

  /** Charges `units` to each named bucket, or throws the 429 of the first one spent (charging nothing). */
  charge(keys: ReadonlyArray<readonly [Scope, string]>, units = 1): void {
    const now = this.now();
    this.#sweep(now);
    const buckets = keys.map(([scope, key]) => {
      const id = `${scope}|${key}`;
      let b = this.#buckets.get(id);
      if (!b || b.resetAt <= now) this.#buckets.set(id, (b = { used: 0, resetAt: now + this.windowSeconds * 1000 }));
      return { scope, b };
    });
    for (const { scope, b } of buckets) {
      if (b.used + units > this.limits[scope]) {
        throw new HttpError(429, 'rate_limit_exceeded', `the ${scope} bucket of ${this.limits[scope]} per ${this.windowSeconds} s is spent`, 'ra.messages.rate-limit-body', {
          'retry-after': String(Math.ceil((b.resetAt - now) / 1000)),
        }).withBody({
          scope,
          window: this.windowSeconds,
          limit: this.limits[scope],
          reset_at: formatRfc3339(b.resetAt),
        });
      }
    }
    for (const { b } of buckets) b.used += units;
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [k, b] of this.#buckets) if (b.resetAt <= now) this.#buckets.delete(k);
  }
}
