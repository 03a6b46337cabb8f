// The RP's transaction records (ns.transaction.record, ns.transaction.states) in SQLite or
// PostgreSQL (../stores/sql.ts; tables in ./schema.ts). Every state change is a compare-and-set
// (`UPDATE ... WHERE state = ?`): of two processes racing on one transaction exactly one wins,
// which is what "one approval per transaction", "one match attempt" and "single-use resume code"
// rest on. Each is one statement, so it needs no transaction of its own on either engine.
import { limits } from '../../schemas/ts/limits.ts';
import type { Sql } from '../stores/sql.ts';
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

/** How long a finished or expired record is kept (so its links answer 410 rather than 404). */
const RETAIN_MS = limits.rp_transaction_retention_seconds * 1000;

const SQL = {
  insert: `INSERT INTO rp_transactions (request_id, request, encoded, ref_code, binding_hash, poll_hash, match_code, state, started_at, expires_at, browser, updated_at, binding)
    VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  // The delivery hot path: a handful of short columns, not the row's request and encoded JSON.
  forDelivery: 'SELECT request_id, binding, match_code, state, expires_at FROM rp_transactions WHERE request_id = ?',
  byId: 'SELECT * FROM rp_transactions WHERE request_id = ?',
  byRef: 'SELECT * FROM rp_transactions WHERE ref_code = ?',
  byPoll: 'SELECT * FROM rp_transactions WHERE poll_hash = ?',
  byResume: 'SELECT * FROM rp_transactions WHERE resume_hash = ?',
  move: 'UPDATE rp_transactions SET state = ?, updated_at = ? WHERE request_id = ? AND state = ?',
  approve: "UPDATE rp_transactions SET state = ?, identity = ?, resume_hash = ?, resume_expires_at = ?, updated_at = ? WHERE request_id = ? AND state = 'pending'",
  expire: "UPDATE rp_transactions SET state = 'expired', updated_at = ? WHERE request_id = ? AND state = 'pending' AND expires_at < ?",
  sweep: 'DELETE FROM rp_transactions WHERE expires_at < ?',
} as const;

/**
 * PostgreSQL text cannot hold NUL (the query fails), and no key this RP issues has one: a
 * client's key with NUL names no transaction, on either engine, rather than a 500.
 */
const storable = (key: string): boolean => !key.includes('\0');

export class TransactionStore {
  readonly #sql: Sql;
  readonly #now: () => number;
  #lastSweep = 0;

  /** Over a database whose schema ./schema.ts has migrated. */
  constructor(sql: Sql, now: () => number = Date.now) {
    this.#sql = sql;
    this.#now = now;
  }

  /** Inserts a pending transaction; false when a unique value (request id, code, secret) collides. */
  async insert(tx: NewTransaction): Promise<boolean> {
    this.#maybeSweep();
    const changed = await this.#sql.run(SQL.insert, [
      tx.requestId,
      JSON.stringify(tx.request),
      tx.encoded,
      tx.refCode,
      tx.bindingHash,
      tx.pollHash,
      tx.matchCode,
      tx.startedAt,
      tx.expiresAt,
      tx.browser,
      tx.startedAt,
      bindingOf(tx.request),
    ]);
    return changed === 1;
  }

  async #get(sql: string, key: string): Promise<Transaction | undefined> {
    if (!storable(key)) return undefined;
    const row = await this.#sql.get<Row>(sql, [key]);
    if (!row) return undefined;
    const tx = fromRow(row);
    if (this.#lapsed(tx.state, tx.expiresAt)) {
      await this.#expire(tx.requestId);
      tx.state = 'expired';
    }
    return tx;
  }

  /** A pending transaction past expires_at is expired (ns.transaction.expiry). */
  #lapsed(state: TxState, expiresAt: number): boolean {
    return state === 'pending' && this.#now() > expiresAt;
  }

  /** Records the expiry (a compare-and-set: a transaction approved meanwhile stays approved). */
  async #expire(requestId: string): Promise<void> {
    const now = this.#now();
    await this.#sql.run(SQL.expire, [now, requestId, now]);
  }

  byRequestId(requestId: string): Promise<Transaction | undefined> {
    return this.#get(SQL.byId, requestId);
  }

  /** The transaction a delivery binds to, without its request (expired as `byRequestId` does). */
  async forDelivery(requestId: string): Promise<DeliveryView | undefined> {
    if (!storable(requestId)) return undefined;
    const row = await this.#sql.get<Pick<Row, 'request_id' | 'match_code' | 'state' | 'expires_at'> & { binding: string | null }>(SQL.forDelivery, [requestId]);
    if (!row) return undefined;
    let state = row.state;
    if (this.#lapsed(state, row.expires_at)) {
      await this.#expire(row.request_id);
      state = 'expired';
    }
    return { requestId: row.request_id, binding: row.binding, matchCode: row.match_code, state };
  }

  byReference(code: string): Promise<Transaction | undefined> {
    return this.#get(SQL.byRef, code);
  }

  byPollHash(hash: string): Promise<Transaction | undefined> {
    return this.#get(SQL.byPoll, hash);
  }

  byResumeHash(hash: string): Promise<Transaction | undefined> {
    return this.#get(SQL.byResume, hash);
  }

  /** Compare-and-set `from` -> `to`; true when this caller made the change. */
  async move(requestId: string, from: TxState, to: TxState): Promise<boolean> {
    return (await this.#sql.run(SQL.move, [to, this.#now(), requestId, from])) === 1;
  }

  /**
   * pending -> approved (same or cross device), recording the identity and resume code hash;
   * group-committed with the other writes of this turn on SQLite (the delivery hot path).
   */
  async approve(requestId: string, to: 'approved_same_device' | 'approved_cross_device', identity: string, resume?: { hash: string; expiresAt: number }): Promise<boolean> {
    const changed = await this.#sql.write(SQL.approve, [to, identity, resume?.hash ?? null, resume?.expiresAt ?? null, this.#now(), requestId]);
    return changed === 1;
  }

  /** Forgets records past their retention, at most once a minute per process, beside the caller. */
  #maybeSweep(): void {
    const now = this.#now();
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    // A failed sweep is tried again a minute later; the insert reports a database fault itself.
    this.#sql.run(SQL.sweep, [now - RETAIN_MS]).catch(() => undefined);
  }
}
