import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consoleReporter } from '../../harness/report/console.ts';
import { escapeXml, renderJUnit } from '../../harness/report/junit.ts';
import { fileReporter, parseReportOption } from '../../harness/report/index.ts';
import { ConfigError } from '../../harness/run/exit.ts';
import { parseExpectedFailures } from '../../harness/run/expected.ts';
import type { Check, RunReport } from '../../harness/run/model.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { catalogue, check, fail, MemoryOutput, pass, sampleChecks, skip } from './fakes.ts';
import { findAll, parseXml } from './xml.ts';

const FINAL_LINE = /^\d+ passed, \d+ failed, \d+ skipped$/m;

function mixed(): Check[] {
  return [
    ...sampleChecks(),
    check('vectors/poweur/pairing.json#bad', fail('status 200\nexpected 400\n<body> & "quotes" \u0001 done'), { rules: ['ns.verify.2'] }),
    check('vectors/poweur/pairing.json#skip-a', skip('needs DNS')),
    check('vectors/poweur/pairing.json#skip-b', skip('needs DNS')),
    check('vectors/poweur/pairing.json#known', fail('known bug')),
    check(
      'relay/hosted#boom',
      () => {
        throw new Error('socket hang up');
      },
      { suite: 'relay', rules: ['ob.subject'] },
    ),
  ];
}

async function mixedReport(extra: { reporters?: ReturnType<typeof consoleReporter>[] } = {}): Promise<RunReport> {
  return runChecks(mixed(), {
    seed: 77,
    rules: catalogue,
    coverageDocs: [1],
    skippedInputs: [
      { source: 'vectors/poweur/pairing.json', reason: 'needs DNS' },
      { source: 'vectors/x.json', reason: 'unknown vector type "foo"' },
    ],
    expectedFailures: parseExpectedFailures('{"vectors/poweur/pairing.json#known": "tracked upstream"}'),
    ...extra,
  });
}

describe('JSON report', () => {
  it('has the summary counts, result fields and uncovered rules', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-json-'));
    const target = parseReportOption(`json=${join(dir, 'deep', 'er', 'run.json')}`);
    expect((await stat(join(dir, 'deep', 'er'))).isDirectory()).toBe(true);
    await runChecks(mixed(), { seed: 77, rules: catalogue, coverageDocs: [1], reporters: [fileReporter(target)] });
    const json = JSON.parse(await readFile(target.file, 'utf8'));
    expect(json.tool.name).toBe('svc-conformance');
    expect(json.summary).toMatchObject({ passed: 5, failed: 2, skipped: 2, errors: 1, expectedFailures: 0, total: 10, seed: 77, interrupted: false });
    for (const r of json.results) {
      expect(Object.keys(r)).toEqual(expect.arrayContaining(['id', 'title', 'suite', 'rules', 'level', 'status', 'detail', 'durationMs']));
    }
    expect(json.results.find((r: { id: string }) => r.id === 'relay/hosted#boom').status).toBe('error');
    expect(json.coverage.uncovered).toEqual([]);
    expect(json.coverage.covered).toContain('ns.verify.10');
  });

  it('lists uncovered rules', async () => {
    const report = await runChecks([check('a', pass(), { rules: ['ns.verify.1'] })], { seed: 1, rules: catalogue });
    expect(report.coverage.uncovered).toEqual(['ns.verify.2', 'ns.verify.10', 'ns.request.nonce', 'ns.limits.clock', 'ob.subject']);
  });
});

describe('--report option', () => {
  it('accepts json=FILE and junit=FILE only', () => {
    expect(parseReportOption('junit=reports/x.xml')).toMatchObject({ format: 'junit', file: expect.stringMatching(/reports\/x\.xml$/) });
    for (const bad of ['xml=foo', 'json', 'json=', '=x', 'JSON=x']) expect(() => parseReportOption(bad)).toThrow(ConfigError);
  });
});

