// The rp suite's driver: how the harness talks to an RP under test, over HTTP only. It starts
// transactions through the start contract (ns.start.contract), delivers approvals, polls, resumes
// and reads the metadata, and records every exchange of a check as its evidence. Nothing here
// knows the reference RP: only the spec (rp.openapi.yaml) and the profile's identifiers.
import { CheckFailure, CheckSkip } from '../../run/verdict.ts';
import { errorCode, isObject, refusedWith, safeJson, said, statusIn } from '../../run/answers.ts';
import { once } from '../../run/once.ts';
import { randomBytes } from 'node:crypto';
import { HttpClient, HttpError, type Exchange, type HttpClientOptions, type HttpResponse } from '../../actors/http.ts';
import type { AuthorityControl } from '../../actors/authority/types.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import { decodeObject, encodeObject } from '../../../protocol/common/codec.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import { makeSessionProof, signApproval, type SessionKey } from '../../../protocol/signin/signer.ts';
import { formatRfc3339, parseRfc3339 } from '../../../protocol/common/time.ts';
import { normalizeOrigin, urlOrigin } from '../../../protocol/common/url.ts';
import { limits } from '../../../schemas/ts/limits.ts';

/** Where the RP under test lives and what the harness may use to test it. */
/** Another instance of the RP under test: its origin, and its start URL at the same path. */
export interface RpInstance {
  origin: string;
  startUrl: string;
}

export interface RpTarget {
  profile: Profile;
  /** The RP's origin (the `audience` of its requests), normalized. */
  origin: string;
  /** The start contract URL (POST with Accept: application/json). */
  startUrl: string;
  /**
   * The login page a browser opens. `explicit` is false when it defaulted to the start URL: a
   * check that needs the page then skips with a reason when that URL serves no page.
   */
  loginPage: { url: string; explicit: boolean };
  /** Base URLs of the processes of this RP (same origin, shared stores); at least the origin. */
  processes: string[];
  /** The test identity authority the RP resolves identities through. */
  authority: AuthorityControl;
  /** An instance of the same RP whose nonce store is unreachable (enables the fail-closed check). */
  brokenStore?: RpInstance;
  /** An instance of the same RP whose requests live a few seconds (the expiry checks wait out its window). */
  shortWindow?: RpInstance;
  /** Time limit of one HTTP request to the target (ms). */
  requestTimeoutMs: number;
  /** How the harness's clients resolve and trust the RP (set by the suite: through the authority). */
  network?: Pick<HttpClientOptions, 'ca' | 'dnsServer' | 'dnsFallback'>;
  /** What the target declares about itself, for checks that probe limits the documents leave open. */
  declared: {
    /** How long its resume code lives (document 1 Limits: "short-lived"; the reference: 60 s). */
    resumeCodeLifetimeS: number;
    /** Its delivery body cap in bytes (a project decision; default the project's). */
    deliveryBodyMaxBytes: number;
  };
  /** What the RP publishes, fetched once per run and shared by every check (set by the suite). */
  published?: () => Promise<Published>;
}

/** The URLs the RP publishes in its metadata, with the profile's paths where it publishes none. */
export interface Published {
  /** The metadata document as fetched (undefined when it is not a JSON object). */
  metadata?: Record<string, unknown>;
  responseUris: string[];
  pollUri: string;
  contextUri?: string;
  /** Why a URL fell back to the profile's path (shown as a note in the checks that use it). */
  notes: string[];
}

