// Verdicts a person can act on: a failure the environment caused is run again and, if it keeps
// happening, reported as an error naming the cause; every failure carries a reason code set where
// the verdict was made; an expected-failures entry may name the code it expects.
import { describe, expect, it } from 'vitest';
import { reportEnvironmentFault } from '../../harness/run/environment.ts';
import { applyExpectedFailures, expectedFailuresOf, parseExpectedFailures } from '../../harness/run/expected.ts';
import { parseTargets } from '../../harness/targets/file.ts';
import { sessionCheck, once } from '../../harness/run/check.ts';
import { refusedWith } from '../../harness/run/answers.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { EnvironmentError } from '../../harness/run/verdict.ts';
import { ConfigError } from '../../harness/run/exit.ts';
import type { HttpResponse } from '../../harness/actors/http.ts';
import { check, fail, pass } from './fakes.ts';

const answer = (status: number, body: unknown): HttpResponse => {
  const bytes = Buffer.from(JSON.stringify(body));
  return {
    url: 'http://t/',
    status,
    headers: {},
    setCookies: [],
    body: bytes,
    text: () => bytes.toString(),
    json: () => body,
    exchange: { method: 'GET', url: 'http://t/', requestHeaders: {}, headers: {}, body: '', truncated: false, durationMs: 0 },
  };
};

const session = { evidence: () => ({ exchanges: [] }), close: async () => undefined };
const bound = { suite: 'rp', open: () => session };

describe('environment faults', () => {
  it('runs a failed check again when the environment failed during it, and keeps the clean verdict', async () => {
    let calls = 0;
    const flaky = check('rp/flaky', () => {
      calls++;
      if (calls === 1) {
        reportEnvironmentFault('authority-late', 'the test authority answered late');
        return fail('401 resolution_failed');
      }
      return pass();
    });
    const report = await runChecks([flaky], { seed: 1 });
    const r = report.results[0]!;
    expect(calls).toBe(2);
    expect(r.status).toBe('passed');
    expect(r.attempts).toEqual([{ status: 'failed', detail: '401 resolution_failed', code: 'assertion', environment: ['the test authority answered late'] }]);
  });

  it('reports an error naming the cause when every attempt met a fault, never a failure', async () => {
    const starved = check('rp/starved', () => {
      reportEnvironmentFault('harness-stalled', 'the harness could not run for 2000 ms', 2000);
      return fail('401 resolution_failed');
    });
    const r = (await runChecks([starved], { seed: 1 })).results[0]!;
    expect(r.status).toBe('error');
    expect(r.cause).toBe('harness-stalled');
    expect(r.code).toBeUndefined();
    expect(r.detail).toMatch(/no verdict: the environment failed during each of 2 attempts .*could not run for 2000 ms.*401 resolution_failed/s);
  });

  it("notices the harness's own stall (a blocked event loop) and runs the check again", async () => {
    let calls = 0;
    const blocked = check('rp/blocked', async () => {
      if (++calls > 1) return pass();
      const until = performance.now() + 1300;
      while (performance.now() < until); // the harness starved: its authority answers nobody
      await new Promise((resolve) => setTimeout(resolve, 10));
      return fail('the delivery timed out');
    });
    const r = (await runChecks([blocked], { seed: 1 })).results[0]!;
    expect(r.status).toBe('passed');
    expect(r.attempts?.[0]?.environment.join()).toMatch(/the harness could not run for \d+ ms/);
  });

  it('keeps a failure with no fault during it a failure, run once', async () => {
    let calls = 0;
    const r = (await runChecks([check('rp/real', () => (calls++, fail()))], { seed: 1 })).results[0]!;
    expect([r.status, calls, r.attempts]).toEqual(['failed', 1, undefined]);
  });

  it('gives a shared scenario (once) a fresh run on the second attempt', async () => {
    let runs = 0;
    const scenario = once(async () => ++runs);
    const shared = sessionCheck(bound, {
      id: 'rp/codes/x',
      title: 'x',
      rules: ['ns.verify.1'],
      run: async (_s, e) => {
        const n = await scenario();
        if (n === 1) reportEnvironmentFault('authority-late', 'late');
        e.that(n > 1, 'first run failed');
      },
    });
    const r = (await runChecks([shared], { seed: 1 })).results[0]!;
    expect([r.status, runs]).toEqual(['passed', 2]);
  });

  it('runs again a check that failed after outliving what it made, unless it judges that expiry', async () => {
    let runs = 0;
    const made = (rules: readonly string[]) => ({
      ...session,
      outlived: (judged: readonly string[]) => (runs === 1 && !judged.some((r) => rules.includes(r)) ? 'an offer lived past its 6 s' : undefined),
    });
    const spec = (id: string, rules: Array<'ra.pairing.poll' | 'ra.pairing.expiry'>) =>
      sessionCheck(
        { suite: 'relay', open: () => made(['ra.pairing.expiry']) },
        {
          id,
          title: id,
          rules,
          run: async (_s, e) => void e.that(++runs > 1, '404 no live pairing offer'),
        },
      );
    const slow = (await runChecks([spec('relay/pairing/slow', ['ra.pairing.poll'])], { seed: 1 })).results[0]!;
    expect([slow.status, slow.attempts?.[0]?.environment]).toEqual(['passed', ['an offer lived past its 6 s']]);
    runs = 0;
    const expiry = (await runChecks([spec('relay/pairing/expiry', ['ra.pairing.expiry'])], { seed: 1 })).results[0]!;
    expect([expiry.status, expiry.attempts]).toEqual(['failed', undefined]);
  });

  it('runs again a check that found the environment at fault (EnvironmentError)', async () => {
    let calls = 0;
    const r = (
      await runChecks(
        [
          check('a/late', () => {
            if (++calls === 1) throw new EnvironmentError('outlived-window', 'the set-up took longer than the session lives');
            return pass();
          }),
        ],
        { seed: 1 },
      )
    ).results[0]!;
    expect([r.status, calls, r.attempts?.[0]?.cause]).toEqual(['passed', 2, 'outlived-window']);
  });

  it('names the cause of a throw: a helper, a port in use, or the check itself', async () => {
    const port = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:53'), { code: 'EADDRINUSE' });
    const results = (
      await runChecks(
        [
          check('a/helper', () => {
            throw new EnvironmentError('helper-unavailable', 'the authority did not answer');
          }),
          check('a/port', () => {
            throw new Error('could not start', { cause: port });
          }),
          check('a/bug', () => {
            throw new TypeError('x is undefined');
          }),
        ],
        { seed: 1 },
      )
    ).results;
    expect(results.map((r) => [r.status, r.cause])).toEqual([
      ['error', 'helper-unavailable'],
      ['error', 'port-in-use'],
      ['error', 'check-threw'],
    ]);
  });
});

