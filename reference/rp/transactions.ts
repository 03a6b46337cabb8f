// The RP's transaction records (ns.transaction.record, ns.transaction.states) in SQLite. Every
// state change is a compare-and-set (`UPDATE ... WHERE state = ?`): of two processes racing on
// one transaction exactly one wins, which is what "one approval per transaction", "one match
// attempt" and "single-use resume code" rest on.
import { limits } from '../../schemas/ts/limits.ts';
import type { Db } from '../stores/sqlite.ts';
import { batchFor, type WriteBatch } from '../stores/batch.ts';
import { bindingOf } from '../signin/binding.ts';

/** ns.transaction.states; completed, unfinished, ended and expired are terminal. */
export type TxState = 'pending' | 'approved_same_device' | 'approved_cross_device' | 'completed' | 'unfinished' | 'ended' | 'expired';

export interface Transaction {
  requestId: string;
  /** The request object as issued (JSON). */
  request: Record<string, unknown>;
  encoded: string;
  refCode: string;
  bindingHash: string;
  pollHash: string;
  matchCode: string;
  state: TxState;
  startedAt: number;
  expiresAt: number;
  browser: string;
  identity: string | null;
  resumeHash: string | null;
  resumeExpiresAt: number | null;
}

export { bindingOf, COPIED } from '../signin/binding.ts';

/** What a delivery reads: no request JSON. `binding` is null on rows from before the column. */
export interface DeliveryView {
  requestId: string;
  binding: string | null;
  matchCode: string;
  state: TxState;
}

/** What starting a login records; the rest of a Transaction is filled in as it moves. */
export type NewTransaction = Omit<Transaction, 'state' | 'identity' | 'resumeHash' | 'resumeExpiresAt'>;

interface Row {
  request_id: string;
  request: string;
  encoded: string;
  ref_code: string;
  binding_hash: string;
  poll_hash: string;
  match_code: string;
  state: TxState;
  started_at: number;
  expires_at: number;
  browser: string;
  identity: string | null;
  resume_hash: string | null;
  resume_expires_at: number | null;
}

const fromRow = (r: Row): Transaction => ({
  requestId: r.request_id,
  request: JSON.parse(r.request) as Record<string, unknown>,
  encoded: r.encoded,
  refCode: r.ref_code,
  bindingHash: r.binding_hash,
  pollHash: r.poll_hash,
  matchCode: r.match_code,
  state: r.state,
  startedAt: r.started_at,
  expiresAt: r.expires_at,
  browser: r.browser,
  identity: r.identity,
  resumeHash: r.resume_hash,
  resumeExpiresAt: r.resume_expires_at,
});

/** Adds a column to a table created by an earlier version; another process may win the race. */
function addColumn(db: Db, table: string, column: string): void {
  const name = column.split(' ')[0]!;
  if ((db.pragma(`table_info(${table})`) as { name: string }[]).some((c) => c.name === name)) return;
  try {
    db.exec(`ALTER TABLE ${table} ADD COLUMN ${column}`);
  } catch (error) {
    if (!/duplicate column/i.test((error as Error).message)) throw error;
  }
}

/** How long a finished or expired record is kept (so its links answer 410 rather than 404). */
const RETAIN_MS = limits.rp_transaction_retention_seconds * 1000;

export class TransactionStore {
  readonly #now: () => number;
  readonly #stmts;
  readonly #batch: WriteBatch;
  #lastSweep = 0;

