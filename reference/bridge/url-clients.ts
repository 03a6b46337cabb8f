// URL client IDs (document 2, Clients 3): a client_id that is an https URL names its own client
// ID metadata document. The bridge fetches it under the document's fetch rules (ob.clients.url-*):
// HTTPS only, no redirects, never to a private address (checked on the address actually
// connected to, so a DNS answer cannot rebind past it), 16 KiB, 5 seconds, cached per the HTTP
// cache headers clamped to 5 minutes .. 24 hours. A 404 means "no document published": the client
// may then only return to its own origin. A private_key_jwt client's key set is fetched the same way.
import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import type { JSONWebKeySet } from 'jose';
import { clientIdUrl, privateAddress, urlClientCacheSeconds, urlClientDocument, URL_CLIENT_FETCH, type UrlClientDocument } from '../../protocol/bridge/url-client.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';
import { Dns } from '../resolve/dns.ts';
import type { Client } from './client.ts';
import type { UrlClientSeams } from './url-client-seams.ts';
import { urlClientSeams } from '../variants/url-clients.ts';
import { trusting } from '../../protocol/common/trust.ts';

export interface UrlClientOptions {
  /** `HOST:PORT` of the DNS server to ask (a test authority); default: the system's. */
  dnsServer?: string;
  /** PEM file of an extra CA to trust (a test authority's). */
  caFile?: string;
  /**
   * Addresses treated as public although they are private (tests only: the test authority's one
   * loopback address, so the harness can host client documents; every other private address
   * stays refused).
   */
  publicAddresses?: readonly string[];
  /** The bridge's --break flags (the suite's sensitivity tests): the seams they replace, see reference/variants/url-clients.ts. */
  breakage?: ReadonlySet<string>;
  now?: () => number;
}

/** Why a URL client cannot be used (the text goes on the error page) and the rule that refuses it. */
export class UrlClientError extends Error {
  constructor(
    message: string,
    readonly rule: RuleId,
  ) {
    super(message);
  }
}

interface Cached {
  client: Client;
  until: number;
}

const CACHE_MAX = 10_000;

