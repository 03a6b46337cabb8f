// Sql.batch on both engines, as the relay's spool and drive use it: the transactions of one
// event-loop turn share a commit, one that fails is rolled back alone, and on PostgreSQL two
// processes (two pools) batching under the same lock keys in opposite orders neither deadlock
// nor lose a write, a value the database refuses is UnstorableValue, not a crash, and a batched
// function runs again (up to 6 times) when PostgreSQL aborts its transaction for a deadlock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSql, UnstorableValue } from '../../reference/stores/postgres.ts';
import { SqliteSql, type Sql } from '../../reference/stores/sql.ts';
import { openDatabase, IN_MEMORY } from '../../reference/stores/sqlite.ts';
import { throwawayDatabase, type ThrowawayDb } from '../bridge/postgres.ts';
import { waitUntil } from '../../harness/run/wait.ts';

let db: ThrowawayDb;
const opened: Sql[] = [];

beforeAll(() => {
  db = throwawayDatabase('svc_sql');
});

afterAll(async () => {
  for (const s of opened) await s.close();
  db?.drop();
});

async function engine(kind: 'sqlite' | 'postgres'): Promise<Sql> {
  const sql = kind === 'sqlite' ? new SqliteSql(openDatabase(IN_MEMORY), true) : new PostgresSql(db.url);
  opened.push(sql);
  await sql.exec('CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, n BIGINT NOT NULL)');
  await sql.exec('DELETE FROM t');
  return sql;
}

describe.each(['sqlite', 'postgres'] as const)('Sql.batch on %s', (kind) => {
  it('commits a turn of transactions together, rolling back only the one that fails', async () => {
    const sql = await engine(kind);
    const insert = (k: string) => sql.batch(async (tx) => tx.run('INSERT INTO t (k, n) VALUES (?, 1)', [k]), { lock: `t:${k}` });
    const failing = sql.batch(async (tx) => {
      await tx.run('INSERT INTO t (k, n) VALUES (?, 1)', ['doomed']);
      throw new Error('refused after its write');
    });
    const outcomes = await Promise.allSettled([insert('a'), failing, insert('b')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await sql.all<{ k: string }>('SELECT k FROM t ORDER BY k')).map((r) => r.k)).toEqual(['a', 'b']);
  });

  it('counts every increment of racing batches under one lock', async () => {
    const sql = await engine(kind);
    await sql.run("INSERT INTO t (k, n) VALUES ('c', 0)");
    await Promise.all(Array.from({ length: 40 }, () => sql.batch((tx) => tx.run("UPDATE t SET n = n + 1 WHERE k = 'c'"), { lock: 't:c' })));
    expect((await sql.get<{ n: number }>("SELECT n FROM t WHERE k = 'c'"))!.n).toBe(40);
  });
});

describe('Sql.batch on PostgreSQL across processes', () => {
  it('takes the locks of a batch in key order: two pools locking the same keys in opposite orders finish, every write kept', async () => {
    const [one, two] = [await engine('postgres'), new PostgresSql(db.url)];
    opened.push(two);
    await one.run("INSERT INTO t (k, n) VALUES ('x', 0), ('y', 0)");
    const bump = (sql: Sql, k: string) => sql.batch((tx) => tx.run('UPDATE t SET n = n + 1 WHERE k = ?', [k]), { lock: `t:${k}` });
    const rounds = Array.from({ length: 30 }, () => [bump(one, 'x'), bump(one, 'y'), bump(two, 'y'), bump(two, 'x')]).flat();
    await Promise.all(rounds);
    expect(await one.all<{ k: string; n: number }>('SELECT k, n FROM t ORDER BY k')).toEqual([
      { k: 'x', n: 60 },
      { k: 'y', n: 60 },
    ]);
  });

  it('answers a value PostgreSQL refuses with UnstorableValue, the rest of the batch kept', async () => {
    const sql = await engine('postgres');
    const outcomes = await Promise.allSettled([
      sql.batch((tx) => tx.run('INSERT INTO t (k, n) VALUES (?, 1)', ['a\u0000b'])),
      sql.batch((tx) => tx.run('INSERT INTO t (k, n) VALUES (?, ?)', ['big', 1e21])),
      sql.batch((tx) => tx.run('INSERT INTO t (k, n) VALUES (?, 1)', ['kept'])),
    ]);
    expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: expect.any(UnstorableValue) });
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: expect.any(UnstorableValue) });
    expect(outcomes[2]).toMatchObject({ status: 'fulfilled' });
    expect((await sql.all<{ k: string }>('SELECT k FROM t')).map((r) => r.k)).toEqual(['kept']);
  });

  it('runs a batched function again when PostgreSQL picks its transaction as a deadlock victim, its first run rolled back', async () => {
    const sql = (await engine('postgres')) as PostgresSql;
    await sql.run("INSERT INTO t (k, n) VALUES ('x', 0), ('y', 0)");
    const other = await sql.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query("UPDATE t SET n = n + 100 WHERE k = 'y'");
      let runs = 0;
      const batched = sql.batch(async (tx) => {
        runs++;
        await tx.run("UPDATE t SET n = n + 1 WHERE k = 'x'");
        await tx.run("UPDATE t SET n = n + 1 WHERE k = 'y'");
        return runs;
      });
      // The batch waits for y first, then the other transaction asks for x: a cycle. The batch's
      // backend waited longer, its deadlock check fires first, and PostgreSQL aborts its transaction.
      const waiting = async () => (await sql.get<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"))!.n > 0;
      expect(await waitUntil(waiting, 10_000)).toBe(true);
      const closing = other.query("UPDATE t SET n = n + 100 WHERE k = 'x'").then(() => other.query('COMMIT'));
      expect(await batched).toBe(2);
      await closing;
      expect(await sql.all<{ k: string; n: number }>('SELECT k, n FROM t ORDER BY k')).toEqual([
        { k: 'x', n: 101 },
        { k: 'y', n: 101 },
      ]);
    } finally {
      other.release();
    }
  }, 30_000);

  it('runs a batched function at most 6 times: 4 deadlock retries, then once more with savepoints when a neighbour fails', async () => {
    const sql = await engine('postgres');
    // SQLSTATE 40P01 (deadlock_detected) raised by the server itself, as its deadlock check does.
    const deadlock = (tx: Sql) => tx.run("DO $$ BEGIN RAISE EXCEPTION 'forced deadlock' USING ERRCODE = 'deadlock_detected'; END $$");
    let runs = 0;
    let neighbourRuns = 0;
    const counted = sql.batch(async (tx) => {
      runs++;
      await tx.run('INSERT INTO t (k, n) VALUES (?, ?)', [`run-${runs}`, runs]);
      if (runs < 5) await deadlock(tx);
      return runs;
    });
    const neighbour = sql.batch(async () => {
      neighbourRuns++;
      throw new Error('the neighbour refuses');
    });
    const [mine, theirs] = await Promise.allSettled([counted, neighbour]);
    expect(mine).toEqual({ status: 'fulfilled', value: 6 });
    expect(theirs).toMatchObject({ status: 'rejected', reason: { message: 'the neighbour refuses' } });
    expect(neighbourRuns).toBe(2);
    // Every earlier run was rolled back: only the last one's row is kept.
    expect(await sql.all<{ k: string }>('SELECT k FROM t')).toEqual([{ k: 'run-6' }]);

    let always = 0;
    const hopeless = sql.batch(async (tx) => {
      always++;
      return deadlock(tx);
    });
    await expect(hopeless).rejects.toMatchObject({ code: '40P01' });
    expect(always).toBe(5);
  });
});
