// The Redis nonce store against a real redis-server child process: SET NX PX is atomic across
// clients, and with Redis gone the RP fails closed (503 nonce_cache_unavailable) and recovers.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisNonceStore } from '../../reference/stores/redis.ts';
import { startRp, type RunningRp } from '../../reference/rp/app.ts';
import { approve, Browser, deliver, start, staticResolver } from './helpers.ts';
import { startRedis as startRedisServer } from '../setup/redis.ts';

/** A redis-server (test/setup/redis.ts), on `port` when it restarts one; its process. */
const startRedis = async (on?: number): Promise<ChildProcess> => {
  const server = await startRedisServer(on);
  port = server.port;
  return server.proc;
};

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

let port: number;
let redis: ChildProcess;
let rp: RunningRp;

beforeAll(async () => {
  redis = await startRedis();
  rp = await startRp({ dataDir: ':memory:', nonceStore: `redis://127.0.0.1:${port}` }, { resolver: staticResolver() });
});
afterAll(async () => {
  await rp?.close();
  if (redis) await stopRedis(redis);
});

describe('RedisNonceStore', () => {
  it('claims a key once across two clients (SET NX PX) and releases it', async () => {
    const a = new RedisNonceStore({ url: `redis://127.0.0.1:${port}`, prefix: 'test' });
    const b = new RedisNonceStore({ url: `redis://127.0.0.1:${port}`, prefix: 'test' });
    try {
      await Promise.all([a.ready(), b.ready()]);
      const key = `k-${Math.random()}`;
      const claims = await Promise.all([a.claim(key, Date.now() + 60_000), b.claim(key, Date.now() + 60_000), a.claim(key, Date.now() + 60_000)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      await b.release(key);
      expect(await a.claim(key, Date.now() + 60_000)).toBe(true);
      // Expiry: a claim lives until expires_at only.
      const short = `s-${Math.random()}`;
      expect(await a.claim(short, Date.now() + 50)).toBe(true);
      await new Promise((r) => setTimeout(r, 120));
      expect(await b.claim(short, Date.now() + 60_000)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('reference RP with --nonce-store redis://', () => {
  it('accepts a login, fails closed with 503 while Redis is down, and recovers when it is back', async () => {
    const ok = await start(new Browser(), rp.url);
    expect((await deliver(rp.url, '/svc/response', approve(ok.request))).status).toBe(200);

    await stopRedis(redis);
    const down = await start(new Browser(), rp.url);
    const t0 = Date.now();
    const refused = await deliver(rp.url, '/svc/response', approve(down.request));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ error: 'nonce_cache_unavailable', rule: 'ns.nonce.fail-closed' });

    redis = await startRedis(port);
    // ioredis reconnects on its own within about a second.
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await deliver(rp.url, '/svc/response', approve(down.request))).status;
      expect([200, 503]).toContain(status);
    }
    expect(status).toBe(200);
  });
});
