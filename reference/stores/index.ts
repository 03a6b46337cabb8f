// Chooses the nonce store from `--nonce-store`: sqlite (default, shared through the data dir),
// memory (one process), or redis://HOST:PORT (shared through Redis).
import type { NonceStore } from '../../protocol/signin/nonce.ts';
import { MemoryNonceStore } from './memory.ts';
import { RedisNonceStore } from './redis.ts';
import { SqliteNonceStore, type Db } from './sqlite.ts';

export interface OpenedNonceStore {
  store: NonceStore;
  kind: 'sqlite' | 'memory' | 'redis';
  close(): Promise<void>;
}

export class NonceStoreSpecError extends Error {}

export function parseNonceStoreSpec(spec: string): 'sqlite' | 'memory' | URL {
  if (spec === 'sqlite' || spec === 'memory') return spec;
  if (/^rediss?:\/\//.test(spec)) {
    try {
      return new URL(spec);
    } catch {
      // fall through
    }
  }
  throw new NonceStoreSpecError(`--nonce-store must be sqlite, memory or redis://HOST:PORT (got ${JSON.stringify(spec)})`);
}

export function openNonceStore(spec: string, options: { db?: Db; prefix: string; now?: () => number; onError?: (e: Error) => void }): OpenedNonceStore {
  const parsed = parseNonceStoreSpec(spec);
  if (parsed === 'memory') return { store: new MemoryNonceStore(options.now), kind: 'memory', close: async () => undefined };
  if (parsed === 'sqlite') {
    if (!options.db) throw new NonceStoreSpecError('--nonce-store sqlite needs the SQLite database of --data-dir');
    return { store: new SqliteNonceStore(options.db, options.now), kind: 'sqlite', close: async () => undefined };
  }
  const redis = new RedisNonceStore({ url: parsed.href, prefix: options.prefix, ...(options.now ? { now: options.now } : {}), ...(options.onError ? { onError: options.onError } : {}) });
  return { store: redis, kind: 'redis', close: () => redis.close() };
}
