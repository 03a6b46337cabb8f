// The reference bridge as an h3 app: the stores, keys, client registry and native verifier, and
// one route per endpoint of document 2. `startBridge` listens (port 0 picks a free one; the
// issuer then defaults to the bound address) and returns `{issuer, url, close()}`.
import type { IncomingMessage, Server } from 'node:http';
import { profileFor } from '../../protocol/common/profile.ts';
import { createVerifier } from '../../protocol/signin/verifier.ts';
import type { Resolver } from '../../protocol/signin/resolver.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { openDatabase, type Db } from '../stores/sqlite.ts';
import { openNonceStore } from '../stores/index.ts';
import { SqliteSql, type Sql } from '../stores/sql.ts';
import { PostgresNonceStore, PostgresSql } from '../stores/postgres.ts';
import { DEFAULT_RESOLVER_TIMEOUT_MS, NetworkResolver } from '../resolve/network.ts';
import { ProfileReader } from './profiles.ts';
import { VISITOR_SCRIPT, VISITOR_SCRIPT_PATH } from './visitor.ts';
import { IpWindows } from './rate-limits.ts';

import { asset, errorFor, errorReply, html, json, prefersJson, utf8Text } from '../shared/http.ts';
import { BRIDGE_BODY } from '../shared/body.ts';
import { BRIDGE_PATH, decodePathParam } from '../shared/params.ts';
import { mountRoutes, servedPath, type Mounted, type OperationOf, type Route, type Surface, type WebCall, type WebRoute } from '../shared/routes.ts';
import { createH3, listen, silent, type Log, type TlsFiles } from '../shared/server.ts';
import { HttpError } from '../shared/errors.ts';
import { serializeCookie } from '../shared/cookies.ts';
import { hashSecret, sameHash } from '../shared/secrets.ts';
import { BridgeStore } from './store.ts';
import { SigningKeys, ALG } from './keys.ts';
import { ClientRegistry, loadStaticClients } from './clients.ts';
import { UrlClients } from './url-clients.ts';
import { BRIDGE_STYLESHEET, PATHS, type BridgeConfig, type BridgeContext } from './context.ts';
import { REFERENCE_SEAMS, type BridgeSeams } from './seams.ts';
import { seamsFromEnv } from '../variants/wire.ts';
import {
  authorizeHandler,
  consentHandler,
  creatingHandler,
  currentSession,
  grantableScopes,
  identifyHandler,
  pushHandler,
  resumeHandler,
  retryHandler,
  sessionCookieName,
  transactionHandler,
} from './flow.ts';
import { callbackHandler, callbackPreflight, contextHandler, metadataHandler, referenceHandler } from './native.ts';
import { introspectHandler, revokeHandler, TOKEN_FORM, tokenRoute, userinfoHandler } from './token.ts';
import { accountPage, messagePage, STYLE } from './pages.ts';
import { Metrics } from './metrics.ts';
import { Console, consoleClient, registryClient } from './console.ts';
import { OAuthError, oauthJson, oauthReply, pageError, redirect } from './responses.ts';
import type { components, paths } from '../../schemas/ts/http/bridge.ts';

const SWEEP_INTERVAL_MS = 3_600_000;
const INTERNAL = () => oauthJson({ error: 'server_error', error_description: 'internal error' }, 500);

export interface BridgeDeps {
  resolver?: Resolver;
  now?: () => number;
  db?: Db;
  /** Log lines (default: none); internal errors come with level `error`. */
  log?: Log;
}

