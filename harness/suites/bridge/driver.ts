// The bridge suite's driver: how the harness drives a bridge under test, over HTTP only. It is
// the OIDC client (harness/actors/oidc/) and the user: a browser with a cookie jar that follows
// /authorize to the transaction pages (ob.contract.transaction), enters an ID, approves with the
// harness signer (same device, resume link in the same browser), and consents. Every exchange
// of a check is kept as its evidence.
import type { Profile } from '../../../protocol/common/profile.ts';
import { HttpClient, type Exchange, type HttpClientOptions, type HttpResponse } from '../../actors/http.ts';
import type { AuthorityControl } from '../../actors/authority/types.ts';
import { Browser, Signer, type SignerKey } from '../../actors/signer/index.ts';
import { newPkce, OidcClient, styleOf, type AuthStyle, type ClientCredentials, type Pkce } from '../../actors/oidc/client.ts';
import { CheckFailure, CheckSkip } from '../../run/verdict.ts';
import { said } from '../../run/answers.ts';
import { reportOwnFault } from '../../run/environment.ts';

export { CheckFailure, CheckSkip, said };

export type ClientRole = 'basic' | 'post' | 'jwt' | 'public' | 'first_party' | 'other_sector' | 'same_sector' | 'loopback_confidential' | 'suspendable';

/** Every client role a target may declare (the reference registers them all: launch.ts). */
export const CLIENT_ROLES: readonly ClientRole[] = ['basic', 'post', 'jwt', 'public', 'first_party', 'other_sector', 'same_sector', 'loopback_confidential', 'suspendable'];

/** The OAuth `error` code of an answer's JSON body, or undefined. */
export function errorOf(res: { json(): unknown }): string | undefined {
  try {
    const b = res.json() as Record<string, unknown>;
    return typeof b.error === 'string' ? b.error : undefined;
  } catch {
    return undefined;
  }
}

export interface BridgeTarget {
  profile: Profile;
  issuer: string;
  clients: Partial<Record<ClientRole, ClientCredentials>> & { basic: ClientCredentials; public: ClientCredentials };
  authority: AuthorityControl;
  rotate?: { url: string; token?: string };
  /** Operator hook that suspends the `suspendable` client (ob.contract.suspend). */
  suspend?: { url: string; token?: string };
  /**
   * The bridge's OAUTH_URL_CLIENTS mode, declared by the target (ob.contract.url-clients): URL
   * client checks run only when it fetches client documents from the test authority.
   */
  urlClients?: 'indieauth' | 'on' | 'off';
  requestTimeoutMs: number;
  /** How the harness's clients resolve and trust the bridge (set by the suite: through the authority). */
  network?: Pick<HttpClientOptions, 'ca' | 'dnsServer' | 'dnsFallback'>;
  /** Limits the target declares (bridge.declared): the checks wait them out. */
  declared?: {
    codeLifetimeS?: number;
    transactionLifetimeS?: number;
    transactionExtensionS?: number;
    transactionCapS?: number;
    resumeLifetimeS?: number;
    accessTokenLifetimeS?: number;
    pushIntervalS?: number;
  };
  /** Push to the app (bridge.push): a relay that registers the harness's push users, homed there. */
  push?: { userRelay: string };
}

/** Where an authorization ended: the client's redirect URI with its parameters. */
export interface AuthorizationResponse {
  location: string;
  params: URLSearchParams;
  code?: string;
  error?: string;
  state?: string;
  iss?: string;
}

export interface SignInOptions {
  client?: ClientRole;
  scope?: string;
  extra?: Record<string, string | undefined>;
  /** Claims left ticked on consent (default: every one offered). */
  tick?: string[];
  deny?: boolean;
  /** Reuse this user (browser and key) instead of a fresh one. */
  user?: User;
  redirectUri?: string;
  /** A client the target did not declare (a URL client the harness hosts). */
  credentials?: ClientCredentials;
  /** Approve with a fresh delegated session key and its proof instead of the identity key. */
  session?: boolean;
  /** Wait this long on the consent step before deciding: the code is issued that much later. */
  consentAfterMs?: number;
}

export interface User {
  key: SignerKey;
  browser: Browser;
}

