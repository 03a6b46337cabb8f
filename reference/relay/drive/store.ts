// The drive's metadata in the relay's SQLite database: nodes and their signed versions, pages,
// which chunks each version or record references, append records, shares, the change log (its
// sequence is the changes cursor) and applied request ids. Every commit runs in one transaction
// (ra.drive.commit): a crash mid-commit leaves the previous head, and a 200 follows COMMIT, which
// with `synchronous = FULL` has reached the disk.
import type Database from 'better-sqlite3';

export interface NodeRow {
  drive: string;
  node: string;
  kind: 'file' | 'folder';
  folder: string;
  name_hash: string;
  version: string;
  seq: number;
  removed: number;
  rotate: number;
  manifest: string;
}

export interface RecordRow {
  drive: string;
  node: string;
  position: number;
  author: string;
  sequence: number;
  hash: string;
  body: string;
}

export interface ShareRow {
  drive: string;
  id: string;
  node: string;
  member: string | null;
  link: string | null;
  role: string;
  body: string;
  expires_at: number | null;
  downloads: number;
  used: number;
  revoked: number;
}

export interface ChangeRow {
  drive: string;
  seq: number;
  node: string;
  operation: string;
  version: string | null;
  position: number | null;
  share: string | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS drive_meta (drive TEXT PRIMARY KEY, root TEXT, seq INTEGER NOT NULL DEFAULT 0, used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS drive_nodes (drive TEXT NOT NULL, node TEXT NOT NULL, kind TEXT NOT NULL, folder TEXT NOT NULL, name_hash TEXT NOT NULL, version TEXT NOT NULL, seq INTEGER NOT NULL, removed INTEGER NOT NULL DEFAULT 0, rotate INTEGER NOT NULL DEFAULT 0, manifest TEXT NOT NULL, PRIMARY KEY (drive, node));
-- Children in node order (listings, the remove check, the unshare walk) without a sort.
CREATE INDEX IF NOT EXISTS drive_nodes_children ON drive_nodes (drive, folder, node);
-- The name check of every create and move: without it, a scan of the folder's children.
CREATE INDEX IF NOT EXISTS drive_nodes_name ON drive_nodes (drive, folder, name_hash);
CREATE TABLE IF NOT EXISTS drive_versions (drive TEXT NOT NULL, node TEXT NOT NULL, version TEXT NOT NULL, seq INTEGER NOT NULL, operation TEXT NOT NULL, manifest TEXT NOT NULL, PRIMARY KEY (drive, node, version));
CREATE TABLE IF NOT EXISTS drive_pages (drive TEXT NOT NULL, node TEXT NOT NULL, version TEXT NOT NULL, hash TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (drive, node, version, hash));
CREATE TABLE IF NOT EXISTS drive_refs (drive TEXT NOT NULL, node TEXT NOT NULL, version TEXT NOT NULL, position INTEGER NOT NULL, chunk TEXT NOT NULL, PRIMARY KEY (drive, node, version, position, chunk));
CREATE INDEX IF NOT EXISTS drive_refs_chunk ON drive_refs (drive, node, chunk);
CREATE TABLE IF NOT EXISTS drive_records (drive TEXT NOT NULL, node TEXT NOT NULL, position INTEGER NOT NULL, author TEXT NOT NULL, sequence INTEGER NOT NULL, hash TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (drive, node, position));
CREATE INDEX IF NOT EXISTS drive_records_author ON drive_records (drive, node, author, sequence);
CREATE TABLE IF NOT EXISTS drive_record_heads (drive TEXT NOT NULL, node TEXT NOT NULL, author TEXT NOT NULL, sequence INTEGER NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (drive, node, author));
CREATE TABLE IF NOT EXISTS drive_chunks (drive TEXT NOT NULL, id TEXT NOT NULL, size INTEGER NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (drive, id));
CREATE TABLE IF NOT EXISTS drive_shares (drive TEXT NOT NULL, id TEXT NOT NULL, node TEXT NOT NULL, member TEXT, link TEXT, role TEXT NOT NULL, body TEXT NOT NULL, expires_at INTEGER, downloads INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (drive, id));
CREATE INDEX IF NOT EXISTS drive_shares_member ON drive_shares (drive, member);
CREATE INDEX IF NOT EXISTS drive_shares_link ON drive_shares (drive, link);
CREATE TABLE IF NOT EXISTS drive_changes (drive TEXT NOT NULL, seq INTEGER NOT NULL, node TEXT NOT NULL, operation TEXT NOT NULL, version TEXT, position INTEGER, share TEXT, PRIMARY KEY (drive, seq));
CREATE TABLE IF NOT EXISTS drive_commits (drive TEXT NOT NULL, id TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (drive, id));
`;

export class DriveStore {
  readonly #s;

  constructor(readonly db: Database.Database) {
    db.exec(SCHEMA);
    this.#s = {
      meta: db.prepare('SELECT * FROM drive_meta WHERE drive = ?'),
      ensureMeta: db.prepare('INSERT INTO drive_meta (drive) VALUES (?) ON CONFLICT (drive) DO NOTHING'),
      bump: db.prepare('UPDATE drive_meta SET seq = seq + 1 WHERE drive = ? RETURNING seq'),
      setRoot: db.prepare('UPDATE drive_meta SET root = ? WHERE drive = ?'),
      addUsed: db.prepare('UPDATE drive_meta SET used = used + ? WHERE drive = ?'),
      node: db.prepare('SELECT * FROM drive_nodes WHERE drive = ? AND node = ?'),
      children: db.prepare('SELECT * FROM drive_nodes WHERE drive = ? AND folder = ? AND removed = 0 ORDER BY node LIMIT ?'),
      named: db.prepare('SELECT * FROM drive_nodes WHERE drive = ? AND folder = ? AND name_hash = ? AND removed = 0 AND node <> ?'),
      putNode: db.prepare(
        'INSERT INTO drive_nodes (drive, node, kind, folder, name_hash, version, seq, removed, rotate, manifest) VALUES (@drive, @node, @kind, @folder, @name_hash, @version, @seq, @removed, @rotate, @manifest) ON CONFLICT (drive, node) DO UPDATE SET folder = excluded.folder, name_hash = excluded.name_hash, version = excluded.version, seq = excluded.seq, removed = excluded.removed, rotate = excluded.rotate, manifest = excluded.manifest',
      ),
      markRotate: db.prepare('UPDATE drive_nodes SET rotate = 1 WHERE drive = ? AND node = ?'),
      version: db.prepare('SELECT * FROM drive_versions WHERE drive = ? AND node = ? AND version = ?'),
      versions: db.prepare('SELECT version, seq, operation FROM drive_versions WHERE drive = ? AND node = ? ORDER BY seq DESC LIMIT ?'),
      putVersion: db.prepare('INSERT INTO drive_versions (drive, node, version, seq, operation, manifest) VALUES (?, ?, ?, ?, ?, ?)'),
      page: db.prepare('SELECT body FROM drive_pages WHERE drive = ? AND node = ? AND version = ? AND hash = ?'),
      putPage: db.prepare('INSERT INTO drive_pages (drive, node, version, hash, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING'),
      putRef: db.prepare('INSERT INTO drive_refs (drive, node, version, position, chunk) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING'),
      versionRef: db.prepare("SELECT 1 FROM drive_refs WHERE drive = ? AND node = ? AND version = ? AND position = 0 AND chunk = ? AND version <> ''"),
      recordRef: db.prepare(
        "SELECT 1 FROM drive_refs r JOIN drive_records d ON d.drive = r.drive AND d.node = r.node AND d.position = r.position WHERE r.drive = ? AND r.node = ? AND r.version = '' AND r.chunk = ?",
      ),
      recordBodies: db.prepare(
        "SELECT d.body FROM drive_refs r JOIN drive_records d ON d.drive = r.drive AND d.node = r.node AND d.position = r.position WHERE r.drive = ? AND r.node = ? AND r.version = '' AND r.chunk = ?",
      ),
      records: db.prepare('SELECT * FROM drive_records WHERE drive = ? AND node = ? AND position > ? ORDER BY position LIMIT ?'),
      lastPosition: db.prepare('SELECT max(position) AS p FROM drive_records WHERE drive = ? AND node = ?'),
      putRecord: db.prepare('INSERT INTO drive_records (drive, node, position, author, sequence, hash, body) VALUES (@drive, @node, @position, @author, @sequence, @hash, @body)'),
      trim: db.prepare('DELETE FROM drive_records WHERE drive = ? AND node = ? AND position < ?'),
      head: db.prepare('SELECT sequence, hash FROM drive_record_heads WHERE drive = ? AND node = ? AND author = ?'),
      putHead: db.prepare(
        'INSERT INTO drive_record_heads (drive, node, author, sequence, hash) VALUES (?, ?, ?, ?, ?) ON CONFLICT (drive, node, author) DO UPDATE SET sequence = excluded.sequence, hash = excluded.hash',
      ),
      chunk: db.prepare('SELECT size FROM drive_chunks WHERE drive = ? AND id = ?'),
      putChunk: db.prepare('INSERT INTO drive_chunks (drive, id, size, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
      share: db.prepare('SELECT * FROM drive_shares WHERE drive = ? AND id = ?'),
      shareByLink: db.prepare('SELECT * FROM drive_shares WHERE drive = ? AND link = ? AND revoked = 0'),
      sharesOf: db.prepare('SELECT * FROM drive_shares WHERE drive = ? AND member = ? AND revoked = 0'),
      sharesOn: db.prepare('SELECT * FROM drive_shares WHERE drive = ? AND node = ? AND revoked = 0'),
      allShares: db.prepare('SELECT * FROM drive_shares WHERE drive = ? AND revoked = 0'),
      putShare: db.prepare(
        'INSERT INTO drive_shares (drive, id, node, member, link, role, body, expires_at, downloads) VALUES (@drive, @id, @node, @member, @link, @role, @body, @expires_at, @downloads)',
      ),
      revoke: db.prepare('UPDATE drive_shares SET revoked = 1 WHERE drive = ? AND id = ?'),
      spendOpen: db.prepare('UPDATE drive_shares SET used = used + 1 WHERE drive = ? AND id = ? AND revoked = 0 AND (downloads = 0 OR used < downloads)'),
      change: db.prepare('INSERT INTO drive_changes (drive, seq, node, operation, version, position, share) VALUES (@drive, @seq, @node, @operation, @version, @position, @share)'),
      changes: db.prepare('SELECT * FROM drive_changes WHERE drive = ? AND seq > ? ORDER BY seq LIMIT ?'),
      commit: db.prepare('SELECT result FROM drive_commits WHERE drive = ? AND id = ?'),
      putCommit: db.prepare('INSERT INTO drive_commits (drive, id, result) VALUES (?, ?, ?)'),
    };
  }

  meta(drive: string): { root: string | null; seq: number; used: number } {
    const row = this.#s.meta.get(drive) as { root: string | null; seq: number; used: number } | undefined;
    return row ?? { root: null, seq: 0, used: 0 };
  }

  /** Runs `fn` in one IMMEDIATE transaction: all of it or nothing. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** The drive's next change sequence (inside a transaction). */
  nextSeq(drive: string): number {
    this.#s.ensureMeta.run(drive);
    return (this.#s.bump.get(drive) as { seq: number }).seq;
  }

  setRoot(drive: string, root: string): void {
    this.#s.setRoot.run(root, drive);
  }

  node(drive: string, node: string): NodeRow | undefined {
    return this.#s.node.get(drive, node) as NodeRow | undefined;
  }

  children(drive: string, folder: string, limit: number): NodeRow[] {
    return this.#s.children.all(drive, folder, limit) as NodeRow[];
  }

  /** A live node of `folder` holding `nameHash`, other than `except`. */
  named(drive: string, folder: string, nameHash: string, except: string): NodeRow | undefined {
    return this.#s.named.get(drive, folder, nameHash, except) as NodeRow | undefined;
  }

  putNode(row: NodeRow): void {
    this.#s.putNode.run(row);
  }

  markRotate(drive: string, node: string): void {
    this.#s.markRotate.run(drive, node);
  }

  version(drive: string, node: string, version: string): { manifest: string; seq: number; operation: string } | undefined {
    return this.#s.version.get(drive, node, version) as { manifest: string; seq: number; operation: string } | undefined;
  }

  versions(drive: string, node: string, limit: number): { version: string; seq: number; operation: string }[] {
    return this.#s.versions.all(drive, node, limit) as { version: string; seq: number; operation: string }[];
  }

  putVersion(drive: string, node: string, version: string, seq: number, operation: string, manifest: string, pages: { hash: string; body: string }[], chunks: string[]): void {
    this.#s.putVersion.run(drive, node, version, seq, operation, manifest);
    for (const p of pages) this.#s.putPage.run(drive, node, version, p.hash, p.body);
    for (const c of chunks) this.#s.putRef.run(drive, node, version, 0, c);
  }

  page(drive: string, node: string, version: string, hash: string): string | undefined {
    return (this.#s.page.get(drive, node, version, hash) as { body: string } | undefined)?.body;
  }

  /** Whether a version of the node references the chunk. */
  versionReferences(drive: string, node: string, version: string, chunk: string): boolean {
    return this.#s.versionRef.get(drive, node, version, chunk) !== undefined;
  }

  /** Whether a retained record of the node references the chunk. */
  recordReferences(drive: string, node: string, chunk: string): boolean {
    return this.#s.recordRef.get(drive, node, chunk) !== undefined;
  }

  /**
   * Whether `chunk` starts what it is read as part of: the first chunk of the version (its first
   * page's first reference) or, without a version, of a retained record that references it.
   */
  startsContent(drive: string, node: string, version: string | undefined, chunk: string): boolean {
    const first = (body: string | undefined) => ((body ? (JSON.parse(body) as { chunks?: Array<{ id?: unknown }> }).chunks : undefined) ?? [])[0]?.id;
    if (version === undefined) return (this.#s.recordBodies.all(drive, node, chunk) as Array<{ body: string }>).some((r) => first(r.body) === chunk);
    const manifest = this.version(drive, node, version)?.manifest;
    const page = manifest ? (JSON.parse(manifest) as { pages?: unknown[] }).pages?.[0] : undefined;
    return typeof page === 'string' && first(this.page(drive, node, version, page)) === chunk;
  }

  records(drive: string, node: string, after: number, limit: number): RecordRow[] {
    return this.#s.records.all(drive, node, after, limit) as RecordRow[];
  }

  lastPosition(drive: string, node: string): number {
    return (this.#s.lastPosition.get(drive, node) as { p: number | null }).p ?? 0;
  }

  authorHead(drive: string, node: string, author: string): { sequence: number; hash: string } {
    return (this.#s.head.get(drive, node, author) as { sequence: number; hash: string } | undefined) ?? { sequence: 0, hash: '' };
  }

  putRecord(row: RecordRow, chunks: string[]): void {
    this.#s.putRecord.run(row);
    this.#s.putHead.run(row.drive, row.node, row.author, row.sequence, row.hash);
    for (const c of chunks) this.#s.putRef.run(row.drive, row.node, '', row.position, c);
  }

  trim(drive: string, node: string, before: number): number {
    return this.#s.trim.run(drive, node, before).changes;
  }

  chunkSize(drive: string, id: string): number | undefined {
    return (this.#s.chunk.get(drive, id) as { size: number } | undefined)?.size;
  }

  /**
   * Records a stored chunk and counts its bytes (once), without waiting for a WAL fsync: the
   * chunk's file is durable already, and the fsync of any later commit covers this row too (the
   * WAL is written in order), so no commit can reference a chunk whose row a power loss dropped.
   * After such a loss the missing list asks for the chunk again, and its upload finds the file.
   */
  putChunk(drive: string, id: string, size: number, at: number): void {
    const full = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      this.transaction(() => {
        this.#s.ensureMeta.run(drive);
        if (this.#s.putChunk.run(drive, id, size, at).changes > 0) this.#s.addUsed.run(size, drive);
      });
    } finally {
      this.db.pragma(`synchronous = ${full}`);
    }
  }

  share(drive: string, id: string): ShareRow | undefined {
    return this.#s.share.get(drive, id) as ShareRow | undefined;
  }

  shareByLink(drive: string, link: string): ShareRow | undefined {
    return this.#s.shareByLink.get(drive, link) as ShareRow | undefined;
  }

  sharesOf(drive: string, member: string): ShareRow[] {
    return this.#s.sharesOf.all(drive, member) as ShareRow[];
  }

  sharesOn(drive: string, node: string): ShareRow[] {
    return this.#s.sharesOn.all(drive, node) as ShareRow[];
  }

  allShares(drive: string): ShareRow[] {
    return this.#s.allShares.all(drive) as ShareRow[];
  }

  putShare(row: Omit<ShareRow, 'used' | 'revoked'>): void {
    this.#s.putShare.run(row);
  }

  revokeShare(drive: string, id: string): void {
    this.#s.revoke.run(drive, id);
  }

  /** Spends one of a link's opens; false when none is left. */
  spendOpen(drive: string, id: string): boolean {
    return this.#s.spendOpen.run(drive, id).changes > 0;
  }

  addChange(row: ChangeRow): void {
    this.#s.change.run(row);
  }

  changes(drive: string, after: number, limit: number): ChangeRow[] {
    return this.#s.changes.all(drive, after, limit) as ChangeRow[];
  }

  appliedCommit(drive: string, id: string): string | undefined {
    return (this.#s.commit.get(drive, id) as { result: string } | undefined)?.result;
  }

  putCommit(drive: string, id: string, result: string): void {
    this.#s.putCommit.run(drive, id, result);
  }
}
