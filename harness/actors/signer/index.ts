// The harness's programmatic signer (document 1): it authenticates the RP through its metadata
// before using any RP-supplied string (ns.auth.1), validates the request, signs with the identity
// key or a session key and its proof, delivers, checks the receipt and resumes only on the
// verified audience. Every refusal is a SignerError naming its rule.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { limits } from '../../../schemas/ts/limits.ts';
import { defaultProfile, type Profile } from '../../../protocol/common/profile.ts';
import { encodeObject } from '../../../protocol/common/codec.ts';
import { decodeBase64Any, encodeBase64url } from '../../../protocol/common/base64.ts';
import { publicKeyFromSeed } from '../../../protocol/common/ed25519.ts';
import { formatKey } from '../../../protocol/common/keys.ts';
import { validServiceName } from '../../../protocol/common/names.ts';
import { makeSessionProof, signApproval, type SessionKey } from '../../../protocol/signin/signer.ts';
import { formatRfc3339 } from '../../../protocol/common/time.ts';
import { sameOrigin } from '../../../protocol/common/url.ts';
import { HttpClient, HttpError, type Exchange, type HttpClientOptions } from '../http.ts';
import { problem, refuse, SignerError, type Problem } from './errors.ts';
import { fetchMetadata, type MetadataResult, type RpMetadata } from './metadata.ts';
import { loadRequest, validateRequest, type LoadedRequest } from './request.ts';
import { Browser } from './browser.ts';

export * from './errors.ts';
export * from './metadata.ts';
export * from './request.ts';
export * from './browser.ts';
export type { SessionKey } from '../../../protocol/signin/signer.ts';

export interface SignerKey {
  identity: string;
  seed: Uint8Array;
}

/** The key file of `svc-conformance signer keygen`. */
export interface KeyFile {
  identity: string;
  seed: string;
  public_key: string;
}

export function newKey(identity: string): SignerKey {
  const id = validServiceName(identity);
  if (id === undefined) throw new Error(`${JSON.stringify(identity)} is not a valid service name`);
  return { identity: id, seed: new Uint8Array(randomBytes(32)) };
}

export function keyFileOf(key: SignerKey): KeyFile {
  return { identity: key.identity, seed: encodeBase64url(key.seed), public_key: formatKey(publicKeyFromSeed(key.seed)) };
}

export async function writeKeyFile(path: string, key: SignerKey): Promise<void> {
  await writeFile(path, `${JSON.stringify(keyFileOf(key), null, 2)}\n`, { mode: 0o600 });
}

export async function readKeyFile(path: string): Promise<SignerKey> {
  let data: Partial<KeyFile>;
  try {
    data = JSON.parse(await readFile(path, 'utf8')) as Partial<KeyFile>;
  } catch (error) {
    throw new Error(`cannot read key file ${path}: ${(error as Error).message}`);
  }
  const identity = validServiceName(data.identity);
  const seed = typeof data.seed === 'string' ? decodeBase64Any(data.seed) : undefined;
  if (identity === undefined || !seed || seed.length !== 32) throw new Error(`${path} is not a key file ({identity, seed, public_key})`);
  if (data.public_key !== undefined && data.public_key !== formatKey(publicKeyFromSeed(seed))) throw new Error(`${path}: public_key does not belong to seed`);
  return { identity, seed };
}

export interface DeliveryResult {
  status: number;
  /** Parsed JSON when the answer is JSON, else its text. */
  body: unknown;
  exchange: Exchange;
}

export interface ResumeResult {
  status: number;
  location?: string;
  body: unknown;
  exchange: Exchange;
}

/** What the signer shows before approving: trusted labels first (ns.auth.1.trusted-labels). */
export interface ConsentView {
  /** Trusted: the metadata `name`. */
  name: string;
  /** Trusted: the audience host (with its port when not the default). */
  host: string;
  audience: string;
  action: string;
  scopes: string[];
  /** Untrusted strings from the request, shown only as such. */
  statement?: string;
  domain?: string;
  byReference: boolean;
  crossDevice: boolean;
  /** The initiator context from `context_uri` (cross device), when the RP offers it. */
  context?: Record<string, unknown>;
}

