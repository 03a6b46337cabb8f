// The project profile and honest coverage: profile checks are counted and listed apart, fail a
// run only when the profile gates, and coverage per document separates covered, unobservable,
// uncovered and the project's decisions.
import { describe, expect, it } from 'vitest';
import { consoleReporter } from '../../harness/report/console.ts';
import { renderJUnit } from '../../harness/report/junit.ts';
import { renderMarkdown } from '../../harness/report/markdown.ts';
import { cite } from '../../harness/run/cite.ts';
import { exitCodeFor } from '../../harness/run/exit.ts';
import type { Check, RuleEntry } from '../../harness/run/model.ts';
import { runChecks } from '../../harness/run/runner.ts';
import { check, fail, MemoryOutput, pass } from './fakes.ts';

const rules: RuleEntry[] = [
  { id: 'ns.verify.1', level: 'MUST', doc: 1, section: 'Verification', title: 'Rule one' },
  { id: 'ns.verify.2', level: 'MUST', doc: 1, section: 'Verification', title: 'Rule two' },
  { id: 'ns.auth.1', level: 'MUST', doc: 1, section: 'Authentication', title: 'Signer first', unobservable: 'what a signer does before rendering' },
  { id: 'ns.errors.codes', level: 'MUST', doc: 1, section: 'Errors', title: 'Codes', origin: 'project' },
  { id: 'ns.delivery.body-cap', level: 'MUST', doc: 1, section: 'Delivery', title: 'Cap', origin: 'project' },
];

function checks(): Check[] {
  return [
    check('rp/verify/a', pass(), { suite: 'rp', rules: ['ns.verify.1'] }),
    { ...check('rp/codes/a', fail('answered 400 {"error":"nope"}; the project answers 401 signature_invalid'), { suite: 'rp', rules: ['ns.errors.codes'] }), profile: true },
    { ...check('rp/verify/b', pass(), { suite: 'rp', rules: ['ns.verify.2'] }), context: ['ns.delivery.body-cap'] },
  ];
}

describe('the project profile', () => {
  it('does not fail a run by default, and lists the differences in their own table', async () => {
    const stdout = new MemoryOutput();
    const report = await runChecks(checks(), { seed: 1, rules, reporters: [consoleReporter({ stdout, stderr: new MemoryOutput(), env: {} })] });
    expect(report.summary).toMatchObject({ passed: 2, failed: 0, total: 2, profile: { gating: false, passed: 0, failed: 1, skipped: 0 } });
    expect(exitCodeFor(report.summary)).toBe(0);
    expect(report.results.find((r) => r.id === 'rp/codes/a')).toMatchObject({ profile: true, gating: false, status: 'failed' });
    expect(stdout.text).toContain('Project profile: 0 passed, 1 differ, 0 skipped (differences do not fail this run; --profile makes them gate):');
    expect(stdout.text).toMatch(/DIFFERS rp\/codes\/a +ns\.errors\.codes {2}\[assertion\]\n {4}answered 400 \{"error":"nope"\}/);
    expect(stdout.text).not.toContain('Failures and errors');
    expect(stdout.text).toMatch(/^rp +2 +0 +0 +0 +0 +0\/1$/m);
    expect(stdout.text.trimEnd().split('\n').at(-1)).toBe('2 passed, 0 failed, 0 skipped');
    expect(renderMarkdown(report)).toContain('## Project profile differences (not gating)');
    expect(renderJUnit(report)).toContain('type="profile-difference"');
  });

  it('gates the run with the profile on', async () => {
    const report = await runChecks(checks(), { seed: 1, rules, profileGates: true });
    expect(report.summary).toMatchObject({ passed: 2, failed: 1, total: 3, profile: { gating: true, failed: 1 } });
    expect(exitCodeFor(report.summary)).toBe(1);
  });

  it('gates per suite when asked for some suites only', async () => {
    const report = await runChecks(checks(), { seed: 1, rules, profileGates: new Set(['bridge']) });
    expect(report.summary.failed).toBe(0);
    const gated = await runChecks(checks(), { seed: 1, rules, profileGates: new Set(['rp']) });
    expect(gated.summary.failed).toBe(1);
  });
});

describe('coverage per document', () => {
  it('counts only decided rules, lists unobservable rules with their reason, and the profile apart', async () => {
    const report = await runChecks(checks(), { seed: 1, rules, coverageDocs: [1] });
    expect(report.coverage.documents['1']).toEqual({
      covered: ['ns.verify.1', 'ns.verify.2'],
      proven: [],
      unobservable: [{ id: 'ns.auth.1', reason: 'what a signer does before rendering' }],
      uncovered: [],
      // body-cap was only context of rp/verify/b: not covered.
      profile: { covered: ['ns.errors.codes'], uncovered: ['ns.delivery.body-cap'] },
      // No facets given to this run: none observable, none proven.
      facets: { observable: [], proven: [] },
    });
    expect(report.coverage.uncovered).toEqual([]);
    expect(report.coverage.rules.find((r) => r.id === 'ns.delivery.body-cap')!.covered_by).toEqual([]);
  });
});

describe('cite', () => {
  it('makes a check of project decisions a profile check, at the strongest level', () => {
    expect(cite('x', ['ns.errors.codes', 'ns.delivery.reject-status'])).toMatchObject({ profile: true, level: 'MUST' });
    expect(cite('x', ['ns.verify.2'], ['ns.start.contract', 'ns.verify.2'])).toEqual({ rules: ['ns.verify.2'], context: ['ns.start.contract'], level: 'MUST', profile: false });
  });

  it('refuses a check that mixes document rules and project decisions, or cites unknown rules', () => {
    expect(() => cite('x', ['ns.verify.2', 'ns.errors.codes'])).toThrow(/mixes document rules and project decisions \(ns\.errors\.codes\)/);
    expect(() => cite('x', ['ns.nope' as never])).toThrow(/cites unknown rule ns\.nope/);
    expect(() => cite('x', [])).toThrow(/decides no rule/);
  });
});
