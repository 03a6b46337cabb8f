// Building blocks for bridge checks: a check from a body that drives a BridgeSession, cited
// through harness/run/cite.ts (an unknown rule, or document rules mixed with project decisions,
// throws at load), the problems it collects as its verdict and its HTTP exchanges as evidence.
import type { RuleId } from '../../../schemas/ts/rules.ts';
import type { Check, CheckContext, Outcome } from '../../run/model.ts';
import { cite } from '../../run/cite.ts';
import { HttpError } from '../../actors/http.ts';
import { SignerError } from '../../actors/signer/index.ts';
import { Expect } from '../../run/verdict.ts';
import { BridgeSession, CheckFailure, CheckSkip, type BridgeTarget } from './driver.ts';

export { Expect };

export interface BridgeCheckSpec {
  /** `bridge/<area>/<name>` */
  id: string;
  title: string;
  rules: RuleId[];
  context?: RuleId[];
  timeoutMs?: number;
  /** See Check.lane and Check.exclusive. */
  lane?: string;
  exclusive?: boolean;
  run: (s: BridgeSession, e: Expect, ctx: CheckContext) => Promise<void | string>;
}

export function bridgeCheck(target: BridgeTarget, spec: BridgeCheckSpec): Check {
  return {
    id: spec.id,
    title: spec.title,
    suite: 'bridge',
    ...cite(spec.id, spec.rules, spec.context),
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    ...(spec.lane !== undefined ? { lane: spec.lane } : {}),
    ...(spec.exclusive ? { exclusive: true } : {}),
    async run(ctx): Promise<Outcome> {
      const s = new BridgeSession(target, ctx.signal);
      const e = new Expect();
      try {
        const detail = await spec.run(s, e, ctx);
        if (e.problems.length > 0) return { status: 'failed', detail: e.problems.join('\n'), evidence: s.evidence() };
        return { status: 'passed', ...(typeof detail === 'string' ? { detail } : {}), evidence: s.evidence() };
      } catch (error) {
        if (error instanceof CheckSkip) return { status: 'skipped', detail: error.message };
        if (error instanceof CheckFailure || error instanceof HttpError || error instanceof SignerError) {
          return { status: 'failed', detail: [...e.problems, (error as Error).message].join('\n'), evidence: s.evidence() };
        }
        throw error;
      } finally {
        await s.close();
      }
    },
  };
}
