// The rp suite against an RP that follows document 1 and none of the project's decisions (its own
// paths, statuses, error bodies, no request binding, a shorter context record): every document
// check passes; the project's decisions show as profile differences that gate only with --profile.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { DOC_ONLY_PATHS, documentOnlyRp, runCli, suiteArgs, TEST_RESUME_TTL_S } from './helpers.ts';
import type { RunningRp } from '../../reference/rp/app.ts';

/** Document checks that may skip here, and why: nothing the variant chose. */
const ALLOWED_SKIPS = ['rp/process/shared-transactions', 'rp/nonce/fail-closed', 'rp/codes/nonce/fail-closed'];
/** Profile checks the variant must differ on (one per decision it drops). */
const MUST_DIFFER = [
  'rp/codes/rule-7/bit-flip',
  'rp/codes/binding/nonce-changed',
  'rp/codes/transaction/match-wrong',
  'rp/profile/context-record',
  'rp/profile/delivery-body-cap',
  'rp/profile/delivery-malformed',
];

let authority: Authority;
let rp: RunningRp & { short: RunningRp };
beforeAll(async () => {
  authority = await startAuthority();
  rp = await documentOnlyRp(authority);
});
afterAll(async () => {
  await rp?.close();
  await authority?.close();
});

const args = () => suiteArgs(rp.origin, authority, ['--rp-start', `${rp.origin}${DOC_ONLY_PATHS.login}`, '--rp-short-window', rp.short.origin]);

describe('the rp suite against an RP that follows document 1 only', () => {
  it('passes every document check (exit 0) and reports the project decisions it does not follow as profile differences', async () => {
    const run = await runCli(args());
    expect(run.failed, run.out).toEqual([]);
    expect(run.code, run.err).toBe(0);
    const results = run.report.results;
    const docs = results.filter((r) => !r.profile);
    expect(docs.filter((r) => r.status !== 'passed' && !(r.status === 'skipped' && ALLOWED_SKIPS.includes(r.id))).map((r) => `${r.id}: ${r.status} ${r.detail}`)).toEqual([]);
    const differ = results.filter((r) => r.profile && r.status === 'failed');
    expect(differ.every((r) => r.gating === false)).toBe(true);
    expect(differ.map((r) => r.id)).toEqual(expect.arrayContaining(MUST_DIFFER));
    expect(run.report.summary.profile).toMatchObject({ gating: false, failed: differ.length });
    // A failure shows what the RP answered, though it has no `detail` field.
    expect(differ.find((r) => r.id === 'rp/codes/rule-7/bit-flip')!.detail).toMatch(/got 400 nope \("\{\\"error\\":\\"nope\\"\}"\)/);
  }, 240_000);

  it('with the profile gating (a targets file saying "profile": true) fails (exit 1), and only on profile checks', async () => {
    // The same target described by a targets file, as an outside implementer would.
    const file = join(await mkdtemp(join(tmpdir(), 'svc-doc-only-')), 'targets.json');
    const targets = {
      authority: authority.adminUrl,
      rp: { origin: rp.origin, start_url: `${rp.origin}${DOC_ONLY_PATHS.login}`, short_window_origin: rp.short.origin, declared: { resume_code_lifetime_s: TEST_RESUME_TTL_S }, profile: true },
    };
    await writeFile(file, `// the document-only RP\n${JSON.stringify(targets, null, 2)}\n`);
    const run = await runCli(['run', '--targets', file, '--runs', '15', '--seed', '7']);
    expect(run.report.config.suites).toEqual([expect.objectContaining({ suite: 'rp', rp: rp.origin })]);
    expect(run.code).toBe(1);
    const byId = new Map(run.report.results.map((r) => [r.id, r]));
    expect(run.failed.length).toBeGreaterThan(0);
    expect(run.failed.filter((id) => !byId.get(id)!.profile)).toEqual([]);
    expect(run.failed).toEqual(expect.arrayContaining(MUST_DIFFER));
  }, 240_000);
});
