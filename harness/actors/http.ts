// The harness's HTTP client (undici). It never follows redirects (a 3xx is handed back as it
// came), caps every response body (rejecting with BodyTooLargeError over the cap), may trust an
// extra CA (the test authority's) on top of the system roots, may send connections for chosen
// host names to a given address (so `https://<identity>/` reaches the test authority with the
// right SNI), keeps an optional cookie jar (one per "browser", tough-cookie), and records every
// exchange as evidence for checks.
import { lookup as dnsLookup, Resolver as DnsResolver } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { CookieJar } from 'tough-cookie';
import { trusting } from '../../protocol/common/trust.ts';

/** One request and its answer, as check evidence. Bodies are truncated to `evidenceBytes`. */
export interface Exchange {
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody?: string;
  /** The request body was longer than the evidence kept: `requestBody` is its start. */
  requestTruncated?: boolean;
  status?: number;
  headers: Record<string, string | string[]>;
  body: string;
  /** The response body was longer than the evidence kept (or over the cap). */
  truncated: boolean;
  durationMs: number;
  error?: string;
  /** A failure of the check quoted this answer: the reports show it as the failing request. */
  judged?: boolean;
}

export interface HttpResponse {
  url: string;
  status: number;
  /** Response headers, lower-case names; repeated headers joined with `, ` (set-cookie: see `setCookies`). */
  headers: Record<string, string>;
  setCookies: string[];
  /** `location` header of a 3xx, as sent (never followed). */
  location?: string;
  body: Buffer;
  text(): string;
  /** Parsed JSON body; throws HttpError when the body is not JSON. */
  json(): unknown;
  exchange: Exchange;
}

export class HttpError extends Error {
  /**
   * A reason code for a failed check (harness/run/model.ts FailureCode): `transport` when no
   * usable answer came, `shape` when it did not parse, `limit` when it was over the cap.
   */
  readonly reason: 'transport' | 'shape' | 'limit';

  constructor(
    message: string,
    readonly url: string,
    readonly exchange?: Exchange,
    reason: 'transport' | 'shape' | 'limit' = 'transport',
  ) {
    super(message);
    this.name = 'HttpError';
    this.reason = reason;
  }
}

export class BodyTooLargeError extends HttpError {
  constructor(
    url: string,
    readonly limit: number,
    readonly seen: number,
    exchange?: Exchange,
  ) {
    super(`the response body of ${url} is larger than ${limit} bytes (at least ${seen} bytes)`, url, exchange, 'limit');
    this.name = 'BodyTooLargeError';
  }
}

export interface HttpClientOptions {
  /** Extra trusted CA certificate(s), PEM; the system roots stay trusted. */
  ca?: string | readonly string[];
  /** Default body cap in bytes (default 1 MiB); each request may set its own. */
  maxBodyBytes?: number;
  /** Default time limit per request in ms (default 10 s). */
  timeoutMs?: number;
  /** Keep cookies: `true` for a fresh jar, or a jar to share. */
  cookies?: boolean | CookieJar;
  /** Send connections for these host names to these addresses (`{ 'alice.id.test': '127.4.5.6' }`). */
  hosts?: Readonly<Record<string, string>>;
  /** Resolve every other non-IP host name with A queries to this DNS server (`IP:PORT`). */
  dnsServer?: string;
  /** With `dnsServer`: a name it does not know (NXDOMAIN) goes to the system resolver. */
  dnsFallback?: boolean;
  /** Response bytes kept in each exchange's evidence (default 4096). */
  evidenceBytes?: number;
  /** Called with every exchange (also kept in `exchanges`, the last `keepExchanges`, default 200). */
  onExchange?: (exchange: Exchange) => void;
  keepExchanges?: number;
  /** Sent with every request unless the request sets it. */
  userAgent?: string;
  /** The local address its connections leave from (a loopback address of its own: a caller the target tells apart). */
  localAddress?: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** A string or bytes as is; any other value is sent as JSON with `content-type: application/json`. */
  body?: string | Uint8Array | Record<string, unknown> | unknown[];
  /** A body sent part by part as the parts come (instead of `body`): a check that times its bytes. */
  parts?: AsyncIterable<Uint8Array>;
  signal?: AbortSignal;
  maxBodyBytes?: number;
  timeoutMs?: number;
  /** Do not read or store cookies for this request even when the client has a jar. */
  noCookies?: boolean;
}

