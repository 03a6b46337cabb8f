// A small SQL interface over the embedded and the shared engine, for stores that must run on
// both (the bridge: SQLite under --data-dir, or PostgreSQL for several instances). Statements
// use `?` placeholders and the SQL both engines accept; every call is async. The SQLite
// executor serializes its calls, so a transaction's statements never interleave with another
// request's on the one connection.
import type { Db } from './sqlite.ts';

export interface Sql {
  readonly dialect: 'sqlite' | 'postgres';
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement; the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** Several statements without parameters (schema). */
  exec(sql: string): Promise<void>;
  /** `fn` inside one database transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** better-sqlite3 behind the async interface, one call at a time. */
export class SqliteSql implements Sql {
  readonly dialect = 'sqlite' as const;
  readonly #db: Db;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #owns: boolean;

  constructor(db: Db, owns = false) {
    this.#db = db;
    this.#owns = owns;
  }

  #serial<T>(fn: () => T | Promise<T>): Promise<T> {
    const next = this.#queue.then(fn, fn);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #direct(): Sql {
    const db = this.#db;
    const self: Sql = {
      dialect: 'sqlite',
      get: async <T>(sql: string, params: readonly unknown[] = []) => db.prepare(sql).get(...params) as T | undefined,
      all: async <T>(sql: string, params: readonly unknown[] = []) => db.prepare(sql).all(...params) as T[],
      run: async (sql, params = []) => db.prepare(sql).run(...params).changes,
      exec: async (sql) => void db.exec(sql),
      transaction: (fn) => fn(self),
      close: async () => undefined,
    };
    return self;
  }

  get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return this.#serial(() => this.#db.prepare(sql).get(...params) as T | undefined);
  }
  all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.#serial(() => this.#db.prepare(sql).all(...params) as T[]);
  }
  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.#serial(() => this.#db.prepare(sql).run(...params).changes);
  }
  exec(sql: string): Promise<void> {
    return this.#serial(() => void this.#db.exec(sql));
  }
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      this.#db.exec('BEGIN IMMEDIATE');
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
  async close(): Promise<void> {
    await this.#queue;
    if (this.#owns) this.#db.close();
  }
}