describe('JUnit report', () => {
  it('escapes markup and characters XML 1.0 forbids', () => {
    expect(escapeXml(`<a href="x">&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;');
    expect(escapeXml('bell\u0007 nul\u0000 ok\ttab\nline')).toBe('bell\\u0007 nul\\u0000 ok\ttab\nline');
    expect(escapeXml('lone \ud800 pair \ud83d\ude00 \uffff')).toBe('lone \\ud800 pair \ud83d\ude00 \\uffff');
  });

  it('is well-formed and has testsuites > testsuite > testcase with the right elements', async () => {
    const report = await mixedReport();
    const xml = renderJUnit(report);
    const root = parseXml(xml);
    expect(root.name).toBe('testsuites');
    expect(root.attrs).toMatchObject({ tests: '10', failures: '1', errors: '1', skipped: '3' });
    const suites = findAll(root, 'testsuite');
    expect(suites.map((s) => s.attrs.name)).toEqual(['vectors', 'relay']);
    const cases = findAll(root, 'testcase');
    expect(cases).toHaveLength(10);
    const bad = cases.find((c) => c.attrs.name === 'vectors/poweur/pairing.json#bad')!;
    expect(bad.attrs.classname).toBe('vectors');
    expect(bad.attrs.time).toMatch(/^\d+\.\d{3}$/);
    const failure = findAll(bad, 'failure')[0]!;
    expect(failure.attrs.message).toBe('status 200');
    expect(failure.text).toBe('status 200\nexpected 400\n<body> & "quotes" \\u0001 done');
    expect(
      findAll(bad, 'property')
        .filter((p) => p.attrs.name === 'rule')
        .map((p) => p.attrs.value),
    ).toEqual(['ns.verify.2']);
    const boom = cases.find((c) => c.attrs.name === 'relay/hosted#boom')!;
    expect(findAll(boom, 'error')[0]!.attrs.message).toBe('Error: socket hang up');
    const known = cases.find((c) => c.attrs.name === 'vectors/poweur/pairing.json#known')!;
    expect(findAll(known, 'skipped')[0]!.attrs.message).toBe('expected failure: tracked upstream');
    expect(findAll(known, 'failure')).toHaveLength(0);
  });

  it('writes through --report junit=FILE', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-junit-'));
    const target = parseReportOption(`junit=${join(dir, 'out', 'junit.xml')}`);
    await runChecks(mixed(), { seed: 1, reporters: [fileReporter(target)] });
    expect(parseXml(await readFile(target.file, 'utf8')).name).toBe('testsuites');
  });
});

describe('console report', () => {
  it('prints a table per suite and per vector file, failures with rules, skips by reason, coverage and the final line', async () => {
    const stdout = new MemoryOutput();
    const stderr = new MemoryOutput();
    await mixedReport({ reporters: [consoleReporter({ stdout, stderr, rules: catalogue, env: {} })] });
    const text = stdout.text;
    expect(text).toMatch(FINAL_LINE);
    expect(text.trimEnd().split('\n').at(-1)).toBe('5 passed, 2 failed, 2 skipped');
    expect(text).toMatch(/^vectors +5 +1 +2 +0 +1 +-$/m);
    expect(text).toMatch(/^ {2}vectors\/poweur\/pairing\.json +0 +1 +2 +0 +1 +-$/m);
    expect(text).toMatch(/^relay +0 +0 +0 +1 +0 +-$/m);
    expect(text).toContain('FAILED vectors/poweur/pairing.json#bad');
    expect(text).toContain('    rules: ns.verify.2 MUST');
    expect(text).toContain('    status 200\n    expected 400\n');
    expect(text).toContain('ERROR  relay/hosted#boom');
    expect(text).toContain('vectors/poweur/pairing.json#known: tracked upstream');
    // One entry for "needs DNS" although it comes from skipped_inputs and two skipped results.
    expect(text.match(/^ {2}needs DNS$/gm)).toHaveLength(1);
    expect(text).toContain('unknown vector type "foo"');
    expect(text).toMatch(/^coverage +covered +proven +unobservable +uncovered +profile$/m);
    expect(text).toMatch(/^doc 1 +5\/5 +0\/5 +0 +0 +0\/0$/m);
    expect(text).not.toContain('\x1b[');
  });

  it('lists uncovered rules only when verbose', async () => {
    const checks = [check('a', pass(), { rules: ['ns.verify.1'] })];
    const quietOut = new MemoryOutput();
    await runChecks(checks, { seed: 1, rules: catalogue, coverageDocs: [1, 2], reporters: [consoleReporter({ stdout: quietOut, stderr: new MemoryOutput(), env: {} })] });
    expect(quietOut.text).toMatch(/^doc 1 +1\/5 +0\/5 +0 +4 +0\/0$/m);
    expect(quietOut.text).toMatch(/^doc 2 +0\/1 +0\/1 +0 +1 +0\/0$/m);
    expect(quietOut.text).not.toContain('ob.subject');
    const verboseOut = new MemoryOutput();
    await runChecks(checks, { seed: 1, rules: catalogue, reporters: [consoleReporter({ stdout: verboseOut, stderr: new MemoryOutput(), verbose: true, env: {} })] });
    expect(verboseOut.text).toMatch(/uncovered:\n {4}ns\.verify\.2\n/);
    expect(verboseOut.text).toContain('    ob.subject');
  });

  it('colours only a TTY without NO_COLOR, and never the final line', async () => {
    const run = async (isTTY: boolean, env: Record<string, string>) => {
      const stdout = new MemoryOutput(isTTY);
      await runChecks([check('a', pass()), check('b', fail())], { seed: 1, reporters: [consoleReporter({ stdout, stderr: new MemoryOutput(), env })] });
      return stdout.text;
    };
    const tty = await run(true, {});
    expect(tty).toContain('\x1b[');
    expect(tty).toMatch(FINAL_LINE);
    expect(await run(true, { NO_COLOR: '1' })).not.toContain('\x1b[');
    expect(await run(false, {})).not.toContain('\x1b[');
  });

  it('shows progress as one updating line on a TTY', async () => {
    const stderr = new MemoryOutput(true);
    await runChecks(sampleChecks(), { seed: 1, reporters: [consoleReporter({ stdout: new MemoryOutput(), stderr, env: {} })] });
    expect(stderr.text).toContain('\r\x1b[2K[  3/5] vectors vectors/poweur/signin.json');
    expect(stderr.text).not.toContain('\n');
  });

  it('never prints one line per check in CI: a line per finished suite or every 50 checks', async () => {
    const checks = [...Array.from({ length: 120 }, (_, i) => check(`vectors/f.json#c${i}`, pass())), ...Array.from({ length: 3 }, (_, i) => check(`relay/r#c${i}`, pass(), { suite: 'relay' }))];
    const stderr = new MemoryOutput(false);
    await runChecks(checks, { seed: 1, reporters: [consoleReporter({ stdout: new MemoryOutput(), stderr, env: {} })] });
    // Suites run at once, so their lines interleave: one line per finished suite, one per 50 checks.
    const lines = stderr.text.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(lines.filter((l) => / vectors done \(/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => / relay done \(/.test(l))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/^\[123\/123\] \w+ done \(so far 123 passed, 0 failed, 0 skipped\)$/);
  });

  it('quiet prints failures and the final line only', async () => {
    const stdout = new MemoryOutput();
    const stderr = new MemoryOutput();
    await runChecks([check('a', pass()), check('b', fail('nope'))], { seed: 1, reporters: [consoleReporter({ stdout, stderr, quiet: true, env: {} })] });
    expect(stderr.text).toBe('');
    expect(stdout.text).not.toContain('suite ');
    expect(stdout.text).toContain('FAILED b');
    expect(stdout.text).toMatch(FINAL_LINE);
  });
});

describe('Markdown report', () => {
  it('tables the suites, lists failures with their rules, and names uncovered rules', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-md-'));
    const target = parseReportOption(`md=${join(dir, 'run.md')}`);
    await runChecks(mixed(), { seed: 77, rules: catalogue, reporters: [fileReporter(target)], expectedFailures: parseExpectedFailures('{"vectors/poweur/pairing.json#known": "tracked upstream"}') });
    const md = await readFile(target.file, 'utf8');
    expect(md).toMatch(/^# svc-conformance \S+: FAILED$/m);
    expect(md).toContain('| relay | 0 | 0 | 1 | 0 | 0 |');
    // The failure's detail keeps one line, with its pipe-free cell, and cites its rule.
    expect(md).toContain('| `vectors/poweur/pairing.json#bad` | MUST | assertion | `ns.verify.2` | status 200 |');
    expect(md).toContain('| `relay/hosted#boom` |');
    expect(md).not.toContain('pairing.json#known` |');
    expect(md).toMatch(/^\| 1 \| \d+\/\d+ \| \d+\/\d+ \| 0 \| \d+ \| 0\/0 \|$/m);
    expect(md).toMatch(/^\| 2 \| 0\/1 \| 0\/1 \| 0 \| 1 \| 0\/0 \|$/m);
  });
});
