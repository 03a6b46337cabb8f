// Every refusal of the harness signer names the document 1 rule it enforces.
import { rules, type RuleId } from '../../../schemas/ts/rules.ts';
import type { Exchange } from '../http.ts';

export interface Problem {
  ruleId: RuleId;
  /** The rule's code in spec/rules/, when it has one. */
  code?: string;
  detail: string;
}

const codes = new Map(rules.map((r) => [r.id, r.code]));

export function problem(ruleId: RuleId, detail: string): Problem {
  const code = codes.get(ruleId);
  return code === undefined ? { ruleId, detail } : { ruleId, code, detail };
}

export class SignerError extends Error {
  readonly ruleId: RuleId;
  readonly code?: string;
  readonly problems: readonly Problem[];
  readonly exchange?: Exchange;

  constructor(problems: Problem | readonly Problem[], exchange?: Exchange) {
    const list = Array.isArray(problems) ? (problems as readonly Problem[]) : [problems as Problem];
    const first = list[0];
    if (!first) throw new TypeError('SignerError needs a problem');
    super(list.map((p) => `${p.detail} (${p.ruleId})`).join('; '));
    this.name = 'SignerError';
    this.ruleId = first.ruleId;
    if (first.code !== undefined) this.code = first.code;
    this.problems = list;
    if (exchange) this.exchange = exchange;
  }
}

export function refuse(ruleId: RuleId, detail: string, exchange?: Exchange): never {
  throw new SignerError(problem(ruleId, detail), exchange);
}
