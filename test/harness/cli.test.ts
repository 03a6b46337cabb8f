import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../harness/cli.ts';
import type { Check } from '../../harness/run/model.ts';
import { propertyCheck, type PropertyEvidence } from '../../harness/run/property.ts';
import { catalogue, check, fail, fakeVectorSuite, io, pass, sampleChecks, skip } from './fakes.ts';

const FINAL_LINE = /^\d+ passed, \d+ failed, \d+ skipped$/m;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-cli-'));
});

async function run(args: string[], checks: Check[] = sampleChecks(), extra: { signal?: AbortSignal } = {}) {
  const streams = io(extra);
  const vectorSuite = fakeVectorSuite(checks, { skipped: [{ source: 'vectors/odd.json', reason: 'unknown vector type' }] });
  const code = await main(['node', 'svc-conformance', ...args], streams, { vectorSuite, rules: catalogue });
  return { code, out: streams.stdout.text, err: streams.stderr.text, calls: vectorSuite.calls };
}

async function jsonReport(args: string[], checks?: Check[]) {
  const file = join(dir, 'report.json');
  const result = await run([...args, '--report', `json=${file}`], checks);
  return { ...result, json: JSON.parse(await readFile(file, 'utf8')) };
}

/** Splits a printed command line (words, single-quoted words) back into arguments. */
function shellSplit(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let quoted = false;
  let inWord = false;
  for (const ch of line) {
    if (ch === "'") {
      quoted = !quoted;
      inWord = true;
    } else if (ch === ' ' && !quoted) {
      if (inWord) args.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (inWord) args.push(current);
  return args;
}

describe('svc-conformance vectors: exit codes', () => {
  it('exits 0 when all checks pass, printing the seed first and the final line last', async () => {
    const { code, out, err, calls } = await run(['vectors', '--seed', '99']);
    expect(code).toBe(0);
    expect(err.split('\n')[0]).toMatch(/^svc-conformance \d+\.\d+\.\d+ vectors: seed 99, 100 runs per property$/);
    expect(out).toMatch(FINAL_LINE);
    expect(out.trimEnd().split('\n').at(-1)).toBe('5 passed, 0 failed, 0 skipped');
    expect(calls).toEqual([{ dirs: [expect.stringMatching(/vectors\/?$/)], serviceName: 'svc' }]);
  });

  it('passes --dir and --service-name to the suite, and picks a random seed when none is given', async () => {
    const { calls, err } = await run(['vectors', '--dir', 'a', '--dir', 'b', '--service-name', 'poweur']);
    expect(calls).toEqual([{ dirs: ['a', 'b'], serviceName: 'poweur' }]);
    expect(err).toMatch(/seed \d+,/);
  });

  it('exits 1 on a failure', async () => {
    const { code, out } = await run(['vectors'], [check('a', pass()), check('b', fail())]);
    expect(code).toBe(1);
    expect(out).toContain('1 passed, 1 failed, 0 skipped');
  });

  it('exits 2 when nothing is tested', async () => {
    expect((await run(['vectors'], [])).code).toBe(2);
    expect((await run(['vectors'], [check('a', skip())])).code).toBe(2);
    const none = await run(['vectors', '--suite', 'relay']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('no check matched the selection (5 available): --suite relay');
  });

  it('exits 2 on bad configuration', async () => {
    for (const args of [
      ['vectors', '--report', 'xml=foo'],
      ['vectors', '--level', 'OFTEN'],
      ['vectors', '--seed', 'abc'],
      ['vectors', '--runs', '0'],
      ['vectors', '--no-such-option'],
      ['vectors', '--verbose', '--quiet'],
      ['vectors', '--expected-failures', join(dir, 'missing.json')],
      ['vectors', '--replay', '1:2'],
      ['frobnicate'],
      [],
    ]) {
      const { code, err } = await run(args);
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(err).not.toBe('');
    }
    expect((await run(['vectors', '--report', 'xml=foo'])).err).toContain('--report expects json=FILE or junit=FILE or md=FILE or html=FILE; got "xml=foo"');
  });

  it('exits 2 when interrupted, and still writes the report marked interrupted', async () => {
    const stop = new AbortController();
    // b hangs until the "Ctrl-C" arrives; c never starts.
    const checks = [check('a', pass()), check('b', () => new Promise(() => setTimeout(() => stop.abort(), 5))), check('c', pass())];
    const file = join(dir, 'int.json');
    const streams = io({ signal: stop.signal });
    const code = await main(['node', 'svc-conformance', 'vectors', '--report', `json=${file}`], streams, { vectorSuite: fakeVectorSuite(checks), rules: catalogue });
    expect(code).toBe(2);
    const json = JSON.parse(await readFile(file, 'utf8'));
    expect(json.summary).toMatchObject({ interrupted: true, passed: 1, skipped: 1, total: 2 });
    expect(json.results[1]).toMatchObject({ id: 'b', status: 'skipped', detail: 'interrupted before this check finished' });
    expect(streams.stdout.text).toContain('run interrupted');
  });

  it('exits 0 for --help and --version', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('Examples:');
    const vectorsHelp = await run(['vectors', '--help']);
    expect(vectorsHelp.out).toContain('--expected-failures <file>');
    expect(vectorsHelp.out).toContain('$ svc-conformance vectors --level MUST');
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.out).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe('svc-conformance vectors: selection and reports', () => {
  it('selects by rule prefix and by level', async () => {
    const byRule = await jsonReport(['vectors', '--rule', 'ns.verify']);
    expect(byRule.json.results.map((r: { id: string }) => r.id)).toEqual(['vectors/poweur/signin.json#valid-identity', 'vectors/poweur/signin.json#bad-signature', 'vectors/poweur/names.json#ten']);
    const byLevel = await jsonReport(['vectors', '--level', 'should']);
    expect(byLevel.json.results.map((r: { level: string }) => r.level)).toEqual(['MUST', 'MUST', 'SHOULD', 'MUST']);
    const both = await jsonReport(['vectors', '--rule', 'ns.request', '--rule', 'ns.limits', '--level', 'MAY', '--check', 'names']);
    expect(both.json.results.map((r: { id: string }) => r.id)).toEqual(['vectors/poweur/names.json#clock']);
  });

  it('writes a JSON report with summary, results, coverage and skipped inputs', async () => {
    const { json } = await jsonReport(['vectors', '--seed', '5', '--rule', 'ns.verify.1'], [...sampleChecks(), check('vectors/x.json#f', fail('bad'), { rules: ['ns.verify.1'] })]);
    expect(json.summary).toMatchObject({ passed: 1, failed: 1, skipped: 0, errors: 0, expectedFailures: 0, total: 2, seed: 5, interrupted: false });
    expect(json.results[1]).toMatchObject({ id: 'vectors/x.json#f', rules: ['ns.verify.1'], level: 'MUST', status: 'failed', detail: 'bad' });
    expect(json.coverage.uncovered).toEqual(['ns.verify.10', 'ns.request.nonce', 'ns.limits.clock']);
    expect(json.skipped_inputs).toEqual([{ source: 'vectors/odd.json', reason: 'unknown vector type' }]);
    expect(json.config).toMatchObject({ command: 'vectors', seed: 5, serviceName: 'svc' });
  });

  it('honours an expected-failures file and fails the run on stale entries', async () => {
    const file = join(dir, 'expected.json');
    await writeFile(file, JSON.stringify({ b: 'known: upstream bug' }));
    const listed = await run(['vectors', '--expected-failures', file], [check('a', pass()), check('b', fail())]);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain('1 passed, 0 failed, 0 skipped');
    expect(listed.out).toContain('b: known: upstream bug');
    const stale = await run(['vectors', '--expected-failures', file], [check('a', pass()), check('b', pass())]);
    expect(stale.code).toBe(1);
    expect(stale.out).toContain('stale expected-failure entry: check "b" now passes');
  });

  it('prints a property failure with seed, path and counterexample, and replays it from the printed command', async () => {
    const prop = () => [
      propertyCheck({
        id: 'vectors/props.json#small',
        title: 'small',
        suite: 'vectors',
        rules: ['ns.verify.1'],
        level: 'MUST',
        arbitrary: fc.integer({ min: 0, max: 10_000 }),
        predicate: (n) => n < 100,
      }),
      check('vectors/props.json#other', pass()),
    ];
    const file = join(dir, 'prop.json');
    const first = await run(['vectors', '--seed', '31337', '--runs', '200', '--report', `json=${file}`], prop());
    expect(first.code).toBe(1);
    const evidence = JSON.parse(await readFile(file, 'utf8')).results[0].evidence as PropertyEvidence;
    expect(evidence).toMatchObject({ seed: 31337, counterexample: '100' });
    expect(first.out).toContain(`seed 31337, path ${evidence.path}`);
    expect(first.out).toContain('counterexample: 100');
    const replayArgs = shellSplit(evidence.replay);
    expect(replayArgs.slice(0, 2)).toEqual(['svc-conformance', 'vectors']);
    const again = await run(replayArgs.slice(1), prop());
    expect(again.code).toBe(1);
    expect(again.out).toContain(`seed 31337, path ${evidence.path}`);
    expect(again.out).toContain('counterexample: 100');
    expect(again.out).toContain('0 passed, 1 failed, 0 skipped');
  });
});

describe('svc-conformance rules', () => {
  it('prints the catalogue, one document, or what a report left uncovered', async () => {
    const all = await run(['rules']);
    expect(all.code).toBe(0);
    expect(all.out).toMatch(/^ns\.verify\.1 +MUST +doc 1 +Verification — Rule one$/m);
    expect(all.out.trimEnd().split('\n').at(-1)).toBe('6 rules');
    const doc2 = await run(['rules', '--doc', '2']);
    expect(doc2.out).toBe(`ob.subject${' '.repeat(2)}MUST    doc 2  Subject — Subject\n1 rule\n`);
    const { json } = await jsonReport(['vectors', '--rule', 'ns.verify']);
    await writeFile(join(dir, 'r.json'), JSON.stringify(json));
    const uncovered = await run(['rules', '--uncovered-from', join(dir, 'r.json')]);
    // The fake suite speaks for document 1 only, so ob.subject (document 2) is out of scope.
    expect(uncovered.out.split('\n').map((l) => l.split(' ')[0])).toEqual(['ns.request.nonce', 'ns.limits.clock', '2', '']);
    expect((await run(['rules', '--uncovered-from', join(dir, 'nope.json')])).code).toBe(2);
  });
});