/** ob.discovery.fields (project decision) with the document's rules in it. */
function discovery(ctx: BridgeContext): components['schemas']['Discovery'] {
  const i = ctx.config.issuer;
  if (ctx.config.documentOnly) {
    // Only what the document implies: the endpoints it names, code, RS256.
    return {
      issuer: i,
      authorization_endpoint: `${i}${PATHS.authorize}`,
      token_endpoint: `${i}${PATHS.token}`,
      jwks_uri: `${i}${PATHS.jwks}`,
      response_types_supported: ['code'],
      id_token_signing_alg_values_supported: [ALG],
    };
  }
  return {
    issuer: i,
    authorization_endpoint: `${i}${PATHS.authorize}`,
    token_endpoint: `${i}${PATHS.token}`,
    userinfo_endpoint: `${i}${PATHS.userinfo}`,
    jwks_uri: `${i}${PATHS.jwks}`,
    revocation_endpoint: `${i}${PATHS.revoke}`,
    introspection_endpoint: `${i}${PATHS.introspect}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    subject_types_supported: [ctx.config.subjectType],
    id_token_signing_alg_values_supported: [ALG],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    scopes_supported: grantableScopes(ctx),
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'amr', ctx.profile.ids.id_claim, ctx.profile.ids.key_fingerprint_claim, ctx.profile.ids.id_url_claim, 'profile'],
    prompt_values_supported: ['none', 'login', 'consent'],
    authorization_response_iss_parameter_supported: true,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

export interface BridgeApp {
  fetch: (request: Request) => Promise<Response>;
  /** Serves a hot route (`fast` in the table) from node's request; false to fall back to `fetch`. */
  serveNode: Mounted['serveNode'];
  /** The route table (test/reference/routes.test.ts ties it to the OpenAPI). */
  routes: Mounted['routes'];
  context: BridgeContext;
  close(): Promise<void>;
}

export async function createBridgeApp(config: BridgeConfig, deps: BridgeDeps = {}): Promise<BridgeApp> {
  const profile = profileFor(config.serviceName);
  const now = deps.now ?? Date.now;
  const log = deps.log ?? silent;
  // The database: SQLite under --data-dir, or PostgreSQL (--database postgres://...) shared by
  // several instances, whose nonces then live there too unless another store is named.
  const postgres = config.database !== undefined && /^postgres(ql)?:\/\//.test(config.database);
  if (postgres && config.nonceStore === 'memory')
    throw new TypeError('with --database postgres://, use the PostgreSQL nonce store (the default, sqlite) or --nonce-store redis://: instances must share their nonces');
  const db = postgres ? undefined : (deps.db ?? openDatabase(config.dataDir, 'bridge.sqlite'));
  const sql: Sql = postgres ? new PostgresSql(config.database!) : new SqliteSql(db!, deps.db === undefined);
  const store = await BridgeStore.open(sql, now);
  const opened =
    postgres && config.nonceStore === 'sqlite'
      ? { store: new PostgresNonceStore(sql, now), close: async () => undefined }
      : openNonceStore(config.nonceStore, { db: db!, prefix: `${profile.name}:${config.issuer}`, now, onError: () => undefined });
  const resolver =
    deps.resolver ??
    new NetworkResolver({
      profile,
      ...(config.resolver?.dnsServer !== undefined ? { dnsServer: config.resolver.dnsServer } : {}),
      ...(config.resolver?.caFile !== undefined ? { caFile: config.resolver.caFile } : {}),
      ...(config.resolver?.timeoutMs !== undefined ? { timeoutMs: config.resolver.timeoutMs } : {}),
    });
  const metrics = new Metrics();
  store.onAudit = (name) => metrics.audit(name);
  const seams: BridgeSeams = { ...REFERENCE_SEAMS, ...config.seams, ...((await seamsFromEnv()) as Partial<BridgeSeams>) };
  const keys = new SigningKeys(store, now, seams);
  await keys.ensure();
  // URL client documents and console clients' linked key sets, under document 2's fetch rules.
  const urlClients = new UrlClients({
    ...(config.resolver?.dnsServer !== undefined ? { dnsServer: config.resolver.dnsServer } : {}),
    ...(config.resolver?.caFile !== undefined ? { caFile: config.resolver.caFile } : {}),
    publicAddresses: config.urlClientTestAddresses ?? [],
    breakage: config.breakage,
    now,
  });
  const clients = new ClientRegistry([consoleClient({ config }), ...(config.staticClientsFile ? loadStaticClients(config.staticClientsFile) : [])], urlClients, config.urlClients !== 'off');
  // Console clients and operator suspensions reach every instance within a second.
  const refreshClients = async () => {
    try {
      clients.setSuspended(await store.suspendedClients());
      clients.setRegistered((await store.registeredClients()).map((c) => registryClient(c, now())));
    } catch {
      // The database is unreachable: keep the last view; /health reports it.
    }
  };
  await refreshClients();
  const suspensions = setInterval(() => void refreshClients(), 1000);
  suspensions.unref();
  // Retention (ob.retention): expired records and old audit events go, hourly (any instance may).
  const sweeper = setInterval(() => void store.sweep().catch(() => undefined), SWEEP_INTERVAL_MS);
  sweeper.unref();
  const profiles = new ProfileReader({
    profile,
    timeoutMs: config.resolver?.timeoutMs ?? DEFAULT_RESOLVER_TIMEOUT_MS,
    ...(config.resolver?.dnsServer !== undefined ? { dnsServer: config.resolver.dnsServer } : {}),
    ...(config.resolver?.caFile !== undefined ? { caFile: config.resolver.caFile } : {}),
  });
  const ctx: BridgeContext = {
    config,
    profile,
    site: { name: config.name, stylesheet: BRIDGE_STYLESHEET, retry: { href: PATHS.account, label: 'Your account' } },
    secure: config.issuer.startsWith('https:'),
    store,
    keys,
    clients,
    verify: seams.nativeVerifier(createVerifier({ profile, origin: config.issuer, resolver, nonces: opened.store, now }), resolver, profile),
    resolver,
    profiles,
    nonces: opened.store,
    pairwiseSecret: await store.pairwiseSecret(),
    metrics,
    seams,
    now,
    log,
  };

  const app = createH3(log, INTERNAL);
  const mounted = mountRoutes<paths>(app, bridgeSurface(ctx), [...protocolRoutes(ctx), ...pageRoutes(ctx, refreshClients)]);
  app.all('/**', () => oauthJson({ error: 'not_found', error_description: 'no such endpoint' }, 404));

  return {
    fetch: async (request: Request) => app.fetch(request),
    serveNode: mounted.serveNode,
    routes: mounted.routes,
    context: ctx,
    async close() {
      clearInterval(suspensions);
      clearInterval(sweeper);
      await opened.close();
      if (resolver instanceof NetworkResolver) await resolver.close();
      await urlClients.close();
      await profiles.close();
      await sql.close();
    },
  };
}

type BridgeRoute = Route<paths>;

/** A page's form, under its cap. */
const FORM = { max: limits.bridge_form_body_max_bytes };

/** How the bridge answers at the route layer: OAuth errors in their JSON, other refusals as a page unless JSON is asked for, timings in /metrics. */
function bridgeSurface(ctx: BridgeContext): Surface {
  return {
    body: BRIDGE_BODY,
    path: BRIDGE_PATH,
    log: ctx.log,
    error: (error, { req }) => {
      if (error instanceof OAuthError) return error.reply(ctx.config.documentOnly);
      // A refused body or path (413, 400): JSON when asked for, else the error page.
      if (error instanceof HttpError) return req ? errorFor(req, error, ctx.site) : errorReply(error);
      return undefined;
    },
    methodNotAllowed: (method, allow) => oauthReply({ error: 'invalid_request', error_description: `${method} is not allowed here` }, 405, { allow }),
    internal: () => oauthReply({ error: 'server_error', error_description: 'internal error' }, 500),
    observe: (path, status, seconds) => ctx.metrics.request(path, status, seconds),
  };
}

/** A route behind a per-IP limit: beyond it, 429 with Retry-After (a page for browsers), counted in /metrics. */
function limiter(ctx: BridgeContext): (route: WebRoute<OperationOf<paths>>, perMinute: number) => BridgeRoute {
  const windows = new IpWindows(ctx.now);
  return (route, perMinute) => {
    const path = servedPath(route);
    return {
      ...route,
      handle: (c) => {
        const wait = windows.take(path, (c.event.runtime?.node?.req as IncomingMessage | undefined)?.socket?.remoteAddress ?? 'unknown', perMinute);
        if (wait === undefined) return route.handle(c);
        ctx.metrics.rateLimited(path);
        const detail = `too many requests from this address: try again in ${wait} s`;
        const res = prefersJson(c.req)
          ? oauthJson({ error: 'rate_limit_exceeded', error_description: detail, rule: 'ob.errors.rate-limited' }, 429)
          : pageError(ctx, 429, detail, 'ob.errors.rate-limited');
        res.headers.set('retry-after', String(wait));
        return res;
      },
    };
  };
}

/** Discovery, keys, the OAuth endpoints, the native sign-in endpoints and the transaction pages. */
function protocolRoutes(ctx: BridgeContext): BridgeRoute[] {
  const { config, keys, profile } = ctx;
  const limited = limiter(ctx);
  const disco = () => json(discovery(ctx), 200, { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' });
  const id = (c: WebCall) => c.param('id');
  return [
    { op: 'GET /.well-known/openid-configuration', auth: 'none', handle: disco },
    { op: 'GET /.well-known/oauth-authorization-server', auth: 'none', handle: disco },
    { op: 'GET /jwks.json', auth: 'none', handle: async () => json(await keys.jwks(), 200, { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' }) },
    limited({ op: 'GET /authorize', auth: 'none', handle: (c) => authorizeHandler(ctx, c.req) }, config.rateLimits.authorizePerMinute),
    // The hot route: served from node's request by the listener (no web streams).
    { op: 'POST /token', body: TOKEN_FORM, auth: 'client', fast: true, handle: (c) => tokenRoute(ctx, c) },
    { op: 'GET /userinfo', auth: 'bearer', handle: (c) => userinfoHandler(ctx, c.req) },
    { op: 'POST /userinfo', unlisted: 'userinfo by POST, which OpenID Connect Core 5.3 allows beside GET', auth: 'bearer', handle: (c) => userinfoHandler(ctx, c.req) },
    { op: 'POST /revoke', body: TOKEN_FORM, auth: 'client', handle: (c) => revokeHandler(ctx, c) },
    { op: 'POST /introspect', body: TOKEN_FORM, auth: 'client', handle: (c) => introspectHandler(ctx, c) },
    { op: 'GET /.well-known/svc.json', at: profile.ids.metadata_path, auth: 'none', handle: () => metadataHandler(ctx) },
    { op: 'POST /svc/callback', at: profile.ids.callback_path, auth: 'signed-body', handle: (c) => callbackHandler(ctx, c.req) },
    { op: 'OPTIONS /svc/callback', at: profile.ids.callback_path, unlisted: "the CORS preflight of a web signer's delivery", auth: 'none', handle: () => callbackPreflight() },
    { op: 'GET /svc/resume', at: profile.ids.resume_path, auth: 'cookie', handle: (c) => resumeHandler(ctx, c.req) },
    { op: 'GET /svc/context', at: profile.ids.context_path, auth: 'none', handle: (c) => contextHandler(ctx, c.req) },
    { op: 'GET /r/{code}', at: `${PATHS.reference}**`, auth: 'none', handle: (c) => referenceHandler(ctx, c.req, decodePathParam(c.event.url.pathname.slice(PATHS.reference.length), BRIDGE_PATH)) },
    { op: 'GET /t/{id}', auth: 'cookie', handle: (c) => transactionHandler(ctx, c.req, id(c)) },
    { op: 'GET /t/{id}/status', auth: 'cookie', handle: (c) => transactionHandler(ctx, c.req, id(c)) },
    limited({ op: 'POST /t/{id}/identify', body: FORM, auth: 'cookie', handle: (c) => identifyHandler(ctx, c.req, id(c), c.body) }, config.rateLimits.identifyPerMinute),
    { op: 'POST /t/{id}/retry', auth: 'cookie', handle: (c) => retryHandler(ctx, c.req, id(c)) },
    { op: 'POST /t/{id}/push', auth: 'cookie', handle: (c) => pushHandler(ctx, c.req, id(c)) },
    { op: 'POST /t/{id}/creating', auth: 'cookie', handle: (c) => creatingHandler(ctx, c.req, id(c)) },
    { op: 'POST /t/{id}/consent', body: FORM, auth: 'cookie', handle: (c) => consentHandler(ctx, c.req, id(c), c.body) },
  ];
}

const page = (ctx: BridgeContext, title: string, text: string) => () => html(messagePage(ctx, title, text));

/** The account, the developer console, health, the static pages and the test-only operator hooks. */
function pageRoutes(ctx: BridgeContext, refreshClients: () => Promise<void>): BridgeRoute[] {
  const { config, store, clients, keys } = ctx;
  const console_ = new Console(ctx, refreshClients);
  const routes: BridgeRoute[] = [
    { op: 'GET /login', auth: 'none', handle: page(ctx, 'Sign in', `${config.name} signs you in to applications: start from the application you want to use.`) },
    {
      op: 'GET /account',
      auth: 'cookie',
      handle: async (c) => {
        const s = await currentSession(ctx, c.req);
        const apps = s ? (await store.consents(s.identity)).map((r) => ({ client: r.clientId, name: clients.get(r.clientId)?.name ?? r.clientId, claims: r.claims, lastUse: r.lastUse })) : [];
        const signins = s ? (await store.recentSignins(s.identity)).map((r) => ({ at: r.at, client: clients.get(r.clientId)?.name ?? r.clientId, delegated: r.delegated, browser: r.browser })) : [];
        return html(accountPage(ctx, s?.identity, apps, signins));
      },
    },
    {
      op: 'POST /account/revoke',
      unlisted: "the account page's form: revoke an application's consent",
      body: FORM,
      auth: 'cookie',
      handle: async (c) => {
        const s = await currentSession(ctx, c.req);
        if (!s) return pageError(ctx, 401, 'you are not signed in', 'ob.consent.record');
        const clientId = new URLSearchParams(utf8Text(c.body) ?? '').get('client_id');
        if (clientId) {
          await store.revokeConsent(s.identity, clientId);
          await store.audit('consent.revoked', s.identity, { client_id: clientId });
        }
        return redirect(PATHS.account);
      },
    },
    {
      op: 'POST /account/logout',
      unlisted: "the account page's sign-out form",
      auth: 'cookie',
      handle: async (c) => {
        const s = await currentSession(ctx, c.req);
        if (s) await store.endSession(s.hash);
        return redirect(PATHS.account, { 'set-cookie': serializeCookie(sessionCookieName(ctx), '', { secure: ctx.secure, maxAge: 0 }) });
      },
    },
    { op: 'GET /developers', auth: 'cookie', handle: (c) => console_.page(c.req) },
    { op: 'POST /developers/clients', unlisted: "the developer console's form: register a client", body: FORM, auth: 'cookie', handle: (c) => console_.create(c.req, c.body) },
    {
      op: 'POST /developers/clients/{id}/{op}',
      unlisted: "the developer console's forms: change a client",
      body: FORM,
      auth: 'cookie',
      handle: (c) => {
        const [id, op] = c.event.url.pathname.slice(`${PATHS.developers}/clients/`.length).split('/');
        return console_.change(c.req, decodePathParam(id ?? '', BRIDGE_PATH), decodePathParam(op ?? '', BRIDGE_PATH), c.body);
      },
    },
    {
      op: 'GET /health',
      auth: 'none',
      handle: async () => {
        const ok = (await store.healthy()) && (await keys.loaded());
        return json({ status: ok ? 'ok' : 'unavailable' }, ok ? 200 : 503);
      },
    },
    {
      op: 'GET /privacy',
      unlisted: 'a static page of the operator',
      auth: 'none',
      handle: page(
        ctx,
        'Privacy',
        `Transactions, codes and nonces are deleted after expiry; audit events are kept ${limits.audit_retention_seconds / 86400} days; consents until revoked or ${limits.consent_unused_seconds / 86400} days unused. Applications learn an account number per sector and only the claims you leave ticked.`,
      ),
    },
    {
      op: 'GET /security',
      unlisted: 'a static page of the operator',
      auth: 'none',
      handle: page(ctx, 'Security', 'Report vulnerabilities to the operator of this bridge; incidents are answered by rotating the signing keys and suspending affected applications.'),
    },
    {
      op: 'GET /abuse',
      unlisted: 'a static page of the operator',
      auth: 'none',
      handle: page(ctx, 'Report an application', 'Tell the operator of this bridge which application and what happened; it can suspend the application at once.'),
    },
    { op: 'GET /bridge.css', at: BRIDGE_STYLESHEET, unlisted: "the pages' stylesheet", auth: 'none', handle: () => asset(STYLE, 'text/css; charset=utf-8') },
    { op: 'GET /assets/visitor.js', at: VISITOR_SCRIPT_PATH, unlisted: "the visitor offer's script", auth: 'none', handle: () => asset(VISITOR_SCRIPT, 'text/javascript; charset=utf-8') },
  ];
  return config.operatorToken === undefined ? routes : [...routes, ...operatorRoutes(ctx, config.operatorToken, refreshClients)];
}

/** Test-only operator hooks (ob.contract.rotate, ob.contract.suspend): off unless --test-operator-token is given. */
function operatorRoutes(ctx: BridgeContext, token: string, refreshClients: () => Promise<void>): BridgeRoute[] {
  const expected = hashSecret(token);
  const operator = (req: Request) => {
    const presented = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1];
    return presented !== undefined && sameHash(hashSecret(presented), expected);
  };
  const refused = () => oauthJson({ error: 'invalid_token', error_description: 'operator token required' }, 401);
  return [
    {
      op: 'POST /operator/keys/rotate',
      unlisted: 'test-only operator hook (--test-operator-token): rotate the signing keys',
      auth: 'operator',
      handle: async (c) => (operator(c.req) ? json({ kid: await ctx.keys.rotate() }) : refused()),
    },
    // What `svc-oauth clients suspend <id>` does, then this instance's view at once (the others within a second).
    {
      op: 'POST /operator/clients/suspend',
      unlisted: 'test-only operator hook (--test-operator-token): suspend a client',
      body: FORM,
      auth: 'operator',
      handle: async (c) => {
        if (!operator(c.req)) return refused();
        const clientId = new URLSearchParams(utf8Text(c.body) ?? '').get('client_id');
        if (!clientId) return oauthJson({ error: 'invalid_request', error_description: 'client_id is required' }, 400);
        await ctx.store.suspend(clientId);
        await ctx.store.audit('client.suspended', 'operator', { client_id: clientId });
        await refreshClients();
        return json({ suspended: clientId });
      },
    },
  ];
}

export interface RunningBridge {
  issuer: string;
  url: string;
  app: BridgeApp;
  close(): Promise<void>;
}

/** Starts the bridge on `host:port`; `config.issuer` empty means the bound address. */
export async function startBridge(config: BridgeConfig, options: { port?: number; host?: string; tls?: TlsFiles } = {}, deps: BridgeDeps = {}): Promise<RunningBridge> {
  let bridge: BridgeApp | undefined;
  const fetch = async (request: Request): Promise<Response> => {
    const res = await bridge!.fetch(request);
    // Every answer is small and whole: sent with Content-Length rather than chunked.
    if (res.body === null || res.headers.has('content-length')) return res;
    const body = new Uint8Array(await res.arrayBuffer());
    const headers = new Headers(res.headers);
    headers.set('content-length', String(body.byteLength));
    return new Response(body, { status: res.status, headers });
  };
  const listener = await listen({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    fetch: () => (bridge ? fetch : undefined),
    // The hot routes (`fast` in the table) are served from node's request directly (no web streams).
    serveNode: (req, res) => bridge?.serveNode(req, res) ?? false,
    log: deps.log ?? silent,
    internal: INTERNAL,
    ...(options.tls ? { tls: options.tls } : {}),
  });
  const closeServer = listener.close;
  const bound = listener.url;
  try {
    bridge = await createBridgeApp({ ...config, issuer: config.issuer === '' ? (config.seams?.boundIssuer ?? REFERENCE_SEAMS.boundIssuer)(bound) : config.issuer }, deps);
  } catch (error) {
    await closeServer();
    throw error;
  }
  const app = bridge;
  // The private listener (OAUTH_METRICS_ADDR): /metrics is never on the public one.
  let metricsServer: Server | undefined;
  if (config.metricsAddr !== undefined) {
    try {
      metricsServer = await app.context.metrics.listen(config.metricsAddr);
    } catch (error) {
      await closeServer();
      await app.close();
      throw error;
    }
  }
  return {
    issuer: app.context.config.issuer,
    url: bound,
    app,
    async close() {
      await closeServer();
      if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
      await app.close();
    },
  };
}
