// The RP's embedded store: one SQLite file `<data-dir>/rp.sqlite` in WAL mode with a busy
// timeout, so several processes started with the same --data-dir form one RP (transactions,
// sessions and, with the sqlite nonce store, spent nonces are shared; ns.nonce.shared-atomic).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { NonceStore } from '../../protocol/signin/nonce.ts';
import { batchFor, type WriteBatch } from './batch.ts';
import { BACKSTOP_FRAMES, startCheckpointer } from './checkpointer.ts';

export type Db = Database.Database;

/** The data-dir value that keeps everything in memory (tests, one process only). */
export const IN_MEMORY = ':memory:';

/**
 * Switches a file to WAL. The switch needs the file to itself and SQLite's busy handler does not
 * wait for it, so two processes opening a new file at once retry for a while (100 ms apart).
 */
function enableWal(db: Db): void {
  for (let attempt = 0; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if (attempt >= 50 || !/locked|busy/i.test((error as Error).message)) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

/** Opens `<dataDir>/<file>` (default rp.sqlite; the bridge keeps bridge.sqlite). */
export function openDatabase(dataDir: string, file = 'rp.sqlite'): Db {
  let db: Db;
  if (dataDir === IN_MEMORY) {
    db = new Database(':memory:');
  } else {
    mkdirSync(dataDir, { recursive: true });
    db = new Database(join(dataDir, file));
    enableWal(db);
    // Reads through a shared mapping: no read() per page, and after another process's commit
    // (workers sharing the file) the pages come back from the OS cache instead of being re-read.
    db.pragma('mmap_size = 268435456');
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_FRAMES}`);
    const checkpointer = startCheckpointer(join(dataDir, file));
    const close = db.close.bind(db);
    // The checkpointer lives as long as this handle (db.close() is what every owner calls).
    db.close = () => {
      checkpointer.stop();
      return close();
    };
  }
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  return db;
}

/**
 * Spent nonces in SQLite (verification rule 5). A claim is one atomic statement: the row is
 * inserted unless an unexpired row with the key exists; an expired row is replaced. Entries are
 * swept once their `expires_at` has passed (ns.nonce.memory). Claims are group-committed with the
 * other writes of the turn (./batch.ts).
 */
export class SqliteNonceStore implements NonceStore {
  readonly #claim: Database.Statement;
  readonly #release: Database.Statement;
  readonly #sweep: Database.Statement;
  readonly #now: () => number;
  readonly #batch: WriteBatch;
  #lastSweep = 0;

  constructor(db: Db, now: () => number = Date.now) {
    this.#batch = batchFor(db);
    db.exec('CREATE TABLE IF NOT EXISTS rp_nonces (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID');
    this.#claim = db.prepare('INSERT INTO rp_nonces (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE rp_nonces.expires_at < ?');
    this.#release = db.prepare('DELETE FROM rp_nonces WHERE key = ?');
    this.#sweep = db.prepare('DELETE FROM rp_nonces WHERE expires_at < ?');
    this.#now = now;
  }

  claim(key: string, expiresAt: number): Promise<boolean> {
    const now = this.#now();
    if (now - this.#lastSweep > 60_000) {
      this.#lastSweep = now;
      void this.#batch.run(() => this.#sweep.run(now)).catch(() => undefined);
    }
    return this.#batch.run(() => this.#claim.run(key, expiresAt, now).changes === 1);
  }

  async release(key: string): Promise<void> {
    this.#release.run(key);
  }
}
