// Spent nonces in Redis, the scale-out option (ns.nonce.shared-atomic): `SET key 1 NX PX ttl`
// is one atomic command shared by every process of the RP. No offline queue and a short connect
// timeout: when Redis is unreachable `claim` throws at once and the verifier fails closed
// (ns.nonce.fail-closed, 503 nonce_cache_unavailable).
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { NonceStore } from '../../protocol/signin/nonce.ts';

/** ioredis's client, loaded by the first store opened on Redis (here and the relay's shared state): an embedded start never pays its load. */
let loaded: typeof Redis | undefined;
export const redisClient = (): typeof Redis => (loaded ??= (createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }).Redis);

export interface RedisNonceStoreOptions {
  /** `redis://HOST:PORT[/DB]`. */
  url: string;
  /** Prefix for every key (the service name keeps two RPs on one Redis apart). */
  prefix: string;
  now?: () => number;
  connectTimeoutMs?: number;
  /** Called with connection errors (they are expected while Redis is down). */
  onError?: (error: Error) => void;
}

export class RedisNonceStore implements NonceStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #now: () => number;

  constructor(options: RedisNonceStoreOptions) {
    const timeout = options.connectTimeoutMs ?? 1000;
    this.#redis = new (redisClient())(options.url, {
      enableOfflineQueue: false,
      connectTimeout: timeout,
      commandTimeout: timeout,
      maxRetriesPerRequest: 0,
      // Keep trying to come back, never more than a second apart.
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
      lazyConnect: false,
    });
    this.#redis.on('error', (error: Error) => options.onError?.(error));
    this.#prefix = `${options.prefix}:nonce:`;
    this.#now = options.now ?? Date.now;
  }

  /** Resolves once connected (or rejects after the connect timeout); for startup checks. */
  async ready(timeoutMs = 2000): Promise<void> {
    if (this.#redis.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`redis not ready after ${timeoutMs} ms`));
      }, timeoutMs);
      const onReady = () => {
        cleanup();
        resolve();
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.#redis.off('ready', onReady);
      };
      this.#redis.on('ready', onReady);
    });
  }

  async claim(key: string, expiresAt: number): Promise<boolean> {
    const ttl = Math.max(1, Math.ceil(expiresAt - this.#now()));
    const answer = await this.#redis.set(this.#prefix + key, '1', 'PX', ttl, 'NX');
    return answer === 'OK';
  }

  async release(key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key);
  }

  async close(): Promise<void> {
    this.#redis.disconnect(false);
  }
}
