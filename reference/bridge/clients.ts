// The client registry (document 2, Clients). This reference loads static clients from the file
// named by OAUTH_STATIC_CLIENTS (ob.contract.clients: the registered-client schema, secrets as
// SHA-256 only) and authenticates them at /token, /revoke and /introspect by the method each one
// registered (ob.token.client-auth). URL client IDs come from url-clients.ts through the same
// registry interface (document 2: "All kinds feed one registry interface").
import { readFileSync } from 'node:fs';
import { jwtVerify, type JSONWebKeySet } from 'jose';
import { matchRedirect, registrableRedirect, sectorOf } from '../../protocol/bridge/redirect.ts';
import { urlClientRedirectAllowed, verifiedHost } from '../../protocol/bridge/url-client.ts';
import { URL_CLIENT_SEAMS } from './url-client-seams.ts';
import type { AssertionSeams, AuthMethod, Client } from './client.ts';
import { UrlClientError, UrlClients } from './url-clients.ts';
import { hashSecret, sameHash } from '../shared/secrets.ts';
import type { NonceStore } from '../../protocol/signin/nonce.ts';

export type { AuthMethod, Client } from './client.ts';

const METHODS: readonly AuthMethod[] = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'];

export class ClientFileError extends Error {}

/** Reads and validates a static clients file (`{clients: [...]}`). */
export function loadStaticClients(path: string): Client[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ClientFileError(`cannot read the static clients file ${path}: ${(error as Error).message}`);
  }
  const entries = (data as { clients?: unknown })?.clients;
  if (!Array.isArray(entries)) throw new ClientFileError(`${path}: expected {"clients": [...]}`);
  const seen = new Set<string>();
  return entries.map((raw: unknown, i) => {
    const bad = (why: string) => new ClientFileError(`${path}: clients[${i}]: ${why}`);
    if (raw === null || typeof raw !== 'object') throw bad('not an object');
    const c = raw as Record<string, unknown>;
    if (typeof c.client_id !== 'string' || c.client_id === '' || seen.has(c.client_id)) throw bad('client_id must be a unique non-empty string');
    seen.add(c.client_id);
    const uris = c.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u): u is string => typeof u === 'string' && registrableRedirect(u))) {
      throw bad('redirect_uris must be HTTPS or loopback http URIs');
    }
    const method = (c.token_endpoint_auth_method ?? 'client_secret_basic') as AuthMethod;
    if (!METHODS.includes(method)) throw bad(`token_endpoint_auth_method must be one of ${METHODS.join(', ')}`);
    const hashes = c.client_secret_sha256 === undefined ? [] : Array.isArray(c.client_secret_sha256) ? c.client_secret_sha256 : [c.client_secret_sha256];
    if (!hashes.every((h): h is string => typeof h === 'string' && /^[A-Za-z0-9_-]{43}$/.test(h))) throw bad('client_secret_sha256 must be base64url SHA-256 (svc-oauth hash-secret)');
    if (method.startsWith('client_secret') && hashes.length === 0) throw bad(`${method} needs client_secret_sha256`);
    if (method === 'private_key_jwt' && (c.jwks === null || typeof c.jwks !== 'object' || !Array.isArray((c.jwks as { keys?: unknown }).keys))) throw bad('private_key_jwt needs jwks');
    const client: Client = {
      clientId: c.client_id,
      name: typeof c.client_name === 'string' ? c.client_name : c.client_id,
      redirectUris: uris,
      authMethod: method,
      secretHashes: hashes,
      firstParty: c.first_party === true,
      sector: sectorOf(uris, typeof c.sector_host === 'string' ? c.sector_host : undefined),
      owner: typeof c.owner === 'string' ? c.owner : 'operator',
      suspended: c.suspended === true,
    };
    if (method === 'private_key_jwt') client.jwks = c.jwks as JSONWebKeySet;
    return client;
  });
}

export class ClientRegistry {
  readonly #clients = new Map<string, Client>();
  #registered = new Map<string, Client>();
  #suspended: ReadonlySet<string> = new Set();

  constructor(
    clients: readonly Client[] = [],
    /** Fetches URL client documents and linked key sets. */
    readonly urlClients?: UrlClients,
    /** Whether a client_id that is a URL names a client (OAUTH_URL_CLIENTS indieauth or on). */
    readonly urlClientIds = urlClients !== undefined,
  ) {
    for (const c of clients) this.#clients.set(c.clientId, c);
  }