type LookupCallback = (error: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

export class UrlClients {
  readonly #agent: Agent;
  /** The agent, or (a broken variant) the agent following redirects. */
  readonly #dispatcher: Dispatcher;
  /** The decisions a broken variant replaces (url-client-seams.ts); the reference's own otherwise. */
  readonly seams: UrlClientSeams;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, Cached>();
  readonly #inflight = new Map<string, Promise<Client>>();
  readonly #keySets = new Map<string, { jwks: JSONWebKeySet; until: number }>();
  /** Whether a fetch may connect to `address` (the lookup's rule, also for URLs naming an IP). */
  readonly #allowed: (address: string) => boolean;

  constructor(options: UrlClientOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.seams = urlClientSeams(options.breakage ?? new Set());
    this.#timeoutMs = this.seams.timeoutMs();
    const exempt = new Set(options.publicAddresses ?? []);
    this.#allowed = (address) => !this.seams.privateRefused(address) || !privateAddress(address) || exempt.has(address);
    const dns = options.dnsServer !== undefined ? new Dns({ server: options.dnsServer, timeoutMs: URL_CLIENT_FETCH.timeoutMs }).lookup() : undefined;
    const base = (dns ?? systemLookup) as (host: string, opts: { all: true }, cb: LookupCallback) => void;
    // Every address the host resolves to must be public: a host with one private answer is refused
    // whole, so the connection can never land on the private one.
    const guarded = (hostname: string, _opts: unknown, callback: LookupCallback) => {
      base(hostname, { all: true }, (error, found) => {
        if (error) return callback(error);
        const list = (found ?? []) as LookupAddress[];
        const bad = list.find((a) => !this.#allowed(a.address));
        if (list.length === 0 || bad) {
          return callback(Object.assign(new Error(`${hostname} resolves to a private address (${bad?.address ?? 'none'})`), { code: 'EPRIVATE' }));
        }
        const wantsAll = typeof _opts === 'object' && _opts !== null && (_opts as { all?: boolean }).all === true;
        if (wantsAll) callback(null, list);
        else callback(null, list[0]!.address, list[0]!.family);
      });
    };
    const extra = options.caFile !== undefined ? readFileSync(options.caFile, 'utf8') : undefined;
    this.#agent = new Agent({
      connect: { timeout: this.#timeoutMs, lookup: guarded as never, ...trusting(extra) },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
    });
    const redirects = this.seams.redirectsFollowed();
    this.#dispatcher = redirects > 0 ? this.#agent.compose(interceptors.redirect({ maxRedirections: redirects })) : this.#agent;
  }

  /** Whether a client_id names a URL client at all (then only this module can answer for it). */
  static isUrlClientId(clientId: string): boolean {
    return /^https?:\/\//i.test(clientId);
  }

  /** The last known client, fresh or stale, without fetching. */
  cached(clientId: string): Client | undefined {
    return this.#cache.get(clientId)?.client;
  }

  /**
   * The client for a URL client ID. `fresh` (an authorization request) fetches again when the
   * cache time is up; otherwise a stale entry is good enough (a transaction already begun).
   */
  async get(clientId: string, fresh: boolean): Promise<Client> {
    const hit = this.#cache.get(clientId);
    if (hit && (!fresh || hit.until > this.#now())) return hit.client;
    let pending = this.#inflight.get(clientId);
    if (!pending) {
      pending = this.#fetchClient(clientId).finally(() => this.#inflight.delete(clientId));
      this.#inflight.set(clientId, pending);
    }
    return pending;
  }

  /** A linked key set (a console client's jwks_uri), fetched under the same rules and cached alike. */
  async keySet(url: string): Promise<JSONWebKeySet> {
    const hit = this.#keySets.get(url);
    if (hit && hit.until > this.#now()) return hit.jwks;
    if (!/^https:\/\//i.test(url)) throw new UrlClientError(`${url}: a key set is fetched over HTTPS only`, 'ob.clients.url-fetch-https');
    const got = await this.#fetchJson(url);
    const jwks = got.body as JSONWebKeySet | undefined;
    if (got.status !== 200 || !Array.isArray(jwks?.keys)) throw new UrlClientError(`the key set at ${url} is not usable`, 'ob.token.client-auth');
    if (this.#keySets.size >= CACHE_MAX) this.#keySets.clear();
    this.#keySets.set(url, { jwks, until: this.#now() + got.cacheSeconds * 1000 });
    return jwks;
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #fetchClient(clientId: string): Promise<Client> {
    const parsed = clientIdUrl(this.seams.checkedAs(clientId));
    if (!parsed.ok) throw new UrlClientError(`${clientId} is not a usable client ID URL: ${parsed.reason}`, /^http:/i.test(clientId) ? 'ob.clients.url-fetch-https' : 'ob.clients.url-document');
    const got = await this.#fetchJson(clientId);
    let document: UrlClientDocument | undefined;
    if (got.status === 200) {
      const checked = urlClientDocument(clientId, this.seams.document(clientId, got.body));
      if (!checked.ok)
        throw new UrlClientError(
          `the client document at ${clientId} is refused: ${checked.reason}`,
          /client_secret|private_key_jwt/.test(checked.reason) ? 'ob.clients.url-client-secret-refused' : /redirect_uris/.test(checked.reason) ? 'ob.clients.url-redirect' : 'ob.clients.url-document',
        );
      document = checked.value;
    }
    const client: Client = {
      clientId,
      name: document?.name ?? parsed.value.host,
      redirectUris: document?.redirectUris ?? [],
      authMethod: document?.authMethod ?? 'none',
      secretHashes: [],
      firstParty: false,
      // The sector of a URL client is the host of its client_id (document 2, Pairwise subject).
      sector: this.seams.sector(parsed.value.hostname, clientId),
      owner: parsed.value.host,
      suspended: false,
      url: { published: this.seams.published(document !== undefined), ...(document?.logoUri ? { logoUri: document.logoUri } : {}) },
    };
    if (document?.jwksUri !== undefined) {
      const keys = await this.#fetchJson(document.jwksUri);
      const jwks = keys.body as JSONWebKeySet | undefined;
      if (keys.status !== 200 || !Array.isArray(jwks?.keys)) throw new UrlClientError(`the key set at ${document.jwksUri} is not usable`, 'ob.clients.url-client-secret-refused');
      client.jwks = jwks;
    }
    if (this.#cache.size >= CACHE_MAX) this.#cache.clear();
    this.#cache.set(clientId, { client, until: this.#now() + this.seams.cacheSeconds(got.cacheSeconds) * 1000 });
    return client;
  }

  /** One GET under the fetch rules: 200 with a JSON body, or 404/410 (nothing published). */
  async #fetchJson(url: string): Promise<{ status: 200 | 404; body?: unknown; cacheSeconds: number }> {
    // A URL naming an address connects without a lookup: the same rule applies to it here.
    const literal = URL.canParse(url) ? new URL(url).hostname.replace(/^\[|\]$/g, '') : '';
    if (isIP(literal) !== 0 && !this.#allowed(literal)) throw new UrlClientError(`${url} is refused: ${literal} is a private address`, 'ob.clients.url-fetch-private');
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, { dispatcher: this.#dispatcher, method: 'GET', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const code = (error as { code?: string }).code ?? cause?.code;
      if (code === 'EPRIVATE' || cause?.code === 'EPRIVATE') throw new UrlClientError(`${url} is refused: ${(cause ?? (error as Error)).message}`, 'ob.clients.url-fetch-private');
      if ((error as Error).name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
        throw new UrlClientError(`${url} gave no answer within ${URL_CLIENT_FETCH.timeoutMs / 1000} s`, 'ob.clients.url-fetch-timeout');
      throw new UrlClientError(`${url} could not be fetched (${code ?? (error as Error).message})`, 'ob.clients.url-document');
    }
    const headers = res.headers;
    const header = (name: string) => {
      const v = headers[name];
      return Array.isArray(v) ? v.join(', ') : (v ?? null);
    };
    const cacheSeconds = urlClientCacheSeconds({ cacheControl: header('cache-control'), expires: header('expires'), date: header('date') }, this.#now());
    if (res.statusCode === 404 || res.statusCode === 410) {
      await res.body.dump().catch(() => undefined);
      return { status: 404, cacheSeconds };
    }
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => undefined);
      const redirected = res.statusCode >= 300 && res.statusCode < 400;
      throw new UrlClientError(`${url} answered ${res.statusCode}${redirected ? ': redirects are not followed' : ''}`, redirected ? 'ob.clients.url-fetch-no-redirect' : 'ob.clients.url-document');
    }
    const cap = this.seams.sizeCap();
    const declared = Number(header('content-length') ?? NaN);
    if (declared > cap) {
      res.body.destroy();
      throw new UrlClientError(`${url} is larger than ${URL_CLIENT_FETCH.maxBytes} bytes`, 'ob.clients.url-fetch-size');
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of res.body) {
        total += (chunk as Buffer).length;
        if (total > cap) {
          res.body.destroy();
          throw new UrlClientError(`${url} is larger than ${URL_CLIENT_FETCH.maxBytes} bytes`, 'ob.clients.url-fetch-size');
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      if (error instanceof UrlClientError) throw error;
      const code = (error as { code?: string }).code;
      if ((error as Error).name === 'TimeoutError' || code === 'UND_ERR_BODY_TIMEOUT')
        throw new UrlClientError(`${url} gave no answer within ${URL_CLIENT_FETCH.timeoutMs / 1000} s`, 'ob.clients.url-fetch-timeout');
      throw new UrlClientError(`${url}: reading the body failed (${(error as Error).message})`, 'ob.clients.url-document');
    }
    try {
      return { status: 200, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), cacheSeconds };
    } catch {
      throw new UrlClientError(`${url} is not JSON`, 'ob.clients.url-document');
    }
  }
}
