// The bridge suite judges the document, not the reference: a variant that follows only the
// document (other codes, statuses and bodies where document 2 names none, no project discovery
// fields) passes every document check and shows the profile differences; deliberately broken
// bridges (hidden --break flags of the reference) fail exactly the checks that observe the defect.
import { describe, expect, it } from 'vitest';
import { bridge, runCli, suiteArgs } from './helpers.ts';

async function suiteAgainst(args: string[]) {
  const b = await bridge(args);
  try {
    return await runCli(await suiteArgs(b));
  } finally {
    await b.stop();
  }
}

/** The profile checks the document-only variant differs on: its own codes, statuses and fields. */
const DOCUMENT_ONLY_DIFFERS = [
  'bridge/authorize/error-codes',
  'bridge/discovery/project-fields',
  'bridge/errors/oauth-bodies',
  'bridge/profile/authorize-forms',
  'bridge/profile/authorize-repeated',
  'bridge/profile/fuzz-statuses',
  'bridge/profile/token-forms',
];

describe('the bridge suite against variants of the reference bridge', () => {
  it('a bridge following only the document passes the document checks and differs from the profile', async () => {
    const run = await suiteAgainst(['--variant', 'document-only']);
    expect(run.failed, run.out).toEqual([]);
    expect(run.code, run.err).toBe(0);
    // Its other statuses also show in the fuzz's profile check (statuses the OpenAPI file lists), and
    // its other codes in the refusals of repeated and malformed /authorize parameters.
    expect(run.differ).toEqual(DOCUMENT_ONLY_DIFFERS);
    expect(run.out).toMatch(new RegExp(`Project profile: \\d+ passed, ${DOCUMENT_ONLY_DIFFERS.length} differ`));
  }, 120_000);

  it('with --profile the same variant fails on the profile checks alone', async () => {
    const b = await bridge(['--variant', 'document-only']);
    try {
      const run = await runCli([...(await suiteArgs(b)), '--profile']);
      expect(run.code).toBe(1);
      expect(run.failed).toEqual(DOCUMENT_ONLY_DIFFERS);
    } finally {
      await b.stop();
    }
  }, 120_000);

  it('PKCE not enforced: the PKCE checks fail', async () => {
    const run = await suiteAgainst(['--break', 'pkce']);
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['bridge/authorize/pkce-required', 'bridge/matrix/pkce-every-client']);
    expect(run.report.results.find((r) => r.id === 'bridge/authorize/pkce-required')!.detail).toMatch(/no challenge: the bridge went on/);
  }, 120_000);

  it('redirect_uri matched by prefix: the exact-match checks fail', async () => {
    const run = await suiteAgainst(['--break', 'redirect-prefix']);
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['bridge/authorize/redirect-exact', 'bridge/matrix/redirect-near-miss']);
    expect(run.report.results.find((r) => r.id === 'bridge/authorize/redirect-exact')!.detail).toMatch(/redirect_uri https:\/\/app\.bridge-test\.example\/cb\/extra was accepted/);
  }, 120_000);

  it('a code reusable without revocation: the replay checks fail', async () => {
    const run = await suiteAgainst(['--break', 'code-reuse']);
    expect(run.code).toBe(1);
    expect(run.failed).toContain('bridge/code/replay-revokes');
    expect(run.failed.filter((id) => id !== 'bridge/properties/transaction-model')).toEqual(['bridge/code/replay-revokes', 'bridge/matrix/code-once']);
    expect(run.report.results.find((r) => r.id === 'bridge/code/replay-revokes')!.detail).toMatch(/the code redeemed twice/);
  }, 120_000);

  it('iss missing from authorization responses: every check that reads iss fails, the fuzzing property with a shrunk case', async () => {
    const run = await suiteAgainst(['--break', 'iss']);
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['bridge/authorize/code-flow', 'bridge/authorize/iss-on-errors', 'bridge/properties/authorize-fuzz', 'bridge/sso/prompt-none', 'bridge/sso/prompt-none-iss']);
    const fuzz = run.report.results.find((r) => r.id === 'bridge/properties/authorize-fuzz')!;
    expect(fuzz.detail).toMatch(/counterexample: .*\n.*without iss/);
    expect(fuzz.detail).toMatch(/replay: .*--replay/);
  }, 120_000);

  it('URL client documents fetched from private addresses: the private-address check fails', async () => {
    const run = await suiteAgainst(['--break', 'url-client-private']);
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['bridge/url-client/private-address']);
    expect(run.report.results.find((r) => r.id === 'bridge/url-client/private-address')!.detail).toMatch(/served from a private address[\s\S]*sent 1 request/);
  }, 120_000);

  it('consent releasing unticked claims: the release check fails', async () => {
    const run = await suiteAgainst(['--break', 'consent']);
    expect(run.code).toBe(1);
    expect(run.failed).toEqual(['bridge/consent/release']);
    expect(run.report.results.find((r) => r.id === 'bridge/consent/release')!.detail).toMatch(/unticked: the ID token carries svc_id/);
  }, 120_000);
});
