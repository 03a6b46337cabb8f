// Every rejection of a reference server is an HttpError: status, stable code, human detail and the
// id of the rule it enforces. It renders as the error envelope `{error, detail, rule}`
// (spec/objects/error.schema.json, ns.errors.codes) or, for pages, as an HTML error page.
import { rules, type ErrorCode, type RuleId } from '../../schemas/ts/rules.ts';
import type { components } from '../../schemas/ts/http/rp.ts';

/** Every code a reference server answers is some rule's `code` in spec/rules/. */
export type Code = ErrorCode;

/** The envelope as the OpenAPI models it, with the code and rule typed from the spec. */
export type ErrorEnvelope = Omit<components['schemas']['Error'], 'error' | 'rule'> & { error: Code; rule: RuleId };

export class HttpError extends Error {
  readonly status: number;
  readonly code: Code;
  readonly rule: RuleId;
  readonly headers: Readonly<Record<string, string>>;
  /** More fields of the envelope, where a rule asks for them (e.g. a 429's bucket). */
  readonly fields: Readonly<Record<string, unknown>>;

  constructor(status: number, code: Code, detail: string, rule: RuleId, headers: Readonly<Record<string, string>> = {}, fields: Readonly<Record<string, unknown>> = {}) {
    super(detail);
    this.status = status;
    this.code = code;
    this.rule = rule;
    this.headers = headers;
    this.fields = fields;
  }

  get detail(): string {
    return this.message;
  }

  envelope(): ErrorEnvelope {
    return { error: this.code, detail: this.message, rule: this.rule, ...this.fields };
  }

  /** The same error with other headers (e.g. CORS on a route that allows any origin). */
  withHeaders(headers: Readonly<Record<string, string>>): HttpError {
    return new HttpError(this.status, this.code, this.message, this.rule, headers, this.fields);
  }

  /** The same error with more envelope fields. */
  withBody(fields: Readonly<Record<string, unknown>>): HttpError {
    return new HttpError(this.status, this.code, this.message, this.rule, this.headers, { ...this.fields, ...fields });
  }
}

const codes = new Map(rules.filter((r) => r.code !== undefined).map((r) => [r.id, r.code as ErrorCode]));

/** The rule's own code from spec/rules/ (so a code is never restated where its rule is named). */
export function codeOf(ruleId: RuleId): ErrorCode {
  const code = codes.get(ruleId);
  if (code === undefined) throw new TypeError(`rule ${ruleId} has no code`);
  return code;
}

/** Shorthand: an HttpError whose code is its rule's own code. */
export function ruleError(status: number, ruleId: RuleId, detail: string, headers?: Readonly<Record<string, string>>): HttpError {
  return new HttpError(status, codeOf(ruleId), detail, ruleId, headers);
}
