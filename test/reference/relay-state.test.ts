// The relay state's stream slots, quota holds and shared values, on both states: one process's
// memory, and Redis shared by two connections as two relay processes share it (a real
// redis-server). What one process takes, the other sees; what lapses frees itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryState, type RelayState } from '../../reference/relay/state.ts';
import { RedisState } from '../../reference/relay/state-redis.ts';
import { startRedis, type RedisServer } from '../rp/helpers.ts';

let redis: RedisServer;
let clock = 1_000_000;
const now = () => clock;
const states: RedisState[] = [];

beforeAll(async () => {
  redis = await startRedis();
}, 20_000);

afterAll(async () => {
  for (const s of states) await s.close();
  await redis?.stop();
});

/** Two handles on one state: the same object in memory, two connections to one Redis. */
async function pair(kind: 'memory' | 'redis'): Promise<[RelayState, RelayState]> {
  if (kind === 'memory') {
    const m = new MemoryState(now);
    return [m, m];
  }
  const prefix = `t${states.length}`;
  const open = () => RedisState.connect({ url: redis.url, prefix, now, log: () => undefined });
  const [a, b] = [await open(), await open()];
  states.push(a, b);
  return [a, b];
}

describe.each(['memory', 'redis'] as const)('the relay state (%s)', (kind) => {
  it('gives `max` stream slots across processes, frees a released one and a lapsed one', async () => {
    const [a, b] = await pair(kind);
    expect(await a.claimSlot('streams:x', 's1', 2, 75_000)).toBe(true);
    expect(await b.claimSlot('streams:x', 's2', 2, 75_000)).toBe(true);
    expect(await a.claimSlot('streams:x', 's3', 2, 75_000)).toBe(false);
    await b.releaseSlot('streams:x', 's2');
    expect(await a.claimSlot('streams:x', 's3', 2, 75_000)).toBe(true);
    clock += 60_000;
    await b.renewSlot('streams:x', 's3', 75_000);
    clock += 30_000;
    // s1 lapsed (not renewed), s3 was renewed: one slot is free.
    expect(await b.claimSlot('streams:x', 's4', 2, 75_000)).toBe(true);
    expect(await a.claimSlot('streams:x', 's5', 2, 75_000)).toBe(false);
  });

  it('shares quota holds: both processes see both, and a lapsed or dropped hold counts no more', async () => {
    const [a, b] = await pair(kind);
    await a.hold('drive-quota:d', 'put:1', 1000, 10_000);
    await b.hold('drive-quota:d', 'url:c', 500, 20_000);
    expect(Object.fromEntries(await a.holds('drive-quota:d'))).toEqual({ 'put:1': 1000, 'url:c': 500 });
    await b.unhold('drive-quota:d', 'put:1');
    expect(Object.fromEntries(await a.holds('drive-quota:d'))).toEqual({ 'url:c': 500 });
    clock += 20_001;
    expect(await b.holds('drive-quota:d')).toEqual(new Map());
  });

  it('shares short-lived values until they lapse', async () => {
    const [a, b] = await pair(kind);
    await a.putValue('drive-pow:t', 'share1', 100);
    expect(await b.value('drive-pow:t')).toBe('share1');
    // Redis expires the key on its own clock; memory on the state's.
    clock += 101;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await b.value('drive-pow:t')).toBeUndefined();
  });
});
