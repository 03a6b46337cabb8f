// Issue 26, "fair in both dialects": the suites' document checks must not judge a form document 3
// leaves open. Against the reference speaking only the project's earlier forms
// (dialect/earlier-forms: absolute upload URLs, node views without the deployed fields, unshare
// {share}, system paths without the service's directory, the challenge only as issued, rp_id
// required), every document check of the drive suite, and of the relay suite's keystore, system
// files and groups (whose forms changed), still passes. The deployed forms are the reference's
// own, which the suites' runs in CI check.
import { afterAll, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { driveSuite } from '../../harness/suites/drive/index.ts';
import { REFERENCE_DRIVE_QUOTA } from '../../harness/suites/drive/suite.ts';
import { relaySuite } from '../../harness/suites/relay/index.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { rules } from '../../schemas/ts/rules.ts';

let run: RelayReferenceRun | undefined;
afterAll(async () => {
  await run?.stop();
});

it('passes the drive and relay document checks against the reference in the earlier forms', async () => {
  run = await startRelayReference({
    profile,
    extraArgs: ['--drive-quota', String(REFERENCE_DRIVE_QUOTA)],
    env: { SVC_REFERENCE_ALLOW_BREAKAGE: '1', SVC_REFERENCE_WIRE: 'dialect/earlier-forms' },
  });
  const relay = (await relaySuite(run.target)).checks.filter((c) => /^relay\/(keystore|system|groups)\//.test(c.id));
  const drive = (await driveSuite(run.target)).checks;
  const report = await runChecks([...relay, ...drive], { seed: 11, runs: 6, timeoutMs: 60_000, rules, profileGates: false, coverageDocs: [3] });
  const documentChecks = report.results.filter((r) => !r.profile);
  expect(documentChecks.length).toBeGreaterThanOrEqual(25);
  expect(documentChecks.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.status} ${r.detail ?? ''}`)).toEqual([]);
}, 150_000);
