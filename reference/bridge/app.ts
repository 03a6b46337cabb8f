// The reference bridge as an h3 app: the stores, keys, client registry and native verifier, and
// one route per endpoint of document 2. `startBridge` listens (port 0 picks a free one; the
// issuer then defaults to the bound address) and returns `{issuer, url, close()}`.
import type { IncomingMessage, Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { H3, H3Event } from 'h3';
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

import { asset, errorFor, html, json, prefersJson, utf8Text } from '../shared/http.ts';
import { BRIDGE_BODY, readBody } from '../shared/body.ts';
import { BRIDGE_PATH, decodePathParam, pathParam } from '../shared/params.ts';
import { createH3, listen, logInternal, silent, type Log, type TlsFiles } from '../shared/server.ts';
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
import { introspectHandler, revokeHandler, tokenHandler, tokenNode, userinfoHandler } from './token.ts';
import { accountPage, messagePage, STYLE } from './pages.ts';
import { Metrics } from './metrics.ts';
import { Console, consoleClient, registryClient } from './console.ts';
import { OAuthError, oauthJson, pageError, redirect } from './responses.ts';
import type { components } from '../../schemas/ts/http/bridge.ts';

const SWEEP_INTERVAL_MS = 3_600_000;
const INTERNAL = () => oauthJson({ error: 'server_error', error_description: 'internal error' }, 500);

export interface BridgeDeps {
  resolver?: Resolver;
  now?: () => number;
  db?: Db;
  /** Log lines (default: none); internal errors come with level `error`. */
  log?: Log;
}

type Handler = (req: Request, event: H3Event) => Response | Promise<Response>;

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
  const router = bridgeRouter(app, ctx);
  protocolRoutes(ctx, router);
  pageRoutes(ctx, router, refreshClients);
  app.all('/**', () => oauthJson({ error: 'not_found', error_description: 'no such endpoint' }, 404));

  return {
    fetch: async (request: Request) => app.fetch(request),
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

interface BridgeRouter {
  route(path: string, methods: Record<string, Handler>): void;
  limited(path: string, perMinute: number, handler: Handler): Handler;
  tail(event: H3Event, prefix: string): string;
}

/** Registers routes on `app`: HEAD follows GET, 405 with Allow, errors in their envelope or page, timings in /metrics. */
function bridgeRouter(app: H3, ctx: BridgeContext): BridgeRouter {
  const { config, log, metrics, now } = ctx;
  function route(path: string, methods: Record<string, Handler>) {
    const allow = Object.keys(methods);
    if (allow.includes('GET')) allow.push('HEAD');
    const answer = async (req: Request, event: H3Event): Promise<Response> => {
      const handler = methods[req.method === 'HEAD' ? 'GET' : req.method];
      if (!handler) return oauthJson({ error: 'invalid_request', error_description: `${req.method} is not allowed here` }, 405, { allow: allow.join(', ') });
      try {
        return await handler(req, event);
      } catch (error) {
        if (error instanceof OAuthError) return error.response(config.documentOnly);
        // A refused body or path (413, 400): JSON when asked for, else the error page.
        if (error instanceof HttpError) return errorFor(req, error, ctx.site);
        logInternal(log, `${req.method} ${path}`, error);
        return INTERNAL();
      }
    };
    app.all(path, async (event) => {
      const started = performance.now();
      const res = await answer(event.req as Request, event);
      metrics.request(path, res.status, (performance.now() - started) / 1000);
      return res;
    });
  }
  /** The path after `prefix`, percent-decoded by the one decoder (400 for a malformed escape). */
  const tail = (event: H3Event, prefix: string) => decodePathParam(event.url.pathname.slice(prefix.length), BRIDGE_PATH);
  const windows = new IpWindows(now);
  const ipOf = (event: H3Event) => (event.runtime?.node?.req as IncomingMessage | undefined)?.socket?.remoteAddress ?? 'unknown';
  /** A handler behind a per-IP limit: beyond it, 429 with Retry-After (a page for browsers), counted in /metrics. */
  const limited =
    (path: string, perMinute: number, handler: Handler): Handler =>
    (req, event) => {
      const wait = windows.take(path, ipOf(event), perMinute);
      if (wait === undefined) return handler(req, event);
      metrics.rateLimited(path);
      const detail = `too many requests from this address: try again in ${wait} s`;
      const res = prefersJson(req)
        ? oauthJson({ error: 'rate_limit_exceeded', error_description: detail, rule: 'ob.errors.rate-limited' }, 429)
        : pageError(ctx, 429, detail, 'ob.errors.rate-limited');
      res.headers.set('retry-after', String(wait));
      return res;
    };

  return { route, limited, tail };
}

/** Discovery, keys, the OAuth endpoints, the native sign-in endpoints and the transaction pages. */
function protocolRoutes(ctx: BridgeContext, { route, limited, tail }: BridgeRouter): void {
  const { config, keys, profile } = ctx;
  const disco = () => json(discovery(ctx), 200, { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' });
  route(PATHS.discovery, { GET: disco });
  route(PATHS.asMetadata, { GET: disco });
  route(PATHS.jwks, { GET: async () => json(await keys.jwks(), 200, { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' }) });
  route(PATHS.authorize, { GET: limited(PATHS.authorize, config.rateLimits.authorizePerMinute, (req) => authorizeHandler(ctx, req)) });
  route(PATHS.token, { POST: (req) => tokenHandler(ctx, req) });
  route(PATHS.userinfo, { GET: (req) => userinfoHandler(ctx, req), POST: (req) => userinfoHandler(ctx, req) });
  route(PATHS.revoke, { POST: (req) => revokeHandler(ctx, req) });
  route(PATHS.introspect, { POST: (req) => introspectHandler(ctx, req) });
  route(profile.ids.metadata_path, { GET: () => metadataHandler(ctx) });
  route(profile.ids.callback_path, { POST: (req) => callbackHandler(ctx, req), OPTIONS: () => callbackPreflight() });
  route(profile.ids.resume_path, { GET: (req) => resumeHandler(ctx, req) });
  route(profile.ids.context_path, { GET: (req) => contextHandler(ctx, req) });
  route(`${PATHS.reference}**`, { GET: (req, e) => referenceHandler(ctx, req, tail(e, PATHS.reference)) });
  route(`${PATHS.transaction}:id`, { GET: (req, e) => transactionHandler(ctx, req, pathParam(e, 'id', BRIDGE_PATH)) });
  route(`${PATHS.transaction}:id/status`, { GET: (req, e) => transactionHandler(ctx, req, pathParam(e, 'id', BRIDGE_PATH)) });
  route(`${PATHS.transaction}:id/identify`, {
    POST: limited(`${PATHS.transaction}:id/identify`, config.rateLimits.identifyPerMinute, (req, e) => identifyHandler(ctx, req, pathParam(e, 'id', BRIDGE_PATH))),
  });
  route(`${PATHS.transaction}:id/retry`, { POST: (req, e) => retryHandler(ctx, req, pathParam(e, 'id', BRIDGE_PATH)) });
  route(`${PATHS.transaction}:id/push`, { POST: (req, e) => pushHandler(ctx, req, pathParam(e, 'id', BRIDGE_PATH)) });
  route(`${PATHS.transaction}:id/creating`, { POST: (req, e) => creatingHandler(ctx, req, pathParam(e, 'id', BRIDGE_PATH)) });
  route(`${PATHS.transaction}:id/consent`, { POST: (req, e) => consentHandler(ctx, req, pathParam(e, 'id', BRIDGE_PATH)) });
}

/** The account, the developer console, health, the static pages and the test-only operator hook. */
function pageRoutes(ctx: BridgeContext, { route }: BridgeRouter, refreshClients: () => Promise<void>): void {
  const { config, store, clients, keys } = ctx;
  route(PATHS.login, { GET: () => html(messagePage(ctx, 'Sign in', `${config.name} signs you in to applications: start from the application you want to use.`)) });
  route(PATHS.account, {
    GET: async (req) => {
      const s = await currentSession(ctx, req);
      const apps = s ? (await store.consents(s.identity)).map((c) => ({ client: c.clientId, name: clients.get(c.clientId)?.name ?? c.clientId, claims: c.claims, lastUse: c.lastUse })) : [];
      const signins = s ? (await store.recentSignins(s.identity)).map((r) => ({ at: r.at, client: clients.get(r.clientId)?.name ?? r.clientId, delegated: r.delegated, browser: r.browser })) : [];
      return html(accountPage(ctx, s?.identity, apps, signins));
    },
  });
  route(`${PATHS.account}/revoke`, {
    POST: async (req) => {
      const s = await currentSession(ctx, req);
      if (!s) return pageError(ctx, 401, 'you are not signed in', 'ob.consent.record');
      const clientId = new URLSearchParams(utf8Text(await readBody(req, limits.bridge_form_body_max_bytes, BRIDGE_BODY)) ?? '').get('client_id');
      if (clientId) {
        await store.revokeConsent(s.identity, clientId);
        await store.audit('consent.revoked', s.identity, { client_id: clientId });
      }
      return redirect(PATHS.account);
    },
  });
  route(`${PATHS.account}/logout`, {
    POST: async (req) => {
      const s = await currentSession(ctx, req);
      if (s) await store.endSession(s.hash);
      return redirect(PATHS.account, { 'set-cookie': serializeCookie(sessionCookieName(ctx), '', { secure: ctx.secure, maxAge: 0 }) });
    },
  });
  const console_ = new Console(ctx, refreshClients);
  route(PATHS.developers, { GET: (req) => console_.page(req) });
  route(`${PATHS.developers}/clients`, { POST: (req) => console_.create(req) });
  route(`${PATHS.developers}/clients/:id/:op`, {
    POST: (req, e) => {
      const [id, op] = e.url.pathname.slice(`${PATHS.developers}/clients/`.length).split('/');
      return console_.change(req, decodePathParam(id ?? '', BRIDGE_PATH), decodePathParam(op ?? '', BRIDGE_PATH));
    },
  });
  route(PATHS.health, {
    GET: async () => {
      const ok = (await store.healthy()) && (await keys.loaded());
      return json({ status: ok ? 'ok' : 'unavailable' }, ok ? 200 : 503);
    },
  });
  for (const [path, title, text] of [
    [
      '/privacy',
      'Privacy',
      `Transactions, codes and nonces are deleted after expiry; audit events are kept ${limits.audit_retention_seconds / 86400} days; consents until revoked or ${limits.consent_unused_seconds / 86400} days unused. Applications learn an account number per sector and only the claims you leave ticked.`,
    ],
    ['/security', 'Security', 'Report vulnerabilities to the operator of this bridge; incidents are answered by rotating the signing keys and suspending affected applications.'],
    ['/abuse', 'Report an application', 'Tell the operator of this bridge which application and what happened; it can suspend the application at once.'],
  ] as const) {
    route(path, { GET: () => html(messagePage(ctx, title, text)) });
  }
  route(BRIDGE_STYLESHEET, { GET: () => asset(STYLE, 'text/css; charset=utf-8') });
  route(VISITOR_SCRIPT_PATH, { GET: () => asset(VISITOR_SCRIPT, 'text/javascript; charset=utf-8') });
  if (config.operatorToken !== undefined) {
    // Test-only operator hooks (ob.contract.rotate, ob.contract.suspend): off unless --test-operator-token is given.
    const expected = hashSecret(config.operatorToken);
    const operator = (req: Request) => {
      const presented = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1];
      return presented !== undefined && sameHash(hashSecret(presented), expected);
    };
    const refused = () => oauthJson({ error: 'invalid_token', error_description: 'operator token required' }, 401);
    route(PATHS.rotate, { POST: async (req) => (operator(req) ? json({ kid: await keys.rotate() }) : refused()) });
    // What `svc-oauth clients suspend <id>` does, then this instance's view at once (the others within a second).
    route(PATHS.suspend, {
      POST: async (req) => {
        if (!operator(req)) return refused();
        const clientId = new URLSearchParams(await req.text()).get('client_id');
        if (!clientId) return oauthJson({ error: 'invalid_request', error_description: 'client_id is required' }, 400);
        await ctx.store.suspend(clientId);
        await ctx.store.audit('client.suspended', 'operator', { client_id: clientId });
        await refreshClients();
        return json({ suspended: clientId });
      },
    });
  }
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
    // The hot route, /token, is served from node's request directly (no web streams).
    serveNode: (req, res) => {
      if (!bridge || req.method !== 'POST' || req.url !== PATHS.token) return false;
      tokenNode(bridge.context, req, res);
      return true;
    },
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
