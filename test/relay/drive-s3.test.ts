// The drive suite against reference relays whose chunks live in Ceph's S3 gateway (radosgw 16.2,
// one monitor and one memstore OSD from test/setup/ceph.sh): uploads go to presigned PUT URLs on
// the gateway's origin and chunk reads follow 307s to presigned GETs, and every drive check passes.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { driveSuite } from '../../harness/suites/drive/index.ts';
import { REFERENCE_DRIVE_QUOTA } from '../../harness/suites/drive/suite.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { rules } from '../../schemas/ts/rules.ts';
import { CEPH_MON, CEPH_OSD, need, RADOSGW } from '../setup/needs.ts';

const run = promisify(execFile);
const SCRIPT = new URL('../setup/ceph.sh', import.meta.url).pathname;

/**
 * A free port below the ephemeral range (32768 and up): Ceph's daemons open outgoing connections
 * between the script's choosing a port and the gateway's binding it, and one may take an ephemeral one.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

let cephEnv: NodeJS.ProcessEnv = {};
let ceph: Record<string, string> = {};
let startMs = 0;
const relays: RelayReferenceRun[] = [];

beforeAll(async () => {
  for (const p of [RADOSGW, CEPH_MON, CEPH_OSD]) need(p);
  cephEnv = { ...process.env, CEPH_DIR: join(mkdtempSync(join(tmpdir(), 'svc-ceph-')), 'ceph'), CEPH_MON_PORT: String(await freePort()), CEPH_RGW_PORT: String(await freePort()) };
  const t0 = performance.now();
  const { stdout } = await run(SCRIPT, ['start'], { env: cephEnv });
  startMs = performance.now() - t0;
  ceph = Object.fromEntries(stdout.split('\n').flatMap((l) => (/^[A-Z0-9_]+=/.test(l) ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]] : [])));
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await run(SCRIPT, ['stop'], { env: cephEnv });
}, 60_000);

describe('the drive on Ceph (S3)', () => {
  it('starts a one-node Ceph in seconds', () => {
    expect(ceph.CEPH_S3_ENDPOINT).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(startMs).toBeLessThan(30_000);
    process.stderr.write(`ceph.sh start: ${Math.round(startMs)} ms\n`);
  });

  it('passes the drive suite, profile included, uploads and reads going to the gateway', async () => {
    const relay = await startRelayReference({
      profile,
      extraArgs: ['--drive-quota', String(REFERENCE_DRIVE_QUOTA), '--drive-s3', `${ceph.CEPH_S3_ENDPOINT}/svc-drive`],
      env: { DRIVE_S3_ACCESS_KEY: ceph.CEPH_S3_ACCESS_KEY, DRIVE_S3_SECRET_KEY: ceph.CEPH_S3_SECRET_KEY },
    });
    relays.push(relay);
    const load = await driveSuite(relay.target);
    const report = await runChecks(load.checks, { seed: 11, runs: 6, timeoutMs: 60_000, rules, profileGates: true, coverageDocs: [3] });
    const notPassed = report.results.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.status} ${r.detail ?? ''}`);
    expect(report.results.length).toBeGreaterThanOrEqual(24);
    expect(notPassed).toEqual([]);
    // The harness itself went to the gateway: presigned PUTs (uploads) and GETs (307s followed),
    // as the gateway's access log shows them.
    const access = readFileSync(join(ceph.CEPH_DIR!, 'log', 'client.rgw.log'), 'utf8');
    expect(access).toMatch(/"PUT \/svc-drive\/[^ ]+X-Amz-Signature=[^ ]+ HTTP\/1\.1" 200/);
    expect(access).toMatch(/"GET \/svc-drive\/[^ ]+X-Amz-Signature=[^ ]+ HTTP\/1\.1" 200/);
  }, 240_000);
});
