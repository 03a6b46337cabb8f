// The RP metadata fetch (ns.auth.1, ns.metadata.*): the signer authenticates the RP by fetching
// `<audience><metadata_path>` before it uses any RP-supplied string: no redirects, a 16 KiB cap,
// JSON, version 1, `origin` equal to the origin fetched, every URI same-origin.
import { limits } from '../../../schemas/ts/limits.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { isDevelopmentHost, normalizeOrigin, sameOrigin, splitUrl } from '../../../protocol/common/url.ts';
import { supportedScopes } from '../../../protocol/signin/scopes.ts';
import { BodyTooLargeError, HttpError, type Exchange, type HttpClient } from '../http.ts';
import { problem, refuse, SignerError, type Problem } from './errors.ts';

export interface RpMetadata {
  origin: string;
  name: string;
  app_id?: string;
  response_uris?: string[];
  poll_uri?: string;
  scopes?: string[];
  transports?: string[];
  contact_uri?: string;
  context_uri?: string;
  logo_uri?: string;
  [field: string]: unknown;
}

export interface MetadataResult {
  metadata: RpMetadata;
  /** The origin the document was fetched from (the normalized audience). */
  origin: string;
  exchange: Exchange;
}

/** The normalized https origin, or a development http origin; refuses anything else. */
export function checkAudience(audience: unknown): string {
  const origin = normalizeOrigin(audience);
  if (origin === undefined) refuse('ns.request.audience', `audience ${JSON.stringify(audience)} is not an origin`);
  const p = splitUrl(origin)!;
  if (p.scheme === 'http' && !isDevelopmentHost(p.host)) refuse('ns.auth.5', `audience ${origin} uses http:// and is not a development host (localhost, 127.0.0.0/8, ::1)`);
  return origin;
}

/** The reverse-DNS form of a host (`guestbook.example.net` -> `net.example.guestbook`). */
export function reverseDns(host: string): string {
  return host.split('.').reverse().join('.');
}

/** Everything wrong with a metadata document fetched from `origin`. */
export function metadataProblems(profile: Profile, doc: unknown, origin: string): Problem[] {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return [problem('ns.metadata.required', 'the metadata is not a JSON object')];
  const d = doc as Record<string, unknown>;
  const out: Problem[] = [];
  const auth = profile.ids.auth_field;
  if (d[auth] !== '1') out.push(problem('ns.metadata.version', `${auth} is ${JSON.stringify(d[auth])}, not "1"`));
  if (typeof d.origin !== 'string') out.push(problem('ns.metadata.required', 'origin is missing'));
  else if (normalizeOrigin(d.origin) !== origin) out.push(problem('ns.metadata.origin', `origin ${JSON.stringify(d.origin)} is not the origin fetched, ${origin}`));
  if (typeof d.name !== 'string' || d.name.trim() === '') out.push(problem('ns.metadata.required', 'name (the trusted display name) is missing'));
  if (d.app_id !== undefined) {
    const host = splitUrl(origin)!.host;
    if (d.app_id !== reverseDns(host)) out.push(problem('ns.metadata.app-id', `app_id ${JSON.stringify(d.app_id)} is not ${reverseDns(host)}, the reverse-DNS form of ${host}`));
  }
  if (d.response_uris !== undefined) {
    if (!Array.isArray(d.response_uris) || !d.response_uris.every((u) => typeof u === 'string')) out.push(problem('ns.metadata.response-uris', 'response_uris is not an array of strings'));
    else for (const u of d.response_uris as string[]) if (!sameOrigin(origin, u)) out.push(problem('ns.metadata.response-uris', `response_uris entry ${u} is not on ${origin}`));
  }
  const single = [
    ['poll_uri', 'ns.metadata.poll-uri'],
    ['context_uri', 'ns.metadata.context-uri'],
    ['logo_uri', 'ns.metadata.logo-uri'],
  ] as const;
  for (const [field, ruleId] of single) {
    const v = d[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !sameOrigin(origin, v)) out.push(problem(ruleId, `${field} ${JSON.stringify(v)} is not on ${origin}`));
  }
  if (d.scopes !== undefined) {
    if (!Array.isArray(d.scopes) || !d.scopes.every((s) => typeof s === 'string')) out.push(problem('ns.metadata.scopes', 'scopes is not an array of strings'));
    else for (const s of d.scopes as string[]) if (!supportedScopes.has(s)) out.push(problem('ns.metadata.scopes', `advertised scope ${JSON.stringify(s)} is outside the RP's namespace`));
  }
  if (d.transports !== undefined && (!Array.isArray(d.transports) || !d.transports.every((t) => typeof t === 'string')))
    out.push(problem('ns.metadata.required', 'transports is not an array of strings'));
  if (d.contact_uri !== undefined && typeof d.contact_uri !== 'string') out.push(problem('ns.metadata.required', 'contact_uri is not a string'));
  return out;
}

export async function fetchMetadata(profile: Profile, http: HttpClient, audience: string, signal?: AbortSignal): Promise<MetadataResult> {
  const origin = checkAudience(audience);
  const url = `${origin}${profile.ids.metadata_path}`;
  let res;
  try {
    res = await http.get(url, { headers: { accept: 'application/json' }, maxBodyBytes: limits.metadata_body_max_bytes, noCookies: true, ...(signal ? { signal } : {}) });
  } catch (error) {
    if (error instanceof BodyTooLargeError) refuse('ns.metadata.body-cap', `the metadata at ${url} is larger than ${limits.metadata_body_max_bytes} bytes`, error.exchange);
    if (error instanceof HttpError) refuse('ns.auth.1', `the metadata at ${url} cannot be fetched: ${error.message}`, error.exchange);
    throw error;
  }
  if (res.status >= 300 && res.status < 400)
    refuse('ns.metadata.no-redirects', `the metadata fetch of ${url} answered ${res.status}${res.location ? ` to ${res.location}` : ''}; signers do not follow redirects`, res.exchange);
  if (res.status !== 200) refuse('ns.metadata.path', `the metadata fetch of ${url} answered ${res.status}, not 200`, res.exchange);
  let doc: unknown;
  try {
    doc = JSON.parse(res.text());
  } catch {
    refuse('ns.metadata.required', `the metadata at ${url} is not JSON`, res.exchange);
  }
  const problems = metadataProblems(profile, doc, origin);
  if (problems.length > 0) throw new SignerError(problems, res.exchange);
  return { metadata: doc as RpMetadata, origin, exchange: res.exchange };
}