  /**
   * Any kind of client. A URL client ID is fetched when unknown, and again when `fresh` (an
   * authorization request) finds its cache time up; a refused document throws UrlClientError.
   */
  async resolve(clientId: string, fresh = false): Promise<Client | undefined> {
    if (this.#clients.has(clientId) || this.#registered.has(clientId)) return this.get(clientId);
    if (!this.urlClients || !this.urlClientIds || !UrlClients.isUrlClientId(clientId)) return undefined;
    // Not this.get(): its cached URL client would outlive the cache time (ob.clients.url-fetch-cache).
    const c = await this.urlClients.get(clientId, fresh);
    return c.suspended || this.urlClients.seams.suspensionHeld(this.#suspended.has(clientId)) ? undefined : c;
  }

  /** Applications the operator suspended (from the database; see svc-oauth clients suspend). */
  setSuspended(ids: readonly string[]): void {
    this.#suspended = new Set(ids);
  }

  /** The console's clients (from the database), replacing the previous set; a static client of the same id wins. */
  setRegistered(clients: readonly Client[]): void {
    this.#registered = new Map(clients.map((c) => [c.clientId, c]));
  }

  /** A static or registered client, or the last known URL client (no fetch). */
  get(clientId: string): Client | undefined {
    const c = this.#clients.get(clientId) ?? this.#registered.get(clientId) ?? (this.urlClientIds ? this.urlClients?.cached(clientId) : undefined);
    return c && !c.suspended && !this.#suspended.has(clientId) ? c : undefined;
  }

  /** The static clients (read-only in the console). */
  all(): Client[] {
    return [...this.#clients.values()];
  }
}

export const isPublic = (c: Client) => c.authMethod === 'none';

/**
 * The redirect a request may use (ob.authorize.redirect-exact, ob.clients.url-redirect): an exact
 * registered URI (loopback port free for public clients); for a URL client that published no
 * document, any URI on the client_id's own origin.
 */
export function allowedRedirect(client: Client, asked: string): boolean {
  if (matchRedirect(asked, client.redirectUris, isPublic(client)) !== undefined) return true;
  return client.url !== undefined && !client.url.published && urlClientRedirectAllowed(client.clientId, undefined, asked);
}

/**
 * Whether consent may call the redirect host verified (ob.clients.url-consent): for a URL client,
 * the redirect is on the client_id's own host; other clients were registered with their hosts.
 */
export const hostVerified = (ctx: { clients: Pick<ClientRegistry, 'urlClients'> }, client: Client, redirectUri: string): boolean =>
  client.url ? (ctx.clients.urlClients?.seams ?? URL_CLIENT_SEAMS).hostVerified(verifiedHost(client.clientId, redirectUri)) : true;

export { UrlClientError };

export interface PresentedAuth {
  method: AuthMethod;
  clientId: string;
  secret?: string;
  assertion?: string;
}

export class ClientAuthError extends Error {}

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** What the request presents: Basic header, form secret, client assertion, or client_id alone. */
export function presentedAuth(headers: Headers, form: URLSearchParams): PresentedAuth | undefined {
  const authz = headers.get('authorization');
  if (authz !== null && /^basic /i.test(authz)) {
    const decoded = Buffer.from(authz.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new ClientAuthError('malformed Basic credentials');
    // RFC 6749 section 2.3.1: both parts are form-urlencoded.
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    try {
      return { method: 'client_secret_basic', clientId: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
    } catch {
      throw new ClientAuthError('malformed Basic credentials');
    }
  }
  const assertion = form.get('client_assertion');
  if (assertion !== null) {
    if (form.get('client_assertion_type') !== ASSERTION_TYPE) throw new ClientAuthError(`client_assertion_type must be ${ASSERTION_TYPE}`);
    let clientId = form.get('client_id');
    if (clientId === null) {
      try {
        const payload = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
        clientId = typeof payload.sub === 'string' ? payload.sub : null;
      } catch {
        clientId = null;
      }
    }
    if (clientId === null) throw new ClientAuthError('the client assertion names no client');
    return { method: 'private_key_jwt', clientId, assertion };
  }
  const clientId = form.get('client_id');
  if (clientId === null) return undefined;
  const secret = form.get('client_secret');
  return secret !== null ? { method: 'client_secret_post', clientId, secret } : { method: 'none', clientId };
}

/** Authenticates a client by its registered method; throws ClientAuthError on any mismatch. */
export async function authenticateClient(registry: ClientRegistry, presented: PresentedAuth | undefined, audiences: string[], nonces: NonceStore, seams: AssertionSeams): Promise<Client> {
  if (!presented) throw new ClientAuthError('no client authentication');
  let client: Client | undefined;
  try {
    client = await registry.resolve(presented.clientId);
  } catch (error) {
    if (error instanceof UrlClientError) throw new ClientAuthError(error.message);
    throw error;
  }
  if (!client) throw new ClientAuthError('unknown client');
  if (client.url !== undefined && presented.secret !== undefined && registry.urlClients?.seams.secretTaken()) return client;
  if (client.authMethod !== presented.method) throw new ClientAuthError(`this client authenticates with ${client.authMethod}`);
  if (presented.method === 'client_secret_basic' || presented.method === 'client_secret_post') {
    const h = hashSecret(presented.secret ?? '');
    if (!client.secretHashes.some((s) => sameHash(s, h))) throw new ClientAuthError('wrong client secret');
  } else if (presented.method === 'private_key_jwt') {
    try {
      const jwks = client.jwks ?? (client.jwksUri !== undefined && registry.urlClients ? await registry.urlClients.keySet(client.jwksUri) : undefined);
      if (!jwks) throw new Error('the client has no key set');
      const { payload } = await jwtVerify(presented.assertion!, seams.assertionKeys(jwks), seams.assertionClaims(client.clientId, audiences));
      if (typeof payload.jti !== 'string' || typeof payload.exp !== 'number') throw new Error('jti and exp are required');
      if (seams.assertionSpends() && !(await nonces.claim(`client-assertion:${client.clientId}:${payload.jti}`, payload.exp * 1000))) throw new Error('this client assertion was already used');
    } catch (error) {
      throw new ClientAuthError(`the client assertion does not verify: ${(error as Error).message}`);
    }
  }
  return client;
}
