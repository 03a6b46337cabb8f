// The relay suite against the reference relays (two on loopback, through a test authority): it
// passes with the profile gating; against a relay that follows only document 3 it passes every
// document check and shows the project's decisions as profile differences; against deliberately
// broken relays it fails the checks that judge what each one breaks.
import { afterAll, describe, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { runChecks } from '../../harness/run/runner.ts';
import type { CheckResult } from '../../harness/run/model.ts';
import { relaySuite } from '../../harness/suites/relay/index.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { rules } from '../../schemas/ts/rules.ts';

const BREAKAGE_ENV = { SVC_REFERENCE_ALLOW_BREAKAGE: '1' };
const running: RelayReferenceRun[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
});

async function suiteAgainst(extraArgs: string[], checks?: string[]): Promise<Map<string, CheckResult>> {
  const run = await startRelayReference({ profile, extraArgs, env: BREAKAGE_ENV });
  running.push(run);
  try {
    const load = await relaySuite(run.target);
    const report = await runChecks(load.checks, { seed: 11, runs: 6, timeoutMs: 60_000, rules, profileGates: false, coverageDocs: [3], ...(checks ? { selection: { checks } } : {}) });
    return new Map(report.results.map((r) => [r.id, r]));
  } finally {
    await run.stop();
  }
}

const failedIds = (results: Map<string, CheckResult>) => [...results.values()].filter((r) => r.status === 'failed' || r.status === 'error').map((r) => r.id);
const show = (results: Map<string, CheckResult>) =>
  [...results.values()]
    .filter((r) => r.status !== 'passed')
    .map((r) => `${r.id}: ${r.status} ${r.detail ?? ''}`)
    .join('\n');

describe('the relay suite against relays that follow only document 3', () => {
  it('passes every document check and shows the project decisions it does not follow as profile differences', async () => {
    const results = await suiteAgainst(['--variant', 'document-only']);
    const documentFailures = [...results.values()].filter((r) => !r.profile && (r.status === 'failed' || r.status === 'error'));
    expect(
      documentFailures.map((r) => `${r.id}: ${r.detail}`),
      show(results),
    ).toEqual([]);
    const differ = [...results.values()].filter((r) => r.profile && r.status === 'failed').map((r) => r.id);
    expect(differ).toEqual(
      expect.arrayContaining([
        'relay/profile/error-codes',
        'relay/profile/cursor',
        'relay/profile/devices',
        'relay/profile/auth-request',
        'relay/profile/auth-request-expiry',
        'relay/profile/relay-written',
      ]),
    );
  }, 300_000);
});

describe('the relay suite against broken relays', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['verify-after-store', ['relay/messages/bad-signature', 'relay/properties/mutations'], ['relay/messages/local-delivery']],
    ['ack-unsigned', ['relay/acks/refusals'], ['relay/acks/round-trip']],
    ['challenge-reuse', ['relay/auth/challenge-single-use'], ['relay/auth/challenge']],
    ['neither-local', ['relay/messages/neither-local'], ['relay/messages/local-delivery']],
    ['spool-memory', ['relay/spool/durable'], ['relay/messages/local-delivery']],
  ];
  for (const [kind, mustFail, mustPass] of cases) {
    it(`--break ${kind} fails ${mustFail.join(', ')}`, async () => {
      const results = await suiteAgainst(['--break', kind], [...mustFail, ...mustPass]);
      const failed = failedIds(results);
      expect(failed, show(results)).toEqual(expect.arrayContaining(mustFail));
      for (const id of mustPass) expect(results.get(id)?.status, show(results)).toBe('passed');
    }, 180_000);
  }
});