export interface ApproveOptions {
  key: SignerKey;
  /** The match code the user read on the starting screen (cross device). */
  match?: string;
  /** Deliver without a match code and follow resume_uri (needs `browser` to resume). */
  sameDevice?: boolean;
  /** The starting browser, to resume a same-device login in. */
  browser?: Browser;
  /** Sign with a session key: `true` for a fresh one-hour session, or a session. */
  session?: boolean | SessionKey;
  /** Asked for the match code when it is needed and not given (a TTY prompt in the CLI). */
  askMatch?: (view: ConsentView) => Promise<string | undefined>;
  /** Shown the consent view before anything is signed. */
  onConsent?: (view: ConsentView) => void;
  /** Delivery form (default: `object` with a match code, `bare` without). */
  form?: 'bare' | 'object';
  signal?: AbortSignal;
}

export interface ApproveResult {
  view: ConsentView;
  loaded: LoadedRequest;
  metadata: RpMetadata;
  approval: Record<string, unknown>;
  encodedApproval: string;
  /** Absent when the request has no response_uri (the user pastes `encodedApproval`, ns.transport.paste). */
  delivery?: DeliveryResult;
  receipt?: Record<string, unknown>;
  resumeUri?: string;
  resumed?: ResumeResult;
}

export interface SignerOptions extends HttpClientOptions {
  profile?: Profile;
  http?: HttpClient;
  now?: () => number;
}

const MATCH = new RegExp(`^[0-9]{${limits.match_code_digits}}$`);

export class Signer {
  readonly profile: Profile;
  readonly http: HttpClient;
  readonly #now: () => number;

  constructor(options: SignerOptions = {}) {
    const { profile, http, now, ...httpOptions } = options;
    this.profile = profile ?? defaultProfile;
    this.http = http ?? new HttpClient(httpOptions);
    this.#now = now ?? Date.now;
  }

  /** A browser sharing this signer's TLS and host settings, with its own cookie jar. */
  browser(): Browser {
    return new Browser({ http: this.http.withCookieJar(), profile: this.profile });
  }

  fetchMetadata(audience: string, signal?: AbortSignal): Promise<MetadataResult> {
    return fetchMetadata(this.profile, this.http, audience, signal);
  }

  loadRequest(input: string, signal?: AbortSignal): Promise<LoadedRequest> {
    return loadRequest(this.profile, this.http, input, signal);
  }

