// The relay's durable state: identities with their documents, the spool (messages and acks waiting
// for pickup, each under a sequence number that is the cursor), revoked sessions, the keystore,
// system files and device rows; the drive's tables share the database (./drive/store.ts). On
// SQLite (`<data-dir>/relay.sqlite`, WAL, `synchronous = FULL`) or PostgreSQL (--database), the
// same statements on one schema (./schema.ts). A 202 is sent only after the spool's COMMIT, so
// accepted mail survives `kill -9` (ra.spool.durable); on SQLite the envelopes accepted during one
// event-loop turn share one COMMIT and so one fsync (Sql.batch). Each recipient's spool writes
// hold its lock until COMMIT, so on PostgreSQL too sequence numbers become visible in order and
// a cursor never passes one that commits later. Sessions, challenges and nonces are not here:
// document 3 keeps them in memory (./state.ts).
import { PostgresSql } from '../stores/postgres.ts';
import { SqliteSql, type Sql } from '../stores/sql.ts';
import { IN_MEMORY, openDatabase } from '../stores/sqlite.ts';
import { migrateRelay } from './schema.ts';

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

export interface RelayStoreOptions {
  dataDir: string;
  /** postgres://USER:PASS@HOST:PORT/DB; absent: SQLite under dataDir. */
  database?: string;
  /** The `spool-memory` breakage: mail lives only in this process. */
  spoolInMemory?: boolean;
}

const SPOOL_INSERT = 'INSERT INTO relay_spool (recipient, kind, id, sender, message_id, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (recipient, kind, id) DO NOTHING';
const spoolParams = (r: Omit<SpoolRow, 'seq'>) => [r.recipient, r.kind, r.id, r.sender, r.message_id, r.body, r.expires_at];
/** The lock a recipient's spool writes hold until COMMIT. */
const spoolLock = (recipient: string) => `relay-spool:${recipient}`;

export class RelayStore {
  readonly sql: Sql;
  readonly #spool: Sql;

  private constructor(sql: Sql, spool: Sql) {
    this.sql = sql;
    this.#spool = spool;
  }

  static async open(o: RelayStoreOptions): Promise<RelayStore> {
    const sql = o.database ? new PostgresSql(o.database) : sqlite(o.dataDir);
    const spool = o.spoolInMemory ? sqlite(IN_MEMORY) : sql;
    try {
      await migrateRelay(sql);
      if (spool !== sql) await migrateRelay(spool);
    } catch (error) {
      await sql.close().catch(() => undefined);
      throw error;
    }
    return new RelayStore(sql, spool);
  }

  identity(identity: string): Promise<IdentityRow | undefined> {
    return this.sql.get<IdentityRow>('SELECT * FROM relay_identities WHERE identity = ?', [identity]);
  }

  /** False when the identity is already registered (409). */
  async addIdentity(r: IdentityRow): Promise<boolean> {
    const sql = 'INSERT INTO relay_identities (identity, public_key, encryption_public_key, document, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (identity) DO NOTHING';
    return (await this.sql.write(sql, [r.identity, r.public_key, r.encryption_public_key, r.document, r.created_at])) === 1;
  }

  async updateIdentity(r: Omit<IdentityRow, 'created_at'>): Promise<void> {
    await this.sql.write('UPDATE relay_identities SET public_key = ?, encryption_public_key = ?, document = ? WHERE identity = ?', [r.public_key, r.encryption_public_key, r.document, r.identity]);
  }