/** Reads the metadata once and the URLs it publishes; the profile's paths only where it is silent. */
export async function fetchPublished(target: RpTarget): Promise<Published> {
  const client = new HttpClient({ ...target.network, timeoutMs: target.requestTimeoutMs });
  try {
    const r = await client.get(`${target.origin}${target.profile.ids.metadata_path}`, { headers: { accept: 'application/json' }, maxBodyBytes: limits.metadata_body_max_bytes * 4 });
    const doc = safeJson(r);
    const metadata = isObject(doc) ? doc : undefined;
    const notes: string[] = [];
    const uri = (v: unknown): string | undefined => (typeof v === 'string' && urlOrigin(v) !== undefined ? v : undefined);
    const responseUris = Array.isArray(metadata?.response_uris) ? (metadata.response_uris as unknown[]).map(uri).filter((u): u is string => u !== undefined) : [];
    let pollUri = uri(metadata?.poll_uri);
    if (pollUri === undefined) {
      pollUri = `${target.origin}${target.profile.ids.rp_poll_path}`;
      notes.push(`the metadata publishes no poll_uri: polling the profile's path ${pollUri}`);
    }
    const contextUri = uri(metadata?.context_uri);
    return { ...(metadata ? { metadata } : {}), responseUris, pollUri, ...(contextUri ? { contextUri } : {}), notes };
  } finally {
    await client.close();
  }
}

export interface Started {
  response: HttpResponse;
  /** The encoded request as the RP handed it out. */
  encoded: string;
  request: Record<string, unknown>;
  requestUri?: string;
  pollSecret: string;
  matchCode: string;
  /** The browser that started it (holds the binding cookie). */
  browser: HttpClient;
}

export interface TestIdentity {
  identity: string;
  seed: Uint8Array;
}

export type DeliveryForm = 'bare' | 'object' | 'raw-json' | 'padded';

/** One check's conversation with the RP: its clients, and every exchange as evidence. */
/** The start contract refused: `unsupported` when it named the options as unsupported (ns.start.options). */
export class StartRefused extends CheckFailure {
  readonly unsupported: boolean;

  constructor(
    readonly response: HttpResponse,
    message: string,
  ) {
    super(message);
    this.unsupported = refusedWith(response, 400, 'start_option_unsupported');
  }
}

export class Session {
  readonly exchanges: Exchange[] = [];
  readonly notes: string[] = [];
  readonly #clients: HttpClient[] = [];
  readonly signer: HttpClient;

  constructor(
    readonly target: RpTarget,
    readonly signal?: AbortSignal,
  ) {
    this.signer = this.client(false);
  }

  get profile(): Profile {
    return this.target.profile;
  }

  /** A new HTTP client; with cookies it plays a browser with its own jar. */
  client(cookies = true): HttpClient {
    const c = new HttpClient({ ...this.target.network, cookies, timeoutMs: this.target.requestTimeoutMs, evidenceBytes: 2048, keepExchanges: 0, onExchange: (e) => void this.exchanges.push(e) });
    this.#clients.push(c);
    return c;
  }

  note(text: string): void {
    this.notes.push(text);
  }

