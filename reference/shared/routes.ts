// The one route layer of the reference servers (RP, bridge, relay). A route is data: the OpenAPI
// operation it serves (`METHOD /path`, a key of the server's generated `paths`, so a typo fails
// tsc), its body cap, the authentication it needs, how its errors render, and whether the
// listener serves it from node's request directly (`fast`: the same handler, no web streams).
// The dispatcher answers 405 with an `Allow` generated from the routes (HEAD wherever GET is),
// reads every body with the one body reader under the route's cap, and renders every error
// through the server's surface: the envelope and statuses its document gives.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { H3, H3Event } from 'h3';
import { malformedError, readBody, type BodyRules } from './body.ts';
import { HttpError } from './errors.ts';
import { CORS_ANY, toResponse, writeReply, type Reply } from './http.ts';
import { pathParam, type PathRules } from './params.ts';
import { logInternal, type Log } from './server.ts';

export type Method = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'PATCH';
const METHODS: readonly Method[] = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'PATCH'];

/** `METHOD /path` of every operation the OpenAPI `paths` type `P` declares. */
export type OperationOf<P> = {
  [K in keyof P & string]: { [M in Method]: Lowercase<M> extends keyof P[K] ? (undefined extends P[K][Lowercase<M>] ? never : `${M} ${K}`) : never }[Method];
}[keyof P & string];

/** What a route needs of its caller before the handler acts (the handler checks it; the table says it). */
export type Auth =
  | 'none'
  /** A signed approval or envelope in the body (documents 1 and 3). */
  | 'signed-body'
  /** A signed request of the identity's owner or one of its sessions (document 3). */
  | 'signed-request'
  /** The browser's cookie (binding, session or console). */
  | 'cookie'
  /** An OAuth client's authentication (document 2, token side). */
  | 'client'
  /** A bearer token in Authorization: an access token (document 2, userinfo), a pairing claim token (document 3). */
  | 'bearer'
  /** A secret in the body that only the starting browser holds (the RP's poll secret, document 1). */
  | 'body-secret'
  /** A drive link: its id in the path is the capability (document 3). */
  | 'link'
  /** The test-only operator token. */
  | 'operator';

export interface BodySpec {
  /** The cap in bytes (from spec/limits): over it, 413 in the server's envelope. */
  max: number;
  /** Bytes never parsed as JSON (a drive chunk): not judged by their brackets. */
  binary?: boolean;
  /** A refused body (over the cap, unreadable, nested too deep, of another type) reaches the handler as `refused`: it answers its own error (OAuth's 400). */
  lenient?: boolean;
  /**
   * The media types it reads, as its OpenAPI requestBody lists them: a body declared as another
   * type (or as none) is refused as malformed, 400 in the server's envelope. Absent: any type, read
   * by its bytes (document 3 is silent, and the deployed client sends JSON with no Content-Type).
   */
  types?: readonly string[];
}

/** What a handler gets: the request, read once, whichever path it came by. */
export interface Call {
  method: string;
  /** Path and query as sent. */
  target: string;
  headers: Headers;
  /** The body under the route's cap (empty without a `body` declaration, or when a lenient route refused it). */
  body: Uint8Array;
  /** Why a lenient route's body was refused (the error the layer would have answered). */
  refused?: HttpError;
  /** A path parameter, percent-decoded by the one decoder (400 in the server's rule when malformed). */
  param(name: string): string;
  /** The client's address. */
  ip: string;
}

/** A call through the h3 app: the web Request and the event are there too. */
export interface WebCall extends Call {
  req: Request;
  event: H3Event;
}

interface RouteBase<Op extends string> {
  /** The OpenAPI operation, `METHOD /path` as the spec writes it (the `svc` profile). */
  op: Op;
  /** The path served when it is not the operation's (profile-derived, or an h3 wildcard). */
  at?: string;
  body?: BodySpec;
  auth: Auth;
  /** `page`: errors answer HTML unless the request prefers JSON; `cors`: errors carry `Access-Control-Allow-Origin: *`. */
  errors?: { page?: boolean; cors?: boolean };
}