  validateRequest(request: Readonly<Record<string, unknown>>, metadata: RpMetadata): Problem[] {
    return validateRequest(this.profile, request, metadata, this.#now());
  }

  /** A session key registered by the identity key (ns.session-proof.*), valid `ttlSeconds` from now. */
  newSession(identity: string, seed: Uint8Array, ttlSeconds = 3600): SessionKey {
    if (!(ttlSeconds > 0) || ttlSeconds > limits.session_ttl_max_seconds) throw new RangeError(`a session lives 1 to ${limits.session_ttl_max_seconds} seconds`);
    const now = this.#now();
    const sessionSeed = new Uint8Array(randomBytes(32));
    const window = { issued_at: formatRfc3339(now), expires_at: formatRfc3339(now + ttlSeconds * 1000), nonce: encodeBase64url(randomBytes(16)) };
    return { sessionId: encodeBase64url(randomBytes(12)), seed: sessionSeed, proof: makeSessionProof(this.profile, identity.trim().toLowerCase(), seed, sessionSeed, window) };
  }

  /** The signed approval and its encoded form. */
  sign(request: Readonly<Record<string, unknown>>, key: SignerKey, session?: SessionKey): { approval: Record<string, unknown>; encoded: string } {
    const approval = signApproval(this.profile, request, { identity: key.identity, seed: key.seed, ...(session ? { session } : {}) });
    return { approval, encoded: encodeObject(approval) };
  }

  /** POST the approval to response_uri: bare (`text/plain`) or `{response, match?}` (`application/json`). */
  async deliver(responseUri: string, encodedApproval: string, options: { match?: string; form?: 'bare' | 'object'; signal?: AbortSignal } = {}): Promise<DeliveryResult> {
    const form = options.form ?? (options.match !== undefined ? 'object' : 'bare');
    if (form === 'bare' && options.match !== undefined) throw new TypeError('a match code travels only in the delivery object');
    const signal = options.signal ? { signal: options.signal } : {};
    const res =
      form === 'bare'
        ? await this.http.post(responseUri, encodedApproval, { headers: { 'content-type': 'text/plain', accept: 'application/json' }, noCookies: true, ...signal })
        : await this.http.post(
            responseUri,
            { response: encodedApproval, ...(options.match !== undefined ? { match: options.match } : {}) },
            { headers: { accept: 'application/json' }, noCookies: true, ...signal },
          );
    let body: unknown;
    try {
      body = res.json();
    } catch {
      body = res.text();
    }
    return { status: res.status, body, exchange: res.exchange };
  }

  /** ns.delivery.receipt, ns.auth.6.resume-same-origin. */
  checkReceipt(receipt: unknown, options: { sameDevice: boolean; audience: string }): Problem[] {
    if (receipt === null || typeof receipt !== 'object' || Array.isArray(receipt)) return [problem('ns.delivery.receipt', 'the receipt is not a JSON object')];
    const r = receipt as Record<string, unknown>;
    const out: Problem[] = [];
    if (r.status !== 'ok') out.push(problem('ns.delivery.receipt', `receipt status is ${JSON.stringify(r.status)}, not "ok"`));
    if (options.sameDevice) {
      if (typeof r.resume_uri !== 'string' || r.resume_uri === '') out.push(problem('ns.delivery.receipt', 'a same-device receipt carries no resume_uri'));
      else if (!sameOrigin(options.audience, r.resume_uri)) out.push(problem('ns.auth.6.resume-same-origin', `resume_uri ${r.resume_uri} is not on the verified audience ${options.audience}`));
    } else if (r.resume_uri !== undefined) out.push(problem('ns.delivery.receipt', 'a cross-device receipt carries a resume_uri'));
    return out;
  }

  /** Opens resume_uri in `browser`, only when it is on the verified audience (ns.auth.6.resume-same-origin). */
  async resume(browser: Browser, resumeUri: string, audience: string, options: { accept?: string; signal?: AbortSignal } = {}): Promise<ResumeResult> {
    if (!sameOrigin(audience, resumeUri)) refuse('ns.auth.6.resume-same-origin', `resume_uri ${resumeUri} is not on the verified audience ${audience}`);
    const res = await browser.http.get(resumeUri, { headers: { accept: options.accept ?? 'application/json' }, ...(options.signal ? { signal: options.signal } : {}) });
    let body: unknown;
    try {
      body = res.json();
    } catch {
      body = res.text();
    }
    return { status: res.status, ...(res.location !== undefined ? { location: res.location } : {}), body, exchange: res.exchange };
  }

  /** The initiator context for a cross-device approval (ns.transport.context); undefined when not offered. */
  async fetchContext(metadata: RpMetadata, requestId: string, signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
    if (typeof metadata.context_uri !== 'string') return undefined;
    const sep = metadata.context_uri.includes('?') ? '&' : '?';
    try {
      const res = await this.http.get(`${metadata.context_uri}${sep}request_id=${encodeURIComponent(requestId)}`, {
        headers: { accept: 'application/json' },
        noCookies: true,
        maxBodyBytes: limits.metadata_body_max_bytes,
        ...(signal ? { signal } : {}),
      });
      const body = res.status === 200 ? res.json() : undefined;
      return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    } catch (error) {
      if (error instanceof HttpError) return undefined;
      throw error;
    }
  }

  /**
   * The whole approval: load the request, authenticate the RP through its metadata, validate,
   * show the consent view, get the match code when needed, sign, deliver, check the receipt and
   * (same device, with a browser) resume.
   */
  async approve(input: string, options: ApproveOptions): Promise<ApproveResult> {
    const signal = options.signal;
    const loaded = await this.loadRequest(input, signal);
    const request = loaded.request;
    // ns.auth.1: nothing the RP supplied is used before its metadata is fetched and checked.
    const { metadata, origin } = await this.fetchMetadata(typeof request.audience === 'string' ? request.audience : '', signal);
    const problems = this.validateRequest(request, metadata);
    if (problems.length > 0) throw new SignerError(problems);
    if (loaded.byReference && options.sameDevice) refuse('ns.reference.match-required', 'a request by reference always comes from another screen: it cannot be approved as same-device');
    const crossDevice = loaded.byReference || (options.match !== undefined && !options.sameDevice);
    const view: ConsentView = {
      name: metadata.name,
      host: origin.slice(origin.indexOf('://') + 3),
      audience: origin,
      action: request.action as string,
      scopes: Array.isArray(request.scopes) ? (request.scopes as string[]) : [],
      byReference: loaded.byReference,
      crossDevice,
    };
    if (typeof request.statement === 'string' && request.statement !== '') view.statement = request.statement;
    if (typeof request.domain === 'string') view.domain = request.domain;
    if (crossDevice) {
      const context = await this.fetchContext(metadata, request.request_id as string, signal);
      if (context) view.context = context;
    }
    options.onConsent?.(view);
    let match = options.match;
    if (crossDevice && match === undefined && options.askMatch) match = await options.askMatch(view);
    if (crossDevice && (match === undefined || match.trim() === '')) {
      refuse(loaded.byReference ? 'ns.reference.match-required' : 'ns.auth.6.cross-device', 'a sign-in started on another screen needs the match code shown there');
    }
    if (match !== undefined) {
      match = match.trim();
      if (!MATCH.test(match)) refuse('ns.limits.match-code', `the match code is ${limits.match_code_digits} digits`);
    }
    const session = options.session === true ? this.newSession(options.key.identity, options.key.seed) : options.session || undefined;
    const { approval, encoded } = this.sign(request, options.key, session);
    const result: ApproveResult = { view, loaded, metadata, approval, encodedApproval: encoded };
    if (typeof request.response_uri !== 'string') return result;
    const delivery = await this.deliver(request.response_uri, encoded, { ...(match !== undefined ? { match } : {}), ...(options.form ? { form: options.form } : {}), ...(signal ? { signal } : {}) });
    result.delivery = delivery;
    if (delivery.status !== 200) {
      const b = delivery.body as Record<string, unknown> | undefined;
      const why = b && typeof b === 'object' ? `${String(b.error ?? '')}${b.rule ? ` (${String(b.rule)})` : ''}: ${String(b.detail ?? '')}` : String(delivery.body).slice(0, 200);
      throw new SignerError(problem('ns.delivery.reject-status', `the RP refused the approval with ${delivery.status} ${why}`), delivery.exchange);
    }
    const receiptProblems = this.checkReceipt(delivery.body, { sameDevice: !crossDevice, audience: origin });
    if (receiptProblems.length > 0) throw new SignerError(receiptProblems, delivery.exchange);
    result.receipt = delivery.body as Record<string, unknown>;
    if (!crossDevice) {
      result.resumeUri = result.receipt.resume_uri as string;
      if (options.browser) result.resumed = await this.resume(options.browser, result.resumeUri, origin, signal ? { signal } : {});
    }
    return result;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
