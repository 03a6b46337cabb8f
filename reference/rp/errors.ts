// Every rejection is an RpError: status, stable code, human detail and the id of the rule it
// enforces. It renders as the error envelope `{error, detail, rule}` (spec/objects/error.schema.json,
// ns.errors.codes) or, for pages, as an HTML error page.
import { rules } from '../../schemas/ts/rules.ts';

const known: ReadonlySet<string> = new Set(rules.map((r) => r.id));

export interface ErrorEnvelope {
  error: string;
  detail: string;
  rule: string;
}

export class RpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly rule: string;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, detail: string, rule: string, headers: Record<string, string> = {}) {
    super(detail);
    if (!known.has(rule)) throw new TypeError(`RpError cites unknown rule ${rule}`);
    this.status = status;
    this.code = code;
    this.rule = rule;
    this.headers = headers;
  }

  get detail(): string {
    return this.message;
  }

  envelope(): ErrorEnvelope {
    return { error: this.code, detail: this.message, rule: this.rule };
  }
}

/** The rule id's code from spec/rules.yaml (so a code is never restated where its rule is named). */
export function codeOf(ruleId: string): string {
  const rule = rules.find((r) => r.id === ruleId);
  if (!rule?.code) throw new TypeError(`rule ${ruleId} has no code`);
  return rule.code;
}

/** Shorthand: an RpError whose code is its rule's own code. */
export function ruleError(status: number, ruleId: string, detail: string, headers?: Record<string, string>): RpError {
  return new RpError(status, codeOf(ruleId), detail, ruleId, headers);
}