/** A route served through the h3 app. */
export interface WebRoute<Op extends string> extends RouteBase<Op> {
  fast?: false;
  handle(call: WebCall): Response | Promise<Response>;
}

/** A hot route, served from node's request when the listener can (no web streams) and through the app otherwise: one handler for both. */
export interface FastRoute<Op extends string> extends RouteBase<Op> {
  fast: true;
  handle(call: Call): Reply | Promise<Reply>;
}

/** A route of an operation the OpenAPI does not list: it says why (test-only, operator, pages, assets). */
export type Unlisted = { unlisted: string; op: `${Method} /${string}` };

export type Route<P> = ((WebRoute<OperationOf<P>> | FastRoute<OperationOf<P>>) & { unlisted?: never }) | ((WebRoute<Unlisted['op']> | FastRoute<Unlisted['op']>) & Unlisted);

/** How a server answers: its body and path rules, its error envelope, its 405 and its 500. */
export interface Surface {
  body: BodyRules;
  path: PathRules;
  log: Log;
  /** The answer to an error a handler threw, or undefined when it is a bug (then 500). */
  error(error: unknown, how: { req: Request | undefined; page: boolean }): Reply | Response | undefined;
  methodNotAllowed(method: string, allow: string): Reply;
  internal(): Reply;
  /** Called with every answer's status and time (the bridge's /metrics). */
  observe?(path: string, status: number, seconds: number): void;
}

/** The served path of a route: `at`, else the operation's path with `{name}` as `:name`. */
export function servedPath(route: { op: string; at?: string }): string {
  return route.at ?? route.op.slice(route.op.indexOf(' ') + 1).replace(/\{([^}]+)\}/g, ':$1');
}

export const methodOf = (route: { op: string }): Method => route.op.slice(0, route.op.indexOf(' ')) as Method;

/** The Allow header of a path's methods: HEAD wherever GET is. */
export function allowOf(methods: readonly string[]): string {
  const all: string[] = METHODS.filter((m) => methods.includes(m));
  if (all.includes('GET')) all.splice(1, 0, 'HEAD');
  return all.join(', ');
}

/** The media type a request declares, without parameters, lower case ('' when none). */
function declaredType(req: Request | IncomingMessage): string {
  const raw = typeof (req as Request).headers.get === 'function' ? (req as Request).headers.get('content-type') : (req as IncomingMessage).headers['content-type'];
  return (raw ?? '').split(';')[0]!.trim().toLowerCase();
}

async function replyOf(res: Response): Promise<Reply> {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  return { status: res.status, headers, body: await res.text() };
}

const asResponse = (a: Reply | Response): Response => (a instanceof Response ? a : toResponse(a));

/** What a route table says of each route, for the test that ties it to the OpenAPI. */
export interface RouteInfo {
  op: string;
  path: string;
  auth: Auth;
  /** The media types its body may have (none: any). */
  types?: readonly string[];
  unlisted?: string;
}

export interface Mounted {
  /** Every route mounted, in order. */
  routes: readonly RouteInfo[];
  /** Serves a fast route from node's request; false when the request is for another route. */
  serveNode(req: IncomingMessage, res: ServerResponse): boolean;
}