export interface SignInResult {
  response: AuthorizationResponse;
  pkce: Pkce;
  user: User;
  state: string;
  nonce: string;
  /** Whether the harness had to sign (false when the bridge issued a code from the session). */
  signed: boolean;
  /** The consent view, when a consent screen was shown. */
  consent?: Record<string, unknown>;
}

/** The target's suspension hook (ob.contract.suspend); a check needing it is skipped when none is declared. */
export function suspensionHook(t: BridgeTarget): { url: string; token?: string } {
  if (!t.suspend) throw new CheckSkip('the target declares no suspension hook (bridge.suspend_url)');
  return t.suspend;
}

export class BridgeSession {
  readonly exchanges: Exchange[] = [];
  readonly #clients: HttpClient[] = [];
  readonly http: HttpClient;
  readonly signer: Signer;
  #oidc: OidcClient | undefined;

  constructor(
    readonly target: BridgeTarget,
    readonly signal?: AbortSignal,
  ) {
    this.http = this.client(false);
    this.signer = new Signer({ profile: target.profile, http: this.http });
  }

  client(cookies = true): HttpClient {
    const c = new HttpClient({ ...this.target.network, cookies, timeoutMs: this.target.requestTimeoutMs, evidenceBytes: 2048, keepExchanges: 0, onExchange: (e) => void this.exchanges.push(e) });
    this.#clients.push(c);
    return c;
  }

  credentials(role: ClientRole): ClientCredentials {
    const c = this.target.clients[role];
    if (!c) throw new CheckSkip(`the target declares no ${role} client (bridge.clients.${role})`);
    return c;
  }

  style(role: ClientRole): AuthStyle {
    return styleOf(this.credentials(role), role === 'post');
  }

