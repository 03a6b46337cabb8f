// The bridge suite against the reference bridge over https on a name the test authority resolves
// and certifies (bridge.svc-tls.test): on loopback http the bridge's cookies go without
// `__Host-` (browsers refuse it without Secure), so ob.cookies.host-prefix is judged only here.
// The correct bridge over https passes the checks citing it; --break cookies-unprefixed fails them.
import { describe, expect, it } from 'vitest';
import { REFERENCE_TLS_NAME } from '../../harness/suites/bridge/launch.ts';
import { bridge, runCli, suiteArgs } from './helpers.ts';

async function judged(args: string[]) {
  const b = await bridge(args, {}, { tls: true });
  try {
    expect(b.target.issuer).toMatch(new RegExp(`^https://${REFERENCE_TLS_NAME.replace(/\./g, '\\.')}:\\d+$`));
    return await runCli([...(await suiteArgs(b)), '--profile', '--rule', 'ob.cookies.host-prefix']);
  } finally {
    await b.stop();
  }
}

describe('the bridge suite over https', () => {
  it('the reference bridge over https passes the checks citing ob.cookies.host-prefix; with unprefixed cookies it fails them', async () => {
    const pass = await judged([]);
    expect(pass.code, pass.out).toBe(0);
    expect(pass.report.results.map((r) => [r.id, r.status]).sort()).toEqual([
      ['bridge/cookies/every-cookie', 'passed'],
      ['bridge/pages/headers', 'passed'],
    ]);

    const bad = await judged(['--break', 'cookies-unprefixed']);
    expect(bad.code).toBe(1);
    expect([...bad.failed].sort()).toEqual(['bridge/cookies/every-cookie', 'bridge/pages/headers']);
    const detail = (id: string) => bad.report.results.find((r) => r.id === id)?.detail;
    expect(detail('bridge/pages/headers')).toMatch(/cookie \w+ is not __Host- and Secure/);
    expect(detail('bridge/cookies/every-cookie')).toMatch(/no __Host-/);
  }, 90_000);
});