describe('failure codes', () => {
  it('takes the code the assertion names, or the one its judging helper noted', async () => {
    const named = sessionCheck(bound, { id: 'rp/a', title: 'a', rules: ['ns.verify.1'], run: async (_s, e) => void e.that(false, 'took 9 s', 'timing') });
    const noted = sessionCheck(bound, {
      id: 'rp/b',
      title: 'b',
      rules: ['ns.verify.1'],
      run: async (_s, e) => void e.that(refusedWith(answer(400, { error: 'other_code' }), 400, 'unsupported_version'), 'wrong code'),
    });
    const status = sessionCheck(bound, {
      id: 'rp/c',
      title: 'c',
      rules: ['ns.verify.1'],
      run: async (_s, e) => void e.that(refusedWith(answer(200, {}), 400, 'unsupported_version'), 'accepted'),
    });
    const results = (await runChecks([named, noted, status], { seed: 1 })).results;
    expect(results.map((r) => r.code)).toEqual(['timing', 'code', 'status']);
  });

  it('falls back on the facet the check judges, then on assertion', async () => {
    const window = { ...check('rp/w', fail()), cells: [{ rule: 'ns.verify.1', facet: 'window', value: 'outside' }] };
    const results = (await runChecks([window, check('rp/plain', fail())], { seed: 1 })).results;
    expect(results.map((r) => r.code)).toEqual(['timing', 'assertion']);
  });

  it('lets an expected-failures entry name the codes it expects, keeping the plain form', () => {
    const parsed = parseExpectedFailures(JSON.stringify({ 'rp/a': 'known', 'rp/b': { reason: 'known too', code: ['status', 'code'] } }));
    expect(parsed.get('rp/a')).toBe('known');
    expect(parsed.get('rp/b')).toEqual({ reason: 'known too', code: ['status', 'code'] });
    expect(() => parseExpectedFailures('{"x": {"reason": "r", "code": "statuz"}}')).toThrow(ConfigError);
    const base = { title: 't', suite: 'rp', rules: [], level: 'MUST' as const, gating: true, durationMs: 1 };
    const out = applyExpectedFailures(
      [
        { ...base, id: 'rp/a', status: 'failed', detail: 'x', code: 'field' },
        { ...base, id: 'rp/b', status: 'failed', detail: 'y', code: 'timing' },
      ],
      parsed,
      new Set(['rp/a', 'rp/b']),
    );
    expect(out[0]!.expected).toBe('failure');
    expect(out[1]!.expected).toBeUndefined();
    expect(out[1]!.detail).toMatch(/listed as an expected failure with code status or code; this failure's code is timing/);
  });

  it('takes the same entries from a targets file', () => {
    const file = parseTargets(JSON.stringify({ rp: { origin: 'https://rp.example', expected_failures: { 'rp/a': 'known', 'rp/b': { reason: 'r', code: 'status' } } } }));
    expect(expectedFailuresOf(file.rp!.expected_failures!).get('rp/b')).toEqual({ reason: 'r', code: ['status'] });
    expect(() => expectedFailuresOf({ 'rp/c': { reason: 'r', code: 'statuz' } })).toThrow(/unknown failure code/);
  });
});
