// A "browser" for the harness: an HTTP client with its own cookie jar that starts a login through
// the start contract (ns.start.contract), polls with its poll secret and follows a resume link.
import { limits } from '../../../schemas/ts/limits.ts';
import { defaultProfile, type Profile } from '../../../protocol/common/profile.ts';
import { decodeObject } from '../../../protocol/common/codec.ts';
import { splitUrl } from '../../../protocol/common/url.ts';
import { HttpClient, HttpError, type Exchange, type HttpClientOptions } from '../http.ts';
import { problem, refuse, SignerError, type Problem } from './errors.ts';

export interface StartOptions {
  action?: string;
  scopes?: string[];
  statement?: string;
}

export interface StartResult {
  /** The encoded request. */
  request: string;
  /** The decoded request object. */
  decoded: Record<string, unknown>;
  requestUri?: string;
  pollSecret: string;
  matchCode: string;
  /** Cookie names the start set (the binding cookie among them). */
  cookies: string[];
  body: Record<string, unknown>;
  exchange: Exchange;
}

export interface PollResult {
  httpStatus: number;
  /** `pending`, `approved`, `completed`, `ended` or `expired` (ns.transport.poll-shape). */
  status?: string;
  identity?: string;
  body: unknown;
  exchange: Exchange;
}

const MATCH = new RegExp(`^[0-9]{${limits.match_code_digits}}$`);

/** Problems with a start result body (ns.start.contract). */
export function startResultProblems(body: unknown): Problem[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [problem('ns.start.contract', 'the start result is not a JSON object')];
  const b = body as Record<string, unknown>;
  const out: Problem[] = [];
  if (typeof b.request !== 'string' || b.request === '') out.push(problem('ns.start.contract', 'request (the encoded request) is missing'));
  else if (!decodeObject(b.request).ok) out.push(problem('ns.start.contract', 'request does not decode'));
  if (b.request_uri !== undefined) {
    const p = typeof b.request_uri === 'string' ? splitUrl(b.request_uri) : undefined;
    if (!p || (p.scheme !== 'https' && p.scheme !== 'http') || p.host === '') out.push(problem('ns.start.contract', 'request_uri is not an http(s) link'));
  }
  if (typeof b.poll_secret !== 'string' || b.poll_secret === '') out.push(problem('ns.start.contract', 'poll_secret is missing'));
  if (typeof b.match_code !== 'string' || !MATCH.test(b.match_code)) out.push(problem('ns.start.contract', `match_code is not ${limits.match_code_digits} digits`));
  return out;
}

export class Browser {
  readonly http: HttpClient;
  readonly profile: Profile;

  constructor(options: { http?: HttpClient; profile?: Profile } & HttpClientOptions = {}) {
    const { http, profile, ...httpOptions } = options;
    this.http = http ? (http.jar ? http : http.withCookieJar()) : new HttpClient({ ...httpOptions, cookies: true });
    this.profile = profile ?? defaultProfile;
  }

  /** POST <startUrl> with Accept: application/json: this browser becomes the starting browser. */
  async start(startUrl: string, options: StartOptions = {}, signal?: AbortSignal): Promise<StartResult> {
    let res;
    try {
      res = await this.http.post(startUrl, { ...options }, { headers: { accept: 'application/json' }, ...(signal ? { signal } : {}) });
    } catch (error) {
      if (error instanceof HttpError) refuse('ns.start.contract', `POST ${startUrl} failed: ${error.message}`, error.exchange);
      throw error;
    }
    let body: unknown;
    try {
      body = res.json();
    } catch {
      body = undefined;
    }
    if (res.status === 400 && (body as Record<string, unknown> | undefined)?.error === 'start_option_unsupported') {
      refuse('ns.start.options', `the RP cannot honour the start options: ${String((body as Record<string, unknown>).detail ?? '')}`, res.exchange);
    }
    if (res.status !== 201) refuse('ns.start.contract', `POST ${startUrl} answered ${res.status}, not 201`, res.exchange);
    const problems = startResultProblems(body);
    if (res.setCookies.length === 0) problems.push(problem('ns.start.contract', 'no binding cookie was set (Set-Cookie missing)'));
    if (problems.length > 0) throw new SignerError(problems, res.exchange);
    const b = body as Record<string, unknown>;
    const decoded = decodeObject(b.request as string);
    const result: StartResult = {
      request: b.request as string,
      decoded: decoded.ok ? decoded.value : {},
      pollSecret: b.poll_secret as string,
      matchCode: b.match_code as string,
      cookies: res.setCookies.map((c) => c.split('=')[0]!.trim()),
      body: b,
      exchange: res.exchange,
    };
    if (typeof b.request_uri === 'string') result.requestUri = b.request_uri;
    return result;
  }

  /** POST {poll_secret} to the poll URI (ns.transport.poll-shape); never throws on a status. */
  async poll(pollUri: string, pollSecret: string, signal?: AbortSignal): Promise<PollResult> {
    const res = await this.http.post(pollUri, { poll_secret: pollSecret }, { headers: { accept: 'application/json' }, ...(signal ? { signal } : {}) });
    let body: unknown;
    try {
      body = res.json();
    } catch {
      body = res.text();
    }
    const out: PollResult = { httpStatus: res.status, body, exchange: res.exchange };
    const b = body as Record<string, unknown> | null;
    if (b && typeof b === 'object' && typeof b.status === 'string') out.status = b.status;
    if (b && typeof b === 'object' && typeof b.identity === 'string') out.identity = b.identity;
    return out;
  }

  /** Polls every `intervalMs` until the status is not `pending`/`approved`, or `timeoutMs` passes. */
  async pollUntil(pollUri: string, pollSecret: string, options: { intervalMs?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<PollResult> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    for (;;) {
      const r = await this.poll(pollUri, pollSecret, options.signal);
      if (r.httpStatus !== 200 || (r.status !== 'pending' && r.status !== 'approved') || Date.now() > deadline) return r;
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
      if (options.signal?.aborted) return r;
    }
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
