// The rp suite's subtle checks (checks/subtle.ts) and its transaction model (checks/model.ts):
// the healthy reference passes them, and each RP of subtle-rps.ts fails exactly the checks that
// observe its bug. One variant runs the whole suite, to show nothing else fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import type { RunningRp } from '../../reference/rp/app.ts';
import type { PropertyEvidence } from '../../harness/run/property.ts';
import { brokenRp, runCli, suiteArgs } from './helpers.ts';
import { healthyRp, SLOPPY_CAP, subtleRp, type SubtleBreakage } from './subtle-rps.ts';

const MINE = [
  'rp/property/transaction-model',
  'rp/verify/rule-7/previous-key-at-issued-at',
  'rp/profile/previous-key-boundary',
  'rp/verify/rule-7/non-canonical-key',
  'rp/profile/small-order-key',
  'rp/transaction/match-before-signature',
  'rp/request/statement-over-max',
  'rp/robust/delivery-over-declared-cap',
  'rp/profile/delivery-body-cap-edge',
  'rp/transaction/resume-code-expires',
];

let authority: Authority;
beforeAll(async () => {
  authority = await startAuthority();
});
afterAll(async () => {
  await authority?.close();
});

async function suite(rp: RunningRp, opts: { checks?: string[]; extra?: string[] } = {}) {
  try {
    const select = (opts.checks ?? []).flatMap((c) => ['--check', c]);
    return await runCli(suiteArgs(rp.origin, authority, [...select, ...(opts.extra ?? [])]));
  } finally {
    await rp.close();
  }
}

const against = async (kind: SubtleBreakage, opts?: Parameters<typeof suite>[1]) => suite(await subtleRp(kind, authority), opts);

describe('the subtle checks and the transaction model', () => {
  it('pass against the healthy reference (profile gating), citing what they decide', async () => {
    const run = await suite(await healthyRp(authority), { checks: MINE, extra: ['--profile'] });
    expect(run.failed).toEqual([]);
    expect(run.code).toBe(0);
    const results = new Map(run.report.results.map((r) => [r.id, r]));
    expect([...results.keys()].sort()).toEqual([...MINE].sort());
    for (const r of results.values()) expect(r.status, `${r.id}: ${r.detail}`).toBe('passed');
    expect(results.get('rp/property/transaction-model')!.detail).toMatch(/^15 runs \(seed 7/);
    expect(results.get('rp/property/transaction-model')!.rules).toEqual(expect.arrayContaining(['ns.transaction.match-wrong', 'ns.transaction.one-approval', 'ns.transaction.poll-before-resume']));
    expect(results.get('rp/profile/small-order-key')!.profile).toBe(true);
    expect(results.get('rp/verify/rule-7/non-canonical-key')!.profile).toBeFalsy();
    // The check waits past the lifetime and margin itself (nothing touches the RP while the check list is built).
    expect(results.get('rp/transaction/resume-code-expires')!.durationMs).toBeGreaterThanOrEqual(4000);
  }, 120_000);

  it('the model finds an RP that completes a resume without the cookie: shrunk sequence, answers and exchanges, replayable', async () => {
    const rp = await brokenRp('resume-without-cookie', authority);
    try {
      const args = suiteArgs(rp.origin, authority, ['--check', 'rp/property/transaction-model']);
      const run = await runCli(args);
      expect(run.failed).toEqual(['rp/property/transaction-model']);
      const r = run.report.results[0]!;
      expect(r.detail).toContain('counterexample: ["deliver(first,bare)","resume(no-cookie,right-code)"]');
      expect(r.detail).toMatch(/resume\(no-cookie,right-code\): MISMATCH: a resume without the binding cookie .* completed the login/);
      const ev = r.evidence as PropertyEvidence & { evidence: { commands: string[]; exchanges: unknown[] } };
      expect(ev.evidence.commands).toHaveLength(3);
      expect(ev.evidence.exchanges.length).toBeGreaterThan(2);
      const replay = await runCli([...args, '--replay', ev.path]);
      expect(replay.failed).toEqual(['rp/property/transaction-model']);
      expect((replay.report.results[0]!.evidence as PropertyEvidence).counterexample).toBe(ev.counterexample);
    } finally {
      await rp.close();
    }
  }, 120_000);

  it('an RP that judges a previous key at delivery time fails the issued-at check, and the boundary profile check (full suite: nothing else)', async () => {
    const run = await against('previous-key-at-delivery');
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['rp/verify/rule-7/previous-key-at-issued-at']);
    expect(run.differ).toEqual(['rp/profile/previous-key-boundary']);
    const r = run.report.results.find((x) => x.id === 'rp/verify/rule-7/previous-key-at-issued-at')!;
    expect(r.rules).toEqual(['ns.verify.7']);
    expect(r.detail).toMatch(/by a previous key valid until .* delivered after that: the delivery answered 401/);
  }, 180_000);

  it('an RP that verifies with plain OpenSSL (no strict key checks) fails the non-canonical key check, and the small-order profile check', async () => {
    const run = await against('lax-ed25519', { checks: MINE });
    expect(run.failed).toEqual(['rp/verify/rule-7/non-canonical-key']);
    expect(run.differ).toEqual(['rp/profile/small-order-key']);
    const r = run.report.results.find((x) => x.id === 'rp/verify/rule-7/non-canonical-key')!;
    expect(r.detail).toMatch(/the forged approval under a key with y = p \+ 1 answered 200/);
    expect(r.detail).toMatch(/x = 0 with the sign bit set: the login completed/);
  }, 120_000);

  it('an RP that checks the signature before the match code fails the match-before-signature check', async () => {
    const run = await against('signature-before-match', { checks: MINE });
    expect(run.failed).toEqual(['rp/transaction/match-before-signature']);
    expect(run.differ).toEqual([]);
    expect(run.report.results.find((x) => x.id === 'rp/transaction/match-before-signature')!.detail).toMatch(
      /the genuine approval with the right code after a wrong code \(and a bad signature\) answered 200/,
    );
  }, 120_000);

  it('an RP whose resume codes never expire fails the resume-code expiry check', async () => {
    const run = await against('resume-never-expires', { checks: MINE });
    expect(run.failed).toEqual(['rp/transaction/resume-code-expires']);
    const r = run.report.results.find((x) => x.id === 'rp/transaction/resume-code-expires')!;
    expect(r.rules).toEqual(['ns.limits.resume-code']);
    expect(r.detail).toMatch(/declared lifetime 2 s\), the login completed \(resume answered 303/);
  }, 120_000);

  it('an RP whose start contract issues a 301-byte statement fails the statement check', async () => {
    const run = await against('long-statement', { checks: MINE });
    expect(run.failed).toEqual(['rp/request/statement-over-max']);
    expect(run.report.results.find((x) => x.id === 'rp/request/statement-over-max')!.detail).toMatch(/issued a request with a 301-byte statement/);
  }, 120_000);

  it('an RP that does not enforce its declared body cap just above it differs only on the profile edge check (full suite)', async () => {
    const run = await against('sloppy-body-cap', { extra: ['--rp-body-cap', String(SLOPPY_CAP)] });
    expect(run.code).toBe(0);
    expect(run.failed).toEqual([]);
    expect(run.differ).toEqual(['rp/profile/delivery-body-cap-edge']);
    expect(run.report.results.find((x) => x.id === 'rp/profile/delivery-body-cap-edge')!.detail).toMatch(
      new RegExp(`${SLOPPY_CAP + 1} bytes answered 400 malformed_delivery .* expected 413 body_too_large`),
    );
  }, 180_000);
});
