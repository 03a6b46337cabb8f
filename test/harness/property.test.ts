import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyCheck, type PropertyEvidence } from '../../harness/run/property.ts';
import { baseCommandLine } from '../../harness/run/replay.ts';
import { runChecks } from '../../harness/run/runner.ts';

// Deliberately false: every integer below 1000. Shrinks to exactly 1000.
const falseProperty = () =>
  propertyCheck({
    id: 'props/int#below-1000',
    title: 'integers stay below 1000',
    suite: 'props',
    rules: ['ns.verify.1'],
    level: 'MUST',
    arbitrary: fc.integer({ min: 0, max: 1_000_000 }),
    predicate: (n) => (n < 1000 ? true : { ok: false, detail: `${n} is not below 1000`, evidence: { request: { n }, status: 500 } }),
  });

describe('property checks', () => {
  it('passes a true property and names the seed', async () => {
    const ok = propertyCheck({ id: 'p', title: 't', suite: 's', rules: [], level: 'MAY', arbitrary: fc.nat(), predicate: (n) => n >= 0 });
    const [r] = (await runChecks([ok], { seed: 7, runs: 50 })).results;
    expect(r).toMatchObject({ status: 'passed', detail: '50 runs (seed 7)' });
  });

  it('fails a false property with seed, path, shrinks, shrunk counterexample and replay', async () => {
    const commandLine = baseCommandLine(['vectors', '--dir', 'my vectors', '--seed', '99', '--check=x']);
    expect(commandLine).toBe("svc-conformance vectors --dir 'my vectors'");
    const [r] = (await runChecks([falseProperty()], { seed: 1234, runs: 100, commandLine })).results;
    expect(r?.status).toBe('failed');
    const evidence = r?.evidence as PropertyEvidence;
    expect(evidence.seed).toBe(1234);
    expect(evidence.counterexample).toBe('1000');
    expect(evidence.path).toMatch(/^\d+(:\d+)*$/);
    expect(evidence.numShrinks).toBeGreaterThan(0);
    // The predicate's evidence is the one for the shrunk value, not for an earlier failure.
    expect(evidence.evidence).toEqual({ request: { n: 1000 }, status: 500 });
    expect(evidence.replay).toBe(`svc-conformance vectors --dir 'my vectors' --seed 1234 --replay ${evidence.path} --check 'props/int#below-1000'`);
    expect(r?.detail).toContain('seed 1234');
    expect(r?.detail).toContain(`path ${evidence.path}`);
    expect(r?.detail).toContain('counterexample: 1000');
    expect(r?.detail).toContain('error: 1000 is not below 1000');
    expect(r?.detail).toContain(`replay: ${evidence.replay}`);
  });

  it('replays the printed seed and path to the same counterexample, straight away', async () => {
    const first = (await runChecks([falseProperty()], { seed: 555, runs: 100 })).results[0]!;
    const { seed, path, counterexample } = first.evidence as PropertyEvidence;
    const tried: number[] = [];
    const counted = propertyCheck({
      id: 'props/int#below-1000',
      title: 't',
      suite: 'props',
      rules: [],
      level: 'MUST',
      arbitrary: fc.integer({ min: 0, max: 1_000_000 }),
      predicate: (n) => {
        tried.push(n);
        return n < 1000;
      },
    });
    const replayed = (await runChecks([counted], { seed, runs: 100, replay: path })).results[0]!;
    expect(replayed.status).toBe('failed');
    expect((replayed.evidence as PropertyEvidence).counterexample).toBe(counterexample);
    expect((replayed.evidence as PropertyEvidence).path).toBe(path);
    // The path leads to the shrunk case: it is the first value tried, not found by searching again.
    expect(tried[0]).toBe(1000);
  });

  it('treats a thrown predicate and `false` as failures, and `void` as success', async () => {
    const throwing = propertyCheck({
      id: 'th',
      title: 't',
      suite: 's',
      rules: [],
      level: 'MUST',
      arbitrary: fc.string(),
      predicate: (s) => {
        if (s.length > 2) throw new Error('too long');
      },
    });
    const falsy = propertyCheck({ id: 'f', title: 't', suite: 's', rules: [], level: 'MUST', arbitrary: fc.boolean(), predicate: (b) => b });
    const report = await runChecks([throwing, falsy], { seed: 3, runs: 100 });
    expect(report.results.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect((report.results[0]!.evidence as PropertyEvidence).counterexample).toBe('"   "');
    expect(report.results[0]?.detail).toContain('error: too long');
    expect(report.results[1]?.detail).toContain('property returned false');
    expect((report.results[1]!.evidence as PropertyEvidence).counterexample).toBe('false');
  });

  it('tries the given examples first', async () => {
    const seen: number[] = [];
    const c = propertyCheck({ id: 'ex', title: 't', suite: 's', rules: [], level: 'MUST', arbitrary: fc.nat(), examples: [424242], predicate: (n) => void seen.push(n) });
    await runChecks([c], { seed: 1, runs: 5 });
    expect(seen[0]).toBe(424242);
  });
});
