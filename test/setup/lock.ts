// A lock the test files share (vitest runs two at once, in separate processes): a directory made
// with mkdir, which exists or not atomically, holding the owner's pid. Under the run's scratch
// directory (test/setup/scratch.ts sets TMPDIR) for what one run starts, or under the system's
// temporary directory for what every run on the machine shares (the PostgreSQL cluster). A lock
// whose owner died is taken over, so a killed test file never blocks the next run.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const POLL_MS = 50;

/** `run`: the test files of this run; `machine`: every run on this machine. */
export type LockScope = 'run' | 'machine';

function lockDir(name: string, scope: LockScope): string {
  return join(scope === 'machine' ? '/tmp' : tmpdir(), `svc-lock-${name}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryTake(dir: string): boolean {
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    } catch {
      return false; // just made, its pid not written yet
    }
    if (Number.isFinite(owner) && owner !== process.pid && !alive(owner)) rmSync(dir, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(dir, 'pid'), String(process.pid));
  return true;
}

/** Runs `fn` while holding the lock `name` (one holder across every test process of the run). */
export async function withLock<T>(name: string, fn: () => T | Promise<T>, scope: LockScope = 'run', timeoutMs = 180_000): Promise<T> {
  const dir = lockDir(name, scope);
  const deadline = Date.now() + timeoutMs;
  while (!tryTake(dir)) {
    if (Date.now() > deadline) throw new Error(`test set-up: the lock ${dir} is still held after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same, for synchronous set-up (execFileSync): it waits by sleeping the thread. */
export function withLockSync<T>(name: string, fn: () => T, scope: LockScope = 'run', timeoutMs = 180_000): T {
  const dir = lockDir(name, scope);
  const deadline = Date.now() + timeoutMs;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (!tryTake(dir)) {
    if (Date.now() > deadline) throw new Error(`test set-up: the lock ${dir} is still held after ${timeoutMs / 1000} s`);
    Atomics.wait(nap, 0, 0, POLL_MS);
  }
  try {
    return fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
