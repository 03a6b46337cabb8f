import { describe, expect, it } from 'vitest';
import { ConfigError, exitCodeFor } from '../../harness/run/exit.ts';
import { parseExpectedFailures } from '../../harness/run/expected.ts';
import type { CheckResult, Outcome, Reporter } from '../../harness/run/model.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { idMatches, ruleMatches, selectChecks } from '../../harness/run/select.ts';
import { catalogue, check, fail, pass, sampleChecks, skip } from './fakes.ts';

const base = { seed: 42, rules: catalogue };

describe('exit codes', () => {
  it('is 0 when every check passes', async () => {
    const report = await runChecks(sampleChecks(), base);
    expect(report.summary).toMatchObject({ passed: 5, failed: 0, total: 5, interrupted: false, seed: 42 });
    expect(exitCodeFor(report.summary)).toBe(0);
  });

  it('is 1 when a check fails or errors', async () => {
    const failed = await runChecks([check('a', pass()), check('b', fail())], base);
    expect(exitCodeFor(failed.summary)).toBe(1);
    const errored = await runChecks(
      [
        check('a', pass()),
        check('b', () => {
          throw new Error('boom');
        }),
      ],
      base,
    );
    expect(exitCodeFor(errored.summary)).toBe(1);
  });

  it('is 2 when nothing was tested', async () => {
    expect(exitCodeFor((await runChecks([], base)).summary)).toBe(2);
    expect(exitCodeFor((await runChecks([check('a', skip()), check('b', skip())], base)).summary)).toBe(2);
    const none = await runChecks(sampleChecks(), { ...base, selection: { suites: ['relay'] } });
    expect(none.summary.total).toBe(0);
    expect(exitCodeFor(none.summary)).toBe(2);
  });

  it('is 2 when the run is interrupted, even after passes', async () => {
    const stop = new AbortController();
    const checks = [
      check('a', pass()),
      check('b', () => {
        stop.abort();
        return pass();
      }),
      check('c', pass()),
    ];
    const report = await runChecks(checks, { ...base, signal: stop.signal });
    expect(report.summary.interrupted).toBe(true);
    expect(report.results.map((r) => r.id)).toEqual(['a', 'b']);
    expect(exitCodeFor(report.summary)).toBe(2);
  });

  it('stops a check in flight when interrupted', async () => {
    const stop = new AbortController();
    const hang = check('hang', (): Promise<never> => new Promise(() => setTimeout(() => stop.abort(), 10)));
    const report = await runChecks([hang, check('later', pass())], { ...base, signal: stop.signal });
    expect(report.results).toMatchObject([{ id: 'hang', status: 'skipped', detail: expect.stringContaining('interrupted') }]);
    expect(exitCodeFor(report.summary)).toBe(2);
  });
});

