// Two reference bridge processes on one PostgreSQL database pass the bridge suite: sessions,
// transactions, codes, tokens, keys (rotated through the second process) and nonces are shared.
// `svc-oauth backup` of the database restores into another one with the same subjects and key ids.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorMain } from '../../reference/bridge/operator.ts';
import { Browser } from '../../harness/actors/signer/index.ts';
import { spawnReference, stopChild } from '../../harness/run/spawn.ts';
import { MemoryOutput } from '../harness/fakes.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { REFERENCE_LIFETIMES, startBridgeReference, type BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { BridgeSession } from '../../harness/suites/bridge/driver.ts';
import { runCli, suiteArgs } from './helpers.ts';
import { throwawayDatabase, type ThrowawayDb } from './postgres.ts';

let db: ThrowawayDb;
let run: BridgeReferenceRun;
beforeAll(async () => {
  db = throwawayDatabase();
  run = await startBridgeReference({
    profile: profileFor(),
    database: db.url,
    processes: 2,
    ...REFERENCE_LIFETIMES,
  });
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

  it('svc-oauth backup takes one snapshot, and its restore into another database gives the same subjects and key ids', async () => {
    const s = new BridgeSession(run.target);
    const other = throwawayDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'svc-pg-backup-'));
    const oauth = async (...args: string[]) => {
      const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
      const code = await operatorMain(args, io);
      expect(code, io.stderr.text).toBe(0);
      return io.stdout.text;
    };
    try {
      const first = await s.tokens();
      const file = join(dir, 'bridge-backup.sqlite');
      expect(await oauth('backup', file, '--database', db.url)).toMatch(/backed up \d+ rows of postgres:\/\/\w+:\*\*\*@/);
      expect(await oauth('restore', file, '--database', other.url)).toMatch(/restored \d+ rows/);
      const args = [...run.args];
      args[args.indexOf('--database') + 1] = other.url;
      const child = await spawnReference('bridge', args);
      const again = new BridgeSession({ ...run.target, issuer: child.origin });
      try {
        const r = await again.tokens({ user: { key: first.signIn.user.key, browser: new Browser({ http: again.client(true), profile: run.target.profile }) } });
        expect(decodeJwt(String(r.body.id_token)).sub).toBe(decodeJwt(String(first.body.id_token)).sub);
        expect(decodeProtectedHeader(String(r.body.id_token)).kid).toBe(decodeProtectedHeader(String(first.body.id_token)).kid);
      } finally {
        await again.close();
        await stopChild(child);
      }
    } finally {
      await s.close();
      other.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
