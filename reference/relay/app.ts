// The reference relay as an h3 app on node's HTTP server: routes of spec/http/relay.openapi.yaml,
// each handler small and in its own module; every rejection is an HttpError naming its rule and
// answers the envelope `{error, detail}` (document 3; `rule` added). Nothing a client sends can
// make it answer 500: a bug is logged and answered as a visible 500 envelope.
import { startSeams } from '../variants/relay-start.ts';
import { statfsSync } from 'node:fs';
import type { H3 } from 'h3';
import { validServiceName } from '../../protocol/common/names.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { CORS_ANY, toResponse, type Reply } from '../shared/http.ts';
import { RELAY_BODY } from '../shared/body.ts';
import { RELAY_PATH } from '../shared/params.ts';
import { mountRoutes, type Call, type Mounted, type Route, type Surface, type WebCall } from '../shared/routes.ts';
import { createH3, listen } from '../shared/server.ts';
import type { paths } from '../../schemas/ts/http/relay.ts';
import { NetworkResolver, type NetworkResolverOptions } from '../resolve/network.ts';
import { Auth } from './auth.ts';
import type { RelayConfig, RelayContext } from './config.ts';
import { DnsProviders } from './dns-providers.ts';
import { EventHub } from './events.ts';
import { availability, capabilities, exportIdentity, identityInfo, identityOfHost, publicDocument, register, rotate, wellKnownDocument } from './identities.ts';
import { consume, events, pickup, RawJson, sweepSpool, type OwnerCall } from './inbox.ts';
import { acceptEnvelope } from './messages.ts';
import { RateLimits } from './rate-limits.ts';
import { relaySeams } from './seams.ts';
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

export interface RunningRelay {
  origin: string;
  url: string;
  context: RelayContext;
  /** The route table (test/reference/routes.test.ts ties it to the OpenAPI). */
  routes: Mounted['routes'];
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
  const holder: { app?: H3; mounted?: Mounted; ctx?: RelayContext } = {};
  // Object storage for drive chunks answers before the relay listens: a wrong endpoint or key fails the start.
  if (options.config.driveS3) await S3Chunks.ensureBucket(options.config.driveS3);
  const listener = await listen({
    host: options.host,
    port: options.port,
    fetch: () => holder.app?.fetch.bind(holder.app),
    // The hot routes (`fast` in the table) are served from node's request directly (no web
    // streams); every other request goes through the h3 app.
    serveNode: (req, res) => holder.mounted?.serveNode(req, res) ?? false,
    log: options.log,
    internal: () => toResponse(envelopeReply(holder.ctx?.config.documentOnly ?? false, INTERNAL())),
    // A group member's roster rides in a header: the headers read make room for the largest (ra.drive.group-roster-size).
    maxHeaderSize: limits.drive_group_roster_header_max_bytes + limits.request_headers_max_bytes,
    headerOverflow: () => JSON.stringify(HEADERS_TOO_LARGE().envelope()),
  });
  const url = listener.url;
  const config: RelayConfig = { ...options.config, relayAddress: options.config.relayAddress ?? listener.hostPort };
  const now = Date.now;
  // Broken variants that act at the start (reference/variants/relay-start.ts); the reference's own seams otherwise.
  const seams = startSeams(config.breakages);
  let state: RelayState;
  let store: RelayStore;
  try {
    store = await RelayStore.open({ dataDir: config.dataDir, ...(config.database ? { database: config.database } : {}), spoolInMemory: seams.spoolInMemory });
  } catch (error) {
    await listener.close();
    throw error;
  }
  try {
    // Processes behind one relay address share one state: its keys are the service's and the address's.
    state = config.sharedState
      ? await RedisState.connect({
          url: config.sharedState,
          prefix: `${config.profile.name}-relay:${config.relayAddress}`,
          now,
          log: options.log,
          ...(config.sharedStateTimeoutMs !== undefined ? { timeoutMs: config.sharedStateTimeoutMs } : {}),
        })
      : new MemoryState(now);
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
    auth: new Auth(state, config.profile, now, seams.challengeReuse, config.challengeTtlSeconds * 1000, seams.challengeRace),
    events: new EventHub(state, config.maxStreams, now),
    pairings: new Pairings(state, now, seams.pairingForever),
    rate: new RateLimits(state, { sender: config.rate.sender, global: config.rate.global, ip: config.rate.ip }, config.rate.windowSeconds, now),
    resolver,
    dns: new DnsProviders(),
    now,
    log: options.log,
    closers: [],
  };
  if (seams.keepSessions && config.dataDir !== ':memory:') await seams.keepSessions(ctx.auth, config.dataDir);
  const { app, mounted } = createRelayApp(ctx);
  Object.assign(holder, { app, mounted, ctx });
  const sweepEvery = Math.min(60_000, Math.max(1000, (config.spoolTtlSeconds * 1000) / 4));
  const sweeper = setInterval(() => {
    if (!seams.spoolSweep) return;
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
    routes: mounted.routes,
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

/** The relay's routes: the operations of spec/http/relay.openapi.yaml, plus what it serves beside them. */
export type RelayRoute = Route<paths>;

/** A signed request's body, under its one cap (ra.auth.signed-request). */
const SIGNED = { max: limits.signed_request_body_max_bytes };
const MESSAGE = { max: limits.message_body_max_bytes };

/** How the relay answers at the route layer: its body and path rules, its envelope (document 3), its 405 and 500. */
function relaySurface(ctx: RelayContext): Surface {
  return {
    body: RELAY_BODY,
    path: RELAY_PATH,
    log: ctx.log,
    error: (error) => {
      const e = known(error);
      return e ? envelopeReply(ctx.config.documentOnly, e) : undefined;
    },
    methodNotAllowed: (method, allow) => envelopeReply(ctx.config.documentOnly, new HttpError(405, 'method_not_allowed', `${method} is not allowed here`, 'ra.errors.envelope', { allow })),
    internal: () => envelopeReply(ctx.config.documentOnly, INTERNAL()),
  };
}

/** An error a client's request explains: its own envelope, or a value the database refuses (400). */
function known(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error instanceof UnstorableValue) return ruleError(400, 'ra.errors.invalid-request', error.message.replace(/^a value/, 'the request holds a value'));
  return undefined;
}

// Never a promise (a handler that forgot an await would answer `{}`).
const json = <T>(body: T extends PromiseLike<unknown> ? never : T, status = 200, headers: Record<string, string> = {}) =>
  new Response(body instanceof RawJson ? body.text : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } });
