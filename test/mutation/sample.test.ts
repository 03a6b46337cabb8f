// The fixed mutation sample (scripts/mutation/sample.ts): StrykerJS mutates a few lines of rule
// enforcement in the relay and the bridge, and the checks citing each area's rules judge every
// mutant against a fresh reference. A mutant recorded killed that survives fails the test: a
// check lost its edge. Record anew with `npm run mutation -- --sample --record` after the
// sampled lines move.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { MutantResult } from '@stryker-mutator/api/core';
import { recordedSample, regressions, runSample, type SampledMutant } from '../../scripts/mutation/sample.ts';
import { byPlace } from '../../scripts/mutation/triage.ts';

/** String mutants of the first line of `file` holding `code`, each made where `needle` stands in it. */
function stringsOn(file: string, code: string): (needle: string) => MutantResult {
  const source = readFileSync(file, 'utf8').split('\n');
  const line = source.findIndex((l) => l.includes(code)) + 1;
  const text = source[line - 1]!;
  return (needle) => {
    const column = text.indexOf(needle) + 1;
    return { mutatorName: 'StringLiteral', location: { start: { line, column }, end: { line, column: column + needle.length } } } as MutantResult;
  };
}

describe('mutation sample', () => {
  it('kills every sampled mutant it killed when recorded', async () => {
    const recorded = await recordedSample();
    expect(recorded.filter((m) => m.status === 'Killed').length).toBeGreaterThan(10);
    const { survived, missing } = regressions(recorded, await runSample());
    expect(survived, 'recorded killed, survive now').toEqual([]);
    expect(missing, 'recorded, no longer made: record the sample again').toEqual([]);
  }, 900_000);

  it('compares mutants that share a place, a mutator and a replacement by their count of kills', () => {
    const m = (status: string): SampledMutant => ({ area: 'a', file: 'f.ts', line: 1, column: 7, mutator: 'ConditionalExpression', replacement: 'false', status });
    expect(regressions([m('Killed'), m('Survived')], [m('Survived'), m('Killed')])).toEqual({ survived: [], missing: [] });
    expect(regressions([m('Killed'), m('Survived')], [m('Survived'), m('Survived')]).survived).toHaveLength(1);
    expect(regressions([m('Killed')], []).missing).toHaveLength(1);
  });

  it('judges string mutants by their place: detail text unobservable, the envelope rule profile', async () => {
    const at = (line: number, column: number): MutantResult => ({ mutatorName: 'StringLiteral', location: { start: { line, column }, end: { line, column } } }) as MutantResult;
    const file = 'reference/relay/sessions.ts';
    const source = (await import('node:fs')).readFileSync(file, 'utf8').split('\n');
    const line = source.findIndex((l) => l.includes("'issued_at is too far in the future'")) + 1;
    const text = source[line - 1]!;
    expect((await byPlace(at(line, text.indexOf("'issued_at is too far") + 1), file))?.verdict).toBe('unobservable');
    expect((await byPlace(at(line, text.indexOf("'ra.sessions.ttl'") + 1), file))?.verdict).toBe('profile');
    expect(await byPlace(at(line, text.indexOf("'invalid_request'") + 1), file)).toBeUndefined();
  });

  it('judges a mutant inside a detail passed through a local helper, or inside a log line, by its place too', async () => {
    const file = 'reference/rp/poll.ts';
    const source = (await import('node:fs')).readFileSync(file, 'utf8').split('\n');
    const find = (needle: string) => {
      const line = source.findIndex((l) => l.includes(needle)) + 1;
      return { line, column: source[line - 1]!.indexOf(needle) + 1 };
    };
    const mutant = (mutatorName: string, from: { line: number; column: number }, length: number): MutantResult =>
      ({ mutatorName, location: { start: from, end: { line: from.line, column: from.column + length } } }) as MutantResult;
    // `missing(parsed.why === 'utf8' ? ... : ...)`: missing passes its parameter on as HttpError's detail.
    const why = find("parsed.why === 'utf8'");
    expect((await byPlace(mutant('EqualityOperator', why, "parsed.why === 'utf8'".length), file))?.verdict).toBe('unobservable');
    expect((await byPlace(mutant('ConditionalExpression', why, "parsed.why === 'utf8'".length), file))?.verdict).toBe('unobservable');
    expect((await byPlace(mutant('StringLiteral', find('`signed in '), 10), file))?.verdict).toBe('unobservable');
    // Not text: the condition that decides whether the error is thrown at all.
    const ok = find('!parsed.ok');
    expect(await byPlace(mutant('ConditionalExpression', ok, '!parsed.ok'.length), file)).toBeUndefined();
    // A mutant reaching past the argument is not judged by it.
    const past = { mutatorName: 'ConditionalExpression', location: { start: why, end: { line: why.line + 1, column: 1 } } } as MutantResult;
    expect(await byPlace(past, file)).toBeUndefined();
  });

  it("judges the rule a local helper passes on (`bad(detail, rule = ...)`) as the envelope's rule: profile", async () => {
    const file = 'reference/relay/pairing.ts';
    const at = stringsOn(file, "throw bad('mode is scan or compare', 'ra.pairing.fetch')");
    expect((await byPlace(at("'ra.pairing.fetch'"), file))?.verdict).toBe('profile');
    expect((await byPlace(at("'mode is scan or compare'"), file))?.verdict).toBe('unobservable');
  });

  it('judges the detail and rule a declared helper passes on to the error it returns (flow.ts `answer`)', async () => {
    const file = 'reference/bridge/flow.ts';
    const at = stringsOn(file, "return answer(req, ctx, 404, 'no such sign-in', 'ob.contract.transaction')");
    expect((await byPlace(at("'no such sign-in'"), file))?.verdict).toBe('unobservable');
    expect((await byPlace(at("'ob.contract.transaction'"), file))?.verdict).toBe('profile');
  });

  it("judges a mutant of the text a detail joins (`${[...KINDS].join(', ')}`) by the detail's place, and the test it follows by none", async () => {
    const file = 'reference/relay/keystore.ts';
    const source = (await import('node:fs')).readFileSync(file, 'utf8').split('\n');
    const line = source.findIndex((l) => l.includes('kind is one of ${[...KINDS].join')) + 1;
    const text = source[line - 1]!;
    const at = (mutatorName: string, needle: string): MutantResult => {
      const column = text.indexOf(needle) + 1;
      return { mutatorName, location: { start: { line, column }, end: { line, column: column + needle.length } } } as MutantResult;
    };
    expect((await byPlace(at('StringLiteral', "', '"), file))?.verdict).toBe('unobservable');
    expect((await byPlace(at('ArrayDeclaration', '[...KINDS]'), file))?.verdict).toBe('unobservable');
    expect(await byPlace(at('ConditionalExpression', '!oneOf(KINDS, b.kind)'), file)).toBeUndefined();
  });
});
