// The RP's tables, one schema for SQLite and PostgreSQL (times in milliseconds as BIGINT, which
// SQLite stores as INTEGER), migrated by version: `rp_meta.schema_version` says which steps have
// run. Processes opening one database at once migrate it one at a time (SQLite: BEGIN IMMEDIATE;
// PostgreSQL: an advisory lock). Spent nonces are the nonce store's own table (rp_nonces).
import { migrate as migrateSteps, type Dialect } from '../stores/migrate.ts';
import type { Sql } from '../stores/sql.ts';

/** Each step's statements. */
const MIGRATIONS: ReadonlyArray<(d: Dialect) => string[]> = [
  ({ rowid }) => [
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

export function migrate(sql: Sql): Promise<void> {
  return migrateSteps(sql, { meta: 'rp_meta', lockKey: MIGRATION_LOCK, steps: MIGRATIONS });
}
