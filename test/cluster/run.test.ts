// `run --reference --cluster` on real engines, as an operator scales out (docs/servers/scale-out.md):
// a throwaway PostgreSQL database (test/bridge/postgres.ts), a fresh redis-server without
// persistence (test/rp/helpers.ts) and a one-node Ceph's S3 gateway (test/setup/ceph.ts). Every
// suite runs against its clustered reference: two RP and two bridge processes on PostgreSQL,
// relay A as two processes behind a round-robin front sharing Redis and PostgreSQL (a schema of
// its own per relay), the relays' drive chunks on S3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { throwawayDatabase, type ThrowawayDb } from '../bridge/postgres.ts';
import { runCli, startRedis, type RedisServer } from '../rp/helpers.ts';
import { startCeph, type Ceph } from '../setup/ceph.ts';

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
      process.stdout.write(
        `cluster run: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped; suites ${JSON.stringify((run.report.config as { suites: Array<{ suite: string }> }).suites.map((x) => x.suite))}\n`,
      );
      expect(run.failed, run.out).toEqual([]);
      expect(run.differ).toEqual([]);
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
      expect(run.code, run.err).toBe(0);
    } finally {
      for (const k of Object.keys(keys)) delete process.env[k];
    }
  }, 600_000);
});
