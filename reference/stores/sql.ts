// A small SQL interface over the embedded and the shared engine, for stores that must run on
// both (the bridge and the RP: SQLite under --data-dir, or PostgreSQL for several instances).
// Statements use `?` placeholders and the SQL both engines accept; every call is async. The
// SQLite executor serializes its calls, so a transaction's statements never interleave with
// another request's on the one connection, and keeps each statement prepared once.
import type Database from 'better-sqlite3';
import { batchFor, beginImmediate, runBatch, type BatchedTx } from './batch.ts';
import type { Db } from './sqlite.ts';

export interface BatchOptions {
  durable?: boolean;
  lock?: string;
}

export interface Sql {
  readonly dialect: 'sqlite' | 'postgres';
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement; the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Runs one statement that stands alone (a compare-and-set, an insert-unless-present) and may
   * share a commit with the other such writes of this event-loop turn: on SQLite the group commit
   * of ./batch.ts (one WAL commit per turn, never waiting on another process's lock in the event
   * loop), on PostgreSQL its own autocommit statement. The number of rows it changed.
   */
  write(sql: string, params?: readonly unknown[]): Promise<number>;
  /** Several statements without parameters (schema). */
  exec(sql: string): Promise<void>;
  /** `fn` inside one database transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * `fn` as a transaction of its own that shares one commit (one log sync) with the other batched
   * transactions of this event-loop turn, each a savepoint of it. It resolves once committed;
   * `durable: false` (rows a later commit's sync covers) lets that commit skip the sync. `lock`:
   * a key held from before `fn` until the commit (see lock()); a batch takes its keys in order,
   * so batches of several processes never deadlock on them.
   *
   * `fn` may run more than once, so it must be idempotent: nothing it does outside `tx` (memory,
   * events, messages sent) may depend on a run that was rolled back. On PostgreSQL the whole batch
   * runs again when the server aborts it for a deadlock or a serialization failure (up to 5 runs),
   * and once more with savepoints when another function of the batch throws: up to 6 runs in all.
   * Only the last run's writes are committed, and `fn`'s promise settles after it. On SQLite `fn`
   * runs once.
   */
  batch<T>(fn: (tx: Sql) => Promise<T>, options?: BatchOptions): Promise<T>;
  /**
   * Inside a transaction: waits for `key`'s lock, held until the transaction ends (PostgreSQL's
   * advisory transaction lock; on SQLite a no-op, its transactions already hold the write lock).
   */
  lock(key: string): Promise<void>;
  close(): Promise<void>;
}

/** Prepared statements kept per connection; past this many distinct texts the cache starts over. */
const STATEMENT_CACHE_MAX = 512;

/** better-sqlite3 behind the async interface, one call at a time. */
export class SqliteSql implements Sql {
  readonly dialect = 'sqlite' as const;
  readonly #db: Db;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #owns: boolean;
  readonly #statements = new Map<string, Database.Statement>();

  constructor(db: Db, owns = false) {
    this.#db = db;
    this.#owns = owns;
  }

  /** The statement for `sql`, compiled once (compiling costs more than running a short one). */
  #stmt(sql: string): Database.Statement {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      if (this.#statements.size >= STATEMENT_CACHE_MAX) this.#statements.clear();
      stmt = this.#db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Calls queued or running (a transaction holds the queue across its awaits). */
  #pending = 0;

  #serial<T>(fn: () => T | Promise<T>): Promise<T> {
    this.#pending++;
    const next = this.#queue.then(fn, fn);
    this.#queue = next.then(
      () => void this.#pending--,
      () => void this.#pending--,
    );
    return next;
  }

  /** One statement: at once when nothing is queued (the same order, without a trip through the queue). */
  #one<T>(fn: () => T): Promise<T> {
    if (this.#pending > 0) return this.#serial(fn);
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  #direct(): Sql {
    const db = this.#db;
    const run = async (sql: string, params: readonly unknown[] = []) => this.#stmt(sql).run(...params).changes;
    const self: Sql = {
      dialect: 'sqlite',
      get: async <T>(sql: string, params: readonly unknown[] = []) => this.#stmt(sql).get(...params) as T | undefined,
      all: async <T>(sql: string, params: readonly unknown[] = []) => this.#stmt(sql).all(...params) as T[],
      run,
      // Inside a transaction a write is part of it, not of a later group commit.
      write: run,
      exec: async (sql) => void db.exec(sql),
      // Nested: part of the transaction this executor runs in.
      transaction: (fn) => fn(self),
      batch: (fn) => fn(self),
      lock: async () => undefined,
      close: async () => undefined,
    };
    return self;
  }

  get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return this.#one(() => this.#stmt(sql).get(...params) as T | undefined);
  }
  all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.#one(() => this.#stmt(sql).all(...params) as T[]);
  }
  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.#one(() => this.#stmt(sql).run(...params).changes);
  }
  write(sql: string, params: readonly unknown[] = []): Promise<number> {
    const stmt = this.#stmt(sql);
    return batchFor(this.#db).run(() => stmt.run(...params).changes);
  }
  exec(sql: string): Promise<void> {
    return this.#one(() => void this.#db.exec(sql));
  }
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      await beginImmediate(this.#db);
      try {
        const out = await fn(this.#direct());
        this.#db.exec('COMMIT');
        return out;
      } catch (error) {
        this.#db.exec('ROLLBACK');
        throw error;
      }
    });
  }
  readonly #batched: BatchedTx[] = [];
  /** One group-committed SQLite transaction holds the write lock: `lock` needs nothing more. */
  batch<T>(fn: (tx: Sql) => Promise<T>, options: BatchOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#batched.push({ fn, durable: options.durable ?? true, resolve: resolve as (v: unknown) => void, reject });
      if (this.#batched.length === 1) setImmediate(() => void this.#serial(() => runBatch(this.#db, this.#direct(), this.#batched.splice(0))));
    });
  }
  async lock(): Promise<void> {
    // Outside a transaction there is nothing to hold; inside one the connection holds the write lock.
  }
  async close(): Promise<void> {
    await this.#queue;
    if (this.#owns) this.#db.close();
  }
}