  constructor(db: Db, now: () => number = Date.now) {
    this.#batch = batchFor(db);
    this.#now = now;
    db.exec(`CREATE TABLE IF NOT EXISTS rp_transactions (
      request_id TEXT PRIMARY KEY,
      request TEXT NOT NULL,
      encoded TEXT NOT NULL,
      ref_code TEXT NOT NULL UNIQUE,
      binding_hash TEXT NOT NULL,
      poll_hash TEXT NOT NULL UNIQUE,
      match_code TEXT NOT NULL,
      state TEXT NOT NULL,
      started_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      browser TEXT NOT NULL,
      identity TEXT,
      resume_hash TEXT UNIQUE,
      resume_expires_at INTEGER,
      updated_at INTEGER NOT NULL,
      binding TEXT
    )`);
    addColumn(db, 'rp_transactions', 'binding TEXT');
    this.#stmts = {
      insert: db.prepare(`INSERT INTO rp_transactions (request_id, request, encoded, ref_code, binding_hash, poll_hash, match_code, state, started_at, expires_at, browser, updated_at, binding)
        VALUES (@requestId, @request, @encoded, @refCode, @bindingHash, @pollHash, @matchCode, 'pending', @startedAt, @expiresAt, @browser, @startedAt, @binding)`),
      // The delivery hot path: a handful of short columns, not the row's request and encoded JSON.
      forDelivery: db.prepare('SELECT request_id, binding, match_code, state, expires_at FROM rp_transactions WHERE request_id = ?'),
      byId: db.prepare('SELECT * FROM rp_transactions WHERE request_id = ?'),
      byRef: db.prepare('SELECT * FROM rp_transactions WHERE ref_code = ?'),
      byPoll: db.prepare('SELECT * FROM rp_transactions WHERE poll_hash = ?'),
      byResume: db.prepare('SELECT * FROM rp_transactions WHERE resume_hash = ?'),
      move: db.prepare('UPDATE rp_transactions SET state = @to, updated_at = @now WHERE request_id = @requestId AND state = @from'),
      approve: db.prepare(`UPDATE rp_transactions SET state = @to, identity = @identity, resume_hash = @resumeHash, resume_expires_at = @resumeExpiresAt, updated_at = @now
        WHERE request_id = @requestId AND state = 'pending'`),
      expire: db.prepare("UPDATE rp_transactions SET state = 'expired', updated_at = @now WHERE request_id = @requestId AND state = 'pending' AND expires_at < @now"),
      sweep: db.prepare('DELETE FROM rp_transactions WHERE expires_at < ?'),
    };
  }

  /** Inserts a pending transaction; false when a unique value (request id, code, secret) collides. */
  insert(tx: NewTransaction): boolean {
    this.#maybeSweep();
    try {
      this.#stmts.insert.run({ ...tx, request: JSON.stringify(tx.request), binding: bindingOf(tx.request) });
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' || (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
      throw error;
    }
  }

  #get(stmt: ReturnType<Db['prepare']>, key: string): Transaction | undefined {
    const row = stmt.get(key) as Row | undefined;
    if (!row) return undefined;
    const tx = fromRow(row);
    // A pending transaction past expires_at is expired (ns.transaction.expiry); record it.
    if (tx.state === 'pending' && this.#now() > tx.expiresAt) {
      this.#stmts.expire.run({ requestId: tx.requestId, now: this.#now() });
      tx.state = 'expired';
    }
    return tx;
  }

  byRequestId(requestId: string): Transaction | undefined {
    return this.#get(this.#stmts.byId, requestId);
  }

  /** The transaction a delivery binds to, without its request (expired as `byRequestId` does). */
  forDelivery(requestId: string): DeliveryView | undefined {
    const row = this.#stmts.forDelivery.get(requestId) as (Pick<Row, 'request_id' | 'match_code' | 'state' | 'expires_at'> & { binding: string | null }) | undefined;
    if (!row) return undefined;
    let state = row.state;
    if (state === 'pending' && this.#now() > row.expires_at) {
      this.#stmts.expire.run({ requestId: row.request_id, now: this.#now() });
      state = 'expired';
    }
    return { requestId: row.request_id, binding: row.binding, matchCode: row.match_code, state };
  }

  byReference(code: string): Transaction | undefined {
    return this.#get(this.#stmts.byRef, code);
  }

  byPollHash(hash: string): Transaction | undefined {
    return this.#get(this.#stmts.byPoll, hash);
  }

  byResumeHash(hash: string): Transaction | undefined {
    return this.#get(this.#stmts.byResume, hash);
  }

  /** Compare-and-set `from` -> `to`; true when this caller made the change. */
  move(requestId: string, from: TxState, to: TxState): boolean {
    return this.#stmts.move.run({ requestId, from, to, now: this.#now() }).changes === 1;
  }

  /**
   * pending -> approved (same or cross device), recording the identity and resume code hash;
   * group-committed with the other writes of this turn (the delivery hot path).
   */
  approve(requestId: string, to: 'approved_same_device' | 'approved_cross_device', identity: string, resume?: { hash: string; expiresAt: number }): Promise<boolean> {
    const row = { requestId, to, identity, resumeHash: resume?.hash ?? null, resumeExpiresAt: resume?.expiresAt ?? null, now: this.#now() };
    return this.#batch.run(() => this.#stmts.approve.run(row).changes === 1);
  }

  #maybeSweep(): void {
    const now = this.#now();
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    this.#stmts.sweep.run(now - RETAIN_MS);
  }
}
