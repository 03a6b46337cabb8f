// `run --reference --cluster` on real engines, as an operator scales out (docs/servers/scale-out.md):
// a throwaway PostgreSQL database (test/bridge/postgres.ts), a fresh redis-server without
// persistence (test/rp/helpers.ts) and a one-node Ceph's S3 gateway (test/setup/ceph.ts). Every
// suite runs against its clustered reference: two RP and two bridge processes on PostgreSQL,
// relay A as two processes behind a round-robin front sharing Redis (and one data dir until the
// relay takes --database), the relays' drive chunks on S3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELAY_ON_DATABASE } from '../../harness/run/cluster.ts';
import { throwawayDatabase, type ThrowawayDb } from '../bridge/postgres.ts';
import { runCli, startRedis, type RedisServer } from '../rp/helpers.ts';
import { startCeph, type Ceph } from '../setup/ceph.ts';

/**
 * Checks the clustered reference fails today (some only under contention) for a bug of the
 * reference relay in a file this branch must not touch; each is printed, and anything else
 * failing fails the test. Remove an entry when its fix lands (the check then passes and the
 * entry does nothing; it is not an expected-failures file, whose stale entries would make a
 * timing-dependent gap fail the run when it happens not to occur).
 */
const KNOWN_CLUSTER_GAPS: Record<string, string> = {
  // The stream cap is counted per process (reference/relay/events.ts, EventHub.#streams): through
  // the front, streams 1-5 of one identity spread over two processes and none answers 429.
  'relay/events/max-streams': 'stream cap per process, not per relay',
  'relay/profile/more-codes': 'stream cap per process (its too_many_streams part)',
  // A link's proof-of-work token lives in the issuing process (reference/relay/drive/access.ts,
  // LinkTokens): the answer to it reaches the other process, which does not know it (403).
  'drive/links/verifier': 'link proof-of-work tokens per process',
  // A link's last open lets the rest of that download follow only at the process that counted it
  // (Drive.downloads in reference/relay/drive/routes.ts): the second chunk, at the other, is 410.
  'drive/profile/link-opens': 'a download under a link followed per process',
  ...(RELAY_ON_DATABASE
    ? {}
    : {
        // Two processes on one SQLite file: RelayStore's transactions (reference/relay/store.ts:
        // putEnrollment, removeEnrollment and the spool's pickup, drain and consume) are deferred:
        // they read, then write, and SQLite answers SQLITE_BUSY (database is locked, a 500) at once
        // when the other process wrote in between; `.immediate()` on each (as DriveStore does)
        // would wait instead. Which checks meet it depends on timing.
        'relay/messages/accepted-is-delivered': 'deferred SQLite transaction across processes (pickup 500)',
        'relay/spool/durable': 'deferred SQLite transaction across processes (pickup 500)',
        'relay/keystore/enroll-list-fetch': 'deferred SQLite transaction across processes',
        'relay/keystore/assertion-flags': 'deferred SQLite transaction across processes',
        'relay/keystore/assertion-signature': 'deferred SQLite transaction across processes',
        'relay/keystore/recovery-master': 'deferred SQLite transaction across processes',
        'relay/keystore/remove': 'deferred SQLite transaction across processes',
        'relay/profile/keystore-codes': 'deferred SQLite transaction across processes',
      }),
};

let db: ThrowawayDb | undefined;
let redis: RedisServer | undefined;
let ceph: Ceph | undefined;

beforeAll(async () => {
  db = throwawayDatabase('svc_cluster');
  [redis, ceph] = await Promise.all([startRedis(), startCeph()]);
}, 90_000);

afterAll(async () => {
  await redis?.stop();
  await ceph?.stop();
  db?.drop();
}, 60_000);

describe('run --reference --cluster', () => {
  it('refuses --cluster without the engines a suite needs, naming the flag', async () => {
    const run = await runCli(['run', '--reference', '--cluster', '--suite', 'rp']).catch((e: Error) => e);
    expect(String(run instanceof Error ? run.message : run.err)).toContain('--cluster needs --cluster-database postgres://');
  });

  it('passes every suite against the clustered reference on PostgreSQL, Redis and S3', async () => {
    const keys = { DRIVE_S3_ACCESS_KEY: ceph!.accessKey, DRIVE_S3_SECRET_KEY: ceph!.secretKey };
    Object.assign(process.env, keys);
    try {
      const run = await runCli([
        'run',
        '--reference',
        '--cluster',
        '--cluster-database',
        db!.url,
        '--cluster-redis',
        redis!.url,
        '--cluster-s3',
        `${ceph!.endpoint}/svc-cluster`,
        '--runs',
        '10',
        '--seed',
        '7',
      ]);
      const s = run.report.summary;
      const gaps = run.failed.filter((id) => id in KNOWN_CLUSTER_GAPS);
      const failed = run.failed.filter((id) => !(id in KNOWN_CLUSTER_GAPS));
      process.stdout.write(
        `cluster run: ${s.passed} passed, ${s.failed} failed (${gaps.length} known cluster gaps: ${gaps.join(', ') || 'none'}), ${s.skipped} skipped; suites ${JSON.stringify(
          (run.report.config as { suites: Array<{ suite: string }> }).suites.map((x) => x.suite),
        )}\n`,
      );
      expect(failed, run.out).toEqual([]);
      expect(run.differ.filter((id) => !(id in KNOWN_CLUSTER_GAPS))).toEqual([]);
      expect(s.skipped).toBe(0);
      expect(s.passed).toBeGreaterThan(350);
      const suites = (run.report.config as { suites: Array<Record<string, unknown>> }).suites;
      expect(suites.find((x) => x.suite === 'rp')).toMatchObject({ database: 'postgres' });
      expect(suites.find((x) => x.suite === 'bridge')).toMatchObject({ database: 'postgres' });
      for (const name of ['relay', 'drive']) {
        const relay = suites.find((x) => x.suite === name) as { relay: string; cluster: { front: string; processes: string[] } };
        expect(relay.cluster.front).toBe(relay.relay);
        expect(relay.cluster.processes).toHaveLength(2);
      }
      if (gaps.length === 0) expect(run.code, run.err).toBe(0);
    } finally {
      for (const k of Object.keys(keys)) delete process.env[k];
    }
  }, 600_000);
});
