// The drive suite against reference relays (two on loopback, a member homed on the second): it
// passes with the profile gating; against a relay that follows only document 3 it passes every
// document check; against deliberately broken drives it fails the checks that judge each break.
import { afterAll, describe, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { runChecks } from '../../harness/run/runner.ts';
import type { CheckResult } from '../../harness/run/model.ts';
import { driveSuite } from '../../harness/suites/drive/index.ts';
import { REFERENCE_DRIVE_QUOTA } from '../../harness/suites/drive/suite.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { rules } from '../../schemas/ts/rules.ts';

const running: RelayReferenceRun[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
});

async function suiteAgainst(extraArgs: string[], o: { checks?: string[]; profileGates?: boolean } = {}): Promise<Map<string, CheckResult>> {
  const run = await startRelayReference({ profile, extraArgs: ['--drive-quota', String(REFERENCE_DRIVE_QUOTA), ...extraArgs], env: { SVC_REFERENCE_ALLOW_BREAKAGE: '1' } });
  running.push(run);
  try {
    const load = await driveSuite(run.target);
    const report = await runChecks(load.checks, {
      seed: 11,
      runs: 6,
      timeoutMs: 60_000,
      rules,
      profileGates: o.profileGates ?? false,
      coverageDocs: [3],
      ...(o.checks ? { selection: { checks: o.checks } } : {}),
    });
    return new Map(report.results.map((r) => [r.id, r]));
  } finally {
    await run.stop();
  }
}

const notPassed = (results: Map<string, CheckResult>) => [...results.values()].filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.status} ${r.detail ?? ''}`);
const failedIds = (results: Map<string, CheckResult>) => [...results.values()].filter((r) => r.status === 'failed' || r.status === 'error').map((r) => r.id);

describe('the drive suite', () => {
  it('passes against the reference relays, profile included', async () => {
    const results = await suiteAgainst([], { profileGates: true });
    expect(results.size).toBeGreaterThanOrEqual(24);
    expect(notPassed(results)).toEqual([]);
  }, 120_000);

  it('passes every document check against a relay that follows only document 3', async () => {
    const results = await suiteAgainst(['--variant', 'document-only']);
    const documentFailures = [...results.values()].filter((r) => !r.profile && r.status !== 'passed');
    expect(documentFailures.map((r) => `${r.id}: ${r.detail}`)).toEqual([]);
  }, 120_000);

  const cases: Array<[string, string[], string[]]> = [
    ['read-can-write', ['drive/members/read-only'], ['drive/owner/round-trip']],
    ['chunk-by-hash', ['drive/profile/chunk-access'], ['drive/owner/round-trip']],
    ['stale-base-accepted', ['drive/commit/stale-base'], ['drive/changes/cursor']],
    ['revoked-stream-open', ['drive/events/closed-on-revocation'], ['drive/events/filtered']],
    ['link-opens-ignored', ['drive/profile/link-opens'], ['drive/links/public']],
    ['commit-half-applied', ['drive/profile/commit-validated'], ['drive/owner/round-trip']],
    ['share-no-inherit', ['drive/model'], ['drive/owner/round-trip']],
    ['changes-skip', ['drive/model', 'drive/changes/cursor'], ['drive/owner/round-trip']],
  ];
  for (const [kind, mustFail, mustPass] of cases) {
    it(`--break ${kind} fails ${mustFail.join(', ')}`, async () => {
      const results = await suiteAgainst(['--break', kind], { checks: [...mustFail, ...mustPass] });
      expect(failedIds(results), notPassed(results).join('\n')).toEqual(expect.arrayContaining(mustFail));
      for (const id of mustPass) expect(results.get(id)?.status, notPassed(results).join('\n')).toBe('passed');
    }, 120_000);
  }
});
