// The one path-parameter decoder of the reference servers: every path parameter (h3's router
// params, and the tails of wildcard routes) is percent-decoded here, and a malformed escape
// (`%zz`, a cut or invalid UTF-8 sequence) is a 400 naming the server's rule, never a 500.
import type { H3Event } from 'h3';
import type { RuleId } from '../../schemas/ts/rules.ts';
import { HttpError, type Code } from './errors.ts';

/** How a server names a malformed path: its 400 rule and envelope code. */
export interface PathRules {
  rule: RuleId;
  code: Code;
}

export const RP_PATH: PathRules = { rule: 'ns.delivery.never-500', code: 'invalid_request' };
export const BRIDGE_PATH: PathRules = { rule: 'ob.robustness.never-500', code: 'invalid_request' };
export const RELAY_PATH: PathRules = { rule: 'ra.errors.invalid-request', code: 'invalid_request' };

/** Decodes one raw path segment (or tail) strictly: 400 in `rules` for a malformed escape. */
export function decodePathParam(raw: string, rules: PathRules): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, rules.code, 'the path has a malformed percent escape', rules.rule);
  }
}

/** The router parameter `name` of this request, decoded (empty when the route has none). */
export function pathParam(event: H3Event, name: string, rules: PathRules): string {
  const raw = (event.context.params as Record<string, string> | undefined)?.[name] ?? '';
  return decodePathParam(raw, rules);
}
