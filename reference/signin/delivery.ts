// What every RP of document 1 does with a delivery before its own transaction: read the body in
// either form (ns.delivery.body, ns.delivery.content-type), refuse approvals in the URL
// (ns.auth.6.no-approval-in-url), and map a verifier rejection to its status
// (ns.delivery.reject-status). Shared by the reference RP and the bridge.
import { limits } from '../../schemas/ts/limits.ts';
import { decodeObject } from '../../protocol/common/codec.ts';
import type { Profile } from '../../protocol/common/profile.ts';
import type { Rejection } from '../../protocol/signin/verifier.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { CORS_ANY, utf8Text } from '../shared/http.ts';
import { jsonTooDeep } from '../shared/body.ts';
import { asObject, parseJson } from '../shared/json.ts';

const MATCH = new RegExp(`^[0-9]{${limits.match_code_digits}}$`);

export interface DeliveryBody {
  approval: Record<string, unknown>;
  match?: string;
}

const malformed = (detail: string) => ruleError(400, 'ns.delivery.body', detail, CORS_ANY);

/** Reads the delivery body in either form (ns.delivery.body, ns.delivery.content-type). */
export function parseDelivery(bytes: Uint8Array): DeliveryBody {
  const text = utf8Text(bytes);
  if (text === undefined) throw malformed('the body is not UTF-8');
  const trimmed = text.trim();
  if (trimmed === '') throw malformed('the body is empty');
  let response: string = trimmed;
  let match: string | undefined;
  if (trimmed.startsWith('{')) {
    const parsed = parseJson(trimmed);
    if (!parsed.ok) throw malformed(parsed.why === 'depth' ? `the body is nested deeper than ${limits.json_depth_max} levels` : 'the body is not valid JSON');
    const obj = asObject(parsed.value);
    if (obj === undefined) throw malformed('the body must be a JSON object');
    if (!('response' in obj)) return { approval: obj }; // a raw JSON approval as the whole body
    if (typeof obj.response !== 'string' || obj.response.trim() === '') throw malformed('response must be the encoded approval (a string)');
    if (obj.match !== undefined && obj.match !== null) {
      if (typeof obj.match !== 'string' || !MATCH.test(obj.match)) throw malformed(`match must be the ${limits.match_code_digits}-digit match code`);
      match = obj.match;
    }
    response = obj.response;
  }
  // The encoded approval is JSON too: nested past the limit, it is refused before it is parsed.
  if (jsonTooDeep(Buffer.from(response, 'base64url'))) throw malformed(`the approval is nested deeper than ${limits.json_depth_max} levels`);
  const decoded = decodeObject(response);
  if (!decoded.ok) throw malformed(`the approval cannot be decoded: ${decoded.reason}`);
  return match === undefined ? { approval: decoded.value } : { approval: decoded.value, match };
}

/** An approval is never accepted in the URL (ns.auth.6.no-approval-in-url). `search` is the query string. */
export function refuseApprovalInUrl(ctx: { profile: Profile }, search: string): void {
  if (search === '' || search === '?') return;
  for (const [key, value] of new URLSearchParams(search)) {
    const looksLikeApproval = key === 'response' || key === 'approval' || key === ctx.profile.ids.auth_field || key === 'signature' || decodeObject(value).ok || decodeObject(key).ok;
    if (looksLikeApproval) throw ruleError(400, 'ns.auth.6.no-approval-in-url', 'an approval is never accepted in the URL; send it in the body', CORS_ANY);
  }
}

/** The status of a verifier rejection (ns.delivery.reject-status). */
export function rejectionError(verdict: Rejection): HttpError {
  let status: number;
  if (verdict.rule <= 4) status = 400;
  else if (verdict.rule === 5) status = verdict.code === 'nonce_cache_unavailable' ? 503 : 409;
  else status = 401;
  const rule = verdict.rule === 5 && verdict.code === 'nonce_cache_unavailable' ? 'ns.nonce.fail-closed' : verdict.ruleId;
  // ns.delivery.reject-status: `detail` never explains why a signature failed beyond the code.
  const detail = verdict.rule === 7 ? 'the approval does not verify' : verdict.detail;
  return new HttpError(status, verdict.code, detail, rule, CORS_ANY);
}
