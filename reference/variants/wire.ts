// Wire variants: a reference server broken one way on the wire, for `npm run sensitivity`. A variant
// wraps the server's web handler and edits what one request brings in or what one answer carries
// out, so the request path's own code stays as it is and is read first. Each names the one rule it
// breaks. Enabled only for the harness's own tests: SVC_REFERENCE_ALLOW_BREAKAGE=1 and
// SVC_REFERENCE_WIRE=<suite>/<name> (child processes), or passed to the listener (in-process RP).
// The same variable names a dialect (dialect.ts): the reference in the project's earlier forms.
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

export const WIRE_ENV = 'SVC_REFERENCE_WIRE';
const ALLOW_ENV = 'SVC_REFERENCE_ALLOW_BREAKAGE';

/** The wire variant named in the environment, or undefined; a name without the allow flag is refused. */
export async function wireFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<Wire | undefined> {
  const name = env[WIRE_ENV];
  if (name === undefined || name === '') return undefined;
  if (env[ALLOW_ENV] !== '1') throw new Error(`${WIRE_ENV} is for the harness's own tests (set ${ALLOW_ENV}=1)`);
  const { WIRE_VARIANTS } = await import('./index.ts');
  const { DIALECTS } = await import('./dialect.ts');
  const wire = WIRE_VARIANTS[name]?.wire ?? DIALECTS[name];
  if (!wire) throw new Error(`unknown ${WIRE_ENV} ${name} (known: ${[...Object.keys(WIRE_VARIANTS), ...Object.keys(DIALECTS)].join(', ')})`);
  return wire;
}

/** The seams of the wire variant named in the environment (none without one). */
export async function seamsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<object> {
  if ((env[WIRE_ENV] ?? '') === '') return {};
  await wireFromEnv(env); // refuses a name without the allow flag, or an unknown one
  const { WIRE_VARIANTS } = await import('./index.ts');
  return WIRE_VARIANTS[env[WIRE_ENV]!]?.seams ?? {};
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
