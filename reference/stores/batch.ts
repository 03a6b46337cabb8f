// Group commit: the SQLite writes queued during one event-loop turn run in one IMMEDIATE
// transaction at the end of the turn (setImmediate), instead of one commit each. Every queued
// write is still one statement (a compare-and-set or an insert-unless-present), so each stays
// atomic on its own, and BEGIN IMMEDIATE takes the database's write lock, so processes sharing
// the data dir still serialize: of racing claims exactly one changes a row. Results are handed
// out only after COMMIT; if the transaction fails, every write of the batch fails.
//
// While another process holds the write lock, BEGIN does not wait in SQLite's busy handler (it
// sleeps, blocking this process's event loop): it gives up at once and the batch is retried on
// a later turn, so requests keep being read and verified meanwhile. After the connection's busy
// timeout has passed without the lock, the batch fails as a busy statement would.
import type Database from 'better-sqlite3';

/** A better-sqlite3 handle (sqlite.ts opens it; named here so this module needs nothing of it). */
type Db = Database.Database;

interface Pending {
  op: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}
interface Statement {
  run(): unknown;
  get(): unknown;
}

/** Retries on the next turns first (the lock is usually held for well under a millisecond). */
const IMMEDIATE_RETRIES = 4;

export class WriteBatch {
  #queue: Pending[] = [];
  #scheduled = false;
  /** When the first failed BEGIN of the current wait happened (0: not waiting). */
  #busySince = 0;
  #retries = 0;
  readonly #db: Db;
  readonly #timeoutMs: number;
  readonly #stmts: TxStatements;

  constructor(db: Db) {
    this.#db = db;
    this.#stmts = statementsOf(db);
    this.#timeoutMs = this.#stmts.timeoutMs;
  }

