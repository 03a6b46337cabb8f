// The operator commands (`svc-oauth`) on a running reference bridge: hash-secret, keys rotate,
// clients suspend (the application stops at once, its tokens with it), and backup + restore,
// proven to give the same subjects and key ids on a bridge started from the restored copy.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { operatorMain } from '../../reference/bridge/operator.ts';
import { BridgeSession } from '../../harness/suites/bridge/driver.ts';
import type { BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { Browser } from '../../harness/actors/signer/index.ts';
import { spawnReference, stopChild } from '../../harness/run/spawn.ts';
import { MemoryOutput } from '../harness/fakes.ts';
import { bridge } from './helpers.ts';

let run: BridgeReferenceRun;
let dir: string;
beforeAll(async () => {
  run = await bridge();
  dir = await mkdtemp(join(tmpdir(), 'svc-oauth-test-'));
}, 60_000);
afterAll(async () => {
  await run?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function oauth(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
  const code = await operatorMain(args, io);
  return { code, out: io.stdout.text, err: io.stderr.text };
}

describe('svc-oauth', () => {
  it('hash-secret prints a 256-bit secret and the SHA-256 the static file takes', async () => {
    const r = await oauth('hash-secret');
    const { client_secret, client_secret_sha256 } = JSON.parse(r.out) as Record<string, string>;
    expect(client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(client_secret_sha256).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.parse((await oauth('hash-secret', client_secret!)).out).client_secret_sha256).toBe(client_secret_sha256);
  });

  it('backup, keys rotate, clients suspend, and a restore that gives the same subjects and key ids', async () => {
    const s = new BridgeSession(run.target);
    try {
      const first = await s.tokens();
      const sub = decodeJwt(String(first.body.id_token)).sub;
      const kid = decodeProtectedHeader(String(first.body.id_token)).kid;
      const backup = join(dir, 'bridge-backup.sqlite');
      expect((await oauth('backup', backup, '--data-dir', run.dataDir)).code).toBe(0);

      expect((await oauth('keys', 'rotate', '--data-dir', run.dataDir)).code).toBe(0);
      const keys = (await (await fetch(`${run.target.issuer}/jwks.json`)).json()) as { keys: { kid: string }[] };
      expect(keys.keys.map((k) => k.kid)).toContain(kid);
      expect(keys.keys).toHaveLength(2);

      expect((await oauth('clients', 'suspend', run.target.clients.basic.client_id, '--data-dir', run.dataDir)).code).toBe(0);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await fetch(`${run.target.issuer}/userinfo`, { headers: { authorization: `Bearer ${String(first.body.access_token)}` } })).status).toBe(401);
      const user = await s.newUser();
      const refused = await s.openAuthorize(user.browser, s.params('basic', { verifier: '', challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' }, 'st', 'n'));
      expect(refused.status).toBe(400);
      expect(refused.location).toBeUndefined();

      // A bridge started from the restored copy: same pairwise secret, same signing key.
      const restored = join(dir, 'restored');
      expect((await oauth('restore', backup, '--data-dir', restored)).code).toBe(0);
      const args = [...run.args];
      args[args.indexOf('--data-dir') + 1] = restored;
      const child = await spawnReference('bridge', args);
      try {
        const again = new BridgeSession({ ...run.target, issuer: child.origin });
        try {
          const r = await again.tokens({ user: { key: first.signIn.user.key, browser: new Browser({ http: again.client(true), profile: run.target.profile }) } });
          expect(decodeJwt(String(r.body.id_token)).sub).toBe(sub);
          expect(decodeProtectedHeader(String(r.body.id_token)).kid).toBe(kid);
        } finally {
          await again.close();
        }
      } finally {
        await stopChild(child);
      }
    } finally {
      await s.close();
    }
  }, 90_000);
});
