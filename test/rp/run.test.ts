// `svc-conformance run --reference --suite rp` end to end: the reference RP (child processes) and
// an in-process test authority, with the SQLite store, two processes sharing it, and a real
// redis-server; JSON and JUnit reports; and a run with Redis stopped showing fail-closed.
import { afterAll, describe, expect, it } from 'vitest';
import { profileFor } from '../../protocol/common/profile.ts';
import { startReference } from '../../harness/suites/rp/launch.ts';
import { Session, sign } from '../../harness/suites/rp/driver.ts';
import { runCli, startRedis, type RedisServer } from './helpers.ts';

/**
 * Rules of document 1 no rp check decides though they are not marked unobservable: the relay's
 * use of the session proof (the relay suite's), the redirect transport, and the paste box (MAY).
 */
const UNCOVERED = ['ns.session-proof.relay-shared', 'ns.transport.redirect', 'ns.transport.paste'];
const RUNS = ['--runs', '40', '--seed', '42'];

function expectPassing(run: Awaited<ReturnType<typeof runCli>>, skipped: string[] = []): void {
  expect(run.failed, run.out).toEqual([]);
  expect(run.code, run.err).toBe(0);
  expect(run.report.summary.passed).toBeGreaterThan(140);
  expect(run.report.coverage.docs).toEqual([1]);
  expect([...run.report.coverage.uncovered].sort()).toEqual([...UNCOVERED].sort());
  expect(run.report.summary.profile).toMatchObject({ gating: true, failed: 0 });
  expect(run.report.coverage.unknown).toEqual([]);
  expect(run.junit).toMatch(/<testsuites[^>]*>/);
  expect(run.junit).toContain('rp/race/replay');
  // The reference answers every check: a skip is only one this configuration names.
  expect(run.report.results.filter((r) => r.status === 'skipped').map((r) => r.id)).toEqual(skipped);
  expect(run.out.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^\\d+ passed, 0 failed, ${skipped.length} skipped$`));
}

describe('run --reference --suite rp', () => {
  it('passes against one reference RP process with the SQLite store, writing JSON and JUnit', async () => {
    const run = await runCli(['run', '--reference', '--suite', 'rp', '--rp-processes', '1', ...RUNS]);
    // One process: the check of transactions shared between processes has nothing to judge.
    expectPassing(run, ['rp/process/shared-transactions']);
    expect(run.report.config).toMatchObject({ command: 'run', suites: [{ suite: 'rp', reference: true, nonce_store: 'sqlite' }] });
    const failClosed = run.report.results.find((r) => r.id === 'rp/nonce/fail-closed');
    expect(failClosed?.status).toBe('passed');
  }, 120_000);

  it('passes with two RP processes (the default) sharing one SQLite store; the race spreads across them', async () => {
    const run = await runCli(['run', '--reference', '--suite', 'rp', ...RUNS]);
    expectPassing(run);
    const race = run.report.results.find((r) => r.id === 'rp/race/replay');
    expect(race?.detail).toMatch(/over 2 process/);
    expect(run.report.results.find((r) => r.id === 'rp/process/shared-transactions')?.status).toBe('passed');
  }, 120_000);

  it('passes under the interop service name poweur (every path, field and cookie renamed)', async () => {
    const run = await runCli(['run', '--reference', '--suite', 'rp', '--service-name', 'poweur', '--runs', '10', '--seed', '7']);
    expectPassing(run);
    expect(run.report.config).toMatchObject({ service_name: 'poweur' });
  }, 120_000);

  describe('with a real redis-server', () => {
    let redis: RedisServer | undefined;
    afterAll(async () => {
      await redis?.stop();
    });

    it('passes with the Redis nonce store and two processes', async () => {
      redis = await startRedis();
      const run = await runCli(['run', '--reference', '--suite', 'rp', '--nonce-store', redis.url, '--rp-processes', '2', ...RUNS]);
      expectPassing(run);
      expect(run.report.config).toMatchObject({ suites: [{ nonce_store: redis.url }] });
    }, 120_000);

    it('fails closed when Redis stops: 503 nonce_cache_unavailable and the login does not complete', async () => {
      const own = await startRedis();
      const ref = await startReference({ profile: profileFor('svc'), nonceStore: own.url, processes: 1 });
      const s = new Session(ref.target);
      try {
        // Works while Redis runs...
        const ok = await s.start();
        const who = await s.identity();
        expect((await s.completeSameDevice(ok, sign(s.profile, ok.request, who))).ok).toBe(true);
        // ...and fails closed once it is gone.
        await own.stop();
        const t = await s.start();
        const d = await s.deliver(t.request, sign(s.profile, t.request, who));
        expect(d.status).toBe(503);
        expect(JSON.parse(d.text())).toMatchObject({ error: 'nonce_cache_unavailable' });
        const cross = await s.deliver(t.request, sign(s.profile, t.request, who), { match: t.matchCode });
        expect(cross.status).toBe(503);
        expect((await s.pollStatus(t.pollSecret)).status).not.toBe('completed');
      } finally {
        await s.close();
        await ref.stop();
        await own.stop();
      }
    }, 60_000);
  });
});

describe('run --suite rp configuration errors', () => {
  it('without --authority exits 2 and says how to start one and point the RP at it', async () => {
    const { main } = await import('../../harness/cli.ts');
    const { MemoryOutput } = await import('../harness/fakes.ts');
    const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} };
    const code = await main(['node', 'svc-conformance', 'run', '--suite', 'rp', '--rp', 'http://127.0.0.1:9'], io);
    expect(code).toBe(2);
    expect(io.stderr.text).toMatch(/admin URL of a test authority is required/);
    expect(io.stderr.text).toMatch(/svc-conformance authority/);
    expect(io.stderr.text).toMatch(/--dns-server/);
  });

  it('an unreachable RP is no verdict (exit 2), not a list of failures', async () => {
    const { main } = await import('../../harness/cli.ts');
    const { MemoryOutput } = await import('../harness/fakes.ts');
    const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput(), env: {} };
    const code = await main(['node', 'svc-conformance', 'run', '--suite', 'rp', '--rp', 'http://127.0.0.1:9', '--authority', 'http://127.0.0.1:9'], io);
    expect(code).toBe(2);
    expect(io.stderr.text).toMatch(/cannot be reached/);
  });
});
