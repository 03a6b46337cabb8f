// The Redis nonce store against a real redis-server child process: SET NX PX is atomic across
// clients, and with Redis gone the RP fails closed (503 nonce_cache_unavailable) and recovers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisNonceStore } from '../../reference/stores/redis.ts';
import { startRp, type RunningRp } from '../../reference/rp/app.ts';
import { approve, Browser, deliver, start, staticResolver } from './helpers.ts';
import { need, REDIS_SERVER } from '../setup/needs.ts';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(need(REDIS_SERVER), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
  return child;
}

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
  port = await freePort();
  redis = await startRedis(port);
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
