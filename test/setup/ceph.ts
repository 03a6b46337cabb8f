// A one-node Ceph (test/setup/ceph.sh: one monitor, one memstore OSD, the RADOS Gateway) for a
// test file, on free ports under a fresh directory: its S3 endpoint and keys, and how to stop it.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CEPH_MON, CEPH_OSD, need, RADOSGW } from './needs.ts';
import { withLock } from './lock.ts';

const run = promisify(execFile);
const SCRIPT = new URL('./ceph.sh', import.meta.url).pathname;

export interface Ceph {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  /** Its directory (logs under log/). */
  dir: string;
  /** How long `ceph.sh start` took. */
  startMs: number;
  stop(): Promise<void>;
}

/**
 * A free port below the ephemeral range (32768 and up): Ceph's daemons open outgoing connections
 * between the script's choosing a port and the gateway's binding it, and one may take an ephemeral one.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** The last lines of each daemon's log under `dir` (the script's stop removes them). */
function logTails(dir: string): string[] {
  const logs = join(dir, 'log');
  if (!existsSync(logs)) return [];
  return readdirSync(logs).map((f) => `  ${f}: ${readFileSync(join(logs, f), 'utf8').trim().split('\n').slice(-5).join('\n    ')}`);
}

/**
 * Starts one. Two test files starting Ceph at once could pick the same ports (free until a daemon
 * binds them) and starve each other's monitor: the pick and the start happen under the run's lock.
 */
export async function startCeph(): Promise<Ceph> {
  for (const p of [RADOSGW, CEPH_MON, CEPH_OSD]) need(p);
  const { env, stdout, startMs } = await withLock('ceph-start', async () => {
    // A start on a loaded runner can miss one of the script's waits, or a port taken meanwhile:
    // it is tried once more on fresh ports, and a second failure says what both printed.
    const failures: string[] = [];
    for (let attempt = 1; ; attempt++) {
      const env = { ...process.env, CEPH_DIR: join(mkdtempSync(join(tmpdir(), 'svc-ceph-')), 'ceph'), CEPH_MON_PORT: String(await freePort()), CEPH_RGW_PORT: String(await freePort()) };
      const t0 = performance.now();
      try {
        const { stdout } = await run(SCRIPT, ['start'], { env });
        return { env, stdout, startMs: performance.now() - t0 };
      } catch (error) {
        const e = error as Error & { stderr?: string };
        failures.push(`attempt ${attempt} (${Math.round(performance.now() - t0)} ms): ${(e.stderr ?? '').trim() || e.message}`, ...logTails(env.CEPH_DIR));
        await run(SCRIPT, ['stop'], { env }).catch(() => undefined);
        if (attempt === 2) throw new Error(`ceph.sh start failed twice:\n${failures.join('\n')}`);
      }
    }
  });
  const vars = Object.fromEntries(stdout.split('\n').flatMap((l) => (/^[A-Z0-9_]+=/.test(l) ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]] : []))) as Record<string, string>;
  return {
    endpoint: vars.CEPH_S3_ENDPOINT!,
    accessKey: vars.CEPH_S3_ACCESS_KEY!,
    secretKey: vars.CEPH_S3_SECRET_KEY!,
    dir: vars.CEPH_DIR!,
    startMs,
    stop: async () => void (await run(SCRIPT, ['stop'], { env })),
  };
}
