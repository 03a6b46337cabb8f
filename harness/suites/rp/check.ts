// Building blocks for rp checks: a check from a body that drives a Session, its level from the
// rules it cites (an unknown rule id is a bug in the suite and throws at load time), and the
// collected problems as its verdict with the HTTP exchanges as evidence.
import { Expect } from '../../run/verdict.ts';
import type { RuleId } from '../../../schemas/ts/rules.ts';
import type { Check, CheckContext, Outcome } from '../../run/model.ts';
import { cite } from '../../run/cite.ts';
import { propertyCheck, type PropertyCheckSpec } from '../../run/property.ts';
import { HttpError } from '../../actors/http.ts';
import { CheckFailure, CheckSkip, Session, type RpTarget } from './driver.ts';

export interface RpCheckSpec {
  /** `rp/<area>/<name>` */
  id: string;
  title: string;
  /** The rules its assertions decide (its coverage); all document rules, or all project decisions. */
  rules: RuleId[];
  /** Rules it touches on the way without deciding them. */
  context?: RuleId[];
  /** Its own time limit, for a check that must wait past an expiry. */
  timeoutMs?: number;
  /** See Check.lane and Check.exclusive. */
  lane?: string;
  exclusive?: boolean;
  run: (s: Session, e: Expect, ctx: CheckContext) => Promise<void | string>;
}

export function rpCheck(target: RpTarget, spec: RpCheckSpec): Check {
  return {
    id: spec.id,
    title: spec.title,
    suite: 'rp',
    ...cite(spec.id, spec.rules, spec.context),
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    ...(spec.lane !== undefined ? { lane: spec.lane } : {}),
    ...(spec.exclusive ? { exclusive: true } : {}),
    async run(ctx): Promise<Outcome> {
      const s = new Session(target, ctx.signal);
      const e = new Expect();
      try {
        const detail = await spec.run(s, e, ctx);
        if (e.problems.length > 0) return { status: 'failed', detail: e.problems.join('\n'), evidence: s.evidence() };
        return { status: 'passed', ...(typeof detail === 'string' ? { detail } : {}), evidence: s.evidence() };
      } catch (error) {
        if (error instanceof CheckSkip) return { status: 'skipped', detail: error.message };
        if (error instanceof CheckFailure || error instanceof HttpError) {
          return { status: 'failed', detail: [...e.problems, error.message].join('\n'), evidence: s.evidence() };
        }
        throw error;
      } finally {
        await s.close();
      }
    },
  };
}

/** Runs `fn` once and shares the promise (scenarios judged by more than one check). */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

/** A property check of the suite, cited like rpCheck (decided rules, context, profile). */
export function rpProperty<T>(spec: Omit<PropertyCheckSpec<T>, 'suite' | 'rules' | 'level'> & { rules: RuleId[]; context?: RuleId[] }): Check {
  const citation = cite(spec.id, spec.rules, spec.context);
  return { ...propertyCheck({ ...spec, suite: 'rp', rules: citation.rules, level: citation.level }), ...citation };
}

export { Expect };
