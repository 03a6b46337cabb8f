// PostgreSQL for servers that run as several instances (the bridge): a pool behind the async
// Sql interface (./sql.ts), and a spent-nonce store whose claim is one atomic statement
// (ns.nonce.shared-atomic), shared by every instance on the database.
import { createRequire } from 'node:module';
import type pg from 'pg';
import type { NonceStore } from '../../protocol/signin/nonce.ts';
import type { BatchedTx } from './batch.ts';
import type { BatchOptions, Sql } from './sql.ts';

/** pg, loaded by the first store opened on PostgreSQL: an embedded start never pays its load. */
let loaded: typeof pg | undefined;
const pgLib = (): typeof pg => (loaded ??= createRequire(import.meta.url)('pg') as typeof pg);

/** A PostgreSQL connection URL (the --database of the RP, the bridge and the relay). */
export const POSTGRES_URL = /^postgres(ql)?:\/\/\S+$/;

/** `?` placeholders to PostgreSQL's `$1, $2, ...` (no statement here has a literal `?`). */
const positional = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

// BIGINT (int8) columns hold millisecond times: as numbers, not strings.
const types = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? (v: string) => Number(v) : pgLib().types.getTypeParser(oid, format as 'text')) };

export class PostgresSql implements Sql {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;

  constructor(url: string) {
    this.pool = new (pgLib().Pool)({ connectionString: url, max: 10, types: types as never });
    // An idle client's error (server restart) must not crash the process; the next query fails instead.
    this.pool.on('error', () => undefined);
  }

  static on(client: pg.PoolClient | pg.Pool): Sql {
    const query = (sql: string, params: readonly unknown[]) => client.query(positional(sql), params as unknown[]).catch(unstorable);
    const self: Sql = {
      dialect: 'postgres',
      get: async <T>(sql: string, params: readonly unknown[] = []) => (await query(sql, params)).rows[0] as T | undefined,
      all: async <T>(sql: string, params: readonly unknown[] = []) => (await query(sql, params)).rows as T[],
      run: async (sql, params = []) => (await query(sql, params)).rowCount ?? 0,
      write: (sql, params) => self.run(sql, params),
      exec: async (sql) => void (await client.query(sql)),
      transaction: (fn) => fn(self),
      batch: async (fn, o) => {
        if (o?.lock !== undefined) await self.lock(o.lock);
        return fn(self);
      },
      lock: async (key) => void (await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key])),
      close: async () => undefined,
    };
    return self;
  }

  get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return PostgresSql.on(this.pool).get<T>(sql, params);
  }
  all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return PostgresSql.on(this.pool).all<T>(sql, params);
  }
  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return PostgresSql.on(this.pool).run(sql, params);
  }
  /** Its own autocommit statement: PostgreSQL commits concurrent statements side by side. */
  write(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.run(sql, params);
  }
  exec(sql: string): Promise<void> {
    return PostgresSql.on(this.pool).exec(sql);
  }
  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const out = await fn(PostgresSql.on(client));
      await client.query('COMMIT');
      return out;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  readonly #batched: BatchedTx[] = [];
  batch<T>(fn: (tx: Sql) => Promise<T>, options: BatchOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#batched.push({ fn, durable: options.durable ?? true, ...(options.lock !== undefined ? { lock: options.lock } : {}), resolve: resolve as (v: unknown) => void, reject });
      if (this.#batched.length === 1) setImmediate(() => void this.#commitBatch(this.#batched.splice(0)));
    });
  }

  /**
   * One transaction for the batch, run in the order of the lock keys (every batch takes its locks
   * in that one order), one COMMIT. The transactions run back to back; when one fails, the batch
   * runs again with each in a savepoint, so only the failing one is rolled back (savepoints cost
   * two round trips each, and a batch waits on each). A deadlock or serialization failure
   * (PostgreSQL chose this transaction for another process's) runs the batch again: no result was
   * handed out yet. So a batched function may run up to DEADLOCK_ATTEMPTS + 1 times (Sql.batch says
   * what that asks of it). Never rejects itself.
   */
  async #commitBatch(ops: BatchedTx[]): Promise<void> {
    ops.sort((a, b) => ((a.lock ?? '') < (b.lock ?? '') ? -1 : (a.lock ?? '') > (b.lock ?? '') ? 1 : 0));
    let savepoints = false;
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient | undefined;
      try {
        client = await this.pool.connect();
        const results = await this.#runBatch(client, ops, savepoints);
        client.release();
        ops.forEach((op, i) => (results[i]!.ok ? op.resolve(results[i]!.value) : op.reject(results[i]!.value)));
        return;
      } catch (error) {
        await client?.query('ROLLBACK').catch(() => undefined);
        client?.release();
        const again = retryable(error) ? attempt < DEADLOCK_ATTEMPTS : !savepoints && error instanceof OpFailed;
        if (error instanceof OpFailed) savepoints = true;
        if (again) continue;
        for (const op of ops) op.reject(error instanceof OpFailed ? error.cause : error);
        return;
      }
    }
  }

  async #runBatch(client: pg.PoolClient, ops: BatchedTx[], savepoints: boolean): Promise<Array<{ ok: boolean; value: unknown }>> {
    const tx = PostgresSql.on(client);
    const results: Array<{ ok: boolean; value: unknown }> = [];
    await client.query('BEGIN');
    if (ops.every((o) => !o.durable)) await client.query('SET LOCAL synchronous_commit TO OFF');
    for (const op of ops) {
      if (savepoints) await client.query('SAVEPOINT batched');
      try {
        if (op.lock !== undefined) await tx.lock(op.lock);
        results.push({ ok: true, value: await op.fn(tx as never) });
        if (savepoints) await client.query('RELEASE SAVEPOINT batched');
      } catch (error) {
        if (retryable(error)) throw error;
        if (!savepoints) throw new OpFailed(error);
        await client.query('ROLLBACK TO SAVEPOINT batched');
        results.push({ ok: false, value: error });
      }
    }
    await client.query('COMMIT');
    return results;
  }

  /** Only inside a transaction (the pool's connections hold no transaction of their caller). */
  lock(): Promise<void> {
    return Promise.reject(new Error('lock() outside a transaction'));
  }

  /** Runs `fn` holding a cluster-wide advisory lock (schema set-up by several instances at once). */
  async locked<T>(key: number, fn: (tx: Sql) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [key]);
      return await fn(PostgresSql.on(client));
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
      client.release();
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** A transaction of a batch run without savepoints failed: the batch runs again with them. */
class OpFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('a batched transaction failed');
  }
}

