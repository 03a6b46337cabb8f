// A redis-server of a test's own, without persistence, on a free port. Two test files starting
// one at once could pick the same port (a port is free until someone binds it): the pick and the
// start happen under the run's lock, and the server counts as started only when its own output
// says it accepts connections, so a test never talks to another file's Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { need, REDIS_SERVER } from './needs.ts';
import { withLock } from './lock.ts';

export interface RedisServer {
  port: number;
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

const START_MS = 30_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once this child says it is ready; rejects with its output when it exits first (a port taken). */
function ready(proc: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within ${START_MS / 1000} s: ${out}`)), START_MS);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited ${code}: ${out.trim().split('\n').slice(-2).join(' | ')}`));
    });
  });
}

/** A fresh redis-server; `port` to start it on a chosen port (a restart), else a free one. */
export async function startRedis(port?: number): Promise<RedisServer> {
  const binary = need(REDIS_SERVER);
  return withLock('redis-start', async () => {
    for (let attempt = 1; ; attempt++) {
      const p = port ?? (await freePort());
      const proc = spawn(binary, ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
      try {
        await ready(proc);
      } catch (error) {
        proc.kill('SIGKILL');
        // Taken by something outside this run between the pick and the bind: pick again.
        if (port === undefined && attempt < 3 && /Address already in use/i.test((error as Error).message)) continue;
        throw error;
      }
      proc.stdout!.resume();
      return {
        port: p,
        url: `redis://127.0.0.1:${p}`,
        proc,
        stop: () =>
          new Promise<void>((resolve) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
            proc.once('exit', () => resolve());
            proc.kill('SIGTERM');
          }),
      };
    }
  });
}
