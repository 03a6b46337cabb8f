// Two reference bridge processes on one PostgreSQL database pass the bridge suite: sessions,
// transactions, codes, tokens, keys (rotated through the second process) and nonces are shared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileFor } from '../../protocol/common/profile.ts';
import { startBridgeReference, type BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { BridgeSession } from '../../harness/suites/bridge/driver.ts';
import { runCli, suiteArgs } from './helpers.ts';
import { throwawayDatabase, type ThrowawayDb } from './postgres.ts';

let db: ThrowawayDb;
let run: BridgeReferenceRun;
beforeAll(async () => {
  db = throwawayDatabase();
  run = await startBridgeReference({ profile: profileFor(), database: db.url, processes: 2 });
}, 60_000);
afterAll(async () => {
  await run?.stop();
  db?.drop();
});

describe('the reference bridge on PostgreSQL', () => {
  it('two processes on one database pass the bridge suite', async () => {
    const cli = await runCli(await suiteArgs(run, ['--profile']));
    expect(cli.failed, cli.out).toEqual([]);
    expect(cli.code, cli.err).toBe(0);
    expect(cli.report.summary.passed).toBeGreaterThan(40);
  }, 180_000);

  it('a code issued by one process redeems at the other, and the other answers userinfo', async () => {
    const s = new BridgeSession(run.target);
    try {
      const r = await s.signIn();
      const other = run.processes[1]!.url;
      const c = run.target.clients.basic;
      const res = await fetch(`${other}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: r.response.code!, redirect_uri: c.redirect_uri, code_verifier: r.pkce.verifier }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { access_token: string };
      const info = await fetch(`${run.target.issuer}/userinfo`, { headers: { authorization: `Bearer ${body.access_token}` } });
      expect(info.status).toBe(200);
      // The same code at the first process is a replay: refused, and the token is revoked everywhere.
      const again = await fetch(`${run.target.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: r.response.code!, redirect_uri: c.redirect_uri, code_verifier: r.pkce.verifier }),
      });
      expect(again.status).toBe(400);
      expect((await fetch(`${other}/userinfo`, { headers: { authorization: `Bearer ${body.access_token}` } })).status).toBe(401);
    } finally {
      await s.close();
    }
  }, 60_000);
});
