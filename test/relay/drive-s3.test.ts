// The drive suite against reference relays whose chunks live in Ceph's S3 gateway (radosgw 16.2,
// one monitor and one memstore OSD from test/setup/ceph.sh): uploads go to presigned PUT URLs on
// the gateway's origin and chunk reads follow 307s to presigned GETs, and every drive check passes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { driveSuite } from '../../harness/suites/drive/index.ts';
import { REFERENCE_DRIVE_QUOTA } from '../../harness/suites/drive/suite.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { rules } from '../../schemas/ts/rules.ts';
import { startCeph, type Ceph } from '../setup/ceph.ts';

let ceph: Ceph | undefined;
const relays: RelayReferenceRun[] = [];

beforeAll(async () => {
  ceph = await startCeph();
}, 60_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await ceph?.stop();
}, 60_000);

describe('the drive on Ceph (S3)', () => {
  it('starts a one-node Ceph in seconds', () => {
    expect(ceph!.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ceph!.startMs).toBeLessThan(30_000);
    process.stderr.write(`ceph.sh start: ${Math.round(ceph!.startMs)} ms\n`);
  });

  it('passes the drive suite, profile included, uploads and reads going to the gateway', async () => {
    const relay = await startRelayReference({
      profile,
      extraArgs: ['--drive-quota', String(REFERENCE_DRIVE_QUOTA), '--drive-s3', `${ceph!.endpoint}/svc-drive`],
      env: { DRIVE_S3_ACCESS_KEY: ceph!.accessKey, DRIVE_S3_SECRET_KEY: ceph!.secretKey },
    });
    relays.push(relay);
    const load = await driveSuite(relay.target);
    const report = await runChecks(load.checks, { seed: 11, runs: 6, timeoutMs: 60_000, rules, profileGates: true, coverageDocs: [3] });
    const notPassed = report.results.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.status} ${r.detail ?? ''}`);
    expect(report.results.length).toBeGreaterThanOrEqual(24);
    expect(notPassed).toEqual([]);
    // The harness itself went to the gateway: presigned PUTs (uploads) and GETs (307s followed),
    // as the gateway's access log shows them.
    const access = readFileSync(join(ceph!.dir, 'log', 'client.rgw.log'), 'utf8');
    expect(access).toMatch(/"PUT \/svc-drive\/[^ ]+X-Amz-Signature=[^ ]+ HTTP\/1\.1" 200/);
    expect(access).toMatch(/"GET \/svc-drive\/[^ ]+X-Amz-Signature=[^ ]+ HTTP\/1\.1" 200/);
  }, 240_000);
});
