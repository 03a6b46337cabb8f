// Where the RP keeps its state: `<data-dir>/rp.sqlite` (the default; processes on one data dir
// are one RP) or PostgreSQL with --database postgres://... (processes on one database, on any
// machines, are one RP). Both engines run the same stores (./transactions.ts, ./sessions.ts) on
// the same schema (./schema.ts). Spent nonces follow the database (rp_nonces) unless
// --nonce-store names another shared store.
import type { NonceStore } from '../../protocol/signin/nonce.ts';
import { openNonceStore } from '../stores/index.ts';
import { PostgresNonceStore, PostgresSql, POSTGRES_URL } from '../stores/postgres.ts';
import { SqliteSql, type Sql } from '../stores/sql.ts';
import { openDatabase, type Db } from '../stores/sqlite.ts';
import { migrate } from './schema.ts';
import { SessionStore } from './sessions.ts';
import { TransactionStore } from './transactions.ts';

export { POSTGRES_URL } from '../stores/postgres.ts';

export interface RpDatabaseOptions {
  dataDir: string;
  /** sqlite (default) or postgres://USER:PASS@HOST:PORT/DB. */
  database?: string;
  nonceStore: string;
  /** Keys in a shared nonce store (Redis) start with it. */
  noncePrefix: string;
  now: () => number;
  /** An already-open SQLite database (tests); not closed here. */
  db?: Db;
  /** A nonce store to use instead of the one --nonce-store names (tests); not closed here. */
  nonces?: NonceStore;
}

export interface RpDatabase {
  engine: 'sqlite' | 'postgres';
  transactions: TransactionStore;
  sessions: SessionStore;
  nonces: NonceStore;
  close(): Promise<void>;
}

export async function openRpDatabase(o: RpDatabaseOptions): Promise<RpDatabase> {
  const postgres = o.database !== undefined && o.database !== 'sqlite';
  if (postgres && !POSTGRES_URL.test(o.database!)) throw new TypeError(`--database must be sqlite or postgres://USER:PASS@HOST:PORT/DB (got ${JSON.stringify(o.database)})`);
  // Per-process nonces would let one approval in once per process.
  if (postgres && o.nonceStore === 'memory' && !o.nonces)
    throw new TypeError('with --database postgres://, use --nonce-store sqlite (the default: nonces in PostgreSQL) or redis://: processes must share their nonces');
  const db = postgres ? undefined : (o.db ?? openDatabase(o.dataDir));
  const sql: Sql = postgres ? new PostgresSql(o.database!) : new SqliteSql(db!, o.db === undefined);
  let nonces: { store: NonceStore; close(): Promise<void> } | undefined;
  try {
    await migrate(sql);
    nonces = o.nonces
      ? { store: o.nonces, close: async () => undefined }
      : postgres && o.nonceStore === 'sqlite'
        ? { store: new PostgresNonceStore(sql, o.now, 'rp_nonces'), close: async () => undefined }
        : openNonceStore(o.nonceStore, { ...(db ? { db } : {}), prefix: o.noncePrefix, now: o.now, onError: () => undefined });
  } catch (error) {
    await sql.close().catch(() => undefined);
    throw error;
  }
  const opened = nonces;
  return {
    engine: postgres ? 'postgres' : 'sqlite',
    transactions: new TransactionStore(sql, o.now),
    sessions: new SessionStore(sql, o.now),
    nonces: opened.store,
    async close() {
      await opened.close();
      await sql.close();
    },
  };
}
