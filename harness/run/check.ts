// The one check wrapper of the suites that drive a target (rp, bridge, relay): a check from a body
// that drives the suite's session, cited through cite.ts (its level, document or profile), the
// problems it collects as its verdict and the session's HTTP exchanges as evidence. A body judges
// or throws CheckSkip with the reason it cannot; it returns nothing, so a check can never pass
// without judging, and a skipped check's rules are not covered.
import type { RuleId } from '../../schemas/ts/rules.ts';
import { HttpError } from '../actors/http.ts';
import { cite } from './cite.ts';
import { reportOwnFault } from './environment.ts';
import type { Cell, Check, CheckContext, Outcome } from './model.ts';
import { propertyCheck, type PropertyCheckSpec } from './property.ts';
import { CheckFailure, CheckSkip, codeOfError, Expect } from './verdict.ts';
import { once } from './once.ts';

export { Expect, once };

/** What a suite's session gives the wrapper: its exchanges, and a way to release what it opened. */
export interface CheckSession {
  /** What the check noted without judging it, shown as a passed check's detail. */
  readonly notes?: readonly string[];
  evidence(): unknown;
  close(): Promise<void>;
  /**
   * What the check made with a declared life (a pairing offer) and kept using past that life, when
   * the check is not about that expiry (`rules`): its refusals then may be the expiry the document
   * allows, the machine too slow for the declared life, not the target wrong.
   */
  outlived?(rules: readonly RuleId[]): string | undefined;
}

export interface CheckSpec<S> {
  /** `<suite>/<area>/<name>` */
  id: string;
  title: string;
  /** The rules its assertions decide (its coverage); all document rules, or all project decisions. */
  rules: RuleId[];
  /** Rules it touches on the way without deciding them. */
  context?: RuleId[];
  /** The matrix cells it fills (spec/facets/); each cell's rule must be among `rules`. */
  cells?: Array<Cell & { rule: RuleId }>;
  /** Its own time limit, for a check that must wait past an expiry. */
  timeoutMs?: number;
  /** See Check.lane and Check.exclusive. */
  lane?: string;
  exclusive?: boolean;
  /** Judges through `e`, or throws CheckSkip with the reason it cannot judge. */
  run: (s: S, e: Expect, ctx: CheckContext) => Promise<void>;
}

/** How a suite opens its session, and which errors besides CheckFailure and HttpError mean "the target answered wrongly". */
export interface SuiteBinding<S> {
  suite: string;
  open: (signal: AbortSignal) => S;
  failures?: ReadonlyArray<abstract new (...args: never[]) => Error>;
}

export function sessionCheck<S extends CheckSession>(binding: SuiteBinding<S>, spec: CheckSpec<S>): Check {
  const failure = (error: unknown): error is Error => error instanceof CheckFailure || error instanceof HttpError || (binding.failures ?? []).some((kind) => error instanceof kind);
  return {
    id: spec.id,
    title: spec.title,
    suite: binding.suite,
    ...cite(spec.id, spec.rules, spec.context),
    ...(spec.cells !== undefined ? { cells: spec.cells } : {}),
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    ...(spec.lane !== undefined ? { lane: spec.lane } : {}),
    ...(spec.exclusive ? { exclusive: true } : {}),
    async run(ctx): Promise<Outcome> {
      const s = binding.open(ctx.signal);
      const e = new Expect();
      // A failure of a check that outlived what it made is the environment's (the runner runs it again).
      const spoiled = () => {
        const what = s.outlived?.(spec.rules);
        if (what !== undefined) reportOwnFault('outlived-window', what);
      };
      try {
        await e.scope(() => spec.run(s, e, ctx));
        if (e.problems.length > 0) {
          spoiled();
          return { status: 'failed', detail: e.problems.join('\n'), ...codeOf(e.code()), evidence: s.evidence() };
        }
        return { status: 'passed', ...(s.notes && s.notes.length > 0 ? { detail: s.notes.join('; ') } : {}), evidence: s.evidence() };
      } catch (error) {
        if (error instanceof CheckSkip) return { status: 'skipped', detail: error.message };
        if (failure(error)) {
          spoiled();
          // A CheckFailure thrown by a driver quoted the answer its said() noted; an HttpError carries its own exchange.
          e.markJudged();
          if (error instanceof HttpError && error.exchange) (error.exchange as { judged?: boolean }).judged = true;
          return { status: 'failed', detail: [...e.problems, error.message].join('\n'), ...codeOf(e.code() ?? codeOfError(error)), evidence: s.evidence() };
        }
        throw error;
      } finally {
        await s.close();
      }
    },
  };
}

export type SuitePropertySpec<T> = Omit<PropertyCheckSpec<T>, 'suite' | 'rules' | 'level'> & {
  rules: RuleId[];
  context?: RuleId[];
  cells?: Array<Cell & { rule: RuleId }>;
  lane?: string;
  exclusive?: boolean;
  timeoutMs?: number;
};

/** A property check of a suite, cited like sessionCheck (decided rules, context, profile). */
export function suiteProperty<T>(suite: string, spec: SuitePropertySpec<T>): Check {
  const citation = cite(spec.id, spec.rules, spec.context);
  return {
    ...propertyCheck({ ...spec, suite, rules: citation.rules, level: citation.level }),
    ...citation,
    ...(spec.cells !== undefined ? { cells: spec.cells } : {}),
    ...(spec.lane !== undefined ? { lane: spec.lane } : {}),
    ...(spec.exclusive ? { exclusive: true } : {}),
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
  };
}

function codeOf(code: Outcome['code']): Pick<Outcome, 'code'> {
  return code !== undefined ? { code } : {};
}
