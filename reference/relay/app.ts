// The reference relay as an h3 app on node's HTTP server: routes of spec/http/relay.openapi.yaml,
// each handler small and in its own module; every rejection is an HttpError naming its rule and
// answers the envelope `{error, detail}` (document 3; `rule` added). Nothing a client sends can
// make it answer 500: a bug is logged and answered as a visible 500 envelope.
import { persistSessions } from './variants.ts';
import { statfsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { H3, H3Event } from 'h3';
import { validServiceName } from '../../protocol/common/names.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { writeReply } from '../shared/http.ts';
import { readBody, RELAY_BODY } from '../shared/body.ts';
import { pathParam, RELAY_PATH } from '../shared/params.ts';
import { createH3, listen, logInternal } from '../shared/server.ts';
import { NetworkResolver, type NetworkResolverOptions } from '../resolve/network.ts';
import { Auth } from './auth.ts';
import type { RelayConfig, RelayContext } from './config.ts';
import { DnsProviders } from './dns-providers.ts';
import { EventHub } from './events.ts';
import { availability, capabilities, exportIdentity, identityInfo, identityOfHost, publicDocument, register, rotate, wellKnownDocument } from './identities.ts';
import { consume, events, pickup, RawJson, sweepSpool, type OwnerCall } from './inbox.ts';
import { acceptEnvelope } from './messages.ts';
import { RateLimits } from './rate-limits.ts';
import { listDevices, registerSession, revokeDevice, revokeSession } from './sessions.ts';
import { enroll, fetchKeystore, listKeystore, removeEnrollment } from './keystore.ts';
import { abandon, deliver, fetchOffer, offer, Pairings, poll, reveal } from './pairing.ts';
import { passkeyPage, passkeyScript } from './test-pages.ts';
import { deleteSystemFile, getSystemFile, groupEpoch, groupRosterRead, putSystemFile } from './system-files.ts';
import { RelayStore } from './store.ts';
import { MemoryState, type RelayState } from './state.ts';
import { RedisState } from './state-redis.ts';
import { driveRoutes } from './drive/routes.ts';
import { S3Chunks } from './drive/s3-chunks.ts';
import { UnstorableValue } from '../stores/postgres.ts';

/** Codes of a relay that follows only document 3 (the `document-only` variant): its own names where the project decided; no `rule` field. */
const DOCUMENT_ONLY_CODES: Record<string, string> = {
  invalid_request: 'bad_request',
  signature_invalid: 'bad_signature',
  challenge_invalid: 'unauthenticated',
  request_expired: 'stale_request',
  request_replayed: 'replay',
  not_found: 'missing',
  payload_too_large: 'too_big',
  already_registered: 'exists',
  too_many_streams: 'busy',
  invite_required: 'no_invite',
  precondition_failed: 'stale_version',
};

const INTERNAL = () => new HttpError(500, 'internal_error', 'internal error', 'ra.errors.envelope');
const HEADERS_TOO_LARGE = () =>
  ruleError(
    431,
    'ra.drive.group-roster-size',
    `the request headers are longer than ${limits.drive_group_roster_header_max_bytes + limits.request_headers_max_bytes} bytes (a group roster and the other headers)`,
  );
const CORS_ANY = { 'access-control-allow-origin': '*' };

export interface RunningRelay {
  origin: string;
  url: string;
  context: RelayContext;
  close(): Promise<void>;
}

export interface StartRelayOptions {
  config: Omit<RelayConfig, 'relayAddress'> & { relayAddress?: string };
  host: string;
  port: number;
  resolver: Omit<NetworkResolverOptions, 'profile'>;
  log: (line: string) => void;
}

export async function startRelay(options: StartRelayOptions): Promise<RunningRelay> {
  // The relay address may depend on the bound port, so the listener comes first and hands every
  // request to the app once it exists.
  const holder: { app?: H3; ctx?: RelayContext } = {};
  // Object storage for drive chunks answers before the relay listens: a wrong endpoint or key fails the start.
  if (options.config.driveS3) await S3Chunks.ensureBucket(options.config.driveS3);
  const listener = await listen({
    host: options.host,
    port: options.port,
    fetch: () => holder.app?.fetch.bind(holder.app),
    // The hot routes, POST /messages and /acks, are served from node's request directly (no web
    // streams); every other request goes through the h3 app.
    serveNode: (req, res) => {
      if (!holder.ctx || req.method !== 'POST' || (req.url !== '/messages' && req.url !== '/acks')) return false;
      envelopeNode(holder.ctx, req.url === '/messages' ? 'message' : 'ack', req, res);
      return true;
    },
    log: options.log,
    internal: () => (holder.ctx ? render(holder.ctx, INTERNAL()) : jsonResponse(INTERNAL().envelope(), 500)),
    // A group member's roster rides in a header: the headers read make room for the largest (ra.drive.group-roster-size).
    maxHeaderSize: limits.drive_group_roster_header_max_bytes + limits.request_headers_max_bytes,
    headerOverflow: () => JSON.stringify(HEADERS_TOO_LARGE().envelope()),
  });
  const url = listener.url;
  const config: RelayConfig = { ...options.config, relayAddress: options.config.relayAddress ?? listener.hostPort };
  const now = Date.now;
  let state: RelayState;
  let store: RelayStore;
  try {
    store = await RelayStore.open({ dataDir: config.dataDir, ...(config.database ? { database: config.database } : {}), spoolInMemory: config.breakages.has('spool-memory') });
  } catch (error) {
    await listener.close();
    throw error;
  }
  try {
    // Processes behind one relay address share one state: its keys are the service's and the address's.
    state = config.sharedState ? await RedisState.connect({ url: config.sharedState, prefix: `${config.profile.name}-relay:${config.relayAddress}`, now, log: options.log }) : new MemoryState(now);
  } catch (error) {
    await store.close();
    await listener.close();
    throw error;
  }
  const resolver = new NetworkResolver({ profile: config.profile, ...options.resolver });
  const ctx: RelayContext = {
    config,
    store,
    state,
    auth: new Auth(state, config.profile, now, config.breakages.has('challenge-reuse'), config.challengeTtlSeconds * 1000, config.breakages.has('challenge-race')),
    events: new EventHub(state, config.maxStreams, now),
    pairings: new Pairings(state, now, config.breakages.has('pairing-forever')),
    rate: new RateLimits(state, { sender: config.rate.sender, global: config.rate.global, ip: config.rate.ip }, config.rate.windowSeconds, now),
    resolver,
    dns: new DnsProviders(),
    now,
    log: options.log,
    closers: [],
  };
  // --break sessions-persisted (ra.sessions.memory): see variants.ts.
  if (config.breakages.has('sessions-persisted') && config.dataDir !== ':memory:') await persistSessions(ctx.auth, config.dataDir);
  holder.app = createRelayApp(ctx);
  holder.ctx = ctx;
  const sweepEvery = Math.min(60_000, Math.max(1000, (config.spoolTtlSeconds * 1000) / 4));
  const sweeper = setInterval(() => {
    // --break spool-forever: undelivered mail never expires (ra.spool.expiry).
    if (config.breakages.has('spool-forever')) return;
    sweepSpool(ctx).then(
      (n) => n > 0 && ctx.log(`spool: ${n} message(s) expired into sys.delivery.failed acks`),
      (error: unknown) => ctx.log(`spool sweep failed: ${(error as Error).message}`, 'error'),
    );
  }, sweepEvery);
  sweeper.unref();
  return {
    origin: url,
    url,
    context: ctx,
    async close() {
      clearInterval(sweeper);
      ctx.events.closeAll();
      for (const close of ctx.closers) close();
      await listener.close();
      await resolver.close();
      await ctx.state.close();
      await ctx.store.close();
    },
  };
}

export type Handler = (req: Request, event: H3Event) => Promise<Response> | Response;

/** POST /messages or /acks on node's request: the same answers as through the app. */
function envelopeNode(ctx: RelayContext, kind: 'message' | 'ack', req: IncomingMessage, res: ServerResponse): void {
  readBody(req, limits.message_body_max_bytes, RELAY_BODY)
    .then((bytes) => acceptEnvelope(ctx, kind, bytes))
    .then(
      (accepted) => writeReply(res, { status: 202, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(accepted) }),
      (error: unknown) => {
        const e = known(error) ?? INTERNAL();
        if (e.status === 500) logInternal(ctx.log, `POST /${kind}s`, error);
        writeReply(res, { status: e.status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...e.headers }, body: JSON.stringify(envelopeOf(ctx, e)) });
      },
    );
}

