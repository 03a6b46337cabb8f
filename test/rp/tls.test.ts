// The rp suite against the reference RP over https on a name the test authority resolves and
// certifies (rp.svc-tls.test): on loopback http the document allows an http audience, so
// ns.request.audience-http-dev and ns.auth.5 are judged only here. The correct RP over https
// passes the checks citing them; the same RP published over plain http on that name fails them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { brokenRp, RP_TLS_NAME, runCli, suiteArgs, tlsRp } from './helpers.ts';
import type { RunningRp } from '../../reference/rp/app.ts';

let authority: Authority;
beforeAll(async () => {
  authority = await startAuthority();
});
afterAll(async () => {
  await authority?.close();
});

async function judged(rp: RunningRp, rule: string) {
  try {
    return await runCli([...suiteArgs(rp.origin, authority), '--profile', '--rule', rule]);
  } finally {
    await rp.close();
  }
}

describe('the rp suite over https', () => {
  for (const rule of ['ns.request.audience-http-dev', 'ns.auth.5']) {
    it(`the reference RP over https passes the checks citing ${rule}; published over http on a production name it fails them`, async () => {
      const good = await tlsRp(authority);
      expect(good.origin).toMatch(new RegExp(`^https://${RP_TLS_NAME.replace(/\./g, '\\.')}:\\d+$`));
      const pass = await judged(good, rule);
      expect(pass.code, pass.out).toBe(0);
      expect(pass.report.results.map((r) => [r.id, r.status])).toEqual([['rp/request/audience-tls', 'passed']]);

      const bad = await judged(await brokenRp('http-origin', authority), rule);
      expect(bad.code).toBe(1);
      expect(bad.failed).toEqual(['rp/request/audience-tls']);
      expect(bad.report.results[0]!.detail).toMatch(new RegExp(`http://${RP_TLS_NAME.replace(/\./g, '\\.')}:\\d+ uses http:// and is not a development host`));
    }, 60_000);
  }
});
