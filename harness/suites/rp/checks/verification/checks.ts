// Running a scenario on its own transaction, and the two checks judging it: the document's rule
// (rp/verify/...) and this project's status and code (rp/codes/...).
import type { Check } from '../../../../run/model.ts';
import { rules as catalogue, type RuleId } from '../../../../../schemas/ts/rules.ts';
import { once, rpCheck, type Expect } from '../../check.ts';
import { CheckSkip, Session, StartRefused, accepted, envelopeOf, errorCode, said, sign, type RpTarget, type Started } from '../../driver.ts';
import type { MutationContext, Scenario, ScenarioResult } from './scenario.ts';

/**
 * A refusal by rules 1-4 needs no lookup; anything slower waited for the hanging authority. Well
 * under a lookup timeout (the reference's is 5 s under the harness), with room for a loaded machine.
 */
const ORDER_MAX_MS = 2000;

/** Runs one scenario on its own transaction; never throws for RP behaviour (it is recorded). */
export async function runScenario(target: RpTarget, sc: Scenario, signal?: AbortSignal): Promise<ScenarioResult> {
  const s = new Session(target, signal);
  try {
    let started: Started;
    try {
      started = await s.start(sc.start);
    } catch (error) {
      if (sc.start && error instanceof StartRefused && error.unsupported) throw new CheckSkip(`the RP cannot honour the start options ${JSON.stringify(sc.start)} (ns.start.options)`);
      throw error;
    }
    if (sc.start?.scopes && JSON.stringify(started.request.scopes ?? []) !== JSON.stringify([...sc.start.scopes].sort())) {
      throw new CheckSkip(`the RP did not honour the start option scopes ${JSON.stringify(sc.start.scopes)}`);
    }
    const who = await s.identity();
    const genuine = sign(target.profile, started.request, who);
    const m: MutationContext = { s, profile: target.profile, started, request: started.request, who, genuine };
    const approval = await sc.build(m);
    if (sc.accept) {
      const done = await s.completeSameDevice(started, approval);
      const result: ScenarioResult = { status: done.ok ? 200 : 0, envelope: '', answer: '', after: done.ok ? 'completed' : '', exchanges: s.exchanges, notes: s.notes };
      if (!done.ok) result.genuineProblem = done.problem ?? 'did not complete';
      else if (done.identity !== undefined && done.identity !== who.identity) result.genuineProblem = `the poll names ${done.identity}, expected ${who.identity}`;
      return result;
    }
    const refused = await s.deliver(started.request, approval);
    const envelope = envelopeOf(refused);
    const code = errorCode(refused);
    const after = (await s.pollStatus(started.pollSecret)).status;
    const result: ScenarioResult = {
      status: refused.status,
      envelope,
      answer: said(refused),
      ...(code !== undefined ? { code } : {}),
      after,
      refusedInMs: refused.exchange.durationMs,
      exchanges: s.exchanges,
      notes: s.notes,
    };
    if (accepted(refused)) {
      result.genuineProblem = 'the mutated approval was accepted';
      return result;
    }
    const done = await s.completeSameDevice(started, genuine);
    if (!done.ok) {
      // Which rule broke: an approval of the same transaction by another identity has another nonce
      // key (ns.nonce.cache-key); when it completes, the refusal spent the genuine nonce, otherwise
      // the refusal ended the transaction.
      const other = await s.identity();
      const probe = await s.completeSameDevice(started, sign(target.profile, started.request, other));
      result.genuineProblem = probe.ok
        ? `after the refusal the genuine approval did not complete the login (${done.problem}), while another identity's approval of the same transaction did: the refused delivery spent the nonce`
        : `after the refusal the transaction no longer completes, with the genuine approval (${done.problem}) or another identity's: the refused delivery ended it`;
    }
    return result;
  } finally {
    await s.close();
  }
}

const isProject = new Set(catalogue.filter((r) => r.origin === 'project').map((r) => r.id));
/** The profile's rules for the answer to a refused delivery. */
const CODES: RuleId[] = ['ns.delivery.reject-status', 'ns.errors.codes', 'ns.errors.envelope'];

type Cell = { rule: RuleId; facet: string; value: string; operation: string };

/** A scenario's cells, each on the delivery endpoint where the approval is judged. */
function delivered(sc: Scenario, extra: Cell[] = []): { cells?: Cell[] } {
  const cells = [...(sc.cells ?? []).map((c) => ({ ...c, operation: 'postDelivery' })), ...extra];
  return cells.length > 0 ? { cells } : {};
}

