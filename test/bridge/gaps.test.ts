// Proven sensitivity for the gaps an independent client of document 2 found: each hidden --break
// variant breaks one MUST, and of the checks citing that rule exactly the one that judges it
// fails, with the target's own answer in its detail (npm run sensitivity runs the same selection).
import { describe, expect, it } from 'vitest';
import { bridge, runCli, suiteArgs } from './helpers.ts';
import { REFERENCE_TX_TTL_S } from '../../harness/suites/bridge/launch.ts';

async function suiteAgainst(args: string[], rule: string) {
  const b = await bridge(args);
  try {
    return await runCli(await suiteArgs(b, ['--rule', rule]));
  } finally {
    await b.stop();
  }
}

/** `also`: the matrix checks (bridge/matrix/*) that judge the same rule across its cells and fail too. */
const cases: Array<{ variant: string; rule: string; check: string; detail: RegExp; also?: string[] }> = [
  { variant: 'token-redirect-omitted', rule: 'ob.code.binding', check: 'bridge/code/redirect-uri-omitted', detail: /redeemed without redirect_uri: 200/ },
  { variant: 'session-auth-time', rule: 'ob.token.id-token', check: 'bridge/sso/auth-time', detail: /auth_time is \d+ for the code issued from the session, the proof was at \d+/ },
  { variant: 'prompt-none-iss', rule: 'ob.authorize.iss', check: 'bridge/sso/prompt-none-iss', detail: /the login_required error carries iss undefined/ },
  {
    variant: 'resume-reuse',
    rule: 'ob.transaction.resume-binding',
    check: 'bridge/transaction/resume-reused',
    detail: /the used resume code was accepted again \(1 cookie\(s\) set\): 303/,
    also: ['bridge/matrix/resume-once'],
  },
  {
    variant: 'loopback-confidential',
    rule: 'ob.authorize.loopback',
    check: 'bridge/authorize/loopback-confidential',
    detail: /redirect_uri http:\/\/127\.0\.0\.1:\d+\/cb was accepted for a confidential client: 303/,
  },
  {
    variant: 'approval-in-url',
    rule: 'ob.transaction.no-response-in-url',
    check: 'bridge/transaction/valid-approval-in-url',
    detail: /the approval in the URL was answered 200[\s\S]*the transaction is "authenticated"/,
  },
  {
    variant: 'code-expiry',
    rule: 'ob.code.format',
    check: 'bridge/lifetimes/expired',
    detail: /the code redeemed \d+ s after it was issued \(declared lifetime 5 s\): 200/,
    also: ['bridge/matrix/code-window'],
  },
  {
    variant: 'tx-expiry',
    rule: 'ob.transaction.expiry',
    check: 'bridge/lifetimes/expired',
    detail: new RegExp(`the transaction went on past its declared lifetime of ${REFERENCE_TX_TTL_S} s: 200`),
    also: ['bridge/matrix/transaction-window'],
  },
  {
    variant: 'creating-ignored',
    rule: 'ob.transaction.creating',
    check: 'bridge/lifetimes/expired',
    detail: new RegExp(`the transaction extended by /t/\\{id\\}/creating ended with the declared lifetime of ${REFERENCE_TX_TTL_S} s: 4\\d\\d [\\s\\S]*expired`),
  },
];

describe('broken bridges the suite missed before: each fails the one check judging its rule (and the matrix checks of that rule)', () => {
  for (const c of cases) {
    it(`--break ${c.variant} (${c.rule}) fails ${c.check}`, async () => {
      const run = await suiteAgainst(['--break', c.variant], c.rule);
      expect(run.code).toBe(1);
      expect(run.failed).toEqual([c.check, ...(c.also ?? [])].sort());
      const result = run.report.results.find((r) => r.id === c.check)!;
      expect(result.rules).toContain(c.rule);
      expect(result.detail).toMatch(c.detail);
    }, 180_000);
  }
});
