// A 5xx is never a reason to skip (no request may get one): an RP that answers 500 where a check
// would otherwise skip (the start with the longest statement, the login page) fails those checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { runCli, suiteArgs, tlsRp } from './helpers.ts';

let authority: Authority;
beforeAll(async () => {
  authority = await startAuthority();
});
afterAll(async () => {
  await authority?.close();
});

const crash = () => new Response('{"error":"internal_error","detail":"crashed"}', { status: 500, headers: { 'content-type': 'application/json' } });

describe('the rp suite against an RP that answers 500 where a check could skip', () => {
  it('fails rp/request/statement-max and rp/page/transports instead of skipping them', async () => {
    const rp = await tlsRp(authority);
    const fetch = rp.app.fetch;
    rp.app.fetch = async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/login' && req.method === 'GET') return crash();
      if (path === '/login' && req.method === 'POST') {
        const body = await req.clone().text();
        if (body.includes('a'.repeat(limits.statement_max_bytes))) return crash();
      }
      return fetch(req);
    };
    try {
      const run = await runCli(suiteArgs(rp.origin, authority, ['--check', 'rp/request/statement-max', '--check', 'rp/page/transports']));
      expect(run.failed).toEqual(['rp/page/transports', 'rp/request/statement-max']);
      const detail = (id: string) => run.report.results.find((r) => r.id === id)!.detail;
      expect(detail('rp/request/statement-max')).toMatch(/the start contract answered 500 .*no request may get a 5xx/);
      expect(detail('rp/page/transports')).toMatch(/the login page .* answered 500 .*no request may get a 5xx/);
    } finally {
      await rp.close();
    }
  }, 120_000);
});
