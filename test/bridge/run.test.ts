// `svc-conformance run --reference --suite bridge` end to end, and the same suite against a
// reference bridge given by flags as an outside implementation (the profile then reported apart),
// and its URL client checks against a bridge in document 2's default URL client mode.
import { describe, expect, it } from 'vitest';
import { bridge, runCli, suiteArgs } from './helpers.ts';

describe('run --suite bridge', () => {
  it('passes against the reference, profile gating, with no uncovered rule of document 2', async () => {
    const run = await runCli(['run', '--reference', '--suite', 'bridge', '--runs', '15', '--seed', '42']);
    expect(run.failed, run.out).toEqual([]);
    expect(run.code, run.err).toBe(0);
    expect(run.report.coverage.docs).toEqual([2]);
    expect(run.report.coverage.uncovered).toEqual([]);
    expect(run.report.coverage.unknown).toEqual([]);
    expect(run.report.summary.profile).toMatchObject({ gating: true, failed: 0 });
    expect(run.report.summary.passed).toBeGreaterThan(40);
    expect(run.report.results.filter((r) => r.status === 'skipped').map((r) => r.id)).toEqual([]);
    expect(run.out.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed, 0 skipped$/);
  }, 180_000);

  it('passes against a reference bridge given by flags (an outside bridge: the profile does not gate)', async () => {
    const b = await bridge();
    try {
      const run = await runCli(await suiteArgs(b));
      expect(run.failed, run.out).toEqual([]);
      expect(run.differ).toEqual([]);
      expect(run.code, run.err).toBe(0);
      expect(run.report.summary.profile).toMatchObject({ gating: false });
    } finally {
      await b.stop();
    }
  }, 180_000);

  // run --reference starts its bridge with OAUTH_URL_CLIENTS=on; document 2's default is indieauth.
  it("passes the URL client checks against a bridge in document 2's default mode, indieauth", async () => {
    const b = await bridge(['--url-clients', 'indieauth']);
    try {
      const run = await runCli(await suiteArgs(b, ['--bridge-url-clients', 'indieauth', '--check', 'url-client']));
      expect(run.failed, run.out).toEqual([]);
      expect(run.differ).toEqual([]);
      expect(run.report.results.filter((r) => r.status === 'skipped').map((r) => r.id)).toEqual([]);
      expect(run.report.results.map((r) => r.id)).toContain('bridge/profile/url-client-openid');
      expect(run.code, run.err).toBe(0);
    } finally {
      await b.stop();
    }
  }, 180_000);
});
