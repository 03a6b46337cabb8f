// The drive's metadata in the relay's database (SQLite or PostgreSQL; tables in ../schema.ts):
// nodes and their signed versions, pages, which chunks each version or record references, append
// records, shares, the change log (its sequence is the changes cursor) and applied request ids.
// Every commit runs in one transaction holding the drive's lock (ra.drive.commit): a crash
// mid-commit leaves the previous head, two commits on one base are applied one after the other
// on any number of processes, and a 200 follows COMMIT, which has reached the disk.
import type { Sql } from '../../stores/sql.ts';

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

type Meta = { root: string | null; seq: number; used: number };
const driveLock = (drive: string) => `drive:${drive}`;

export class DriveStore {
  constructor(readonly sql: Sql) {}

  /**
   * `fn` as one transaction holding `drive`'s lock, group-committed with the other writes of the
   * turn (Sql.batch). `durable: false` for rows a later commit's sync covers.
   */
  atomic<T>(drive: string, fn: (s: DriveStore) => Promise<T>, options: { durable?: boolean } = {}): Promise<T> {
    return this.sql.batch((tx) => fn(new DriveStore(tx)), { ...options, lock: driveLock(drive) });
  }

  async meta(drive: string): Promise<Meta> {
    return (await this.sql.get<Meta>('SELECT root, seq, used FROM drive_meta WHERE drive = ?', [drive])) ?? { root: null, seq: 0, used: 0 };
  }

  /** The drive's next change sequence (inside atomic()). */
  async nextSeq(drive: string): Promise<number> {
    await this.sql.run('INSERT INTO drive_meta (drive) VALUES (?) ON CONFLICT (drive) DO NOTHING', [drive]);
    return (await this.sql.get<{ seq: number }>('UPDATE drive_meta SET seq = seq + 1 WHERE drive = ? RETURNING seq', [drive]))!.seq;
  }

  async setRoot(drive: string, root: string): Promise<void> {
    await this.sql.run('UPDATE drive_meta SET root = ? WHERE drive = ?', [root, drive]);
  }

  node(drive: string, node: string): Promise<NodeRow | undefined> {
    return this.sql.get<NodeRow>('SELECT * FROM drive_nodes WHERE drive = ? AND node = ?', [drive, node]);
  }

  /** Live children of `folder` in node order, those after the node id `after` when given. */
  children(drive: string, folder: string, limit: number, after = ''): Promise<NodeRow[]> {
    return this.sql.all<NodeRow>('SELECT * FROM drive_nodes WHERE drive = ? AND folder = ? AND removed = 0 AND node > ? ORDER BY node LIMIT ?', [drive, folder, after, limit]);
  }

  /** A live node of `folder` holding `nameHash`, other than `except`. */
  named(drive: string, folder: string, nameHash: string, except: string): Promise<NodeRow | undefined> {
    return this.sql.get<NodeRow>('SELECT * FROM drive_nodes WHERE drive = ? AND folder = ? AND name_hash = ? AND removed = 0 AND node <> ?', [drive, folder, nameHash, except]);
  }

  async putNode(r: NodeRow): Promise<void> {
    await this.sql.run(
      'INSERT INTO drive_nodes (drive, node, kind, folder, name_hash, version, seq, removed, rotate, manifest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (drive, node) DO UPDATE SET folder = excluded.folder, name_hash = excluded.name_hash, version = excluded.version, seq = excluded.seq, removed = excluded.removed, rotate = excluded.rotate, manifest = excluded.manifest',
      [r.drive, r.node, r.kind, r.folder, r.name_hash, r.version, r.seq, r.removed, r.rotate, r.manifest],
    );
  }

  async markRotate(drive: string, node: string): Promise<void> {
    await this.sql.run('UPDATE drive_nodes SET rotate = 1 WHERE drive = ? AND node = ?', [drive, node]);
  }

  version(drive: string, node: string, version: string): Promise<{ manifest: string; seq: number; operation: string } | undefined> {
    return this.sql.get('SELECT manifest, seq, operation FROM drive_versions WHERE drive = ? AND node = ? AND version = ?', [drive, node, version]);
  }

  versions(drive: string, node: string, limit: number): Promise<{ version: string; seq: number; operation: string }[]> {
    return this.sql.all('SELECT version, seq, operation FROM drive_versions WHERE drive = ? AND node = ? ORDER BY seq DESC LIMIT ?', [drive, node, limit]);
  }

