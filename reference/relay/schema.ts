// The relay's tables, one schema for SQLite (`<data-dir>/relay.sqlite`, the default) and
// PostgreSQL (--database postgres://...): identities, the spool, revoked sessions, the keystore,
// system files, devices, and the drive's metadata. Times are milliseconds, counts and sequences
// BIGINT (SQLite stores both as INTEGER). Migrated by version (../stores/migrate.ts); a data dir
// written before relay_meta existed already has these tables, and every step is IF NOT EXISTS.
import { migrate, type Dialect } from '../stores/migrate.ts';
import type { Sql } from '../stores/sql.ts';

const STEPS: ReadonlyArray<(d: Dialect) => string[]> = [
  ({ serial }) => [
    'CREATE TABLE IF NOT EXISTS relay_identities (identity TEXT PRIMARY KEY, public_key TEXT NOT NULL, encryption_public_key TEXT, document TEXT NOT NULL, created_at BIGINT NOT NULL)',
    // `seq` is the pickup cursor; (recipient, kind, id) makes a retried envelope a no-op (ra.messages.id-key).
    `CREATE TABLE IF NOT EXISTS relay_spool (seq ${serial}, recipient TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, sender TEXT NOT NULL, message_id TEXT, body TEXT NOT NULL, expires_at BIGINT NOT NULL, UNIQUE (recipient, kind, id))`,
    'CREATE INDEX IF NOT EXISTS relay_spool_expiry ON relay_spool (expires_at)',
    'CREATE TABLE IF NOT EXISTS relay_revoked_sessions (session_key TEXT PRIMARY KEY, identity TEXT NOT NULL, expires_at BIGINT NOT NULL)',
    'CREATE TABLE IF NOT EXISTS relay_keystore (identity TEXT NOT NULL, enrollment_id TEXT NOT NULL, kind TEXT NOT NULL, wrap TEXT NOT NULL, wrapped TEXT NOT NULL, credential_id TEXT, credential_public_key TEXT, credential_alg BIGINT, label TEXT, role TEXT NOT NULL, created_at BIGINT NOT NULL, last_used_at BIGINT, PRIMARY KEY (identity, enrollment_id))',
    'CREATE TABLE IF NOT EXISTS relay_system_files (identity TEXT NOT NULL, path TEXT NOT NULL, body TEXT NOT NULL, etag TEXT NOT NULL, updated_at BIGINT NOT NULL, PRIMARY KEY (identity, path))',
    'CREATE TABLE IF NOT EXISTS relay_devices (id TEXT PRIMARY KEY, identity TEXT NOT NULL, name TEXT, kind TEXT, client TEXT, platform TEXT, browser TEXT, enrollment_id TEXT, added_at BIGINT NOT NULL, last_seen BIGINT NOT NULL)',
  ],
  // 2: the drive (reference/relay/drive/store.ts).
  () => [
    'CREATE TABLE IF NOT EXISTS drive_meta (drive TEXT PRIMARY KEY, root TEXT, seq BIGINT NOT NULL DEFAULT 0, used BIGINT NOT NULL DEFAULT 0)',
    'CREATE TABLE IF NOT EXISTS drive_nodes (drive TEXT NOT NULL, node TEXT NOT NULL, kind TEXT NOT NULL, folder TEXT NOT NULL, name_hash TEXT NOT NULL, version TEXT NOT NULL, seq BIGINT NOT NULL, removed INTEGER NOT NULL DEFAULT 0, rotate INTEGER NOT NULL DEFAULT 0, manifest TEXT NOT NULL, PRIMARY KEY (drive, node))',
    // Children in node order (listings, the remove check, the unshare walk) without a sort.
    'CREATE INDEX IF NOT EXISTS drive_nodes_children ON drive_nodes (drive, folder, node)',
    // The name check of every create and move: without it, a scan of the folder's children.
    'CREATE INDEX IF NOT EXISTS drive_nodes_name ON drive_nodes (drive, folder, name_hash)',
    'CREATE TABLE IF NOT EXISTS drive_versions (drive TEXT NOT NULL, node TEXT NOT NULL, version TEXT NOT NULL, seq BIGINT NOT NULL, operation TEXT NOT NULL, manifest TEXT NOT NULL, PRIMARY KEY (drive, node, version))',
    'CREATE TABLE IF NOT EXISTS drive_pages (drive TEXT NOT NULL, node TEXT NOT NULL, version TEXT NOT NULL, hash TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (drive, node, version, hash))',
    'CREATE TABLE IF NOT EXISTS drive_refs (drive TEXT NOT NULL, node TEXT NOT NULL, version TEXT NOT NULL, position BIGINT NOT NULL, chunk TEXT NOT NULL, PRIMARY KEY (drive, node, version, position, chunk))',
    'CREATE INDEX IF NOT EXISTS drive_refs_chunk ON drive_refs (drive, node, chunk)',
    'CREATE TABLE IF NOT EXISTS drive_records (drive TEXT NOT NULL, node TEXT NOT NULL, position BIGINT NOT NULL, author TEXT NOT NULL, sequence BIGINT NOT NULL, hash TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (drive, node, position))',
    'CREATE INDEX IF NOT EXISTS drive_records_author ON drive_records (drive, node, author, sequence)',
    'CREATE TABLE IF NOT EXISTS drive_record_heads (drive TEXT NOT NULL, node TEXT NOT NULL, author TEXT NOT NULL, sequence BIGINT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (drive, node, author))',
    'CREATE TABLE IF NOT EXISTS drive_chunks (drive TEXT NOT NULL, id TEXT NOT NULL, size BIGINT NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (drive, id))',
    'CREATE TABLE IF NOT EXISTS drive_shares (drive TEXT NOT NULL, id TEXT NOT NULL, node TEXT NOT NULL, member TEXT, link TEXT, role TEXT NOT NULL, body TEXT NOT NULL, expires_at BIGINT, downloads BIGINT NOT NULL, used BIGINT NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (drive, id))',
    'CREATE INDEX IF NOT EXISTS drive_shares_member ON drive_shares (drive, member)',
    'CREATE INDEX IF NOT EXISTS drive_shares_link ON drive_shares (drive, link)',
    'CREATE TABLE IF NOT EXISTS drive_changes (drive TEXT NOT NULL, seq BIGINT NOT NULL, node TEXT NOT NULL, operation TEXT NOT NULL, version TEXT, position BIGINT, share TEXT, PRIMARY KEY (drive, seq))',
    'CREATE TABLE IF NOT EXISTS drive_commits (drive TEXT NOT NULL, id TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (drive, id))',
  ],
];

/** The advisory lock key under which relay processes on one PostgreSQL migrate. */
const MIGRATION_LOCK = 0x5bc0a7d2;

export function migrateRelay(sql: Sql): Promise<void> {
  return migrate(sql, { meta: 'relay_meta', lockKey: MIGRATION_LOCK, steps: STEPS });
}
