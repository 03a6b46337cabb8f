// Per-client-IP fixed windows of one minute on the two routes a visitor can use to make the bridge
// work for them (spec/limits: bridge_identify_per_ip_per_minute, bridge_authorize_per_ip_per_minute;
// ob.errors.rate-limited): POST /t/{id}/identify resolves an ID over DNS and HTTPS, /authorize
// stores a transaction and may fetch a URL client's document. Beyond the limit: 429 with
// Retry-After, counted per route in /metrics.

const WINDOW_MS = 60_000;

export class IpWindows {
  readonly #used = new Map<string, { n: number; resetAt: number }>();
  #lastSweep = 0;

  constructor(readonly now: () => number) {}

  /** Charges one request of `ip` on `route`: undefined when allowed, else the seconds until the window resets. */
  take(route: string, ip: string, perMinute: number): number | undefined {
    const now = this.now();
    if (now - this.#lastSweep > WINDOW_MS) {
      this.#lastSweep = now;
      for (const [k, w] of this.#used) if (w.resetAt <= now) this.#used.delete(k);
    }
    const key = `${route}\u0000${ip}`;
    let w = this.#used.get(key);
    if (!w || w.resetAt <= now) this.#used.set(key, (w = { n: 0, resetAt: now + WINDOW_MS }));
    if (w.n >= perMinute) return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
    w.n++;
    return undefined;
  }
}
