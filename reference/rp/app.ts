// The reference RP as an h3 app: composition of the handlers, the stores and the verifier.
// `createRpApp` builds it for a known origin; `startRp` listens (port 0 picks a free one, and the
// origin then defaults to the bound address) and returns `{origin, url, close()}`. The listener
// is node's HTTP server: the delivery route is served from node's request directly (no web
// streams, the hot path), every other request goes through the h3 app.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { H3 } from 'h3';
import { DEFAULT_SERVICE_NAME, profileFor, type Profile } from '../../protocol/common/profile.ts';
import { normalizeOrigin } from '../../protocol/common/url.ts';
import { createVerifier } from '../../protocol/signin/verifier.ts';
import { verifyEd25519Async } from '../../protocol/common/ed25519.ts';
import type { NonceStore } from '../../protocol/signin/nonce.ts';
import type { Resolver } from '../../protocol/signin/resolver.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { IN_MEMORY, type Db } from '../stores/sqlite.ts';
import { NetworkResolver } from '../resolve/network.ts';
import { DEFAULT_NAME, DEFAULT_SIGNER_URL, pathsFor, siteOf, type RpConfig, type RpContext } from './config.ts';
import { HttpError } from '../shared/errors.ts';
import { asset, errorFor, errorJson, errorReply, html } from '../shared/http.ts';
import { RP_BODY } from '../shared/body.ts';
import { RP_PATH } from '../shared/params.ts';
import { mountRoutes, type Mounted, type Route, type Surface } from '../shared/routes.ts';
import type { paths } from '../../schemas/ts/http/rp.ts';
import { createH3, listen, silent, type Log, type TlsFiles } from '../shared/server.ts';
import { cookieName, readCookies, serializeCookie } from '../shared/cookies.ts';
import { openRpDatabase } from './database.ts';
import { metadataHandler } from './metadata.ts';
import { loginPageHandler, START_BODY_MAX, startHandler } from './login.ts';
import { deliveryPreflight, deliveryReply } from './delivery.ts';
import { resumeHandler } from './resume.ts';
import { pollHandler } from './poll.ts';
import { contextHandler } from './context.ts';
import { referenceHandler } from './reference-link.ts';
import { homePage } from './pages/home-page.ts';
import { SCRIPT, STYLE } from './pages/assets.ts';
import { RP_SCRIPT, RP_STYLESHEET } from './pages/layout.ts';

export interface RpDeps {
  resolver?: Resolver;
  nonces?: NonceStore;
  now?: () => number;
  /** An already-open SQLite database (otherwise `<dataDir>/rp.sqlite`, or --database). */
  db?: Db;
  /** Log lines (default: none); internal errors come with level `error`. */
  log?: Log;
}

export interface RpApp {
  app: H3;
  /** The web-standard handler; tests may replace it to wrap the RP (the listener then uses only it). */
  fetch: (request: Request) => Promise<Response>;
  /** Serves a request from node's objects when it is the hot route; false to fall back to `fetch`. */
  serveNode: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The route table (test/reference/routes.test.ts ties it to the OpenAPI). */
  routes: Mounted['routes'];
  context: RpContext;
  close(): Promise<void>;
}

const INTERNAL = (detail: string) => new HttpError(500, 'internal_error', detail, 'ns.errors.internal');
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