const noContent = (headers: Record<string, string> = {}) => new Response(null, { status: 204, headers });

/** The call of an identity's owner (a signed request): the identity in the path, the request, its body. */
export const ownerCall = (c: WebCall): OwnerCall => ({ identity: normalized(c.param('identity')), req: c.req, target: c.target, body: c.body });

/** The relay's app on `ctx`, and the hot routes the listener serves from node's request. */
export function createRelayApp(ctx: RelayContext): { app: H3; mounted: Mounted } {
  const app = createH3(ctx.log, () => toResponse(envelopeReply(ctx.config.documentOnly, INTERNAL())));
  const mounted = mountRoutes<paths>(app, relaySurface(ctx), [...relayRoutes(ctx), ...driveRoutes(ctx, ownerCall)]);
  app.all('/**', () => toResponse(envelopeReply(ctx.config.documentOnly, ruleError(404, 'ra.errors.not-found', 'no such endpoint'))));
  return { app, mounted };
}

/** Every route of the relay but the drive's (drive/routes.ts). */
function relayRoutes(ctx: RelayContext): RelayRoute[] {
  const ids = ctx.config.profile.ids;
  const envelope = (kind: 'message' | 'ack') => async (c: Call) => jsonReply202(await acceptEnvelope(ctx, kind, c.body));
  return [
    { op: 'GET /', auth: 'none', handle: async (c) => json(banner(ctx), 200, await bridgeLink(ctx, c.req)) },
    { op: 'GET /health', auth: 'none', handle: async () => json(await health(ctx)) },
    ...(ctx.config.testPages
      ? ([
          { op: 'GET /test/passkey', unlisted: 'test-only page (--test-pages): a browser enrolls a passkey', auth: 'none', handle: () => passkeyPage() },
          { op: 'GET /test/passkey.js', unlisted: 'test-only script of /test/passkey', auth: 'none', handle: () => passkeyScript() },
        ] satisfies RelayRoute[])
      : []),
    {
      op: 'GET /auth/challenge',
      auth: 'none',
      handle: async (c) => {
        const identity = validServiceName(new URL(c.req.url).searchParams.get('identity') ?? '');
        if (identity === undefined) throw ruleError(400, 'ra.errors.invalid-request', 'identity is required and must be a service ID (ra.auth.challenge)');
        const ch = await ctx.auth.issueChallenge(identity);
        return json({ challenge: ch.challenge, expires_at: new Date(ch.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z') });
      },
    },
    // The hot routes: served from node's request by the listener (no web streams).
    { op: 'POST /messages', body: MESSAGE, auth: 'signed-body', fast: true, handle: envelope('message') },
    { op: 'POST /acks', body: MESSAGE, auth: 'signed-body', fast: true, handle: envelope('ack') },
    { op: 'GET /messages/{identity}', auth: 'signed-request', handle: async (c) => json(await pickup(ctx, ownerCall(c), new URL(c.req.url).searchParams.get('since'))) },
    {
      op: 'POST /messages/{identity}/consume',
      body: SIGNED,
      auth: 'signed-request',
      handle: async (c) => {
        const r = await consume(ctx, ownerCall(c));
        return ctx.config.documentOnly ? noContent() : json(r);
      },
    },
    { op: 'GET /events/{identity}', auth: 'signed-request', handle: async (c) => events(ctx, ownerCall(c)) },
    { op: 'POST /sessions', body: SIGNED, auth: 'signed-body', handle: async (c) => json(await registerSession(ctx, c.req, c.body), 201) },
    {
      op: 'DELETE /sessions/{id}',
      body: SIGNED,
      auth: 'signed-body',
      handle: async (c) => {
        await revokeSession(ctx, c.param('id'), c.body);
        return noContent();
      },
    },
    { op: 'GET /devices/{identity}', auth: 'signed-request', handle: async (c) => json(await listDevices(ctx, ownerCall(c))) },
    { op: 'POST /devices/{identity}/revoke', body: SIGNED, auth: 'signed-request', handle: async (c) => json(await revokeDevice(ctx, ownerCall(c))) },
    { op: 'POST /identities', body: SIGNED, auth: 'signed-body', handle: async (c) => json(await register(ctx, c.body), 201) },
    { op: 'GET /identities/{identity}', auth: 'none', handle: async (c) => json(await identityInfo(ctx, c.param('identity'))) },
    { op: 'POST /identities/{identity}/rotate', body: SIGNED, auth: 'signed-body', handle: async (c) => json(await rotate(ctx, c.param('identity'), c.body)) },
    { op: 'POST /identities/{identity}/export', body: SIGNED, auth: 'signed-body', handle: async (c) => exportIdentity(ctx, c.param('identity'), c.body) },
    ...keystoreAndPairingRoutes(ctx),
    ...systemFileRoutes(ctx),
    { op: 'GET /groups/{group}', auth: 'signed-request', handle: async (c) => groupRosterRead(ctx, normalized(c.param('group')), c.req, c.target) },
    { op: 'GET /groups/{group}/epoch', auth: 'none', handle: async (c) => json(await groupEpoch(ctx, normalized(c.param('group'))), 200, CORS_ANY) },
    { op: 'GET /hosted/availability', auth: 'none', handle: async (c) => json(await availability(ctx, new URL(c.req.url), relaySeams(ctx.config).availabilityBucket(c.ip)), 200, CORS_ANY) },
    {
      op: 'OPTIONS /hosted/availability',
      unlisted: 'the CORS preflight of GET /hosted/availability (a browser asks before it reads)',
      auth: 'none',
      handle: () => noContent({ ...CORS_ANY, 'access-control-allow-methods': 'GET', 'access-control-max-age': '600' }),
    },
    { op: 'GET /.well-known/svc/id.json', at: ids.id_document_path, auth: 'none', handle: async (c) => json(await wellKnownDocument(ctx, c.headers.get('host')), 200, CORS_ANY) },
    {
      op: 'GET /.well-known/svc/{name}',
      at: `${ids.public_files_path}:name`,
      unlisted: 'public files of a hosted identity (document 2, public profile), read by the bridge; not in document 3',
      auth: 'none',
      handle: async (c) => json(await publicDocument(ctx, c.headers.get('host'), c.param('name')), 200, CORS_ANY),
    },
    { op: 'GET /.well-known/svc/capabilities.json', at: ids.capabilities_path, auth: 'none', handle: async (c) => json(await capabilities(ctx, c.headers.get('host')), 200, CORS_ANY) },
  ];
}

/** The keystore (enroll, list, fetch, remove) and pairing v2 (offer, fetch, reveal, deliver, poll, abandon). */
function keystoreAndPairingRoutes(ctx: RelayContext): RelayRoute[] {
  return [
    { op: 'PUT /identities/{identity}/keystore', body: SIGNED, auth: 'signed-body', handle: async (c) => json(await enroll(ctx, c.param('identity'), c.body)) },
    { op: 'POST /identities/{identity}/keystore/list', body: SIGNED, auth: 'signed-body', handle: async (c) => json(await listKeystore(ctx, c.param('identity'), c.body)) },
    { op: 'POST /identities/{identity}/keystore/fetch', body: SIGNED, auth: 'signed-body', handle: async (c) => json(await fetchKeystore(ctx, c.param('identity'), c.body)) },
    {
      op: 'DELETE /identities/{identity}/keystore/{enrollment}',
      body: SIGNED,
      auth: 'signed-body',
      handle: async (c) => {
        const removed = await removeEnrollment(ctx, c.param('identity'), c.param('enrollment'), c.body);
        return removed ? json(removed) : noContent({ 'cache-control': 'no-store' });
      },
    },
    { op: 'POST /identities/{identity}/enroll/offer', body: SIGNED, auth: 'none', handle: async (c) => json(await offer(ctx, c.param('identity'), c.body), 201) },
    {
      op: 'POST /identities/{identity}/enroll/{rendezvous}/fetch',
      body: SIGNED,
      auth: 'signed-body',
      handle: async (c) => json(await fetchOffer(ctx, c.param('identity'), c.param('rendezvous'), c.body)),
    },
    {
      op: 'POST /identities/{identity}/enroll/{rendezvous}/reveal',
      body: SIGNED,
      auth: 'bearer',
      handle: async (c) => json(await reveal(ctx, normalized(c.param('identity')), c.param('rendezvous'), c.req, c.body)),
    },
    {
      op: 'POST /identities/{identity}/enroll/{rendezvous}/deliver',
      body: SIGNED,
      auth: 'signed-body',
      handle: async (c) => json(await deliver(ctx, c.param('identity'), c.param('rendezvous'), c.body)),
    },
    { op: 'GET /identities/{identity}/enroll/{rendezvous}', auth: 'bearer', handle: async (c) => json(await poll(ctx, normalized(c.param('identity')), c.param('rendezvous'), c.req)) },
    {
      op: 'DELETE /identities/{identity}/enroll/{rendezvous}',
      auth: 'bearer',
      handle: async (c) => {
        await abandon(ctx, normalized(c.param('identity')), c.param('rendezvous'), c.req);
        return noContent({ 'cache-control': 'no-store' });
      },
    },
  ];
}

/** An identity's system files: any depth under system/ (one h3 wildcard). */
function systemFileRoutes(ctx: RelayContext): RelayRoute[] {
  const at = '/identities/:identity/system/**:path';
  return [
    { op: 'GET /identities/{identity}/system/{path}', at, auth: 'signed-request', handle: async (c) => getSystemFile(ctx, ownerCall(c), c.param('path')) },
    { op: 'PUT /identities/{identity}/system/{path}', at, body: SIGNED, auth: 'signed-request', handle: async (c) => putSystemFile(ctx, ownerCall(c), c.param('path')) },
    { op: 'DELETE /identities/{identity}/system/{path}', at, body: SIGNED, auth: 'signed-request', handle: async (c) => deleteSystemFile(ctx, ownerCall(c), c.param('path')) },
  ];
}

/** The relay's accepted envelope: 202 with its id. */
const jsonReply202 = (accepted: unknown): Reply => ({ status: 202, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(accepted) });

/** The bridge's metadata link on a hosted identity's host (indieauth-metadata), when a bridge is configured. */
async function bridgeLink(ctx: RelayContext, req: Request): Promise<Record<string, string>> {
  if (!ctx.config.oauthBridgeUrl) return {};
  try {
    await identityOfHost(ctx, req.headers.get('host'));
    return { link: `<${ctx.config.oauthBridgeUrl.replace(/\/$/, '')}/.well-known/oauth-authorization-server>; rel="indieauth-metadata"` };
  } catch {
    return {}; // not a hosted identity's host
  }
}

const normalized = (raw: string): string => validServiceName(raw) ?? raw.toLowerCase();

/** The error envelope as the relay sends it (with its length: node then sends it whole, not chunked). */
function envelopeReply(documentOnly: boolean, error: HttpError): Reply {
  const body = JSON.stringify(envelopeOf(documentOnly, error));
  return { status: error.status, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store', ...error.headers }, body };
}

function envelopeOf(documentOnly: boolean, error: HttpError): Record<string, unknown> {
  const body: Record<string, unknown> = error.envelope();
  if (!documentOnly) return body;
  const { rule: _r, ...rest } = body;
  return { ...rest, error: DOCUMENT_ONLY_CODES[String(body.error)] ?? body.error };
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