/** Mounts `routes` on `app` (one h3 route per served path, in the order given). */
export function mountRoutes<P>(app: H3, surface: Surface, routes: ReadonlyArray<Route<P>>): Mounted {
  type AnyRoute = WebRoute<string> | FastRoute<string>;
  const byPath = new Map<string, Map<string, AnyRoute>>();
  for (const route of routes as ReadonlyArray<AnyRoute>) {
    const path = servedPath(route);
    const methods = byPath.get(path) ?? new Map<string, AnyRoute>();
    if (methods.has(methodOf(route))) throw new TypeError(`two routes for ${route.op}`);
    methods.set(methodOf(route), route);
    byPath.set(path, methods);
  }

  const failed = (route: AnyRoute | undefined, error: unknown, req: Request | undefined, where: string): Reply | Response => {
    const e = route?.errors?.cors && error instanceof HttpError ? error.withHeaders({ ...error.headers, ...CORS_ANY }) : error;
    const answer = surface.error(e, { req, page: route?.errors?.page === true });
    if (answer) return answer;
    logInternal(surface.log, where, error);
    return surface.internal();
  };

  const bodyOf = async (route: AnyRoute, req: Request | IncomingMessage): Promise<Pick<Call, 'body' | 'refused'>> => {
    if (!route.body) return { body: new Uint8Array(0) };
    const { types } = route.body;
    const read = readBody(req, route.body.max, surface.body, route.body.binary === true).then((body) => {
      if (types && !types.includes(declaredType(req))) throw malformedError(surface.body, `the body must be ${types.join(' or ')}`);
      return { body };
    });
    if (!route.body.lenient) return read;
    return read.catch((error: unknown) => {
      if (error instanceof HttpError) return { body: new Uint8Array(0), refused: error };
      throw error;
    });
  };

  for (const [path, methods] of byPath) {
    const allow = allowOf([...methods.keys()]);
    app.all(path, async (event: H3Event): Promise<Response> => {
      const started = performance.now();
      const req = event.req as Request;
      const route = methods.get(req.method === 'HEAD' ? 'GET' : req.method);
      let res: Response;
      if (!route) res = toResponse(surface.methodNotAllowed(req.method, allow));
      else {
        try {
          const u = event.url;
          const call: WebCall = {
            method: req.method,
            target: `${u.pathname}${u.search}`,
            headers: req.headers,
            ...(await bodyOf(route, req)),
            param: (name) => pathParam(event, name, surface.path),
            ip: (req as unknown as { ip?: string }).ip ?? (event.runtime?.node?.req as IncomingMessage | undefined)?.socket?.remoteAddress ?? 'unknown',
            req,
            event,
          };
          res = asResponse(await route.handle(call));
        } catch (error) {
          res = asResponse(failed(route, error, req, `${req.method} ${path}`));
        }
      }
      surface.observe?.(path, res.status, (performance.now() - started) / 1000);
      return res;
    });
  }

  // Fast routes by `METHOD path`: the listener matches the exact path (a query string is allowed).
  const fast = new Map<string, FastRoute<string>>();
  for (const [path, methods] of byPath) for (const [method, route] of methods) if (route.fast) fast.set(`${method} ${path}`, route);

  return {
    routes: (routes as ReadonlyArray<AnyRoute & { unlisted?: string }>).map((r) => ({
      op: r.op,
      path: servedPath(r),
      auth: r.auth,
      ...(r.body?.types ? { types: r.body.types } : {}),
      ...(r.unlisted !== undefined ? { unlisted: r.unlisted } : {}),
    })),
    serveNode(req, res) {
      if (fast.size === 0) return false;
      const target = req.url ?? '';
      const q = target.indexOf('?');
      const path = q === -1 ? target : target.slice(0, q);
      const route = fast.get(`${req.method} ${path}`);
      if (!route) return false;
      const started = performance.now();
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const answered = bodyOf(route, req).then((read) => route.handle({ method: req.method ?? 'POST', target, headers, ...read, param: () => '', ip: req.socket.remoteAddress ?? 'unknown' }));
      answered
        .catch((error: unknown) => failed(route, error, undefined, `${req.method} ${path}`))
        .then(async (answer) => {
          const reply = answer instanceof Response ? await replyOf(answer) : answer;
          writeReply(res, reply);
          surface.observe?.(path, reply.status, (performance.now() - started) / 1000);
        })
        .catch((error: unknown) => logInternal(surface.log, `${req.method} ${path}`, error));
      return true;
    },
  };
}
