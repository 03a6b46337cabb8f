// Loading a request from what the user holds (encoded text, deep link, web-signer handoff, or a
// request by reference) and validating it against the RP metadata before anything is signed.
import { limits } from '../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../schemas/ts/vocabulary.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { decodeObject } from '../../../protocol/common/codec.ts';
import { referenceFromInput } from '../../../protocol/signin/reference.ts';
import { byteLength } from '../../../protocol/common/base64.ts';
import { normalizeOrigin, queryParams, sameOrigin, splitUrl } from '../../../protocol/common/url.ts';
import { scopeProblem } from '../../../protocol/signin/scopes.ts';
import { parseRfc3339 } from '../../../protocol/common/time.ts';
import { BodyTooLargeError, HttpError, type Exchange, type HttpClient } from '../http.ts';
import { problem, refuse, type Problem } from './errors.ts';
import type { RpMetadata } from './metadata.ts';

export interface LoadedRequest {
  request: Record<string, unknown>;
  /** The encoded request as received (inline) or as the reference link served it. */
  encoded: string;
  byReference: boolean;
  referenceUri?: string;
  exchange?: Exchange;
}

// A reference answer is one encoded request: the metadata cap is ample (harness choice; the
// documents set no cap for it).
const REFERENCE_CAP = limits.metadata_body_max_bytes;

function decodeRequest(encoded: string, where: string): Record<string, unknown> {
  const decoded = decodeObject(encoded);
  if (!decoded.ok) refuse('ns.encoding.decode', `${where} does not decode: ${decoded.reason}`);
  return decoded.value;
}

/** ns.reference.forms, ns.transport.deeplink, ns.transport.web-handoff, ns.encoding.decode. */
export async function loadRequest(profile: Profile, http: HttpClient, input: string, signal?: AbortSignal): Promise<LoadedRequest> {
  const text = input.trim();
  if (text === '') refuse('ns.encoding.decode', 'no request given');
  const link = referenceFromInput(profile, text);
  if (link === undefined) {
    const p = splitUrl(text);
    let encoded = text;
    if (p && (p.scheme === profile.ids.url_scheme || p.scheme === 'https' || p.scheme === 'http')) {
      const q = queryParams(p.query);
      const inline = q.get('request') ?? q.get('auth');
      if (!inline) refuse('ns.reference.forms', `${text.slice(0, 80)} carries neither a request nor a reference`);
      encoded = inline;
    }
    return { request: decodeRequest(encoded, 'the request'), encoded, byReference: false };
  }
  let res;
  try {
    res = await http.get(link, { headers: { accept: 'application/json' }, maxBodyBytes: REFERENCE_CAP, noCookies: true, ...(signal ? { signal } : {}) });
  } catch (error) {
    if (error instanceof BodyTooLargeError) refuse('ns.reference.json', `the reference answer of ${link} is larger than ${REFERENCE_CAP} bytes`, error.exchange);
    if (error instanceof HttpError) refuse('ns.reference.json', `the reference ${link} cannot be fetched: ${error.message}`, error.exchange);
    throw error;
  }
  if (res.status >= 300 && res.status < 400)
    refuse('ns.reference.no-redirects', `the reference ${link} answered ${res.status}${res.location ? ` to ${res.location}` : ''}; signers do not follow redirects`, res.exchange);
  if (res.status === 404 || res.status === 410) refuse('ns.reference.gone', `the reference ${link} is expired or used (${res.status})`, res.exchange);
  if (res.status !== 200) refuse('ns.reference.json', `the reference ${link} answered ${res.status}, not 200`, res.exchange);
  let body: unknown;
  try {
    body = JSON.parse(res.text());
  } catch {
    refuse('ns.reference.json', `the reference ${link} did not answer JSON`, res.exchange);
  }
  const b = body as Record<string, unknown> | null;
  if (b === null || typeof b !== 'object' || typeof b.request !== 'string' || b.request === '') refuse('ns.reference.json', `the reference ${link} answered no {request}`, res.exchange);
  const leaked = ['match_code', 'match', 'matchCode'].find((f) => b[f] !== undefined);
  if (leaked) refuse('ns.reference.no-match-code', `the reference ${link} serves a match code (${leaked})`, res.exchange);
  const request = decodeRequest(b.request, `the request served by ${link}`);
  if (typeof request.audience !== 'string' || !sameOrigin(request.audience, link)) {
    refuse('ns.reference.same-origin', `the reference ${link} is not on the request's audience ${JSON.stringify(request.audience)}`, res.exchange);
  }
  return { request, encoded: b.request, byReference: true, referenceUri: link, exchange: res.exchange };
}