describe('runner', () => {
  it('turns a throw into an error with the message and the stack head', async () => {
    const report = await runChecks(
      [
        check('t', () => {
          throw new TypeError('bad shape');
        }),
      ],
      base,
    );
    const [r] = report.results;
    expect(r?.status).toBe('error');
    expect(r?.detail).toMatch(/^TypeError: bad shape\n {2}at /);
    expect(report.summary.errors).toBe(1);
  });

  it('turns a hung check into an error after the timeout and aborts its signal', async () => {
    let aborted = false;
    const slow = check(
      'slow',
      ({ signal }) =>
        new Promise<Outcome>((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(pass());
          }),
        ),
    );
    const report = await runChecks([slow], { ...base, timeoutMs: 20 });
    expect(report.results[0]).toMatchObject({ status: 'error', detail: 'timed out after 20 ms' });
    expect(aborted).toBe(true);
  });

  it('a check that says it progresses gets its time limit again from there, and still ends when it stops progressing', async () => {
    const steady = check('steady', async (ctx) => {
      for (let i = 0; i < 6; i++) {
        await new Promise((r) => setTimeout(r, 30));
        ctx.progress?.();
      }
      return pass();
    });
    const stalls = check('stalls', async (ctx) => {
      ctx.progress?.();
      await new Promise((r) => setTimeout(r, 40));
      ctx.progress?.();
      return new Promise<Outcome>((resolve) => ctx.signal.addEventListener('abort', () => resolve(pass())));
    });
    const report = await runChecks([steady, stalls], { ...base, timeoutMs: 120 });
    expect(report.results[0]).toMatchObject({ id: 'steady', status: 'passed' });
    expect(report.results[1]).toMatchObject({ id: 'stalls', status: 'error', cause: 'check-timeout', detail: 'made no progress for 120 ms (each completed run restarts that limit)' });
  });

  it('rejects an invalid outcome as an error', async () => {
    const report = await runChecks([check('x', () => ({ status: 'error' }) as never)], base);
    expect(report.results[0]?.status).toBe('error');
  });

  it('keeps the check order in the report under concurrency and reports progress', async () => {
    const delays = [30, 5, 15, 1];
    const checks = delays.map((d, i) => check(`c${i}`, () => new Promise((r) => setTimeout(() => r(pass()), d))));
    const seen: string[] = [];
    let started = -1;
    let ended = false;
    const reporter: Reporter = { onStart: (n) => void (started = n), onResult: (r) => void seen.push(r.id), onEnd: () => void (ended = true) };
    const report = await runChecks(checks, { ...base, concurrency: 4, reporters: [reporter] });
    expect(report.results.map((r) => r.id)).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(seen).toEqual(['c3', 'c1', 'c2', 'c0']);
    expect(started).toBe(4);
    expect(ended).toBe(true);
  });

  it('runs suites and lanes at once, a lane in order, and exclusive checks first and alone in their suite', async () => {
    const events: string[] = [];
    const timed = (id: string, suite: string, ms: number, extra: { lane?: string; exclusive?: boolean } = {}) => ({
      ...check(
        id,
        async () => {
          events.push(`start ${id}`);
          await new Promise((r) => setTimeout(r, ms));
          events.push(`end ${id}`);
          return pass();
        },
        { suite },
      ),
      ...extra,
    });
    const checks = [
      timed('r1', 'relay', 10),
      timed('r2', 'relay', 10),
      timed('wait', 'relay', 40, { lane: 'relay/wait' }),
      timed('restart', 'relay', 20, { exclusive: true }),
      timed('b1', 'bridge', 15),
    ];
    const report = await runChecks(checks, base);
    expect(report.results.map((r) => r.id)).toEqual(['r1', 'r2', 'wait', 'restart', 'b1']);
    const at = (e: string) => events.indexOf(e);
    // the exclusive check runs first and alone in its suite; the other suite starts beside it
    expect(events.slice(0, 2).sort()).toEqual(['start b1', 'start restart']);
    expect(Math.min(at('start r1'), at('start wait'))).toBeGreaterThan(at('end restart'));
    // a lane's checks one after another; the waiting check in its own lane beside them
    expect(at('start r2')).toBeGreaterThan(at('end r1'));
    expect(at('start wait')).toBeLessThan(at('end r1'));
  });

  it('keeps logs of failed checks and makes evidence JSON-safe', async () => {
    const c = check('l', (ctx) => {
      ctx.log('sent GET /x');
      return { status: 'failed' as const, detail: 'no', evidence: { n: 10n, body: new Uint8Array([1, 2]) } };
    });
    const [r] = (await runChecks([c], base)).results;
    expect(r?.log).toEqual(['sent GET /x']);
    expect(r?.evidence).toEqual({ n: '10n', body: { bytes_base64url: 'AQI' } });
  });

  it('refuses duplicate ids and a replay of more than one check', async () => {
    await expect(runChecks([check('a', pass()), check('a', pass())], base)).rejects.toBeInstanceOf(ConfigError);
    await expect(runChecks(sampleChecks(), { ...base, replay: '0:1' })).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('selection', () => {
  it('matches rule ids on dot boundaries, or as a plain prefix with * or a trailing dot', () => {
    expect(ruleMatches('ns.verify', 'ns.verify.2')).toBe(true);
    expect(ruleMatches('ns.verify.1', 'ns.verify.1')).toBe(true);
    expect(ruleMatches('ns.verify.1', 'ns.verify.10')).toBe(false);
    expect(ruleMatches('ns.ver*', 'ns.verify.10')).toBe(true);
    expect(ruleMatches('ns.', 'ns.request.nonce')).toBe(true);
    expect(ruleMatches('ns.verify', 'ns.verifyx')).toBe(false);
  });

  it('selects by rule prefix', () => {
    const ids = selectChecks(sampleChecks(), { rules: ['ns.verify.1'] }).map((c) => c.id);
    expect(ids).toEqual(['vectors/poweur/signin.json#valid-identity']);
    const prefix = selectChecks(sampleChecks(), { rules: ['ns.verify'] }).map((c) => c.id);
    expect(prefix).toEqual(['vectors/poweur/signin.json#valid-identity', 'vectors/poweur/signin.json#bad-signature', 'vectors/poweur/names.json#ten']);
  });

  it('selects by level, keeping stronger levels', () => {
    const levels = (l: 'MUST' | 'SHOULD' | 'MAY') => selectChecks(sampleChecks(), { level: l }).map((c) => c.level);
    expect(levels('MUST')).toEqual(['MUST', 'MUST', 'MUST']);
    expect(levels('SHOULD').sort()).toEqual(['MUST', 'MUST', 'MUST', 'SHOULD']);
    expect(levels('MAY')).toHaveLength(5);
  });

  it('selects by id substring or glob, and combines kinds with AND', () => {
    expect(idMatches('names.json', 'vectors/poweur/names.json#ten')).toBe(true);
    expect(idMatches('vectors/*#ten', 'vectors/poweur/names.json#ten')).toBe(true);
    expect(idMatches('vectors/*#te', 'vectors/poweur/names.json#ten')).toBe(false);
    expect(idMatches('a.b?', 'a.bc')).toBe(true);
    expect(idMatches('a.b?', 'axbc')).toBe(false);
    const exact = [check('x#small', pass()), check('x#small-2', pass())];
    expect(selectChecks(exact, { checks: ['x#small'] }).map((c) => c.id)).toEqual(['x#small']);
    expect(selectChecks(exact, { checks: ['x#sma'] }).map((c) => c.id)).toEqual(['x#small', 'x#small-2']);
    const both = selectChecks(sampleChecks(), { checks: ['names.json'], level: 'MUST' }).map((c) => c.id);
    expect(both).toEqual(['vectors/poweur/names.json#ten']);
  });
});

describe('coverage', () => {
  it('counts rules of executed (passed or failed) checks in the documents in scope', async () => {
    const checks = [
      check('a', pass(), { rules: ['ns.verify.1'] }),
      check('b', fail(), { rules: ['ns.verify.2'] }),
      check('c', skip(), { rules: ['ns.verify.10'] }),
      check(
        'd',
        () => {
          throw new Error('x');
        },
        { rules: ['ns.request.nonce'] },
      ),
      check('e', pass(), { rules: ['ns.not-in-catalogue'] }),
    ];
    const report = await runChecks(checks, { ...base, coverageDocs: [1] });
    expect(report.coverage.docs).toEqual([1]);
    expect(report.coverage.covered).toEqual(['ns.verify.1', 'ns.verify.2']);
    expect(report.coverage.uncovered).toEqual(['ns.verify.10', 'ns.request.nonce', 'ns.limits.clock']);
    expect(report.coverage.unknown).toEqual(['ns.not-in-catalogue']);
    expect(report.coverage.rules.find((r) => r.id === 'ns.verify.1')?.covered_by).toEqual(['a']);
    const all = await runChecks(checks, base);
    expect(all.coverage.uncovered).toContain('ob.subject');
  });
});

describe('expected failures', () => {
  const expected = parseExpectedFailures(JSON.stringify({ b: 'implementation bug #12' }));

  it('counts a listed failure as expected, not failed', async () => {
    const report = await runChecks([check('a', pass()), check('b', fail())], { ...base, expectedFailures: expected });
    expect(report.summary).toMatchObject({ passed: 1, failed: 0, expectedFailures: 1 });
    expect(report.results[1]).toMatchObject({ status: 'failed', expected: 'failure', expectedReason: 'implementation bug #12' });
    expect(exitCodeFor(report.summary)).toBe(0);
  });

  it('fails the run on a listed check that passes', async () => {
    const report = await runChecks([check('a', pass()), check('b', pass())], { ...base, expectedFailures: expected });
    const stale = report.results.find((r: CheckResult) => r.title === 'stale expected-failure entry');
    expect(stale).toMatchObject({ status: 'failed', detail: expect.stringContaining('"b" now passes') });
    expect(exitCodeFor(report.summary)).toBe(1);
  });

  it('fails the run on a listed check that does not exist, but not on one filtered out', async () => {
    const missing = await runChecks([check('a', pass())], { ...base, expectedFailures: expected });
    expect(missing.results.at(-1)?.detail).toContain('no check "b"');
    expect(exitCodeFor(missing.summary)).toBe(1);
    const filtered = await runChecks([check('a', pass()), check('b', fail())], { ...base, expectedFailures: expected, selection: { checks: ['a'] } });
    expect(exitCodeFor(filtered.summary)).toBe(0);
  });

  it('rejects a malformed file as configuration', () => {
    expect(() => parseExpectedFailures('[1]')).toThrow(ConfigError);
    expect(() => parseExpectedFailures('{"a": 1}')).toThrow(ConfigError);
    expect(() => parseExpectedFailures('nope')).toThrow(ConfigError);
  });
});
