// `svc-oauth backup` and `restore` on either engine. A backup is always one SQLite file with the
// bridge's schema (signing keys, pairwise secret, clients, consents, sessions, audit events, ...):
// from SQLite it is SQLite's online backup; from PostgreSQL every bridge table is read in one
// REPEATABLE READ snapshot and written into a fresh file. A restore puts a file in place under
// --data-dir, or loads it into PostgreSQL in one transaction, so a bridge moves between engines
// with the same subjects and key ids.
import { rm } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { SqliteSql, type Sql } from '../stores/sql.ts';
import { BridgeStore } from './store.ts';

/** The bridge's tables in a database that has run the migrations (the file's own schema is the list). */
async function bridgeTables(sqlite: Sql): Promise<string[]> {
  const rows = await sqlite.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'bridge\\_%' ESCAPE '\\' ORDER BY name");
  return rows.map((r) => r.name);
}

/** A backup file as an SQL handle: one self-contained file (rollback journal, no WAL beside it). */
const backupFile = (file: string) => new SqliteSql(new Database(file), true);

/** A fresh backup file at `file` with the bridge's schema. */
async function freshFile(file: string): Promise<SqliteSql> {
  await rm(file, { force: true });
  const sql = backupFile(file);
  await BridgeStore.open(sql);
  return sql;
}

async function copyRows(from: Sql, to: Sql, table: string): Promise<number> {
  const rows = await from.all<Record<string, unknown>>(`SELECT * FROM ${table}`);
  for (const row of rows) {
    const cols = Object.keys(row);
    await to.run(
      `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
      cols.map((c) => row[c]),
    );
  }
  return rows.length;
}

/** Copies a PostgreSQL bridge database into a new SQLite file, from one consistent snapshot. */
export async function backupPostgres(pg: Sql, file: string): Promise<number> {
  await BridgeStore.open(pg);
  const out = await freshFile(file);
  try {
    const tables = await bridgeTables(out);
    return await pg.transaction(async (tx) => {
      await tx.run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      let n = 0;
      await out.transaction(async (o) => {
        for (const t of tables) {
          await o.run(`DELETE FROM ${t}`);
          n += await copyRows(tx, o, t);
        }
      });
      return n;
    });
  } finally {
    await out.close();
  }
}

/** Replaces a PostgreSQL bridge database's rows with a backup file's, in one transaction. */
export async function restorePostgres(file: string, pg: Sql): Promise<number> {
  await BridgeStore.open(pg);
  const src = backupFile(file);
  try {
    // An older backup is brought to this schema first, so both sides have the same columns and version.
    await BridgeStore.open(src);
    const tables = await bridgeTables(src);
    return await pg.transaction(async (tx) => {
      let n = 0;
      for (const t of tables) await tx.run(`DELETE FROM ${t}`);
      for (const t of tables) n += await copyRows(src, tx, t);
      return n;
    });
  } finally {
    await src.close();
  }
}