  async putVersion(drive: string, node: string, version: string, seq: number, operation: string, manifest: string, pages: { hash: string; body: string }[], chunks: string[]): Promise<void> {
    await this.sql.run('INSERT INTO drive_versions (drive, node, version, seq, operation, manifest) VALUES (?, ?, ?, ?, ?, ?)', [drive, node, version, seq, operation, manifest]);
    for (const p of pages) await this.sql.run('INSERT INTO drive_pages (drive, node, version, hash, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [drive, node, version, p.hash, p.body]);
    for (const c of chunks) await this.#ref(drive, node, version, 0, c);
  }

  async #ref(drive: string, node: string, version: string, position: number, chunk: string): Promise<void> {
    await this.sql.run('INSERT INTO drive_refs (drive, node, version, position, chunk) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [drive, node, version, position, chunk]);
  }

  async page(drive: string, node: string, version: string, hash: string): Promise<string | undefined> {
    return (await this.sql.get<{ body: string }>('SELECT body FROM drive_pages WHERE drive = ? AND node = ? AND version = ? AND hash = ?', [drive, node, version, hash]))?.body;
  }

  /** Whether a version of the node references the chunk. */
  async versionReferences(drive: string, node: string, version: string, chunk: string): Promise<boolean> {
    const sql = "SELECT 1 AS referenced FROM drive_refs WHERE drive = ? AND node = ? AND version = ? AND position = 0 AND chunk = ? AND version <> ''";
    return (await this.sql.get(sql, [drive, node, version, chunk])) !== undefined;
  }

  /** The bodies of the node's retained records that reference the chunk. */
  #recordBodies(drive: string, node: string, chunk: string): Promise<Array<{ body: string }>> {
    return this.sql.all(
      "SELECT d.body FROM drive_refs r JOIN drive_records d ON d.drive = r.drive AND d.node = r.node AND d.position = r.position WHERE r.drive = ? AND r.node = ? AND r.version = '' AND r.chunk = ?",
      [drive, node, chunk],
    );
  }