export async function createRpApp(input: RpConfig, deps: RpDeps = {}): Promise<RpApp> {
  const origin = normalizeOrigin(input.origin);
  if (origin === undefined) throw new TypeError(`--origin ${input.origin} is not an origin (scheme://host[:port])`);
  const config: RpConfig = { ...input, origin };
  const profile: Profile = profileFor(config.serviceName);
  const now = deps.now ?? Date.now;
  const log = deps.log ?? silent;
  const database = await openRpDatabase({
    dataDir: config.dataDir,
    ...(config.database !== undefined ? { database: config.database } : {}),
    nonceStore: config.nonceStore,
    noncePrefix: `${profile.name}:${origin}`,
    now,
    ...(deps.db ? { db: deps.db } : {}),
    ...(deps.nonces ? { nonces: deps.nonces } : {}),
  });
  const resolver =
    deps.resolver ??
    new NetworkResolver({
      profile,
      ...(config.resolver?.dnsServer !== undefined ? { dnsServer: config.resolver.dnsServer } : {}),
      ...(config.resolver?.caFile !== undefined ? { caFile: config.resolver.caFile } : {}),
      ...(config.resolver?.timeoutMs !== undefined ? { timeoutMs: config.resolver.timeoutMs } : {}),
    });
  const paths = pathsFor(profile);
  const ctx: RpContext = {
    config,
    profile,
    paths,
    site: siteOf(config, paths),
    secure: origin.startsWith('https:'),
    transactions: database.transactions,
    sessions: database.sessions,
    verify: createVerifier({ profile, origin, resolver, nonces: database.nonces, now, verifySignature: verifyEd25519Async }),
    now,
    log,
  };
  const app = createH3(log, () => errorJson(INTERNAL('internal error')));
  const mounted = mountRoutes<paths>(app, rpSurface(ctx), rpRoutes(ctx));
  app.all('/**', () => errorJson(new HttpError(404, 'not_found', 'no such endpoint', 'ns.delivery.never-500')));

  const fetch = async (request: Request): Promise<Response> => app.fetch(request);
  const rpApp: RpApp = {
    app,
    fetch,
    // Only while `fetch` is the RP's own: a wrapped RP (tests) sees every request.
    serveNode: (req, res) => rpApp.fetch === fetch && mounted.serveNode(req, res),
    routes: mounted.routes,
    context: ctx,
    async close() {
      if (resolver instanceof NetworkResolver) await resolver.close();
      await database.close();
    },
  };
  return rpApp;
}

/** How the RP answers at the route layer: document 1's envelope, JSON unless a page route's request prefers HTML. */
function rpSurface(ctx: RpContext): Surface {
  return {
    body: RP_BODY,
    path: RP_PATH,
    log: ctx.log,
    error: (error, { req, page }) => (error instanceof HttpError ? (page && req ? errorFor(req, error, ctx.site) : errorReply(error)) : undefined),
    methodNotAllowed: (method, allow) => errorReply(new HttpError(405, 'method_not_allowed', `${method} is not allowed here`, 'ns.errors.method-not-allowed', { allow })),
    internal: () => errorReply(INTERNAL('internal error')),
  };
}

/** The RP's routes: the operations of spec/http/rp.openapi.yaml at the profile's paths, its home page and assets. */
function rpRoutes(ctx: RpContext): Array<Route<paths>> {
  const p = ctx.paths;
  const { config, profile } = ctx;
  const metadata = metadataHandler(ctx);
  const page = { page: true };
  return [
    { op: 'GET /.well-known/svc.json', at: p.metadata, auth: 'none', handle: () => metadata() },
    { op: 'GET /login', at: p.login, auth: 'none', errors: page, handle: (c) => loginPageHandler(ctx, c.req) },
    { op: 'POST /login', at: p.login, body: { max: START_BODY_MAX }, auth: 'none', handle: (c) => startHandler(ctx, c.req, c.body) },
    // The hot route: served from node's request by the listener (no web streams).
    {
      op: 'POST /svc/response',
      at: p.response,
      body: { max: limits.rp_delivery_body_max_bytes },
      auth: 'signed-body',
      errors: { cors: true },
      fast: true,
      handle: (c) => deliveryReply(ctx, c.target, c.body),
    },
    { op: 'OPTIONS /svc/response', at: p.response, auth: 'none', handle: () => deliveryPreflight() },
    { op: 'POST /svc/poll', at: p.poll, body: { max: limits.rp_poll_body_max_bytes }, auth: 'body-secret', handle: (c) => pollHandler(ctx, c.body) },
    { op: 'GET /svc/resume', at: p.resume, auth: 'cookie', errors: page, handle: (c) => resumeHandler(ctx, c.req) },
    { op: 'GET /svc/context', at: p.context, auth: 'none', handle: (c) => contextHandler(ctx, c.req) },
    { op: 'GET /r/{code}', at: `${p.reference}**`, auth: 'none', errors: page, handle: (c) => referenceHandler(ctx, c.req, c.event.url.pathname.slice(p.reference.length)) },
    {
      op: 'GET /',
      at: p.home,
      unlisted: "the RP's home page: who is signed in (a browser page, not an API)",
      auth: 'cookie',
      errors: page,
      handle: async (c) => html(homePage(config.name, await ctx.sessions.identity(readCookies(c.req).get(cookieName(profile.ids.rp_session_cookie, ctx.secure))))),
    },
    {
      op: 'POST /logout',
      unlisted: "the home page's sign-out form (a browser page, not an API)",
      auth: 'cookie',
      errors: page,
      handle: async (c) => {
        const name = cookieName(profile.ids.rp_session_cookie, ctx.secure);
        await ctx.sessions.end(readCookies(c.req).get(name));
        return new Response(null, { status: 303, headers: { location: p.home, 'set-cookie': serializeCookie(name, '', { secure: ctx.secure, maxAge: 0 }) } });
      },
    },
    { op: 'GET /assets/rp.js', at: RP_SCRIPT, unlisted: "the pages' script", auth: 'none', handle: () => asset(SCRIPT, JS) },
    { op: 'GET /assets/rp.css', at: RP_STYLESHEET, unlisted: "the pages' stylesheet", auth: 'none', handle: () => asset(STYLE, CSS) },
  ];
}

