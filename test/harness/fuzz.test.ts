// The authenticated fuzz against the reference relay and bridge: it finds nothing there, and
// against a server broken to answer 500 on one mutation (the relay: a lone surrogate in an
// unsigned envelope field; the bridge: a typed ID that is no host, and Basic credentials without a
// colon at /revoke; the RP: a deeply nested poll body) it fails with the shrunk request and a replay command.
import { afterAll, describe, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { relaySuite } from '../../harness/suites/relay/index.ts';
import { startRelayReference, type RelayReferenceRun } from '../../harness/suites/relay/launch.ts';
import { rules } from '../../schemas/ts/rules.ts';
import { bridge, runCli, suiteArgs } from '../bridge/helpers.ts';
import { brokenRp, suiteArgs as rpArgs } from '../rp/helpers.ts';
import { startAuthority } from '../../harness/actors/authority/index.ts';
import { WIRE_ENV } from '../../reference/variants/wire.ts';

const running: RelayReferenceRun[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
});

async function fuzz(extraArgs: string[]) {
  const run = await startRelayReference({ profile, extraArgs, env: { SVC_REFERENCE_ALLOW_BREAKAGE: '1' } });
  running.push(run);
  const load = await relaySuite(run.target);
  const report = await runChecks(load.checks, { seed: 5, fuzzRuns: 300, rules, profileGates: true, selection: { checks: ['relay/fuzz/*', 'relay/profile/fuzz-statuses'] } });
  return new Map(report.results.map((r) => [r.id, r]));
}

describe('the authenticated fuzz of the relay', () => {
  it('finds nothing against the reference relay', async () => {
    const results = await fuzz([]);
    expect([...results.values()].map((r) => `${r.id} ${r.status} ${r.detail}`)).toEqual([
      expect.stringMatching(/^relay\/fuzz\/document passed/),
      expect.stringMatching(/^relay\/profile\/fuzz-statuses passed/),
    ]);
  }, 120_000);

  it('fails with a shrunk, replayable request against a relay that answers 500 to a lone surrogate', async () => {
    const r = (await fuzz(['--break', 'surrogate-500'])).get('relay/fuzz/document')!;
    expect(r.status).toBe('failed');
    expect(r.detail).toMatch(/counterexample: .*"lone-surrogate"/);
    expect(r.detail).toMatch(/500, a 5xx the document does not give/);
    expect(r.detail).toMatch(/replay: .*--seed 5 .*--replay /);
  }, 120_000);

  it('fails with a shrunk request against a bridge whose ID form answers 500 to an ID that is no host', async () => {
    const b = await bridge(['--break', 'identify-url-500']);
    try {
      const run = await runCli([...(await suiteArgs(b)), '--check', 'bridge/profile/fuzz', '--profile']);
      expect(run.failed).toEqual(['bridge/profile/fuzz']);
      const r = run.report.results.find((x) => x.id === 'bridge/profile/fuzz')!;
      expect(r.detail).toMatch(/identify with [a-z-]+: 500, a 5xx the document does not give/);
      expect(r.detail).toMatch(/counterexample: .*replay: /s);
    } finally {
      await b.stop();
    }
  }, 120_000);

  it('fails against a bridge whose /revoke answers 500 to malformed Basic credentials', async () => {
    const b = await bridge([], { SVC_REFERENCE_ALLOW_BREAKAGE: '1', [WIRE_ENV]: 'bridge/basic-colonless-500' });
    try {
      const run = await runCli([...(await suiteArgs(b)), '--check', 'bridge/profile/fuzz', '--profile']);
      expect(run.failed).toEqual(['bridge/profile/fuzz']);
      const r = run.report.results.find((x) => x.id === 'bridge/profile/fuzz')!;
      expect(r.detail).toMatch(/revoke with malformed-credentials: 500, a 5xx the document does not give/);
    } finally {
      await b.stop();
    }
  }, 120_000);

  it('fails with a shrunk request against an RP whose poll answers 500 to deeply nested JSON', async () => {
    const authority = await startAuthority();
    const rp = await brokenRp('wire:deep-poll-500', authority);
    try {
      const run = await runCli([...rpArgs(rp.origin, authority), '--check', 'rp/profile/fuzz', '--profile']);
      expect(run.failed).toEqual(['rp/profile/fuzz']);
      const r = run.report.results.find((x) => x.id === 'rp/profile/fuzz')!;
      expect(r.detail).toMatch(/pollTransaction with deep-json: 500, a 5xx the document does not give/);
      expect(r.detail).toMatch(/counterexample: .*replay: /s);
    } finally {
      await rp.close();
      await authority.close();
    }
  }, 120_000);
});
