// Property checks: fast-check properties as harness checks, with seed, path and shrunk
// counterexample in the failure so anyone can replay exactly the same case.
import fc from 'fast-check';
import type { Check, CheckContext, FailureCode, Level, Outcome } from './model.ts';
import { replayCommand } from './replay.ts';
import { codeOfError, Expect } from './verdict.ts';

/** What a predicate may answer: throw or return false to fail; the object form carries evidence. */
export type PropertyVerdict = boolean | void | { ok: boolean; detail?: string; evidence?: unknown; code?: FailureCode };

export interface PropertyCheckSpec<T> {
  id: string;
  title: string;
  suite: string;
  rules: string[];
  level: Level;
  arbitrary: fc.Arbitrary<T>;
  predicate: (value: T, ctx: CheckContext) => PropertyVerdict | Promise<PropertyVerdict>;
  /** Values always tried first (known edge cases). */
  examples?: T[];
}

export interface PropertyEvidence {
  seed: number;
  path: string;
  counterexample: string;
  numShrinks: number;
  replay: string;
  /** What the predicate attached to the shrunk counterexample (e.g. its HTTP exchange). */
  evidence?: unknown;
}

/** Thrown inside the property so fast-check shrinks `{ok: false}` answers like any failure. */
class VerdictFailure extends Error {
  constructor(
    message: string,
    readonly evidence: unknown,
    readonly reason?: FailureCode,
  ) {
    super(message);
    this.name = 'PropertyFailure';
  }
}

export function propertyCheck<T>(spec: PropertyCheckSpec<T>): Check {
  return {
    id: spec.id,
    title: spec.title,
    suite: spec.suite,
    rules: spec.rules,
    level: spec.level,
    run: (ctx) => runProperty(spec, ctx),
  };
}

async function runProperty<T>(spec: PropertyCheckSpec<T>, ctx: CheckContext): Promise<Outcome> {
  // The last failing call is the shrunk counterexample (shrinking moves only to failing
  // candidates), so its evidence is the one to report; matched by value to be sure.
  let lastFailure: { shown: string; evidence: unknown } | undefined;
  const property = fc.asyncProperty(spec.arbitrary, async (value: T) => {
    if (ctx.signal.aborted) return true; // let fast-check wind down; the runner ignores this outcome
    const shown = fc.stringify(value);
    // A scope like a check's, so the answer a failure quotes (said()) is marked as the failing one.
    const judging = new Expect();
    try {
      const verdict = await Promise.resolve(judging.scope(() => spec.predicate(value, ctx))).finally(() => ctx.progress?.());
      if (verdict === false) throw new VerdictFailure('property returned false', undefined);
      if (typeof verdict === 'object' && verdict !== null && !verdict.ok) {
        throw new VerdictFailure(verdict.detail ?? 'property returned ok: false', verdict.evidence, verdict.code);
      }
      return true;
    } catch (e) {
      judging.markJudged();
      lastFailure = { shown, evidence: e instanceof VerdictFailure ? e.evidence : undefined };
      throw e;
    }
  });
  const details = await fc.check(property, {
    seed: ctx.seed,
    numRuns: ctx.runs,
    ...(ctx.replayPath !== undefined ? { path: ctx.replayPath } : {}),
    ...(spec.examples ? { examples: spec.examples.map((e): [T] => [e]) } : {}),
  });
  if (!details.failed) {
    return { status: 'passed', detail: `${details.numRuns} runs (seed ${details.seed}${ctx.replayPath ? `, replayed path ${ctx.replayPath}` : ''})` };
  }
  if (details.counterexample === null || details.counterexamplePath === null) {
    return { status: 'failed', detail: `property gave no verdict after ${details.numRuns} runs and ${details.numSkips} skips (seed ${details.seed})` };
  }
  const value = details.counterexample[0];
  const shown = fc.stringify(value);
  const path = details.counterexamplePath;
  const replay = replayCommand(ctx.commandLine, details.seed, path, spec.id);
  const message = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const evidence: PropertyEvidence = { seed: details.seed, path, counterexample: shown, numShrinks: details.numShrinks, replay };
  if (lastFailure?.shown === shown && lastFailure.evidence !== undefined) evidence.evidence = lastFailure.evidence;
  const detail = [
    `property failed after ${details.numRuns} run(s): seed ${details.seed}, path ${path}, ${details.numShrinks} shrink(s)`,
    `counterexample: ${shown}`,
    `error: ${message}`,
    `replay: ${replay}`,
  ].join('\n');
  const code = codeOfError(details.errorInstance);
  return { status: 'failed', detail, ...(code !== undefined ? { code } : {}), evidence };
}