  /** Whether a retained record of the node references the chunk. */
  async recordReferences(drive: string, node: string, chunk: string): Promise<boolean> {
    return (await this.#recordBodies(drive, node, chunk)).length > 0;
  }

  /**
   * Whether `chunk` starts what it is read as part of: the first chunk of the version (its first
   * page's first reference) or, without a version, of a retained record that references it.
   */
  async startsContent(drive: string, node: string, version: string | undefined, chunk: string): Promise<boolean> {
    const first = (body: string | undefined) => ((body ? (JSON.parse(body) as { chunks?: Array<{ id?: unknown }> }).chunks : undefined) ?? [])[0]?.id;
    if (version === undefined) return (await this.#recordBodies(drive, node, chunk)).some((r) => first(r.body) === chunk);
    const manifest = (await this.version(drive, node, version))?.manifest;
    const page = manifest ? (JSON.parse(manifest) as { pages?: unknown[] }).pages?.[0] : undefined;
    return typeof page === 'string' && first(await this.page(drive, node, version, page)) === chunk;
  }

  records(drive: string, node: string, after: number, limit: number): Promise<RecordRow[]> {
    return this.sql.all<RecordRow>('SELECT * FROM drive_records WHERE drive = ? AND node = ? AND position > ? ORDER BY position LIMIT ?', [drive, node, after, limit]);
  }

  async lastPosition(drive: string, node: string): Promise<number> {
    return (await this.sql.get<{ p: number | null }>('SELECT max(position) AS p FROM drive_records WHERE drive = ? AND node = ?', [drive, node]))?.p ?? 0;
  }

  async authorHead(drive: string, node: string, author: string): Promise<{ sequence: number; hash: string }> {
    return (
      (await this.sql.get<{ sequence: number; hash: string }>('SELECT sequence, hash FROM drive_record_heads WHERE drive = ? AND node = ? AND author = ?', [drive, node, author])) ?? {
        sequence: 0,
        hash: '',
      }
    );
  }

  async putRecord(r: RecordRow, chunks: string[]): Promise<void> {
    await this.sql.run('INSERT INTO drive_records (drive, node, position, author, sequence, hash, body) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      r.drive,
      r.node,
      r.position,
      r.author,
      r.sequence,
      r.hash,
      r.body,
    ]);
    await this.sql.run(
      'INSERT INTO drive_record_heads (drive, node, author, sequence, hash) VALUES (?, ?, ?, ?, ?) ON CONFLICT (drive, node, author) DO UPDATE SET sequence = excluded.sequence, hash = excluded.hash',
      [r.drive, r.node, r.author, r.sequence, r.hash],
    );
    for (const c of chunks) await this.#ref(r.drive, r.node, '', r.position, c);
  }

  trim(drive: string, node: string, before: number): Promise<number> {
    return this.sql.run('DELETE FROM drive_records WHERE drive = ? AND node = ? AND position < ?', [drive, node, before]);
  }

  async chunkSize(drive: string, id: string): Promise<number | undefined> {
    return (await this.sql.get<{ size: number }>('SELECT size FROM drive_chunks WHERE drive = ? AND id = ?', [drive, id]))?.size;
  }

  /**
   * Records a stored chunk and counts its bytes (once), without waiting for a sync of its own:
   * the chunk's bytes are durable already, and the sync of any later commit covers this row too
   * (the log is written in order), so no commit can reference a chunk whose row a power loss
   * dropped. After such a loss the missing list asks for the chunk again, and its upload finds it.
   * True for the one call, of any process, whose row was inserted: that upload created the chunk.
   */
  putChunk(drive: string, id: string, size: number, at: number): Promise<boolean> {
    return this.sql.batch(
      async (tx) => {
        await tx.run('INSERT INTO drive_meta (drive) VALUES (?) ON CONFLICT (drive) DO NOTHING', [drive]);
        const added = await tx.run('INSERT INTO drive_chunks (drive, id, size, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [drive, id, size, at]);
        if (added > 0) await tx.run('UPDATE drive_meta SET used = used + ? WHERE drive = ?', [size, drive]);
        return added > 0;
      },
      // Under the drive's lock too: its meta row is then only ever locked in the drives' order.
      { durable: false, lock: driveLock(drive) },
    );
  }

  share(drive: string, id: string): Promise<ShareRow | undefined> {
    return this.sql.get<ShareRow>('SELECT * FROM drive_shares WHERE drive = ? AND id = ?', [drive, id]);
  }

  shareByLink(drive: string, link: string): Promise<ShareRow | undefined> {
    return this.sql.get<ShareRow>('SELECT * FROM drive_shares WHERE drive = ? AND link = ? AND revoked = 0', [drive, link]);
  }

  sharesOf(drive: string, member: string): Promise<ShareRow[]> {
    return this.sql.all<ShareRow>('SELECT * FROM drive_shares WHERE drive = ? AND member = ? AND revoked = 0', [drive, member]);
  }

  sharesOn(drive: string, node: string): Promise<ShareRow[]> {
    return this.sql.all<ShareRow>('SELECT * FROM drive_shares WHERE drive = ? AND node = ? AND revoked = 0', [drive, node]);
  }

  allShares(drive: string): Promise<ShareRow[]> {
    return this.sql.all<ShareRow>('SELECT * FROM drive_shares WHERE drive = ? AND revoked = 0', [drive]);
  }

  async putShare(r: Omit<ShareRow, 'used' | 'revoked'>): Promise<void> {
    await this.sql.run('INSERT INTO drive_shares (drive, id, node, member, link, role, body, expires_at, downloads) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      r.drive,
      r.id,
      r.node,
      r.member,
      r.link,
      r.role,
      r.body,
      r.expires_at,
      r.downloads,
    ]);
  }

  async revokeShare(drive: string, id: string): Promise<void> {
    await this.sql.run('UPDATE drive_shares SET revoked = 1 WHERE drive = ? AND id = ?', [drive, id]);
  }

  /** Spends one of a link's opens; false when none is left (one statement: racing opens cannot both take the last). */
  async spendOpen(drive: string, id: string): Promise<boolean> {
    return (await this.sql.write('UPDATE drive_shares SET used = used + 1 WHERE drive = ? AND id = ? AND revoked = 0 AND (downloads = 0 OR used < downloads)', [drive, id])) > 0;
  }

  async addChange(r: ChangeRow): Promise<void> {
    await this.sql.run('INSERT INTO drive_changes (drive, seq, node, operation, version, position, share) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      r.drive,
      r.seq,
      r.node,
      r.operation,
      r.version,
      r.position,
      r.share,
    ]);
  }

  changes(drive: string, after: number, limit: number): Promise<ChangeRow[]> {
    return this.sql.all<ChangeRow>('SELECT * FROM drive_changes WHERE drive = ? AND seq > ? ORDER BY seq LIMIT ?', [drive, after, limit]);
  }

  async appliedCommit(drive: string, id: string): Promise<string | undefined> {
    return (await this.sql.get<{ result: string }>('SELECT result FROM drive_commits WHERE drive = ? AND id = ?', [drive, id]))?.result;
  }

  async putCommit(drive: string, id: string, result: string): Promise<void> {
    await this.sql.run('INSERT INTO drive_commits (drive, id, result) VALUES (?, ?, ?)', [drive, id, result]);
  }
}
