// The spent-nonce cache (verification rule 5). Implementations must be atomic and shared between
// the processes of one RP; `claim` throws when the cache cannot be reached, and the verifier then
// fails closed (ns.nonce.fail-closed).
export interface NonceStore {
  /** Claims `key` until `expiresAt` (ms). True when it was unspent, false when already spent. */
  claim(key: string, expiresAt: number): boolean | Promise<boolean>;
  /** Gives back a claim whose verification failed later (resolution or signature). */
  release(key: string): Promise<void>;
}

/** ns.nonce.cache-key: audience, identity, request_id and nonce joined with a vertical bar. */
export function nonceKey(audience: string, identity: string, requestId: string, nonce: string): string {
  return `${audience}|${identity}|${requestId}|${nonce}`;
}

/** In-process store for tests, benchmarks and single-process verifiers. */
export class MemoryNonceStore implements NonceStore {
  readonly #spent = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Synchronous: nothing to wait for in process, and the verifier's hot path skips a turn. */
  claim(key: string, expiresAt: number): boolean {
    const now = this.#now();
    const until = this.#spent.get(key);
    if (until !== undefined && until >= now) return false;
    this.#spent.set(key, expiresAt);
    if (this.#spent.size > 100_000) this.#sweep(now);
    return true;
  }

  async release(key: string): Promise<void> {
    this.#spent.delete(key);
  }

  #sweep(now: number): void {
    for (const [key, until] of this.#spent) if (until < now) this.#spent.delete(key);
  }
}