export interface StartRpOptions extends Partial<RpConfig> {
  port?: number;
  host?: string;
  /** Serve https with this certificate (the origin then defaults to https://<host>:<port>). */
  tls?: TlsFiles;
}

export interface RunningRp {
  /** The RP's origin (the audience of its requests). */
  origin: string;
  /** The bound address, e.g. http://127.0.0.1:41234. */
  url: string;
  app: RpApp;
  close(): Promise<void>;
}

/** Defaults for everything `svc-reference rp` can set. */
export function rpConfig(options: StartRpOptions, boundOrigin: string): RpConfig {
  const config: RpConfig = {
    origin: options.origin ?? boundOrigin,
    serviceName: options.serviceName ?? DEFAULT_SERVICE_NAME,
    name: options.name ?? DEFAULT_NAME,
    signerUrl: options.signerUrl ?? DEFAULT_SIGNER_URL,
    dataDir: options.dataDir ?? IN_MEMORY,
    nonceStore: options.nonceStore ?? 'sqlite',
    ...(options.database !== undefined ? { database: options.database } : {}),
    resumeTtlSeconds: options.resumeTtlSeconds ?? limits.resume_code_ttl_seconds,
    requestWindowSeconds: Math.min(options.requestWindowSeconds ?? limits.window_max_seconds, limits.window_max_seconds),
  };
  if (options.contactUri !== undefined) config.contactUri = options.contactUri;
  if (options.resolver !== undefined) config.resolver = options.resolver;
  return config;
}

/** Starts the RP listening on `host:port` (defaults 127.0.0.1 and 0, a free port). */
export async function startRp(options: StartRpOptions = {}, deps: RpDeps = {}): Promise<RunningRp> {
  let rp: RpApp | undefined;
  // The origin may depend on the bound port, so the listener comes first and hands every request
  // to the app once it exists.
  const listener = await listen({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    fetch: () => rp?.fetch,
    serveNode: (req, res) => rp?.serveNode(req, res) ?? false,
    log: deps.log ?? silent,
    internal: () => errorJson(INTERNAL('internal error')),
    ...(options.tls ? { tls: options.tls } : {}),
  });
  const closeServer = listener.close;
  const bound = listener.url;
  try {
    rp = await createRpApp(rpConfig(options, bound), deps);
  } catch (error) {
    await closeServer();
    throw error;
  }
  const app = rp;
  return {
    origin: app.context.config.origin,
    url: bound,
    app,
    async close() {
      await closeServer();
      await app.close();
    },
  };
}
