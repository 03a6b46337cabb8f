// What every wire variant is made of: the variant's shape and the helpers that match a request and
// edit what goes in or comes out. A leaf: the variant modules (rp.ts, relay.ts, ...) import it, and
// index.ts imports them, so none of them imports wire.ts, which looks variants up through index.ts.
import type { RuleId } from '../../schemas/ts/rules.ts';

export type Next = (request: Request) => Promise<Response>;
export type Wire = (request: Request, next: Next) => Promise<Response>;

export interface WireVariant {
  /** The one rule the variant breaks. */
  rule: RuleId;
  /** Rules that restate the same requirement (a limit restating a rule): proven by the same variant. */
  restates?: RuleId[];
  /** What it does, in a line. */
  what: string;
  wire: Wire;
  /** Decisions of the server it replaces where the wire cannot reach (the bridge's BridgeSeams). */
  seams?: object;
}

/** A variant that leaves the wire as it is (it replaces seams only). */
export const untouched: Wire = (req, next) => next(req);

type Match = (request: Request, url: URL) => boolean;

/** Requests to `path` (exact, or a prefix ending in "/"), with `method` when given. */
export function at(path: string | ((profilePath: URL) => boolean), method?: string): Match {
  return (req, url) => (method === undefined || req.method === method) && (typeof path === 'function' ? path(url) : path.endsWith('/') ? url.pathname.startsWith(path) : url.pathname === path);
}

/** A copy of `res` with another body (content-length dropped, the rest of the headers kept). */
export function withBody(res: Response, body: BodyInit | null, status = res.status): Response {
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  return new Response(body, { status, headers });
}

/** Edits the JSON answer of matching requests (`edit` returns the new value, or mutates it). */
export function editJson(match: Match, edit: (body: Record<string, unknown>, res: Response, req: Request) => unknown, statuses?: readonly number[]): Wire {
  return async (req, next) => {
    const res = await next(req);
    if (!match(req, new URL(req.url)) || (statuses && !statuses.includes(res.status)) || !(res.headers.get('content-type') ?? '').includes('json')) return res;
    const body = (await res.json()) as Record<string, unknown>;
    const edited = edit(body, res, req);
    return withBody(res, JSON.stringify(edited === undefined ? body : edited));
  };
}

/** Edits the headers of matching answers. */
export function editHeaders(match: Match, edit: (headers: Headers, res: Response) => void): Wire {
  return async (req, next) => {
    const res = await next(req);
    if (!match(req, new URL(req.url))) return res;
    const headers = new Headers(res.headers);
    edit(headers, res);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  };
}

/** Answers matching requests with `answer` instead of the server (which never sees them). */
export function answer(match: Match, make: (req: Request, next: Next) => Response | Promise<Response>): Wire {
  return (req, next) => (match(req, new URL(req.url)) ? Promise.resolve(make(req, next)) : next(req));
}

/** Edits matching requests before the server sees them. */
export function editRequest(match: Match, edit: (req: Request, url: URL) => Request | Promise<Request>): Wire {
  return async (req, next) => (match(req, new URL(req.url)) ? next(await edit(req, new URL(req.url))) : next(req));
}

/** A JSON answer. */
export const jsonAnswer = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } });

/** Both edits: `outer` sees what `inner` answers. */
export const both =
  (outer: Wire, inner: Wire): Wire =>
  (req, next) =>
    outer(req, (r) => inner(r, next));

/** The request with its body read once, a copy to pass on, and the body parsed when it is a JSON object. */
export async function buffered(req: Request): Promise<{ req: Request; body: Record<string, unknown>; text: string }> {
  const text = req.method === 'GET' || req.method === 'HEAD' ? '' : await req.text();
  const copy = new Request(req.url, { method: req.method, headers: req.headers, ...(text === '' ? {} : { body: text }) });
  let body: Record<string, unknown> = {};
  try {
    const v = JSON.parse(text) as unknown;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) body = v as Record<string, unknown>;
  } catch {
    // not JSON: nothing to read
  }
  return { req: copy, body, text };
}