/** An error a client's request explains: its own envelope, or a value the database refuses (400). */
function known(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error instanceof UnstorableValue) return ruleError(400, 'ra.errors.invalid-request', error.message.replace(/^a value/, 'the request holds a value'));
  return undefined;
}

export function createRelayApp(ctx: RelayContext): H3 {
  const app = createH3(ctx.log, () => render(ctx, INTERNAL()));
  const route = (path: string, methods: Record<string, Handler>) => {
    const allow = Object.keys(methods);
    app.all(path, async (event: H3Event): Promise<Response> => {
      const req = event.req as Request;
      const handler = methods[req.method === 'HEAD' ? 'GET' : req.method];
      try {
        if (!handler) throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here`, 'ra.errors.envelope', { allow: allow.join(', ') });
        return await handler(req, event);
      } catch (error) {
        const e = known(error);
        if (e) return render(ctx, e);
        logInternal(ctx.log, `${req.method} ${path}`, error);
        return render(ctx, INTERNAL());
      }
    });
  };
  // Never a promise (a handler that forgot an await would answer `{}`).
  const json = <T>(body: T extends PromiseLike<unknown> ? never : T, status = 200, headers: Record<string, string> = {}) =>
    new Response(body instanceof RawJson ? body.text : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } });
  const param = (event: H3Event, name: string) => pathParam(event, name, RELAY_PATH);
  const target = (req: Request) => {
    const u = new URL(req.url);
    return `${u.pathname}${u.search}`;
  };
  const body = (req: Request, max: number, binary = false): Promise<Uint8Array> => readBody(req, max, RELAY_BODY, binary);
  const call = async (req: Request, event: H3Event, max: number = limits.signed_request_body_max_bytes, binary = false): Promise<OwnerCall> => ({
    identity: normalized(param(event, 'identity')),
    req,
    target: target(req),
    body: await body(req, max, binary),
  });
  const ip = (event: H3Event) => (event.req as unknown as { ip?: string }).ip ?? (event.runtime?.node?.req as IncomingMessage | undefined)?.socket?.remoteAddress ?? 'unknown';

  route('/', {
    GET: async (req) => {
      const headers: Record<string, string> = {};
      if (ctx.config.oauthBridgeUrl) {
        try {
          await identityOfHost(ctx, req.headers.get('host'));
          headers.link = `<${ctx.config.oauthBridgeUrl.replace(/\/$/, '')}/.well-known/oauth-authorization-server>; rel="indieauth-metadata"`;
        } catch {
          // not a hosted identity's host
        }
      }
      return json(banner(ctx), 200, headers);
    },
  });
  route('/health', { GET: async () => json(await health(ctx)) });
  if (ctx.config.testPages) {
    route('/test/passkey', { GET: () => passkeyPage() });
    route('/test/passkey.js', { GET: () => passkeyScript() });
  }
  route('/auth/challenge', {
    GET: async (req) => {
      const identity = validServiceName(new URL(req.url).searchParams.get('identity') ?? '');
      if (identity === undefined) throw ruleError(400, 'ra.errors.invalid-request', 'identity is required and must be a service ID (ra.auth.challenge)');
      const c = await ctx.auth.issueChallenge(identity);
      return json({ challenge: c.challenge, expires_at: new Date(c.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z') });
    },
  });
  route('/messages', { POST: async (req) => json(await acceptEnvelope(ctx, 'message', await body(req, limits.message_body_max_bytes)), 202) });
  route('/acks', { POST: async (req) => json(await acceptEnvelope(ctx, 'ack', await body(req, limits.message_body_max_bytes)), 202) });
  route('/messages/:identity', { GET: async (req, event) => json(await pickup(ctx, await call(req, event), new URL(req.url).searchParams.get('since'))) });
  route('/messages/:identity/consume', {
    POST: async (req, event) => {
      const r = await consume(ctx, await call(req, event));
      return ctx.config.documentOnly ? new Response(null, { status: 204 }) : json(r);
    },
  });
  route('/events/:identity', { GET: async (req, event) => events(ctx, await call(req, event)) });
  route('/sessions', { POST: async (req) => json(await registerSession(ctx, req, await body(req, limits.signed_request_body_max_bytes)), 201) });
  route('/sessions/:id', {
    DELETE: async (req, event) => {
      await revokeSession(ctx, param(event, 'id'), await body(req, limits.signed_request_body_max_bytes));
      return new Response(null, { status: 204 });
    },
  });
  route('/devices/:identity', { GET: async (req, event) => json(await listDevices(ctx, await call(req, event))) });
  route('/devices/:identity/revoke', { POST: async (req, event) => json(await revokeDevice(ctx, await call(req, event))) });
  route('/identities', { POST: async (req) => json(await register(ctx, await body(req, limits.signed_request_body_max_bytes)), 201) });
  route('/identities/:identity', { GET: async (_req, event) => json(await identityInfo(ctx, param(event, 'identity'))) });
  route('/identities/:identity/rotate', { POST: async (req, event) => json(await rotate(ctx, param(event, 'identity'), await body(req, limits.signed_request_body_max_bytes))) });
  keystoreAndPairingRoutes(ctx, { route, json, param, body });
  route('/identities/:identity/system/**:path', {
    GET: async (req, event) => getSystemFile(ctx, await call(req, event), param(event, 'path')),
    PUT: async (req, event) => putSystemFile(ctx, await call(req, event), param(event, 'path')),
    DELETE: async (req, event) => deleteSystemFile(ctx, await call(req, event), param(event, 'path')),
  });
  driveRoutes(ctx, route, call, param);
  route('/groups/:group', { GET: async (req, event) => groupRosterRead(ctx, normalized(param(event, 'group')), req, target(req)) });
  route('/groups/:group/epoch', { GET: async (_req, event) => json(await groupEpoch(ctx, normalized(param(event, 'group'))), 200, CORS_ANY) });
  route('/identities/:identity/export', { POST: async (req, event) => exportIdentity(ctx, param(event, 'identity'), await body(req, limits.signed_request_body_max_bytes)) });
  route('/hosted/availability', {
    GET: async (req, event) => json(await availability(ctx, new URL(req.url), ip(event)), 200, CORS_ANY),
    OPTIONS: () => new Response(null, { status: 204, headers: { ...CORS_ANY, 'access-control-allow-methods': 'GET', 'access-control-max-age': '600' } }),
  });
  route(ctx.config.profile.ids.id_document_path, { GET: async (req) => json(await wellKnownDocument(ctx, req.headers.get('host')), 200, CORS_ANY) });
  route(`${ctx.config.profile.ids.public_files_path}:name`, { GET: async (req, event) => json(await publicDocument(ctx, req.headers.get('host'), param(event, 'name')), 200, CORS_ANY) });
  route(ctx.config.profile.ids.capabilities_path, { GET: async (req) => json(await capabilities(ctx, req.headers.get('host')), 200, CORS_ANY) });
  app.all('/**', () => render(ctx, ruleError(404, 'ra.errors.not-found', 'no such endpoint')));
  return app;
}

/** What a group of routes gets from createRelayApp. */
interface RouteKit {
  route: (path: string, methods: Record<string, Handler>) => void;
  json: (body: unknown, status?: number, headers?: Record<string, string>) => Response;
  param: (event: H3Event, name: string) => string;
  body: (req: Request, max: number) => Promise<Uint8Array>;
}

/** The keystore (enroll, list, fetch, remove) and pairing v2 (offer, fetch, reveal, deliver, poll, abandon). */
function keystoreAndPairingRoutes(ctx: RelayContext, { route, json, param, body }: RouteKit): void {
  route('/identities/:identity/keystore', { PUT: async (req, event) => json(await enroll(ctx, param(event, 'identity'), await body(req, limits.signed_request_body_max_bytes))) });
  route('/identities/:identity/keystore/list', { POST: async (req, event) => json(await listKeystore(ctx, param(event, 'identity'), await body(req, limits.signed_request_body_max_bytes))) });
  route('/identities/:identity/keystore/fetch', { POST: async (req, event) => json(await fetchKeystore(ctx, param(event, 'identity'), await body(req, limits.signed_request_body_max_bytes))) });
  route('/identities/:identity/keystore/:enrollment', {
    DELETE: async (req, event) => {
      const removed = await removeEnrollment(ctx, param(event, 'identity'), param(event, 'enrollment'), await body(req, limits.signed_request_body_max_bytes));
      return removed ? json(removed) : new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
    },
  });
  route('/identities/:identity/enroll/offer', { POST: async (req, event) => json(await offer(ctx, param(event, 'identity'), await body(req, limits.signed_request_body_max_bytes)), 201) });
  route('/identities/:identity/enroll/:rendezvous/fetch', {
    POST: async (req, event) => json(await fetchOffer(ctx, param(event, 'identity'), param(event, 'rendezvous'), await body(req, limits.signed_request_body_max_bytes))),
  });
  route('/identities/:identity/enroll/:rendezvous/reveal', {
    POST: async (req, event) => json(await reveal(ctx, normalized(param(event, 'identity')), param(event, 'rendezvous'), req, await body(req, limits.signed_request_body_max_bytes))),
  });
  route('/identities/:identity/enroll/:rendezvous/deliver', {
    POST: async (req, event) => json(await deliver(ctx, param(event, 'identity'), param(event, 'rendezvous'), await body(req, limits.signed_request_body_max_bytes))),
  });
  route('/identities/:identity/enroll/:rendezvous', {
    GET: async (req, event) => json(await poll(ctx, normalized(param(event, 'identity')), param(event, 'rendezvous'), req)),
    DELETE: async (req, event) => {
      await abandon(ctx, normalized(param(event, 'identity')), param(event, 'rendezvous'), req);
      return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
    },
  });
}

const normalized = (raw: string): string => validServiceName(raw) ?? raw.toLowerCase();

function render(ctx: RelayContext, error: HttpError): Response {
  return jsonResponse(envelopeOf(ctx, error), error.status, error.headers);
}

function envelopeOf(ctx: RelayContext, error: HttpError): Record<string, unknown> {
  const body: Record<string, unknown> = error.envelope();
  if (!ctx.config.documentOnly) return body;
  const { rule: _r, ...rest } = body;
  return { ...rest, error: DOCUMENT_ONLY_CODES[String(body.error)] ?? body.error };
}

/** A JSON answer with its length (node then sends it whole, not chunked). */
function jsonResponse(body: unknown, status: number, headers: Readonly<Record<string, string>> = {}): Response {
  const text = JSON.stringify(body);
  return new Response(text, { status, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store', ...headers } });
}

function banner(ctx: RelayContext): Record<string, unknown> {
  return {
    service: `${ctx.config.profile.name}-relay`,
    relay_address: ctx.config.relayAddress,
    launcher_host: null,
    launcher_hosts: [],
    hosted_domains: ctx.config.hostedDomains,
    web_ui: ctx.config.webStaticDir !== undefined,
    version: ctx.config.version,
    buildTime: ctx.config.buildTime,
    versionHash: ctx.config.versionHash,
  };
}

async function health(ctx: RelayContext): Promise<Record<string, unknown>> {
  const writable = await ctx.store.writable();
  return {
    status: writable ? 'ok' : 'degraded',
    version: ctx.config.version,
    buildTime: ctx.config.buildTime,
    versionHash: ctx.config.versionHash,
    ...(ctx.config.dataConfigured ? { storage: { configured: true, path: ctx.config.dataDir, writable, free_bytes: freeBytes(ctx.config.dataDir) } } : {}),
  };
}

function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return 0;
  }
}