  /** The operator suspends `clientId` through the target's hook (ob.contract.suspend). */
  async suspend(clientId: string): Promise<void> {
    const hook = suspensionHook(this.target);
    const res = await this.http.post(hook.url, new URLSearchParams({ client_id: clientId }).toString(), {
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(hook.token ? { authorization: `Bearer ${hook.token}` } : {}) },
      noCookies: true,
    });
    if (res.status >= 300) throw new CheckFailure(`the suspension hook answered ${said(res)}`);
  }

  async oidc(): Promise<OidcClient> {
    if (this.#oidc) return this.#oidc;
    const { res, discovery } = await OidcClient.discover(this.http, this.target.issuer);
    if (!discovery) throw new CheckFailure(`no usable discovery document at ${this.target.issuer}/.well-known/openid-configuration: ${said(res)}`);
    this.#oidc = new OidcClient(this.http, discovery);
    return this.#oidc;
  }

  /** A fresh user: a new identity at the authority and a browser with an empty cookie jar. */
  async newUser(): Promise<User> {
    const { identity, seed } = await this.target.authority.newIdentity();
    return { key: { identity, seed }, browser: new Browser({ http: this.client(true), profile: this.target.profile }) };
  }

  /** Parses a Location on the client's redirect URI; undefined when it points elsewhere. */
  authorizationResponse(location: string | undefined, redirectUri: string): AuthorizationResponse | undefined {
    if (location === undefined) return undefined;
    const base = redirectUri.split('?')[0]!;
    if (!location.startsWith(base)) return undefined;
    const params = new URL(location).searchParams;
    const get = (k: string) => params.get(k) ?? undefined;
    const out: AuthorizationResponse = { location, params };
    for (const k of ['code', 'error', 'state', 'iss'] as const) {
      const v = get(k);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }

  /** GET an authorization URL in `browser`: the raw answer (never followed). */
  async openAuthorize(browser: Browser, params: Record<string, string | undefined>): Promise<HttpResponse> {
    const oidc = await this.oidc();
    return browser.http.get(oidc.authorizeUrl(params), { headers: { accept: 'text/html' }, ...(this.signal ? { signal: this.signal } : {}) });
  }

  /** /authorize with the basic client for a fresh user: the transaction's page URL, no ID entered yet. */
  async startSignIn(scope = 'openid'): Promise<{ user: User; txUrl: string }> {
    const user = await this.newUser();
    const res = await this.openAuthorize(user.browser, this.params('basic', newPkce(), 'st', 'n', scope));
    if (!res.location) throw new CheckFailure(`/authorize: ${said(res)}`);
    return { user, txUrl: new URL(res.location, this.target.issuer).href.split('?')[0]! };
  }

  /** A fresh sign-in with its ID entered: the waiting view and the native request it issued. */
  async waitingSignIn(scope?: string): Promise<{ user: User; txUrl: string; view: Record<string, unknown>; request: string }> {
    const started = await this.startSignIn(scope);
    const { view } = await this.post(started.user.browser, `${started.txUrl}/identify`, { id: started.user.key.identity });
    if (typeof view.request !== 'string') throw new CheckFailure(`no native request was issued: ${JSON.stringify(view).slice(0, 200)}`);
    return { ...started, view, request: view.request };
  }

  /** Approves `request` for `identity` with a key it does not publish (document 1, rule 7 fails) and delivers it. */
  async badlySigned(request: string, identity: string): Promise<{ status: number }> {
    const loaded = await this.signer.loadRequest(request);
    const { encoded } = this.signer.sign(loaded.request, { identity, seed: new Uint8Array(32).fill(7) });
    return this.signer.deliver(String(loaded.request.response_uri), encoded);
  }

  /** Follows a Location on the issuer's own origin (a transaction page) and reads its status view. */
  async view(browser: Browser, txUrl: string): Promise<{ res: HttpResponse; view: Record<string, unknown> }> {
    const res = await browser.http.get(txUrl, { headers: { accept: 'application/json' } });
    let view: Record<string, unknown> = {};
    try {
      view = res.json() as Record<string, unknown>;
    } catch {
      throw new CheckFailure(`the transaction page ${txUrl} gave no JSON status view (ob.contract.transaction): ${said(res)}`);
    }
    return { res, view };
  }

  async post(browser: Browser, url: string, body: Record<string, unknown>): Promise<{ res: HttpResponse; view: Record<string, unknown> }> {
    const res = await browser.http.post(url, body, { headers: { accept: 'application/json' } });
    let view: Record<string, unknown> = {};
    try {
      view = res.json() as Record<string, unknown>;
    } catch {
      view = {};
    }
    return { res, view };
  }

  /** The standard parameters of a valid request for `role` (or for the given credentials). */
  params(role: ClientRole | ClientCredentials, pkce: Pkce, state: string, nonce: string, scope = 'openid', redirectUri?: string): Record<string, string> {
    const c = typeof role === 'string' ? this.credentials(role) : role;
    return { response_type: 'code', client_id: c.client_id, redirect_uri: redirectUri ?? c.redirect_uri, state, nonce, scope, code_challenge: pkce.challenge, code_challenge_method: 'S256' };
  }

  /**
   * A whole authorization: /authorize, then (unless the bridge answers from its session) the ID,
   * the signer's same-device approval and resume, and consent. Ends at the client's redirect.
   */
  async signIn(options: SignInOptions = {}): Promise<SignInResult> {
    const role = options.client ?? 'basic';
    const user = options.user ?? (await this.newUser());
    const pkce = newPkce();
    const state = `st-${Math.random().toString(36).slice(2)}`;
    const nonce = `n-${Math.random().toString(36).slice(2)}`;
    const client = options.credentials ?? this.credentials(role);
    const redirectUri = options.redirectUri ?? client.redirect_uri;
    const url = (await this.oidc()).authorizeUrl({ ...this.params(client, pkce, state, nonce, options.scope ?? 'openid', redirectUri), ...options.extra });
    const started = Date.now();
    try {
      const done = await this.completeAuthorization(user, url, redirectUri, options);
      return { ...done, pkce, user, state, nonce };
    } catch (error) {
      // A sign-in that took longer than the transaction life the target declares may have failed on that expiry alone.
      const life = this.target.declared?.transactionLifetimeS;
      const took = (Date.now() - started) / 1000;
      if (error instanceof CheckFailure && life !== undefined && took > life)
        reportOwnFault(
          'outlived-window',
          `the sign-in took ${took.toFixed(1)} s, past the ${life} s transaction life the target declares (--tx-ttl): its refusal may be that expiry, on a machine too slow for so short a life`,
        );
      throw error;
    }
  }

  /**
   * The browser side of an authorization URL built by anyone (the harness, or an RP library in
   * the tests): open it, enter the ID, approve with the signer on the same device, resume, and
   * consent, until the bridge sends the browser to `redirectUri`.
   */
  async completeAuthorization(
    user: User,
    url: string,
    redirectUri: string,
    options: Pick<SignInOptions, 'tick' | 'deny' | 'session' | 'consentAfterMs'> = {},
  ): Promise<{ response: AuthorizationResponse; signed: boolean; consent?: Record<string, unknown> }> {
    const res = await user.browser.http.get(url, { headers: { accept: 'text/html' }, ...(this.signal ? { signal: this.signal } : {}) });
    const result = (response: AuthorizationResponse, signed: boolean, consent?: Record<string, unknown>) => ({ response, signed, ...(consent ? { consent } : {}) });
    const direct = this.authorizationResponse(res.location, redirectUri);
    if (direct) return result(direct, false);
    if (res.status < 300 || res.status >= 400 || res.location === undefined) throw new CheckFailure(`/authorize did not send the browser on: ${said(res)}`);
    const txUrl = new URL(res.location, this.target.issuer).href.split('?')[0]!;
    let { view } = await this.view(user.browser, txUrl);
    let signed = false;
    if (view.state === 'identify') {
      const identified = await this.post(user.browser, `${txUrl}/identify`, { id: user.key.identity });
      if (identified.view.state !== 'awaiting_signature') throw new CheckFailure(`entering the ID did not issue a native request: ${said(identified.res)}`);
      view = identified.view;
    }
    if (view.state === 'awaiting_signature') {
      if (typeof view.request !== 'string') throw new CheckFailure('the waiting view carries no native request (ob.contract.transaction)');
      const approved = await this.signer.approve(view.request, {
        key: user.key,
        sameDevice: true,
        browser: user.browser,
        ...(options.session ? { session: true } : {}),
        ...(this.signal ? { signal: this.signal } : {}),
      });
      signed = true;
      const resumed = approved.resumed;
      if (!resumed) throw new CheckFailure('the signer could not resume in the browser');
      const after = this.authorizationResponse(resumed.location, redirectUri);
      if (after) return result(after, signed);
      if (resumed.status >= 400) throw new CheckFailure(`the resume link was refused: ${resumed.status} ${JSON.stringify(resumed.body).slice(0, 160)}`);
      view = (await this.view(user.browser, txUrl)).view;
    }
    if (view.state !== 'consent') {
      const done = typeof view.redirect === 'string' ? this.authorizationResponse(view.redirect, redirectUri) : undefined;
      if (done) return result(done, signed);
      throw new CheckFailure(`expected the consent step, the transaction is ${JSON.stringify(view.state)}`);
    }
    const consent = (view.consent ?? {}) as Record<string, unknown>;
    const offered = Array.isArray(consent.claims) ? (consent.claims as string[]) : [];
    if (options.consentAfterMs) await new Promise((r) => setTimeout(r, options.consentAfterMs));
    const decided = await this.post(user.browser, `${txUrl}/consent`, { decision: options.deny ? 'deny' : 'approve', claims: options.tick ?? offered });
    const end = typeof decided.view.redirect === 'string' ? this.authorizationResponse(decided.view.redirect, redirectUri) : this.authorizationResponse(decided.res.location, redirectUri);
    if (!end) throw new CheckFailure(`consent did not end in a redirect to the client: ${said(decided.res)}`);
    return result(end, signed, consent);
  }

  /** A sign-in and the code's redemption; fails the check when either does not work. */
  async tokens(options: SignInOptions = {}): Promise<{ signIn: SignInResult; body: Record<string, unknown>; res: HttpResponse }> {
    const role = options.client ?? 'basic';
    const signIn = await this.signIn(options);
    if (!signIn.response.code) throw new CheckFailure(`no code: the bridge answered ${signIn.response.location}`);
    const oidc = await this.oidc();
    const client = options.credentials ?? this.credentials(role);
    const style = options.credentials ? styleOf(options.credentials) : this.style(role);
    const res = await oidc.token(client, style, signIn.response.code, signIn.pkce.verifier, options.redirectUri ?? client.redirect_uri);
    if (res.status !== 200) throw new CheckFailure(`the code did not redeem: ${said(res)}`);
    return { signIn, body: res.json() as Record<string, unknown>, res };
  }

  evidence(): unknown {
    return { exchanges: this.exchanges.slice(-12) };
  }

  async close(): Promise<void> {
    await Promise.all(this.#clients.map((c) => c.close().catch(() => undefined)));
  }
}