  /** Runs `op` (one statement) in this turn's transaction; resolves after the commit. */
  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#flush);
      }
    });
  }

  #reschedule(): void {
    this.#scheduled = true;
    if (this.#retries++ < IMMEDIATE_RETRIES) setImmediate(this.#flush);
    else setTimeout(this.#flush, 1);
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    if (this.#queue.length === 0) return;
    // A transaction of this connection is open across an await (./sql.ts): commit after it.
    if (this.#db.inTransaction) return this.#reschedule();
    if (!this.#begin()) return;
    const ops = this.#queue;
    this.#queue = [];
    const results = new Array<{ ok: boolean; value: unknown }>(ops.length);
    try {
      for (let i = 0; i < ops.length; i++) {
        try {
          results[i] = { ok: true, value: ops[i]!.op() };
        } catch (error) {
          results[i] = { ok: false, value: error };
        }
      }
      this.#stmts.commit.run();
    } catch (error) {
      if (this.#db.inTransaction) this.#stmts.rollback.run();
      for (const p of ops) p.reject(error);
      return;
    }
    for (let i = 0; i < ops.length; i++) {
      const r = results[i]!;
      if (r.ok) ops[i]!.resolve(r.value);
      else ops[i]!.reject(r.value);
    }
  };

  /** BEGIN IMMEDIATE without waiting; false when the batch was rescheduled or failed. */
  #begin(): boolean {
    let busy: unknown;
    // Not a prepared statement: SQLite applies this pragma when compiling it, not when run.
    this.#db.pragma('busy_timeout = 0');
    try {
      this.#stmts.begin.run();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') {
        this.#failAll(error);
        return false;
      }
      busy = error;
    } finally {
      this.#db.pragma(`busy_timeout = ${this.#timeoutMs}`);
    }
    if (busy === undefined) {
      this.#busySince = 0;
      this.#retries = 0;
      return true;
    }
    const now = Date.now();
    if (this.#busySince === 0) this.#busySince = now;
    if (now - this.#busySince >= this.#timeoutMs) {
      this.#busySince = 0;
      this.#retries = 0;
      this.#failAll(busy);
      return false;
    }
    this.#reschedule();
    return false;
  }

  #failAll(error: unknown): void {
    const ops = this.#queue;
    this.#queue = [];
    for (const p of ops) p.reject(error);
  }
}

const batches = new WeakMap<Db, WriteBatch>();

/** The one batch of a database handle, shared by every store on it (one commit per turn). */
export function batchFor(db: Db): WriteBatch {
  let batch = batches.get(db);
  if (!batch) batches.set(db, (batch = new WriteBatch(db)));
  return batch;
}

/** A transaction waiting for the group commit of ./sql.ts (SqliteSql.batch). */
export interface BatchedTx {
  fn: (tx: never) => Promise<unknown>;
  durable: boolean;
  /** A lock key held from before `fn` until the commit (PostgreSQL). */
  lock?: string;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** The statements of a transaction, compiled once per connection, and its busy timeout as opened. */
interface TxStatements {
  timeoutMs: number;
  /** The connection's `synchronous` as configured (read at its first transaction). */
  synchronous: number;
  begin: Statement;
  commit: Statement;
  rollback: Statement;
  savepoint: Statement;
  release: Statement;
  rollbackTo: Statement;
}
const txStatements = new WeakMap<Db, TxStatements>();
function statementsOf(db: Db): TxStatements {
  let s = txStatements.get(db);
  if (!s) {
    s = {
      timeoutMs: Number(db.pragma('busy_timeout', { simple: true })) || 0,
      synchronous: Number(db.pragma('synchronous', { simple: true })),
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT batched'),
      release: db.prepare('RELEASE batched'),
      rollbackTo: db.prepare('ROLLBACK TO batched'),
    };
    txStatements.set(db, s);
  }
  return s;
}

/**
 * BEGIN IMMEDIATE without blocking the event loop: while another process holds the write lock,
 * retried on later turns (as WriteBatch does) until the connection's busy timeout has passed.
 */
export async function beginImmediate(db: Db): Promise<void> {
  const { timeoutMs, begin } = statementsOf(db);
  const since = Date.now();
  for (let attempt = 0; ; attempt++) {
    // Not a prepared statement: SQLite applies this pragma when compiling it, not when run.
    db.pragma('busy_timeout = 0');
    try {
      begin.run();
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() - since >= timeoutMs) throw error;
    } finally {
      db.pragma(`busy_timeout = ${timeoutMs}`);
    }
    await new Promise((resolve) => (attempt < IMMEDIATE_RETRIES ? setImmediate(resolve) : setTimeout(resolve, 1)));
  }
}

/**
 * Runs the batched transactions of one turn as savepoints of one transaction and commits once;
 * each resolves after the COMMIT (or rejects with its own error, rolled back to its savepoint; a
 * batch of one needs no savepoint: its failure rolls back the whole). When none needs durability
 * the commit skips the WAL sync. Never rejects itself.
 */
export async function runBatch(db: Db, tx: unknown, ops: BatchedTx[]): Promise<void> {
  if (ops.length === 0) return;
  const st = statementsOf(db);
  const lazy = ops.every((o) => !o.durable);
  const savepoints = ops.length > 1;
  const results: Array<{ ok: boolean; value: unknown }> = [];
  try {
    // Set outside the transaction: SQLite reads it when the transaction begins.
    if (lazy) db.pragma('synchronous = NORMAL');
    await beginImmediate(db);
    for (const op of ops) {
      if (savepoints) st.savepoint.run();
      try {
        results.push({ ok: true, value: await op.fn(tx as never) });
        if (savepoints) st.release.run();
      } catch (error) {
        if (!savepoints) throw error;
        st.rollbackTo.run();
        st.release.run();
        results.push({ ok: false, value: error });
      }
    }
    st.commit.run();
  } catch (error) {
    if (db.inTransaction) st.rollback.run();
    for (const op of ops) op.reject(error);
    return;
  } finally {
    if (lazy) db.pragma(`synchronous = ${st.synchronous}`);
  }
  ops.forEach((op, i) => (results[i]!.ok ? op.resolve(results[i]!.value) : op.reject(results[i]!.value)));
}