  async close(): Promise<void> {
    await Promise.all(this.#clients.map((c) => c.close().catch(() => undefined)));
  }

  evidence(): unknown {
    return { ...(this.notes.length > 0 ? { notes: this.notes } : {}), exchanges: this.exchanges.slice(-40) };
  }

  // ---- start contract ----

  /** POST the start URL as a fresh browser (ns.start.contract); throws CheckFailure when it is not met. */
  async start(options?: { action?: string; scopes?: string[]; statement?: string }, startUrl = this.target.startUrl): Promise<Started> {
    const browser = this.client(true);
    const response = await browser.post(startUrl, options ?? {}, { headers: { accept: 'application/json' }, ...this.#sig() });
    if (response.status !== 201) throw new StartRefused(response, `the start contract answered ${said(response)}, expected 201 (POST ${startUrl} with Accept: application/json)`);
    const body = safeJson(response);
    if (!isObject(body)) throw new CheckFailure('the start result is not a JSON object');
    const { request: encoded, poll_secret: pollSecret, match_code: matchCode, request_uri: requestUri } = body;
    if (typeof encoded !== 'string' || typeof pollSecret !== 'string' || typeof matchCode !== 'string') {
      throw new CheckFailure('the start result lacks request, poll_secret or match_code (strings)');
    }
    const decoded = decodeObject(encoded);
    if (!decoded.ok) throw new CheckFailure(`the start result's request does not decode: ${decoded.reason}`);
    const started: Started = { response, encoded, request: decoded.value, pollSecret, matchCode, browser };
    if (typeof requestUri === 'string') started.requestUri = requestUri;
    return started;
  }

  /**
   * Starts with `options`, or without them when the RP refuses them as document 1 allows (400
   * start_option_unsupported, ns.start.options); any other refusal fails the check.
   */
  async startWith(options: { action?: string; scopes?: string[]; statement?: string }): Promise<Started> {
    try {
      return await this.start(options);
    } catch (error) {
      if (error instanceof StartRefused && error.unsupported) return this.start();
      throw error;
    }
  }

  /** A fresh identity published by the authority (DNS and HTTPS). */
  async identity(): Promise<TestIdentity> {
    const { identity, seed } = await this.target.authority.newIdentity();
    return { identity, seed };
  }

  // ---- the RP's endpoints ----

  /** What the RP publishes (fetched once per run); its fallback notes join this check's notes. */
  async published(): Promise<Published> {
    const p = await (this.target.published ??= once(() => fetchPublished(this.target)))();
    for (const n of p.notes) if (!this.notes.includes(n)) this.note(n);
    return p;
  }

  /** Where an approval of `request` goes: its response_uri, else the first published one, else the profile's path. */
  async responseUri(request: Record<string, unknown>): Promise<string> {
    const uri = request.response_uri;
    if (typeof uri === 'string') return uri;
    const p = await this.published();
    if (p.responseUris[0] !== undefined) return p.responseUris[0];
    const fallback = `${this.target.origin}${this.profile.ids.rp_response_path}`;
    this.note(`the request has no response_uri and the metadata publishes none: delivering to the profile's path ${fallback}`);
    return fallback;
  }

  /** Delivers `approval` (an object, or text sent as is) to the request's response_uri. */
  async deliver(
    request: Record<string, unknown>,
    approval: Record<string, unknown> | string,
    opts: { match?: string; form?: DeliveryForm; url?: string; client?: HttpClient } = {},
  ): Promise<HttpResponse> {
    const url = opts.url ?? (await this.responseUri(request));
    const client = opts.client ?? this.signer;
    const text = typeof approval === 'string' ? approval : encodeApproval(approval, opts.form ?? 'bare');
    const headers: Record<string, string> = { accept: 'application/json' };
    if (opts.match !== undefined || opts.form === 'object') {
      const body: Record<string, string> = { response: text };
      if (opts.match !== undefined) body.match = opts.match;
      return client.post(url, body, { headers, ...this.#sig() });
    }
    return client.post(url, text, { headers: { ...headers, 'content-type': 'text/plain' }, ...this.#sig() });
  }

  /** The published poll_uri (ns.metadata.poll-uri), or the profile's path with a note. */
  async pollUrl(): Promise<string> {
    return (await this.published()).pollUri;
  }

  /** The poll exchange of the project's test contract (ns.transport.poll-shape): POST {poll_secret}. */
  async poll(secret: string, client: HttpClient = this.client(false), url?: string): Promise<HttpResponse> {
    return client.post(url ?? (await this.pollUrl()), { poll_secret: secret }, { headers: { accept: 'application/json' }, ...this.#sig() });
  }

  /** The poll status for `secret` ('' when the poll does not answer 200 with a status). */
  async pollStatus(secret: string, client?: HttpClient): Promise<{ status: string; identity?: string; response: HttpResponse }> {
    const response = await this.poll(secret, client);
    const body = accepted(response) ? safeJson(response) : undefined;
    const status = isObject(body) && typeof body.status === 'string' ? body.status : '';
    const identity = isObject(body) && typeof body.identity === 'string' ? body.identity : undefined;
    return { status, ...(identity !== undefined ? { identity } : {}), response };
  }

  async resume(resumeUri: string, browser: HttpClient): Promise<HttpResponse> {
    return browser.get(resumeUri, { headers: { accept: 'application/json' }, ...this.#sig() });
  }

  /** GET the metadata afresh, as a signer does (checks of the document itself; others use published()). */
  async metadata(): Promise<HttpResponse> {
    return this.signer.get(`${this.target.origin}${this.profile.ids.metadata_path}`, { headers: { accept: 'application/json' }, maxBodyBytes: limits.metadata_body_max_bytes * 4, ...this.#sig() });
  }

  #sig(): { signal?: AbortSignal } {
    return this.signal ? { signal: this.signal } : {};
  }

  // ---- composite steps ----

  /** A fresh transaction approved by a fresh identity on the same device: what the RP answered and its resume_uri, if any. */
  async approveSameDevice(): Promise<{ started: Started; delivered: HttpResponse; resumeUri?: string }> {
    const started = await this.start();
    const delivered = await this.deliver(started.request, sign(this.profile, started.request, await this.identity()));
    const receipt = accepted(delivered) ? safeJson(delivered) : undefined;
    const resumeUri = isObject(receipt) && typeof receipt.resume_uri === 'string' ? receipt.resume_uri : undefined;
    return { started, delivered, ...(resumeUri !== undefined ? { resumeUri } : {}) };
  }

  /** Same-device completion: deliver bare, resume with the starting browser, then poll. */
  async completeSameDevice(
    started: Started,
    approval: Record<string, unknown> | string,
    opts: { form?: DeliveryForm; url?: string } = {},
  ): Promise<{ ok: boolean; problem?: string; identity?: string }> {
    const delivered = await this.deliver(started.request, approval, opts);
    if (!accepted(delivered)) return { ok: false, problem: `the delivery answered ${said(delivered)}` };
    const receipt = safeJson(delivered);
    if (!isObject(receipt) || receipt.status !== 'ok' || typeof receipt.resume_uri !== 'string') return { ok: false, problem: `the receipt is not {status: "ok", resume_uri}: ${said(delivered)}` };
    const resumed = await this.resume(receipt.resume_uri, started.browser);
    // The document names no status for a resume: any answer that is not a refusal continues the login.
    if (resumed.status >= 400) return { ok: false, problem: `resume answered ${said(resumed)}` };
    const polled = await this.pollStatus(started.pollSecret);
    if (polled.status !== 'completed') return { ok: false, problem: `after resume the poll says ${JSON.stringify(polled.status)}, expected "completed"` };
    return { ok: true, ...(polled.identity !== undefined ? { identity: polled.identity } : {}) };
  }

  /** Cross-device completion: deliver with the match code, then poll. */
  async completeCrossDevice(started: Started, approval: Record<string, unknown> | string): Promise<{ ok: boolean; problem?: string; identity?: string }> {
    const delivered = await this.deliver(started.request, approval, { match: started.matchCode });
    if (!accepted(delivered)) return { ok: false, problem: `the delivery with the match code answered ${said(delivered)}` };
    const receipt = safeJson(delivered);
    if (!isObject(receipt) || receipt.status !== 'ok') return { ok: false, problem: `the receipt is not {status: "ok"}: ${said(delivered)}` };
    if (receipt.resume_uri !== undefined) return { ok: false, problem: 'a cross-device receipt carries resume_uri' };
    const polled = await this.pollStatus(started.pollSecret);
    if (polled.status !== 'completed') return { ok: false, problem: `the poll says ${JSON.stringify(polled.status)}, expected "completed"` };
    return { ok: true, ...(polled.identity !== undefined ? { identity: polled.identity } : {}) };
  }

  /** True when the transaction reports completed to its poll secret. */
  async completed(started: Started): Promise<boolean> {
    return (await this.pollStatus(started.pollSecret)).status === 'completed';
  }
}

// ---- signing helpers (protocol/signin/signer.ts does the signing) ----

export function sign(profile: Profile, request: Readonly<Record<string, unknown>>, who: TestIdentity, session?: SessionKey): Record<string, unknown> {
  return signApproval(profile, request, { identity: who.identity, seed: who.seed, ...(session ? { session } : {}) });
}

/** A session key for `who`, its proof signed by the identity key (window: now - 1 min, + ttl). */
export function sessionFor(profile: Profile, who: TestIdentity, opts: { ttlSeconds?: number; issuedAt?: number; sessionSeed?: Uint8Array; proofSeed?: Uint8Array } = {}): SessionKey {
  const seed = opts.sessionSeed ?? new Uint8Array(randomBytes(32));
  const issuedAt = opts.issuedAt ?? Date.now() - 60_000;
  const ttl = opts.ttlSeconds ?? 3600;
  const window = { issued_at: formatRfc3339(issuedAt), expires_at: formatRfc3339(issuedAt + ttl * 1000), nonce: encodeBase64url(randomBytes(16)) };
  return { sessionId: encodeBase64url(randomBytes(9)), seed, proof: makeSessionProof(profile, who.identity, opts.proofSeed ?? who.seed, seed, window) };
}

export function encodeApproval(approval: Record<string, unknown>, form: DeliveryForm): string {
  const encoded = encodeObject(approval);
  if (form === 'raw-json') return JSON.stringify(approval);
  if (form === 'padded') return encoded + '='.repeat((4 - (encoded.length % 4)) % 4);
  return encoded;
}

// ---- small helpers ----

/** A 2xx: the document names no success status for its endpoints. */
export function accepted(r: HttpResponse): boolean {
  return statusIn(r, 200, 300);
}

/** A refusal as the document allows it where it names no status: any 4xx. */
export function refused(r: HttpResponse): boolean {
  return statusIn(r, 400, 500);
}

/** The project's error envelope {error, detail} of a rejection (ns.errors.envelope), or a problem text. */
export function envelopeOf(r: HttpResponse): { error: string; detail: string; rule?: string } | string {
  const b = safeJson(r);
  if (!isObject(b)) return `the answer is not a JSON object: ${said(r)}`;
  if (typeof b.error !== 'string' || !/^[a-z][a-z0-9_]*$/.test(b.error)) return `the answer has no snake_case "error" code: ${said(r)}`;
  if (typeof b.detail !== 'string') return `the answer has no "detail" string: ${said(r)}`;
  return { error: b.error, detail: b.detail, ...(typeof b.rule === 'string' ? { rule: b.rule } : {}) };
}

export function originOfUrl(url: string): string | undefined {
  return urlOrigin(url);
}

export function isoShift(rfc3339: unknown, seconds: number): string {
  const t = parseRfc3339(rfc3339);
  if (t === undefined) throw new CheckFailure(`not an RFC 3339 time: ${String(rfc3339)}`);
  return formatRfc3339(t + seconds * 1000);
}

/** Entropy in bits a secret's text can carry, judged by its alphabet and length. */
export function secretBits(text: string): number {
  if (/^[0-9]+$/.test(text)) return text.length * Math.log2(10);
  if (/^[0-9a-f]+$/i.test(text)) return text.length * 4;
  if (/^[0-9A-HJKMNP-TV-Z]+$/i.test(text)) return text.length * 5;
  if (/^[A-Za-z0-9_-]+=*$/.test(text) || /^[A-Za-z0-9+/]+=*$/.test(text)) return text.replace(/=+$/, '').length * 6;
  return text.length * 6;
}

export function normalizedOrigin(url: string): string {
  const o = normalizeOrigin(url);
  if (o === undefined) throw new CheckFailure(`${url} is not an origin`);
  return o;
}

export function describeHttpError(error: unknown): string | undefined {
  return error instanceof HttpError ? error.message : undefined;
}

/** A URL with its origin replaced by `base` (for spreading deliveries across processes). */
/** A match code that is not `code`: the next of the hundred two-digit codes. */
export const otherMatchCode = (code: string): string => String((Number(code) + 1) % 100).padStart(2, '0');

export function onProcess(url: string, base: string): string {
  const u = new URL(url);
  const b = new URL(base);
  u.protocol = b.protocol;
  u.host = b.host;
  return u.toString();
}

export { CheckFailure, CheckSkip, errorCode, isObject, safeJson, said };