/**
 * A value PostgreSQL refuses to store or compare (SQLSTATE class 22, data exception: a NUL in
 * text, a number out of BIGINT's range, text that is not a number; 54000, program limit exceeded:
 * a key too long for its index, such as a 500 KB envelope id) came from a client, where SQLite
 * would have taken it: the server answers it as bad input, not as its own failure.
 */
export class UnstorableValue extends Error {}

function unstorable(error: unknown): never {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('22') || code === '54000')) throw new UnstorableValue(`a value the database cannot hold: ${(error as Error).message}`);
  throw error;
}

/**
 * Attempts of a batch PostgreSQL aborts for a deadlock or serialization failure; with the one rerun
 * with savepoints, a batched function runs at most DEADLOCK_ATTEMPTS + 1 times (Sql.batch).
 */
const DEADLOCK_ATTEMPTS = 5;

/** PostgreSQL chose this transaction to fail for another's sake (deadlock, serialization): run again. */
const retryable = (error: unknown) => ['40P01', '40001'].includes((error as { code?: string }).code ?? '');

/**
 * Spent nonces in PostgreSQL: a claim inserts, or takes over an expired row, in one statement.
 * `table` names where (the bridge's svc_nonces; the RP's rp_nonces, as in its SQLite file).
 * Expired rows are swept at most once a minute per process (ns.nonce.memory).
 */
export class PostgresNonceStore implements NonceStore {
  readonly #sql: Sql;
  readonly #now: () => number;
  readonly #table: string;
  #ready: Promise<void> | undefined;
  #lastSweep = 0;

  constructor(sql: Sql, now: () => number = Date.now, table = 'svc_nonces') {
    if (!/^[a-z_]+$/.test(table)) throw new TypeError(`bad nonce table name ${table}`);
    this.#sql = sql;
    this.#now = now;
    this.#table = table;
  }

  #init(): Promise<void> {
    return (this.#ready ??= this.#sql.exec(`CREATE TABLE IF NOT EXISTS ${this.#table} (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)`).catch((error: unknown) => {
      this.#ready = undefined;
      // Two instances creating the table at once: the loser's error is harmless.
      if (!/already exists|duplicate key/.test((error as Error).message)) throw error;
    }));
  }

  async claim(key: string, expiresAt: number): Promise<boolean> {
    await this.#init();
    const now = this.#now();
    if (now - this.#lastSweep > 60_000) {
      this.#lastSweep = now;
      void this.#sql.run(`DELETE FROM ${this.#table} WHERE expires_at < ?`, [now]).catch(() => undefined);
    }
    const t = this.#table;
    const changed = await this.#sql.run(`INSERT INTO ${t} (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE ${t}.expires_at < ?`, [
      key,
      expiresAt,
      now,
    ]);
    return changed === 1;
  }

  async release(key: string): Promise<void> {
    await this.#init();
    await this.#sql.run(`DELETE FROM ${this.#table} WHERE key = ?`, [key]);
  }
}
