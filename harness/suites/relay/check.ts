// Building blocks for relay checks, as for the rp suite: a check from a body that drives a Session,
// cited with the rules its assertions decide (cite() makes a check of project decisions only a
// profile check), and the collected problems as its verdict with the HTTP exchanges as evidence.
import type { RuleId } from '../../../schemas/ts/rules.ts';
import type { Check, CheckContext, Outcome } from '../../run/model.ts';
import { cite } from '../../run/cite.ts';
import { propertyCheck, type PropertyCheckSpec } from '../../run/property.ts';
import { HttpError } from '../../actors/http.ts';
import { Expect } from '../../run/verdict.ts';
import { CheckFailure, CheckSkip, Session, type RelayTarget } from './driver.ts';

export { Expect };

export interface RelayCheckSpec {
  /** `relay/<area>/<name>` */
  id: string;
  title: string;
  rules: RuleId[];
  context?: RuleId[];
  timeoutMs?: number;
  /** See Check.lane and Check.exclusive. */
  lane?: string;
  exclusive?: boolean;
  run: (s: Session, e: Expect, ctx: CheckContext) => Promise<void | string>;
}

export function relayCheck(target: RelayTarget, spec: RelayCheckSpec): Check {
  return {
    id: spec.id,
    title: spec.title,
    suite: 'relay',
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
        if (error instanceof CheckFailure || error instanceof HttpError) return { status: 'failed', detail: [...e.problems, error.message].join('\n'), evidence: s.evidence() };
        throw error;
      } finally {
        await s.close();
      }
    },
  };
}

export function relayProperty<T>(spec: Omit<PropertyCheckSpec<T>, 'suite' | 'rules' | 'level'> & { rules: RuleId[]; context?: RuleId[]; exclusive?: boolean }): Check {
  const citation = cite(spec.id, spec.rules, spec.context);
  return { ...propertyCheck({ ...spec, suite: 'relay', rules: citation.rules, level: citation.level }), ...citation, ...(spec.exclusive ? { exclusive: true } : {}) };
}
