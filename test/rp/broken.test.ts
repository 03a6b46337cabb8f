// The rp suite against deliberately broken RPs (built from the reference RP): each fails exactly
// the checks that observe its defect, and nothing else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { brokenRp, runCli, suiteArgs, type Breakage } from './helpers.ts';

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
    return await runCli(suiteArgs(rp.origin, authority));
  } finally {
    await rp.close();
  }
}

describe('the rp suite against broken RPs', () => {
  it('an RP that accepts a resume code without the binding cookie fails the resume-refused check', async () => {
    const run = await suiteAgainst('resume-without-cookie');
    expect(run.code).toBe(1);
    // The transaction-model property finds it too, as a shrunk command sequence.
    expect(run.failed).toEqual(['rp/property/transaction-model', 'rp/transaction/resume-without-cookie']);
    const r = run.report.results.find((x) => x.id === 'rp/transaction/resume-without-cookie')!;
    expect(r.rules).toContain('ns.transaction.resume-refused');
    expect(r.detail).toMatch(/the login completed after a resume without the cookie \(resume answered 303/);
  }, 120_000);

  it('an RP that spends no nonces and approves a transaction twice fails the replay and race checks', async () => {
    const run = await suiteAgainst('no-nonce-no-guard');
    expect(run.code).toBe(1);
    // The replay of an accepted approval is not refused by its nonce, so it goes on to resolution:
    // the order check whose authority hangs sees it too.
    expect(run.failed).toEqual([
      'rp/nonce/replay',
      'rp/property/transaction-model',
      'rp/race/identity-and-session',
      'rp/race/many-identities',
      'rp/race/replay',
      'rp/transaction/one-approval',
      'rp/verify/order/nonce-before-resolution',
    ]);
    expect(run.report.results.find((x) => x.id === 'rp/race/replay')!.detail).toMatch(/([2-9]|[1-9]\d+) of 24 concurrent deliveries were accepted, expected exactly 1/);
  }, 120_000);

  it('an RP that skips the audience rule fails the ns.verify.2 checks', async () => {
    const run = await suiteAgainst('no-audience-rule');
    expect(run.code).toBe(1);
    expect(run.failed).toEqual([
      'rp/transaction/refused-stays-pending',
      'rp/vectors/pinned-cases',
      'rp/verify/order/audience-before-resolution',
      'rp/verify/rule-2/audience-other-origin',
      'rp/verify/rule-2/audience-other-scheme',
    ]);
    const r = run.report.results.find((x) => x.id === 'rp/verify/rule-2/audience-other-origin')!;
    expect(r.rules).toContain('ns.verify.2');
    expect(r.detail).toMatch(/expected a refusal \(4xx\), got 200/);
    // The project's codes for the same scenarios differ too, reported apart (the profile does not gate).
    expect(run.differ).toEqual(expect.arrayContaining(['rp/codes/rule-2/audience-other-origin', 'rp/codes/rule-2/audience-other-scheme']));
  }, 120_000);

  it('an RP where any refused delivery ends the transaction fails the document checks that complete after a refusal', async () => {
    const run = await suiteAgainst('refusal-ends-transaction');
    expect(run.code).toBe(1);
    // Every refusal scenario, but the one without request_id (this RP cannot tell which transaction to end).
    // The key checks (previous key, non-canonical key) refuse nothing before the genuine approval, so they pass.
    // The replay of an approved transaction refuses nothing this RP can end (it is approved already).
    const passing = ['rp/verify/rule-1/missing-request-id', 'rp/verify/rule-7/non-canonical-key', 'rp/verify/rule-7/previous-key-at-issued-at', 'rp/verify/order/nonce-before-resolution'];
    const verify = run.report.results
      .filter((x) => (x.id.startsWith('rp/verify/rule-') || x.id.startsWith('rp/verify/order/') || x.id.startsWith('rp/verify/identity/')) && !passing.includes(x.id))
      .map((x) => x.id);
    // The races fail too when a losing delivery's refusal ends the transaction before the winner's approval lands (timing).
    const races = ['rp/race/identity-and-session', 'rp/race/replay'];
    expect(run.failed.filter((id) => !races.includes(id))).toEqual(['rp/property/single-mutation', 'rp/transaction/refused-stays-pending', ...verify].sort());
    expect(run.failed.every((id) => !run.report.results.find((x) => x.id === id)!.profile)).toBe(true);
    const r = run.report.results.find((x) => x.id === 'rp/transaction/refused-stays-pending')!;
    expect(r.rules).toEqual(['ns.transaction.same-device']);
    expect(run.report.results.find((x) => x.id === 'rp/verify/rule-7/bit-flip')!.detail).toMatch(/the refused delivery ended it/);
  }, 120_000);

  it('an RP that spends the nonce before the signature check fails the rule-7 checks on ns.nonce.spend-on-success', async () => {
    const run = await suiteAgainst('nonce-before-signature');
    expect(run.code).toBe(1);
    const sameIdentity = [
      'bit-flip',
      'canonical-crlf',
      'canonical-lines-swapped',
      'canonical-scopes-unsorted',
      'canonical-statement-omitted',
      'canonical-trailing-lf',
      'key-id-invalid',
      'proof-bad-key-encoding',
      'proof-expired',
      'proof-just-expired',
      'proof-missing-field',
      'proof-swap-expires-at',
      'proof-swap-issued-at',
      'proof-swap-nonce',
      'proof-swap-session-public-key',
      'proof-ttl-just-over',
      'proof-ttl-over-cap',
      'proof-with-identity-key',
      'proof-wrong-lines',
      'proof-wrong-signer',
      'session-key-not-proven',
      'session-without-proof',
      'swap-action',
      'swap-audience',
      'swap-expires-at',
      'swap-identity',
      'swap-issued-at',
      'swap-key-id',
      'swap-nonce',
      'swap-request-id',
      'swap-scopes',
      'wrong-key',
    ];
    expect(run.failed).toEqual(['rp/property/single-mutation', ...sameIdentity.map((n) => `rp/verify/rule-7/${n}`)].sort());
    const r = run.report.results.find((x) => x.id === 'rp/verify/rule-7/bit-flip')!;
    expect(r.rules).toContain('ns.nonce.spend-on-success');
    expect(r.detail).toMatch(/the refused delivery spent the nonce/);
  }, 120_000);
});
