// The relay's durable state in SQLite (`<data-dir>/relay.sqlite`, WAL): identities with their
// documents, the spool (messages and acks waiting for pickup, each under a sequence number that is
// the cursor) and device rows. Spool writes commit with `synchronous = FULL`: the WAL is fsynced
// before COMMIT returns, and the 202 is sent only after it, so accepted mail survives `kill -9`
// (ra.spool.durable). Spool inserts are group-committed (../stores/batch.ts): the envelopes
// accepted during one event-loop turn share one COMMIT and so one fsync, and each 202 waits for
// it. Sessions, challenges and nonces are not here: document 3 keeps them in memory.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { batchFor } from '../stores/batch.ts';

export interface IdentityRow {
  identity: string;
  public_key: string;
  encryption_public_key: string | null;
  document: string;
  created_at: number;
}

export interface SpoolRow {
  seq: number;
  recipient: string;
  kind: 'message' | 'ack';
  id: string;
  sender: string;
  message_id: string | null;
  body: string;
  expires_at: number;
}

/** One keystore enrollment; `wrapped` is the JSON text exactly as it was sent. */
export interface EnrollmentRow {
  identity: string;
  enrollment_id: string;
  kind: string;
  wrap: string;
  wrapped: string;
  credential_id: string | null;
  credential_public_key: string | null;
  credential_alg: number | null;
  label: string | null;
  role: string;
  created_at: number;
  last_used_at: number | null;
}

/** A system document as written (ra.system.files). */
export interface SystemFileRow {
  identity: string;
  path: string;
  body: string;
  etag: string;
  updated_at: number;
}

