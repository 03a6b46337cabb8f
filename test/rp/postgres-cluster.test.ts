// Three reference RP processes on one PostgreSQL database act as one RP, as an operator runs them
// on several machines behind one origin: each started as a user starts it (`svc-reference rp
// --database postgres://...`, one through RP_DATABASE instead), no shared data directory. A login
// started on one is approved on a second and polled or resumed on a third; the same signed
// approval delivered to all of them at once is accepted exactly once; and the rp suite passes
// against such a cluster started by `run --reference --suite rp --rp-database`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileFor } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { spawnReference, stopChild, type ReferenceChild } from '../../harness/run/spawn.ts';
import { accepted, onProcess, safeJson, Session, sign, type RpTarget } from '../../harness/suites/rp/driver.ts';
import { throwawayDatabase, type ThrowawayDb } from '../bridge/postgres.ts';
import { runCli } from './helpers.ts';

const profile = profileFor();
const PROCESSES = 3;

let db: ThrowawayDb;
let authority: Authority;
let dirs: string[] = [];
const rps: ReferenceChild[] = [];
let target: RpTarget;

beforeAll(async () => {
  db = throwawayDatabase('svc_rp');
  authority = await startAuthority({ profile });
  const common = ['--port', '0', '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--resume-ttl', '10', '--quiet'];
  // Separate data directories: anything still kept there would split the RP and fail below.
  const dataDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-rp-pg-'));
    dirs.push(dir);
    return ['--data-dir', dir];
  };
  const spawn = async (args: string[], env?: NodeJS.ProcessEnv) => {
    const child = await spawnReference('rp', [...common, ...(await dataDir()), ...args], { onSpawn: (c) => rps.push(c), ...(env ? { env } : {}) });
    return child;
  };
  const first = await spawn(['--database', db.url]);
  await Promise.all([spawn(['--origin', first.origin], { RP_DATABASE: db.url }), spawn(['--origin', first.origin, '--database', db.url])]);
  target = {
    profile,
    origin: first.origin,
    startUrl: `${first.url}/login`,
    loginPage: { url: `${first.url}/login`, explicit: true },
    processes: rps.map((c) => c.url),
    authority,
    requestTimeoutMs: 20_000,
    declared: { resumeCodeLifetimeS: 10, deliveryBodyMaxBytes: limits.rp_delivery_body_max_bytes },
  };
}, 60_000);

afterAll(async () => {
  await Promise.all(rps.map((c) => stopChild(c)));
  await authority?.close();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
  db?.drop();
});

const url = (i: number, path: string) => `${rps[i]!.url}${path}`;

describe('RP processes on one PostgreSQL database', () => {
  it('are one RP: started on the first, approved on the second (cross device), polled on the third, signed in on the first', async () => {
    const s = new Session(target);
    try {
      const t = await s.start(undefined, url(0, '/login'));
      const who = await s.identity();
      const responseUri = await s.responseUri(t.request);
      const delivered = await s.deliver(t.request, sign(profile, t.request, who), { match: t.matchCode, url: onProcess(responseUri, rps[1]!.url) });
      expect(delivered.status, delivered.text()).toBe(200);
      const browser = s.client(true);
      const polled = await s.poll(t.pollSecret, browser, onProcess(await s.pollUrl(), rps[2]!.url));
      expect(safeJson(polled)).toEqual({ status: 'completed', identity: who.identity });
      // The session the third process opened is known to the first.
      const home = await browser.get(url(0, '/'));
      expect(home.text()).toContain(who.identity);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('are one RP on the same device: the resume code issued by the second completes on the third', async () => {
    const s = new Session(target);
    try {
      const t = await s.start(undefined, url(0, '/login'));
      const who = await s.identity();
      const delivered = await s.deliver(t.request, sign(profile, t.request, who), { url: onProcess(await s.responseUri(t.request), rps[1]!.url) });
      expect(delivered.status, delivered.text()).toBe(200);
      const receipt = safeJson(delivered) as { resume_uri: string };
      const resumed = await s.resume(onProcess(receipt.resume_uri, rps[2]!.url), t.browser);
      expect(resumed.status).toBe(303);
      // Spent: the same code at the first process is gone.
      expect((await s.resume(onProcess(receipt.resume_uri, rps[0]!.url), t.browser)).status).toBe(410);
      const polled = await s.pollStatus(t.pollSecret);
      expect(polled.status).toBe('completed');
    } finally {
      await s.close();
    }
  }, 60_000);

  it('accept one signed approval exactly once when it reaches every process at the same time', async () => {
    const s = new Session(target);
    const COPIES = 4; // per process
    try {
      const who = await s.identity();
      for (let round = 0; round < 8; round++) {
        const t = await s.start(undefined, url(round % PROCESSES, '/login'));
        const approval = sign(profile, t.request, who);
        const responseUri = await s.responseUri(t.request);
        const match = round % 2 === 0 ? { match: t.matchCode } : {};
        const answers = await Promise.all(
          rps.flatMap((rp) => Array.from({ length: COPIES }, () => s.deliver(t.request, approval, { ...match, url: onProcess(responseUri, rp.url), client: s.client(false) }))),
        );
        const statuses = answers.map((a) => a.status);
        expect(
          statuses.filter((c) => c === 200),
          `round ${round}: ${statuses.join(' ')}`,
        ).toHaveLength(1);
        // The others are refusals (one approval per transaction, or the spent nonce), never a 5xx.
        expect(answers.filter((a) => !accepted(a) && a.status >= 400 && a.status < 500)).toHaveLength(PROCESSES * COPIES - 1);
      }
    } finally {
      await s.close();
    }
  }, 120_000);

  it('pass the rp suite: run --reference --suite rp --rp-database (three processes on a fresh database)', async () => {
    const suiteDb = throwawayDatabase('svc_rp');
    try {
      const run = await runCli(['run', '--reference', '--suite', 'rp', '--rp-database', suiteDb.url, '--rp-processes', String(PROCESSES), '--runs', '40', '--seed', '42']);
      expect(run.failed, run.out).toEqual([]);
      expect(run.code, run.err).toBe(0);
      expect(run.report.summary.passed).toBeGreaterThan(140);
      expect(run.report.summary.profile).toMatchObject({ gating: true, failed: 0 });
      expect(run.report.config).toMatchObject({ suites: [{ suite: 'rp', reference: true, database: 'postgres', nonce_store: 'sqlite' }] });
      expect((run.report.config as { suites: Array<{ rp_processes: string[] }> }).suites[0]!.rp_processes).toHaveLength(PROCESSES);
      expect(run.report.results.find((r) => r.id === 'rp/race/replay')?.status).toBe('passed');
      expect(run.report.results.find((r) => r.id === 'rp/process/shared-transactions')?.status).toBe('passed');
    } finally {
      suiteDb.drop();
    }
  }, 240_000);
});