/**
 * The ns.nonce.spend-on-success cell a refusal by verification rule N fills (the scenario's name
 * starts with N/): before the nonce is claimed (rules 1 to 4), or after it, by rule 6 or 7.
 */
function unspentBy(sc: Scenario): Cell[] {
  const n = /^(\d)\//.exec(sc.name)?.[1];
  const value = n === undefined ? undefined : Number(n) <= 4 ? 'refused-before-claim' : n === '6' ? 'resolution-refused' : n === '7' ? 'signature-refused' : undefined;
  return value === undefined ? [] : [{ rule: 'ns.nonce.spend-on-success', facet: 'who', value, operation: 'postDelivery' }];
}

/**
 * The checks of every scenario, sharing one run: rp/verify/<name> judges the document (any 4xx,
 * no completion, and the genuine approval still completes: a refusal by a verification rule spends
 * no nonce, ns.nonce.spend-on-success); rp/codes/<name> judges the project's status, code and
 * envelope. A scenario of project rules only (binding/*) has the profile check alone.
 */
export function verificationChecks(target: RpTarget, list: Scenario[], results: Map<string, () => Promise<ScenarioResult>>): Check[] {
  const checks: Check[] = [];
  for (const sc of list) {
    const run = once(() => runScenario(target, sc));
    results.set(sc.name, run);
    const id = sc.name.replace(/^(\d)\//, 'rule-$1/');
    if (sc.accept) {
      checks.push(
        rpCheck(target, {
          id: `rp/verify/${id}`,
          title: sc.title,
          rules: sc.rules,
          ...(sc.context ? { context: sc.context } : {}),
          ...delivered(sc),
          run: async (s, e) => {
            const r = await run();
            s.exchanges.push(...r.exchanges);
            e.that(r.genuineProblem === undefined, r.genuineProblem ?? '');
          },
        }),
      );
      continue;
    }
    const project = sc.rules.every((rule) => isProject.has(rule));
    /** Refused (any 4xx), not completed, and the genuine approval completes afterwards. */
    const refusedWithoutLoss = (r: ScenarioResult, e: Expect): void => {
      e.that(r.status >= 400 && r.status < 500, `expected a refusal (4xx), got ${r.answer}`, 'status');
      e.that(r.after !== 'completed', 'the login completed after the mutated approval', 'state');
      if (r.status < 200 || r.status >= 300) e.that(r.genuineProblem === undefined, r.genuineProblem ?? '');
    };
    if (!project) {
      checks.push(
        rpCheck(target, {
          id: `rp/verify/${id}`,
          title: sc.title,
          // A refusal by a verification rule spends no nonce: the genuine approval still completes.
          rules: [...sc.rules, 'ns.nonce.spend-on-success'],
          context: [...(sc.context ?? []), 'ns.transport.poll-shape'],
          ...delivered(sc, unspentBy(sc)),
          run: async (s, e) => {
            const r = await run();
            s.exchanges.push(...r.exchanges);
            refusedWithoutLoss(r, e);
            // Ordering (cheapest first): the identity's authority hangs, so a refusal that waited for
            // it looked the identity up before the cheap rule refused.
            if (sc.name.startsWith('order/') && r.refusedInMs !== undefined)
              e.that(r.refusedInMs < ORDER_MAX_MS, `the refusal took ${r.refusedInMs} ms: the RP resolved the identity (its authority hangs) before the cheaper rule refused`, 'timing');
          },
        }),
      );
    }
    checks.push(
      rpCheck(target, {
        id: `rp/codes/${id}`,
        title: `${sc.title}: status ${sc.expect!.status}, error ${sc.expect!.codes.join(' or ')}, in the envelope`,
        rules: project ? [...sc.rules, ...CODES] : CODES,
        context: project ? [...(sc.context ?? []), 'ns.transport.poll-shape'] : [...sc.rules, ...(sc.context ?? [])],
        run: async (s, e) => {
          const r = await run();
          s.exchanges.push(...r.exchanges);
          // A project-only scenario has no document check: the refusal itself is judged here.
          if (project) refusedWithoutLoss(r, e);
          e.that(r.status === sc.expect!.status, `expected status ${sc.expect!.status}, got ${r.answer}`, 'status');
          if (typeof r.envelope === 'string') e.fail(r.envelope, 'shape');
          else e.that((sc.expect!.codes as readonly string[]).includes(r.envelope.error), `expected error ${sc.expect!.codes.join(' or ')}, got ${r.answer}`, 'code');
        },
      }),
    );
  }
  return checks;
}