export interface DeviceRow {
  id: string;
  identity: string;
  name: string | null;
  kind: string | null;
  client: string | null;
  platform: string | null;
  browser: string | null;
  enrollment_id: string | null;
  added_at: number;
  last_seen: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS relay_identities (identity TEXT PRIMARY KEY, public_key TEXT NOT NULL, encryption_public_key TEXT, document TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS relay_spool (seq INTEGER PRIMARY KEY AUTOINCREMENT, recipient TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, sender TEXT NOT NULL, message_id TEXT, body TEXT NOT NULL, expires_at INTEGER NOT NULL, UNIQUE (recipient, kind, id));
CREATE INDEX IF NOT EXISTS relay_spool_expiry ON relay_spool (expires_at);
CREATE TABLE IF NOT EXISTS relay_revoked_sessions (session_key TEXT PRIMARY KEY, identity TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS relay_keystore (identity TEXT NOT NULL, enrollment_id TEXT NOT NULL, kind TEXT NOT NULL, wrap TEXT NOT NULL, wrapped TEXT NOT NULL, credential_id TEXT, credential_public_key TEXT, credential_alg INTEGER, label TEXT, role TEXT NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER, PRIMARY KEY (identity, enrollment_id));
CREATE TABLE IF NOT EXISTS relay_system_files (identity TEXT NOT NULL, path TEXT NOT NULL, body TEXT NOT NULL, etag TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (identity, path));
CREATE TABLE IF NOT EXISTS relay_devices (id TEXT PRIMARY KEY, identity TEXT NOT NULL, name TEXT, kind TEXT, client TEXT, platform TEXT, browser TEXT, enrollment_id TEXT, added_at INTEGER NOT NULL, last_seen INTEGER NOT NULL);
`;

export class RelayStore {
  readonly #db: Database.Database;
  readonly #spool: Database.Database;
  readonly #s;

  /** `spoolInMemory` is the `spool-memory` breakage: mail lives only in this process. */
  constructor(dataDir: string, options: { spoolInMemory?: boolean } = {}) {
    if (dataDir === ':memory:') this.#db = new Database(':memory:');
    else {
      mkdirSync(dataDir, { recursive: true });
      this.#db = new Database(join(dataDir, 'relay.sqlite'));
      this.#db.pragma('journal_mode = WAL');
      this.#db.pragma('synchronous = FULL');
      this.#db.pragma('busy_timeout = 5000');
    }
    this.#db.exec(SCHEMA);
    this.#spool = options.spoolInMemory ? new Database(':memory:') : this.#db;
    if (options.spoolInMemory) this.#spool.exec(SCHEMA);
    const db = this.#db;
    const sp = this.#spool;
    this.#s = {
      identity: db.prepare('SELECT * FROM relay_identities WHERE identity = ?'),
      addIdentity: db.prepare(
        'INSERT INTO relay_identities (identity, public_key, encryption_public_key, document, created_at) VALUES (@identity, @public_key, @encryption_public_key, @document, @created_at) ON CONFLICT (identity) DO NOTHING',
      ),
      setIdentity: db.prepare('UPDATE relay_identities SET public_key = @public_key, encryption_public_key = @encryption_public_key, document = @document WHERE identity = @identity'),
      spoolAdd: sp.prepare(
        'INSERT INTO relay_spool (recipient, kind, id, sender, message_id, body, expires_at) VALUES (@recipient, @kind, @id, @sender, @message_id, @body, @expires_at) ON CONFLICT (recipient, kind, id) DO NOTHING',
      ),
      spoolOne: sp.prepare('SELECT body FROM relay_spool WHERE recipient = ? AND kind = ? AND id = ?'),
      revoke: db.prepare(
        'INSERT INTO relay_revoked_sessions (session_key, identity, expires_at) VALUES (?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)',
      ),
      revoked: db.prepare('SELECT 1 FROM relay_revoked_sessions WHERE session_key = ? AND expires_at > ?'),
      revokedSweep: db.prepare('DELETE FROM relay_revoked_sessions WHERE expires_at <= ?'),
      spoolFor: sp.prepare('SELECT * FROM relay_spool WHERE recipient = ? AND seq > ? ORDER BY seq'),
      spoolDrop: sp.prepare('DELETE FROM relay_spool WHERE seq = ?'),
      spoolDropThrough: sp.prepare('DELETE FROM relay_spool WHERE recipient = ? AND kind = ? AND seq <= ?'),
      expired: sp.prepare("SELECT * FROM relay_spool WHERE expires_at <= ? AND kind = 'message' ORDER BY seq LIMIT 500"),
      expiredAcks: sp.prepare("DELETE FROM relay_spool WHERE expires_at <= ? AND kind = 'ack'"),
      enrollments: db.prepare('SELECT * FROM relay_keystore WHERE identity = ? ORDER BY created_at, enrollment_id'),
      putEnrollment: db.prepare(`INSERT INTO relay_keystore (identity, enrollment_id, kind, wrap, wrapped, credential_id, credential_public_key, credential_alg, label, role, created_at, last_used_at)
        VALUES (@identity, @enrollment_id, @kind, @wrap, @wrapped, @credential_id, @credential_public_key, @credential_alg, @label, @role, @created_at, NULL)
        ON CONFLICT (identity, enrollment_id) DO UPDATE SET kind = excluded.kind, wrap = excluded.wrap, wrapped = excluded.wrapped, credential_id = excluded.credential_id,
          credential_public_key = excluded.credential_public_key, credential_alg = excluded.credential_alg, label = excluded.label, role = excluded.role, created_at = excluded.created_at`),
      removeEnrollment: db.prepare('DELETE FROM relay_keystore WHERE identity = ? AND enrollment_id = ?'),
      usedEnrollment: db.prepare('UPDATE relay_keystore SET last_used_at = ? WHERE identity = ? AND enrollment_id = ?'),
      systemFile: db.prepare('SELECT * FROM relay_system_files WHERE identity = ? AND path = ?'),
      systemFiles: db.prepare('SELECT * FROM relay_system_files WHERE identity = ? ORDER BY path'),
      putSystemFile: db.prepare(
        'INSERT INTO relay_system_files (identity, path, body, etag, updated_at) VALUES (@identity, @path, @body, @etag, @updated_at) ON CONFLICT (identity, path) DO UPDATE SET body = excluded.body, etag = excluded.etag, updated_at = excluded.updated_at',
      ),
      removeSystemFile: db.prepare('DELETE FROM relay_system_files WHERE identity = ? AND path = ?'),
      device: db.prepare('SELECT * FROM relay_devices WHERE id = ?'),
      devices: db.prepare('SELECT * FROM relay_devices WHERE identity = ? ORDER BY added_at'),
      upsertDevice: db.prepare(`INSERT INTO relay_devices (id, identity, name, kind, client, platform, browser, enrollment_id, added_at, last_seen)
        VALUES (@id, @identity, @name, @kind, @client, @platform, @browser, @enrollment_id, @now, @now)
        ON CONFLICT (id) DO UPDATE SET name = coalesce(excluded.name, name), kind = coalesce(excluded.kind, kind), client = coalesce(excluded.client, client),
          platform = coalesce(excluded.platform, platform), browser = coalesce(excluded.browser, browser), enrollment_id = coalesce(excluded.enrollment_id, enrollment_id), last_seen = excluded.last_seen`),
    };
  }

  identity(identity: string): IdentityRow | undefined {
    return this.#s.identity.get(identity) as IdentityRow | undefined;
  }

  /** False when the identity is already registered (409). */
  addIdentity(row: IdentityRow): boolean {
    return this.#s.addIdentity.run(row).changes === 1;
  }

  updateIdentity(row: Omit<IdentityRow, 'created_at'>): void {
    this.#s.setIdentity.run(row);
  }

  /**
   * Spools an envelope (`body`: the bytes received, never re-serialized) for `recipient`,
   * resolving once it is committed (fsynced): `stored`, `same` when these bytes already wait under
   * this id (a retry), `conflict` when other bytes do (ra.messages.id-key).
   */
  spool(row: Omit<SpoolRow, 'seq'>): Promise<'stored' | 'same' | 'conflict'> {
    return batchFor(this.#spool).run(() => {
      if (this.#s.spoolAdd.run(row).changes === 1) return 'stored';
      const held = this.#s.spoolOne.get(row.recipient, row.kind, row.id) as { body: string } | undefined;
      return held?.body === row.body ? 'same' : 'conflict';
    });
  }

  systemFiles(identity: string): SystemFileRow[] {
    return this.#s.systemFiles.all(identity) as SystemFileRow[];
  }

  systemFile(identity: string, path: string): SystemFileRow | undefined {
    return this.#s.systemFile.get(identity, path) as SystemFileRow | undefined;
  }

  putSystemFile(row: SystemFileRow): void {
    this.#s.putSystemFile.run(row);
  }

  removeSystemFile(identity: string, path: string): void {
    this.#s.removeSystemFile.run(identity, path);
  }

  enrollments(identity: string): EnrollmentRow[] {
    return this.#s.enrollments.all(identity) as EnrollmentRow[];
  }

  /**
   * Adds or replaces an enrollment; false when the identity already holds `max` others (one
   * transaction, so concurrent enrollments cannot pass the cap together).
   */
  putEnrollment(row: Omit<EnrollmentRow, 'last_used_at'>, max: number): boolean {
    return this.#db.transaction(() => {
      const others = this.enrollments(row.identity).filter((e) => e.enrollment_id !== row.enrollment_id);
      if (others.length >= max) return false;
      this.#s.putEnrollment.run(row);
      return true;
    })();
  }

  /**
   * Removes an enrollment unless it is the last and `allowLast` is false: `removed`, `missing`,
   * or `last` (one transaction, so two concurrent removals cannot both pass the last check).
   */
  removeEnrollment(identity: string, enrollmentId: string, allowLast: boolean): 'removed' | 'missing' | 'last' {
    return this.#db.transaction(() => {
      const all = this.enrollments(identity);
      if (!all.some((e) => e.enrollment_id === enrollmentId)) return 'missing' as const;
      if (all.length === 1 && !allowLast) return 'last' as const;
      this.#s.removeEnrollment.run(identity, enrollmentId);
      return 'removed' as const;
    })();
  }

  enrollmentUsed(identity: string, enrollmentId: string, at: number): void {
    this.#s.usedEnrollment.run(at, identity, enrollmentId);
  }

  /** Remembers a revoked session key until the session would have expired (ra.sessions.revoked-stays-revoked). */
  revokeSession(sessionKey: string, identity: string, expiresAt: number): void {
    this.#s.revoke.run(sessionKey, identity, expiresAt);
  }

  isRevoked(sessionKey: string, now: number): boolean {
    return this.#s.revoked.get(sessionKey, now) !== undefined;
  }

  /** What is pending for `recipient` after `since`, in order. */
  pending(recipient: string, since = 0): SpoolRow[] {
    return this.#s.spoolFor.all(recipient, since) as SpoolRow[];
  }

  /**
   * Drain on read: what is pending for `recipient`, rendered by `render`, and forgotten in the
   * same transaction, so only what was rendered is deleted, and nothing if rendering throws.
   */
  drain<T>(recipient: string, render: (rows: SpoolRow[]) => T): T {
    return this.#spool.transaction(() => {
      const rows = this.#s.spoolFor.all(recipient, 0) as SpoolRow[];
      const out = render(rows);
      for (const r of rows) this.#s.spoolDrop.run(r.seq);
      return out;
    })();
  }

  /** Drops messages through `through` and acks through `ackThrough`; the counts. */
  consume(recipient: string, through: number, ackThrough: number): { messages: number; acks: number } {
    return this.#spool.transaction(() => ({
      messages: this.#s.spoolDropThrough.run(recipient, 'message', through).changes,
      acks: this.#s.spoolDropThrough.run(recipient, 'ack', ackThrough).changes,
    }))();
  }

  /**
   * Expired messages (SPOOL_TTL passed): each is replaced, in one transaction, by the failed ack
   * `ackFor` builds for its sender (ra.spool.expiry). Expired acks are dropped.
   */
  expire(now: number, ackFor: (row: SpoolRow) => Omit<SpoolRow, 'seq'> | undefined): number {
    return this.#spool.transaction(() => {
      const rows = this.#s.expired.all(now) as SpoolRow[];
      for (const r of rows) {
        this.#s.spoolDrop.run(r.seq);
        const ack = ackFor(r);
        if (ack) this.#s.spoolAdd.run(ack);
      }
      this.#s.expiredAcks.run(now);
      if (this.#spool === this.#db) this.#s.revokedSweep.run(now);
      return rows.length;
    })();
  }

  devices(identity: string): DeviceRow[] {
    return this.#s.devices.all(identity) as DeviceRow[];
  }

  device(id: string): DeviceRow | undefined {
    return this.#s.device.get(id) as DeviceRow | undefined;
  }

  upsertDevice(row: Omit<DeviceRow, 'added_at' | 'last_seen'> & { now: number }): void {
    this.#s.upsertDevice.run(row);
  }

  /** Can the data directory be written (for /health)? */
  writable(): boolean {
    try {
      this.#db.exec('BEGIN IMMEDIATE; ROLLBACK');
      return true;
    } catch {
      return false;
    }
  }

  /** The relay's database, for the drive's tables (reference/relay/drive/store.ts). */
  get database(): Database.Database {
    return this.#db;
  }

  close(): void {
    if (this.#spool !== this.#db) this.#spool.close();
    this.#db.close();
  }
}
