// The rp suite against deliberately broken RPs (built from the reference RP): each fails exactly
// the checks that observe its defect, and nothing else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { brokenRp, runCli, type Breakage } from './helpers.ts';

let authority: Authority;
beforeAll(async () => {
  authority = await startAuthority();
});
afterAll(async () => {
  await authority?.close();
});

async function suiteAgainst(kind: Breakage) {
  const rp = await brokenRp(kind, authority);
  try {
    return await runCli(['run', '--suite', 'rp', '--rp', rp.origin, '--authority', authority.adminUrl, '--runs', '15', '--seed', '7']);
  } finally {
    await rp.close();
  }
}

describe('the rp suite against broken RPs', () => {
  it('an RP that accepts a resume code without the binding cookie fails the resume-refused check', async () => {
    const run = await suiteAgainst('resume-without-cookie');
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['rp/transaction/resume-without-cookie']);
    const r = run.report.results.find((x) => x.id === 'rp/transaction/resume-without-cookie')!;
    expect(r.rules).toContain('ns.transaction.resume-refused');
    expect(r.detail).toMatch(/resume without the cookie answered 303/);
  }, 120_000);

  it('an RP that spends no nonces and approves a transaction twice fails the replay and race checks', async () => {
    const run = await suiteAgainst('no-nonce-no-guard');
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['rp/nonce/replay', 'rp/race/identity-and-session', 'rp/race/replay', 'rp/transaction/one-approval']);
    expect(run.report.results.find((x) => x.id === 'rp/race/replay')!.detail).toMatch(/24 of 24 concurrent deliveries were accepted/);
  }, 120_000);

  it('an RP that skips the audience rule fails the ns.verify.2 checks', async () => {
    const run = await suiteAgainst('no-audience-rule');
    expect(run.code).toBe(1);
    expect(run.failed).toEqual([
      'rp/codes/order/audience-before-resolution',
      'rp/codes/rule-2/audience-other-origin',
      'rp/codes/rule-2/audience-other-scheme',
      'rp/vectors/pinned-cases',
      'rp/verify/order/audience-before-resolution',
      'rp/verify/rule-2/audience-other-origin',
      'rp/verify/rule-2/audience-other-scheme',
    ]);
    const r = run.report.results.find((x) => x.id === 'rp/verify/rule-2/audience-other-origin')!;
    expect(r.rules).toContain('ns.verify.2');
    expect(r.detail).toMatch(/expected a 4xx refusal, got 200/);
  }, 120_000);
});