const DEFAULT_CAP = 1024 * 1024;
const DEFAULT_TIMEOUT = 10_000;

export class HttpClient {
  readonly jar?: CookieJar;
  readonly exchanges: Exchange[] = [];
  readonly #agent: Agent;
  readonly #options: HttpClientOptions;

  constructor(options: HttpClientOptions = {}) {
    this.#options = options;
    if (options.cookies) this.jar = options.cookies === true ? new CookieJar(undefined, { allowSecureOnLocal: true }) : options.cookies;
    const extra = options.ca === undefined ? [] : typeof options.ca === 'string' ? [options.ca] : [...options.ca];
    const connect: Record<string, unknown> = {};
    Object.assign(connect, trusting(extra));
    if (options.hosts || options.dnsServer) connect.lookup = makeLookup(options.hosts ?? {}, options.dnsServer, options.dnsFallback === true);
    // undici's own option: a `localAddress` in `connect` is overwritten by the client's.
    this.#agent = new Agent({
      connect,
      headersTimeout: options.timeoutMs ?? DEFAULT_TIMEOUT,
      bodyTimeout: options.timeoutMs ?? DEFAULT_TIMEOUT,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
  }

  /** A client with the same TLS, host and evidence settings and its own, empty cookie jar. */
  withCookieJar(): HttpClient {
    return new HttpClient({ ...this.#options, cookies: true });
  }

  get(url: string, options: Omit<RequestOptions, 'method' | 'body'> = {}): Promise<HttpResponse> {
    return this.request(url, { ...options, method: 'GET' });
  }

  post(url: string, body: RequestOptions['body'], options: Omit<RequestOptions, 'method' | 'body'> = {}): Promise<HttpResponse> {
    return this.request(url, { ...options, method: 'POST', body });
  }

  async request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const method = (options.method ?? 'GET').toUpperCase();
    const cap = options.maxBodyBytes ?? this.#options.maxBodyBytes ?? DEFAULT_CAP;
    const evidence = this.#options.evidenceBytes ?? 4096;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
    if (this.#options.userAgent && headers['user-agent'] === undefined) headers['user-agent'] = this.#options.userAgent;
    let body: string | Uint8Array | undefined;
    if (options.body !== undefined) {
      if (typeof options.body === 'string' || options.body instanceof Uint8Array) body = options.body;
      else {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
    }
    const useJar = this.jar !== undefined && !options.noCookies;
    if (useJar) {
      const cookie = await this.jar!.getCookieString(url);
      if (cookie) headers.cookie = cookie;
    }
    const exchange: Exchange = { method, url, requestHeaders: { ...headers }, headers: {}, body: '', truncated: false, durationMs: 0 };
    if (body !== undefined) {
      const sent = truncate(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'), evidence);
      exchange.requestBody = sent.text;
      if (sent.truncated) exchange.requestTruncated = true;
    } else if (options.parts) exchange.requestBody = '(sent in parts)';
    const started = performance.now();
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const res = await request(url, {
        method: method as 'GET',
        headers,
        ...(body !== undefined ? { body } : options.parts ? { body: Readable.from(options.parts, { objectMode: false }) } : {}),
        dispatcher: this.#agent,
        signal,
      });
      exchange.status = res.statusCode;
      exchange.headers = res.headers as Record<string, string | string[]>;
      const setCookies = asList(res.headers['set-cookie']);
      if (useJar) {
        for (const c of setCookies) await this.jar!.setCookie(c, url, { ignoreError: true });
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > cap) {
        res.body.destroy();
        exchange.truncated = true;
        throw new BodyTooLargeError(url, cap, declared, exchange);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        size += buf.length;
        if (size > cap) {
          chunks.push(buf);
          res.body.destroy();
          const seen = Buffer.concat(chunks);
          exchange.body = truncate(seen.toString('utf8'), evidence).text;
          exchange.truncated = true;
          throw new BodyTooLargeError(url, cap, size, exchange);
        }
        chunks.push(buf);
      }
      const bytes = Buffer.concat(chunks);
      const kept = truncate(bytes.toString('utf8'), evidence);
      exchange.body = kept.text;
      exchange.truncated = kept.truncated;
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      const response: HttpResponse = {
        url,
        status: res.statusCode,
        headers: flat,
        setCookies,
        body: bytes,
        text: () => bytes.toString('utf8'),
        json: () => {
          try {
            return JSON.parse(bytes.toString('utf8')) as unknown;
          } catch {
            throw new HttpError(`the response of ${method} ${url} (${res.statusCode}) is not JSON`, url, exchange, 'shape');
          }
        },
        exchange,
      };
      if (flat.location !== undefined) response.location = flat.location;
      return response;
    } catch (error) {
      if (exchange.error === undefined) exchange.error = (error as Error).message;
      if (error instanceof HttpError) throw error;
      const why = timeout.aborted && !options.signal?.aborted ? `timed out after ${options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT} ms` : describe(error);
      throw new HttpError(`${method} ${url} failed: ${why}`, url, exchange);
    } finally {
      exchange.durationMs = Math.round(performance.now() - started);
      this.#record(exchange);
    }
  }

  /** Cookies the jar would send to `url` (name -> value). */
  async cookiesFor(url: string): Promise<Record<string, string>> {
    if (!this.jar) return {};
    const list = await this.jar.getCookies(url);
    return Object.fromEntries(list.map((c) => [c.key, c.value]));
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  #record(exchange: Exchange): void {
    this.exchanges.push(exchange);
    const keep = this.#options.keepExchanges ?? 200;
    if (this.exchanges.length > keep) this.exchanges.splice(0, this.exchanges.length - keep);
    this.#options.onExchange?.(exchange);
  }
}

function asList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function truncate(text: string, max: number): { text: string; truncated: boolean } {
  return text.length > max ? { text: `${text.slice(0, max)}…`, truncated: true } : { text, truncated: false };
}

function describe(error: unknown): string {
  const e = error as Error & { code?: string; cause?: Error & { code?: string } };
  const cause = e.cause ? `: ${e.cause.code ?? ''} ${e.cause.message}`.trimEnd() : '';
  return `${e.code ? `${e.code} ` : ''}${e.message}${cause}`;
}

/** A net/tls `lookup` that maps chosen names (and, with a DNS server, every name it knows, or every name) to addresses. */
function makeLookup(hosts: Readonly<Record<string, string>>, dnsServer: string | undefined, fallback: boolean): LookupFunction {
  let resolver: DnsResolver | undefined;
  if (dnsServer) {
    resolver = new DnsResolver({ timeout: 2000, tries: 1 });
    resolver.setServers([dnsServer]);
  }
  return ((hostname: string, options: { all?: boolean } | number, callback: (err: Error | null, address: unknown, family?: number) => void) => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    const answer = (address: string) => {
      const family = isIP(address) === 6 ? 6 : 4;
      if (all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const fixed = hosts[hostname.toLowerCase()];
    if (fixed) return answer(fixed);
    if (isIP(hostname)) return answer(hostname);
    if (resolver) {
      resolver.resolve4(hostname, (err, addresses) => {
        if (fallback && err?.code === 'ENOTFOUND') dnsLookup(hostname, options as never, callback as never);
        else if (err || !addresses[0]) callback(err ?? new Error(`no A record for ${hostname}`), undefined);
        else answer(addresses[0]);
      });
      return;
    }
    dnsLookup(hostname, options as never, callback as never);
  }) as LookupFunction;
}

/**
 * How a suite's clients reach its target: the test authority's CA trusted and its DNS asked
 * first, the system resolver for names it does not know. A target on a name the authority
 * publishes (a reference over https, Authority.serverName) is reached like any other.
 */
export async function viaAuthority(authority: { info(): Promise<{ caPem: string; dnsServer: string }> }): Promise<Pick<HttpClientOptions, 'ca' | 'dnsServer' | 'dnsFallback'>> {
  const { caPem, dnsServer } = await authority.info();
  return { ca: caPem, dnsServer, dnsFallback: true };
}
