// The RP's tables, one schema for SQLite and PostgreSQL (times in milliseconds as BIGINT, which
// SQLite stores as INTEGER), migrated by version: `rp_meta.schema_version` says which steps have
// run. Processes opening one database at once migrate it one at a time (SQLite: BEGIN IMMEDIATE;
// PostgreSQL: an advisory lock). Spent nonces are the nonce store's own table (rp_nonces).
import { PostgresSql } from '../stores/postgres.ts';
import type { Sql } from '../stores/sql.ts';

/** Each step's statements; `rowid` is SQLite's storage clause for tables keyed by text alone. */
const MIGRATIONS: ReadonlyArray<(rowid: string) => string[]> = [
  (rowid) => [
    `CREATE TABLE IF NOT EXISTS rp_transactions (
      request_id TEXT PRIMARY KEY,
      request TEXT NOT NULL,
      encoded TEXT NOT NULL,
      ref_code TEXT NOT NULL UNIQUE,
      binding_hash TEXT NOT NULL,
      poll_hash TEXT NOT NULL UNIQUE,
      match_code TEXT NOT NULL,
      state TEXT NOT NULL,
      started_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      browser TEXT NOT NULL,
      identity TEXT,
      resume_hash TEXT UNIQUE,
      resume_expires_at BIGINT,
      updated_at BIGINT NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS rp_sessions (id_hash TEXT PRIMARY KEY, identity TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)${rowid}`,
  ],
  // 2: the request's binding string, so a delivery compares one column (./transactions.ts).
  () => ['ALTER TABLE rp_transactions ADD COLUMN binding TEXT'],
];

/** The advisory lock key under which processes on one PostgreSQL migrate the RP's schema. */
const MIGRATION_LOCK = 0x5bc0a7d1;

/**
 * A data dir written before rp_meta existed may already have a column a step adds (the
 * versions before it added columns when missing): that step counts as run.
 */
const alreadyThere = (statement: string, error: unknown) => /^ALTER TABLE \S+ ADD COLUMN/.test(statement) && /duplicate column|already exists/i.test((error as Error).message);

export async function migrate(sql: Sql): Promise<void> {
  const rowid = sql.dialect === 'sqlite' ? ' WITHOUT ROWID' : '';
  const steps = async (db: Sql) => {
    await db.exec('CREATE TABLE IF NOT EXISTS rp_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    const row = await db.get<{ value: string }>('SELECT value FROM rp_meta WHERE key = ?', ['schema_version']);
    for (let v = row ? Number(row.value) : 0; v < MIGRATIONS.length; v++) {
      for (const statement of MIGRATIONS[v]!(rowid)) {
        try {
          await db.exec(statement);
        } catch (error) {
          if (!alreadyThere(statement, error)) throw error;
        }
      }
      await db.run('INSERT INTO rp_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', ['schema_version', String(v + 1)]);
    }
  };
  if (sql instanceof PostgresSql) await sql.locked(MIGRATION_LOCK, steps);
  else await sql.transaction(steps);
}