// "One line, no CR, LF or other control characters" (ns.request.statement), as the verifier reads it.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const ACTIONS: ReadonlySet<string> = new Set(vocabulary.actions.values);

/** Everything that makes the signer refuse `request` from the RP described by `metadata`. */
export function validateRequest(profile: Profile, request: Readonly<Record<string, unknown>>, metadata: RpMetadata, now: number = Date.now()): Problem[] {
  const out: Problem[] = [];
  const auth = profile.ids.auth_field;
  if (request[auth] !== '1') out.push(problem('ns.request.version', `${auth} is ${JSON.stringify(request[auth])}, not "1"`));
  const str = (f: string) => typeof request[f] === 'string' && request[f] !== '';
  if (!str('request_id')) out.push(problem('ns.request.request-id', 'request_id is missing'));
  if (!str('nonce')) out.push(problem('ns.request.nonce', 'nonce is missing'));
  const audience = normalizeOrigin(request.audience);
  if (audience === undefined) out.push(problem('ns.request.audience', `audience ${JSON.stringify(request.audience)} is not an origin`));
  else {
    if (audience !== normalizeOrigin(metadata.origin)) out.push(problem('ns.request.audience', `audience ${audience} is not the origin the metadata was fetched from (${metadata.origin})`));
  }
  const issuedAt = parseRfc3339(request.issued_at);
  const expiresAt = parseRfc3339(request.expires_at);
  if (issuedAt === undefined || expiresAt === undefined) out.push(problem('ns.request.timestamps', 'issued_at and expires_at must be RFC 3339 timestamps'));
  else {
    if (expiresAt <= issuedAt) out.push(problem('ns.request.timestamps', 'expires_at is not later than issued_at'));
    else if (expiresAt - issuedAt > limits.window_max_seconds * 1000) out.push(problem('ns.request.window', `the window is longer than ${limits.window_max_seconds} seconds`));
    if (issuedAt > now + limits.clock_skew_seconds * 1000) out.push(problem('ns.limits.clock-skew', `issued_at is more than ${limits.clock_skew_seconds} seconds ahead`));
    if (now > expiresAt) out.push(problem('ns.transaction.expiry', 'the request has expired'));
  }
  if (typeof request.action !== 'string' || !ACTIONS.has(request.action)) out.push(problem('ns.request.action', `action ${JSON.stringify(request.action)} is not one of ${[...ACTIONS].join(', ')}`));
  if (request.statement !== undefined && request.statement !== null) {
    const s = request.statement;
    if (typeof s !== 'string') out.push(problem('ns.request.statement', 'statement is not a string'));
    else if (byteLength(s) > limits.statement_max_bytes) out.push(problem('ns.request.statement', `statement is longer than ${limits.statement_max_bytes} bytes`));
    else if (CONTROL.test(s)) out.push(problem('ns.request.statement', 'statement contains a line break or control character'));
  }
  const scopes = scopeProblem(request.scopes);
  if (scopes) {
    const ruleId = scopes.problem === 'not_canonical' ? 'ns.request.scopes' : scopes.problem === 'too_many' ? 'ns.limits.scopes' : 'ns.request.scope-namespace';
    out.push(problem(ruleId, scopes.detail));
  }
  if (request.response_uri !== undefined) {
    const uri = request.response_uri;
    if (typeof uri !== 'string' || audience === undefined || !sameOrigin(audience, uri)) {
      out.push(problem('ns.auth.4', `response_uri ${JSON.stringify(uri)} is not on the audience ${audience ?? '?'}`));
    } else if (Array.isArray(metadata.response_uris) && metadata.response_uris.length > 0 && !metadata.response_uris.includes(uri)) {
      out.push(problem('ns.request.response-uri', `response_uri ${uri} is not among the RP's published response_uris`));
    }
  }
  return out;
}