  /**
   * Spools an envelope (`body`: the bytes received, never re-serialized) for `recipient`,
   * resolving once it is committed (fsynced): `stored`, `same` when these bytes already wait under
   * this id (a retry), `conflict` when other bytes do (ra.messages.id-key).
   */
  spool(row: Omit<SpoolRow, 'seq'>): Promise<'stored' | 'same' | 'conflict'> {
    return this.#spool.batch(
      async (tx) => {
        if ((await tx.run(SPOOL_INSERT, spoolParams(row))) === 1) return 'stored';
        const held = await tx.get<{ body: string }>('SELECT body FROM relay_spool WHERE recipient = ? AND kind = ? AND id = ?', [row.recipient, row.kind, row.id]);
        return held?.body === row.body ? 'same' : 'conflict';
      },
      { lock: spoolLock(row.recipient) },
    );
  }

  systemFiles(identity: string): Promise<SystemFileRow[]> {
    return this.sql.all<SystemFileRow>('SELECT * FROM relay_system_files WHERE identity = ? ORDER BY path', [identity]);
  }

  /** The stored documents of `identity` at `paths`, in one query (the admission of every envelope reads two). */
  systemFilesAt(identity: string, paths: readonly [string, string]): Promise<SystemFileRow[]> {
    return this.sql.all<SystemFileRow>('SELECT * FROM relay_system_files WHERE identity = ? AND path IN (?, ?)', [identity, ...paths]);
  }

  systemFile(identity: string, path: string): Promise<SystemFileRow | undefined> {
    return this.sql.get<SystemFileRow>('SELECT * FROM relay_system_files WHERE identity = ? AND path = ?', [identity, path]);
  }

  /**
   * Writes a system document; with `ifEtag` only over that stored version, so two writers on one
   * ETag cannot both succeed (ra.system.etag). False when the stored version is not the one named.
   */
  async putSystemFile(r: SystemFileRow, ifEtag?: string): Promise<boolean> {
    const values = [r.identity, r.path, r.body, r.etag, r.updated_at];
    const insert = 'INSERT INTO relay_system_files (identity, path, body, etag, updated_at) VALUES (?, ?, ?, ?, ?)';
    const set = 'ON CONFLICT (identity, path) DO UPDATE SET body = excluded.body, etag = excluded.etag, updated_at = excluded.updated_at';
    if (ifEtag === undefined) return (await this.sql.write(`${insert} ${set}`, values)) === 1;
    return (await this.sql.write(`${insert} ${set} WHERE relay_system_files.etag = ?`, [...values, ifEtag])) === 1;
  }

  /** Removes a system document (only the version `ifEtag` names, when given); false when nothing was removed. */
  async removeSystemFile(identity: string, path: string, ifEtag?: string): Promise<boolean> {
    const guard = ifEtag === undefined ? '' : ' AND etag = ?';
    return (await this.sql.write(`DELETE FROM relay_system_files WHERE identity = ? AND path = ?${guard}`, ifEtag === undefined ? [identity, path] : [identity, path, ifEtag])) > 0;
  }

  enrollments(identity: string, sql: Sql = this.sql): Promise<EnrollmentRow[]> {
    return sql.all<EnrollmentRow>('SELECT * FROM relay_keystore WHERE identity = ? ORDER BY created_at, enrollment_id', [identity]);
  }

  /**
   * Adds or replaces an enrollment; false when the identity already holds `max` others (one
   * transaction holding the identity's keystore lock, so concurrent enrollments cannot pass the cap together).
   */
  putEnrollment(r: Omit<EnrollmentRow, 'last_used_at'>, max: number): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      await tx.lock(`relay-keystore:${r.identity}`);
      const others = (await this.enrollments(r.identity, tx)).filter((e) => e.enrollment_id !== r.enrollment_id);
      if (others.length >= max) return false;
      await tx.run(
        `INSERT INTO relay_keystore (identity, enrollment_id, kind, wrap, wrapped, credential_id, credential_public_key, credential_alg, label, role, created_at, last_used_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)
        ON CONFLICT (identity, enrollment_id) DO UPDATE SET kind = excluded.kind, wrap = excluded.wrap, wrapped = excluded.wrapped, credential_id = excluded.credential_id,
          credential_public_key = excluded.credential_public_key, credential_alg = excluded.credential_alg, label = excluded.label, role = excluded.role, created_at = excluded.created_at`,
        [r.identity, r.enrollment_id, r.kind, r.wrap, r.wrapped, r.credential_id, r.credential_public_key, r.credential_alg, r.label, r.role, r.created_at],
      );
      return true;
    });
  }

  /**
   * Removes an enrollment unless it is the last and `allowLast` is false: `removed`, `missing`,
   * or `last` (one transaction holding the keystore lock, so two concurrent removals cannot both pass the last check).
   */
  removeEnrollment(identity: string, enrollmentId: string, allowLast: boolean): Promise<'removed' | 'missing' | 'last'> {
    return this.sql.transaction(async (tx) => {
      await tx.lock(`relay-keystore:${identity}`);
      const all = await this.enrollments(identity, tx);
      if (!all.some((e) => e.enrollment_id === enrollmentId)) return 'missing' as const;
      if (all.length === 1 && !allowLast) return 'last' as const;
      await tx.run('DELETE FROM relay_keystore WHERE identity = ? AND enrollment_id = ?', [identity, enrollmentId]);
      return 'removed' as const;
    });
  }

  async enrollmentUsed(identity: string, enrollmentId: string, at: number): Promise<void> {
    await this.sql.write('UPDATE relay_keystore SET last_used_at = ? WHERE identity = ? AND enrollment_id = ?', [at, identity, enrollmentId]);
  }

  /** Remembers a revoked session key until the session would have expired (ra.sessions.revoked-stays-revoked). */
  async revokeSession(sessionKey: string, identity: string, expiresAt: number): Promise<void> {
    await this.sql.write(
      'INSERT INTO relay_revoked_sessions (session_key, identity, expires_at) VALUES (?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET expires_at = excluded.expires_at WHERE relay_revoked_sessions.expires_at < excluded.expires_at',
      [sessionKey, identity, expiresAt],
    );
  }

  async isRevoked(sessionKey: string, now: number): Promise<boolean> {
    return (await this.sql.get('SELECT 1 AS revoked FROM relay_revoked_sessions WHERE session_key = ? AND expires_at > ?', [sessionKey, now])) !== undefined;
  }

  /**
   * What is pending for `recipient` after `since`, in order; with `now`, only what is live then:
   * an envelope past its `expires_at` (the spool's lifetime, or a sign-in prompt's own expiry)
   * is never handed out, and waits for the sweep (sweepSpool) to end it.
   */
  pending(recipient: string, since = 0, sql: Sql = this.#spool, now = 0): Promise<SpoolRow[]> {
    return sql.all<SpoolRow>('SELECT * FROM relay_spool WHERE recipient = ? AND seq > ? AND expires_at > ? ORDER BY seq', [recipient, since, now]);
  }

  /**
   * Drain on read: what is pending and live at `now` for `recipient`, rendered by `render`, and
   * forgotten in the same transaction, so only what was rendered is deleted, and nothing if
   * rendering throws.
   */
  drain<T>(recipient: string, render: (rows: SpoolRow[]) => T, now = 0): Promise<T> {
    return this.#spool.batch(
      async (tx) => {
        const rows = await this.pending(recipient, 0, tx, now);
        const out = render(rows);
        const last = rows.at(-1)?.seq;
        if (last !== undefined) await tx.run('DELETE FROM relay_spool WHERE recipient = ? AND seq <= ? AND expires_at > ?', [recipient, last, now]);
        return out;
      },
      { lock: spoolLock(recipient) },
    );
  }

  /** Drops messages through `through` and acks through `ackThrough`; the counts. */
  consume(recipient: string, through: number, ackThrough: number): Promise<{ messages: number; acks: number }> {
    const drop = 'DELETE FROM relay_spool WHERE recipient = ? AND kind = ? AND seq <= ?';
    return this.#spool.batch(
      async (tx) => ({
        messages: await tx.run(drop, [recipient, 'message', through]),
        acks: await tx.run(drop, [recipient, 'ack', ackThrough]),
      }),
      { lock: spoolLock(recipient) },
    );
  }

  /**
   * Expired messages (SPOOL_TTL passed): each is replaced, in one transaction, by the failed ack
   * `ackFor` builds for its sender (ra.spool.expiry). Expired acks are dropped.
   */
  expire(now: number, ackFor: (row: SpoolRow) => Omit<SpoolRow, 'seq'> | undefined): Promise<number> {
    return this.#spool.transaction(async (tx) => {
      const rows = await tx.all<SpoolRow>("SELECT * FROM relay_spool WHERE expires_at <= ? AND kind = 'message' ORDER BY seq LIMIT 500", [now]);
      // Every spool this sweep writes to, locked in one order (two sweeping processes cannot deadlock).
      for (const who of [...new Set(rows.flatMap((r) => [r.recipient, r.sender]))].sort()) await tx.lock(spoolLock(who));
      for (const r of rows) {
        if ((await tx.run('DELETE FROM relay_spool WHERE seq = ?', [r.seq])) === 0) continue;
        const ack = ackFor(r);
        if (ack) await tx.run(SPOOL_INSERT, spoolParams(ack));
      }
      await tx.run("DELETE FROM relay_spool WHERE expires_at <= ? AND kind = 'ack'", [now]);
      if (this.#spool === this.sql) await tx.run('DELETE FROM relay_revoked_sessions WHERE expires_at <= ?', [now]);
      return rows.length;
    });
  }

  devices(identity: string): Promise<DeviceRow[]> {
    return this.sql.all<DeviceRow>('SELECT * FROM relay_devices WHERE identity = ? ORDER BY added_at', [identity]);
  }

  device(id: string): Promise<DeviceRow | undefined> {
    return this.sql.get<DeviceRow>('SELECT * FROM relay_devices WHERE id = ?', [id]);
  }

  async upsertDevice(r: Omit<DeviceRow, 'added_at' | 'last_seen'> & { now: number }): Promise<void> {
    await this.sql.write(
      `INSERT INTO relay_devices (id, identity, name, kind, client, platform, browser, enrollment_id, added_at, last_seen)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET name = coalesce(excluded.name, relay_devices.name), kind = coalesce(excluded.kind, relay_devices.kind), client = coalesce(excluded.client, relay_devices.client),
          platform = coalesce(excluded.platform, relay_devices.platform), browser = coalesce(excluded.browser, relay_devices.browser), enrollment_id = coalesce(excluded.enrollment_id, relay_devices.enrollment_id), last_seen = excluded.last_seen`,
      [r.id, r.identity, r.name, r.kind, r.client, r.platform, r.browser, r.enrollment_id, r.now, r.now],
    );
  }

  /** Can the database be written (for /health)? An empty write transaction. */
  async writable(): Promise<boolean> {
    try {
      await this.sql.transaction(async () => undefined);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.#spool !== this.sql) await this.#spool.close();
    await this.sql.close();
  }
}

/** SQLite under the data dir: every COMMIT fsynced (a 202 is on disk). */
function sqlite(dataDir: string): Sql {
  const db = openDatabase(dataDir, 'relay.sqlite');
  if (dataDir !== IN_MEMORY) db.pragma('synchronous = FULL');
  return new SqliteSql(db, true);
}
