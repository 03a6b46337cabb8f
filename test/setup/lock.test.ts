// The set-up lock: holders take turns (across processes, since it is a directory made with mkdir),
// and a lock whose owner died is taken over.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { withLock, withLockSync } from './lock.ts';

describe('withLock', () => {
  it('lets one holder in at a time', async () => {
    const events: string[] = [];
    const hold = (name: string) =>
      withLock('test-turns', async () => {
        events.push(`${name} in`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        events.push(`${name} out`);
      });
    await Promise.all([hold('a'), hold('b')]);
    expect(events).toEqual(['a in', 'a out', 'b in', 'b out']);
  });

  it('takes over a lock whose owner died, and releases on a throw', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const dir = join(tmpdir(), 'svc-lock-test-stale');
    mkdirSync(dir);
    writeFileSync(join(dir, 'pid'), dead);
    expect(await withLock('test-stale', () => 'taken', 'run', 5000)).toBe('taken');
    expect(() =>
      withLockSync('test-stale', () => {
        throw new Error('set-up failed');
      }),
    ).toThrow('set-up failed');
    expect(withLockSync('test-stale', () => 'free again', 'run', 1000)).toBe('free again');
  });
});
