// The reference RP as an h3 app: composition of the handlers, the stores and the verifier.
// `createRpApp` builds it for a known origin; `startRp` listens (port 0 picks a free one, and the
// origin then defaults to the bound address) and returns `{origin, url, close()}`. The listener
// is node's HTTP server: the delivery route is served from node's request directly (no web
// streams, the hot path), every other request goes through the h3 app.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { H3, H3Event } from 'h3';
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
import { asset, errorFor, errorJson, html } from '../shared/http.ts';
import { createH3, listen, logInternal, silent, type Log, type TlsFiles } from '../shared/server.ts';
import { cookieName, readCookies, serializeCookie } from '../shared/cookies.ts';
import { openRpDatabase } from './database.ts';
import { metadataHandler } from './metadata.ts';
import { loginPageHandler, startHandler } from './login.ts';
import { deliveryHandler, deliveryNode, deliveryPreflight } from './delivery.ts';
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
  context: RpContext;
  close(): Promise<void>;
}

type Handler = (req: Request, event: H3Event) => Response | Promise<Response>;

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
  const p = ctx.paths;

  const app = createH3(log, () => errorJson(INTERNAL('internal error')));

  /**
   * One path, its methods; HEAD follows GET; another method is 405 with Allow. Errors of the
   * methods in `pages` answer HTML unless the request prefers JSON; all others answer JSON.
   */
  function route(path: string, methods: Record<string, Handler>, pages: readonly string[] = []) {
    const allow = Object.keys(methods);
    if (allow.includes('GET')) allow.push('HEAD');
    const dispatch = async (event: H3Event): Promise<Response> => {
      const req = event.req as Request;
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      const handler = methods[method];
      try {
        if (!handler) throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here`, 'ns.errors.method-not-allowed', { allow: allow.join(', ') });
        return await handler(req, event);
      } catch (error) {
        if (error instanceof HttpError) return pages.includes(method) ? errorFor(req, error, ctx.site) : errorJson(error);
        logInternal(log, `${req.method} ${path}`, error);
        return errorJson(INTERNAL('internal error'));
      }
    };
    app.all(path, dispatch);
  }

  const metadata = metadataHandler(ctx);
  route(p.metadata, { GET: () => metadata() });
  route(p.login, { GET: (req) => loginPageHandler(ctx, req), POST: (req) => startHandler(ctx, req) }, ['GET']);
  route(p.response, { POST: (req) => deliveryHandler(ctx, req), OPTIONS: () => deliveryPreflight() });
  route(p.poll, { POST: (req) => pollHandler(ctx, req) });
  route(p.resume, { GET: (req) => resumeHandler(ctx, req) }, ['GET']);
  route(p.context, { GET: (req) => contextHandler(ctx, req) });
  route(`${p.reference}**`, { GET: (req, event) => referenceHandler(ctx, req, event.url.pathname.slice(p.reference.length)) }, ['GET']);
  route(
    p.home,
    {
      GET: async (req) => html(homePage(config.name, await ctx.sessions.identity(readCookies(req).get(cookieName(profile.ids.rp_session_cookie, ctx.secure))))),
    },
    ['GET'],
  );
  route(
    '/logout',
    {
      POST: async (req) => {
        const name = cookieName(profile.ids.rp_session_cookie, ctx.secure);
        await ctx.sessions.end(readCookies(req).get(name));
        return new Response(null, { status: 303, headers: { location: p.home, 'set-cookie': serializeCookie(name, '', { secure: ctx.secure, maxAge: 0 }) } });
      },
    },
    ['POST'],
  );
  route(RP_SCRIPT, { GET: () => asset(SCRIPT, JS) });
  route(RP_STYLESHEET, { GET: () => asset(STYLE, CSS) });
  app.all('/**', () => errorJson(new HttpError(404, 'not_found', 'no such endpoint', 'ns.delivery.never-500')));

  const fetch = async (request: Request): Promise<Response> => app.fetch(request);
  const rpApp: RpApp = {
    app,
    fetch,
    // Only while `fetch` is the RP's own: a wrapped RP (tests) sees every request.
    serveNode: (req, res) => {
      if (rpApp.fetch !== fetch || req.method !== 'POST') return false;
      const u = req.url ?? '';
      if (!u.startsWith(p.response) || (u.length !== p.response.length && u[p.response.length] !== '?')) return false;
      deliveryNode(ctx, req, res);
      return true;
    },
    context: ctx,
    async close() {
      if (resolver instanceof NetworkResolver) await resolver.close();
      await database.close();
    },
  };
  return rpApp;
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
