// The authorization flow (document 2, States and transitions): /authorize validates the client
// and redirect first (errors before that are pages, never redirects), then creates a transaction
// bound to the browser; the transaction pages (`/t/{id}`, ob.contract.transaction) take the ID,
// issue the login-only native request, show consent and end in a redirect with `code`, `state`
// and `iss`. A live session with a covering consent skips straight to a code (ob.sso.reuse).
import { asObject, parseJson } from '../shared/json.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { normalizeIdInput } from '../../protocol/bridge/id-input.ts';
import { wellFormedChallenge } from '../../protocol/bridge/pkce.ts';
import { encodeObject } from '../../protocol/common/codec.ts';
import { pushView, sendPrompt } from './push.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { keyFingerprint } from '../../protocol/common/canonical.ts';
import { formatKey } from '../../protocol/common/keys.ts';
import { hashSecret, newSecret, sameHash, wellFormedSecret } from '../shared/secrets.ts';
import { cookieName, readCookies, serializeCookie } from '../shared/cookies.ts';
import { CSP, html, json, prefersJson, utf8Text } from '../shared/http.ts';
import { browserLabel, newMatchCode, newNonce, newReferenceCode, newRequestId } from '../signin/index.ts';
import { allowedRedirect, hostVerified, UrlClientError, type Client } from './clients.ts';
import { PATHS, txCapMs, txExtensionMs, type BridgeContext } from './context.ts';
import { authorizationRedirect, oauthJson, pageError, redirect } from './responses.ts';
import type { ErrorCode } from '../../schemas/ts/rules.ts';
import { consentPage, identifyPage, messagePage, qrSvg, waitingPage } from './pages.ts';
import { launcherOrigin, visitorOffer } from './visitor.ts';
import type { BridgeTx, Session } from './store.ts';
import type { ResolvedIdentity } from '../../protocol/signin/resolver.ts';
import type { components } from '../../schemas/ts/http/bridge.ts';

/** The status view of spec/http/bridge.openapi.yaml (ob.contract.transaction). */
type TransactionView = components['schemas']['TransactionView'];

/**
 * The scopes this bridge grants a client; any other value is ignored (ob.authorize.unknown-scope).
 * Under OAUTH_URL_CLIENTS=indieauth a URL client is an IndieAuth client: `openid` is not among
 * its scopes, so its codes redeem to `me` (and an access token), never to an ID token.
 */
export const grantableScopes = (ctx: BridgeContext, client?: Client) =>
  client?.url !== undefined && ctx.config.urlClients === 'indieauth' ? [ctx.profile.ids.id_scope, 'profile'] : ['openid', ctx.profile.ids.id_scope, 'profile'];
/** Scopes that release claims only with consent (ob.consent.release). */
const consentScopes = (ctx: BridgeContext) => [ctx.profile.ids.id_scope, 'profile'];

/** RFC 6749 VSCHAR: the characters of `state` (and, here, `nonce`). */
const VSCHAR = /^[\x20-\x7e]*$/;
const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);

export const txCookieName = (ctx: BridgeContext) => ctx.seams.cookieName(cookieName(ctx.profile.ids.bridge_tx_cookie, ctx.secure));
export const sessionCookieName = (ctx: BridgeContext) => ctx.seams.cookieName(cookieName(ctx.profile.ids.session_cookie, ctx.secure));

export async function currentSession(ctx: BridgeContext, req: Request): Promise<(Session & { hash: string }) | undefined> {
  const value = readCookies(req).get(sessionCookieName(ctx));
  if (!wellFormedSecret(value)) return undefined;
  const hash = hashSecret(value);
  const s = await ctx.store.session(hash);
  return s ? { ...s, hash } : undefined;
}

async function newSessionCookie(ctx: BridgeContext, s: Session): Promise<string> {
  const value = newSecret();
  await ctx.store.createSession(hashSecret(value), s);
  return serializeCookie(sessionCookieName(ctx), value, { secure: ctx.secure, maxAge: limits.session_cookie_ttl_seconds });
}

/** The claims-bearing scopes of a request that need consent. */
const claimScopes = (ctx: BridgeContext, scopes: readonly string[]) => scopes.filter((s) => consentScopes(ctx).includes(s));

/** ob.sso.reuse, ob.consent.first-party: does what is stored (or first-party status) cover this request? */
async function consentCovers(ctx: BridgeContext, client: Client, identity: string, scopes: readonly string[]): Promise<boolean> {
  const wanted = claimScopes(ctx, scopes);
  if (client.firstParty && ctx.seams.firstPartySkips(wanted)) return true;
  const stored = await ctx.store.consent(identity, client.clientId);
  return stored !== undefined && wanted.every((c) => stored.includes(c));
}

/** Issues the code and answers the redirect; `from` is the state the transaction leaves. */
async function issueCode(
  ctx: BridgeContext,
  tx: BridgeTx,
  from: BridgeTx['status'],
  who: { identity: string; authTime: number; delegated: boolean; keyFingerprint: string | null },
  claims: string[],
): Promise<Response> {
  const code = newSecret();
  const location = authorizationRedirect(ctx, tx.redirectUri, { code, state: tx.state });
  const issued = await ctx.store.issueCode(
    tx.id,
    from,
    {
      hash: hashSecret(code),
      clientId: tx.clientId,
      redirectUri: tx.redirectUri,
      challenge: tx.challenge,
      nonce: tx.nonce,
      identity: who.identity,
      scopes: tx.scopes.filter((s) => s === 'openid' || claims.includes(s)),
      claims,
      authTime: who.authTime,
      delegated: who.delegated,
      keyFingerprint: who.keyFingerprint,
      // Read now, when the claims are released (document 2: "read at consent time").
      profile: claims.includes('profile') ? await ctx.profiles.read(who.identity) : null,
      expiresAt: ctx.now() + (ctx.config.codeTtlSeconds ?? limits.authorization_code_ttl_seconds) * 1000,
    },
    location,
  );
  if (!issued) return pageError(ctx, 409, 'this sign-in has already ended', 'ob.transaction.create');
  await ctx.store.audit('signin.succeeded', who.identity, { client_id: tx.clientId, delegated: who.delegated, browser: tx.browser });
  return redirect(location);
}

// ---------------------------------------------------------------- /authorize

export async function authorizeHandler(ctx: BridgeContext, req: Request): Promise<Response> {
  const q = new URL(req.url).searchParams;
  const one = (name: string): string | undefined => {
    const all = q.getAll(name);
    return all.length === 1 ? all[0] : undefined;
  };
  const repeated = [...new Set([...q.keys()])].filter((k) => q.getAll(k).length > 1);
  // Before the client and redirect are known, every problem is a page (open-redirect guard).
  const clientId = one('client_id');
  let client: Client | undefined;
  try {
    client = clientId !== undefined ? await ctx.clients.resolve(clientId, true) : undefined;
  } catch (error) {
    // A URL client whose document breaks a fetch rule is not a client (ob.clients.url-fetch).
    if (error instanceof UrlClientError) return pageError(ctx, 400, error.message, error.rule);
    throw error;
  }
  if (!client) return pageError(ctx, 400, clientId === undefined ? `client_id is ${q.has('client_id') ? 'repeated' : 'missing'}` : 'unknown client', 'ob.authorize.bad-client-no-redirect');
  const asked = one('redirect_uri');
  if (asked === undefined) return pageError(ctx, 400, `redirect_uri is ${q.has('redirect_uri') ? 'repeated' : 'missing'}`, 'ob.authorize.bad-client-no-redirect');
  const matched = ctx.seams.redirectTaken(client, asked, allowedRedirect(client, asked));
  const redirectUri = matched ? asked : undefined;
  if (redirectUri === undefined) return pageError(ctx, 400, 'redirect_uri is not registered for this client', 'ob.authorize.bad-client-no-redirect');

  const state = one('state');
  const fail = (error: ErrorCode, description: string) => redirect(authorizationRedirect(ctx, redirectUri, { error, error_description: description, state }));
  if (repeated.length > 0) return fail('invalid_request', `parameter ${repeated[0]} is repeated`);
  if (one('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  if (state === undefined || state === '') return fail('invalid_request', 'state is required');
  // RFC 6749 Appendix A: state and nonce are visible ASCII (a NUL or a control character is refused, never stored).
  if (!VSCHAR.test(state) || !VSCHAR.test(one('nonce') ?? '')) return fail('invalid_request', 'state and nonce must be printable ASCII');
  const method = one('code_challenge_method');
  const challenge = one('code_challenge');
  if (ctx.seams.pkceChecked()) {
    if (method === 'plain') return fail('invalid_request', 'PKCE plain is refused: use S256');
    // Required of every client (ob.authorize.pkce-required); a variant's seam may exempt some.
    const exempt = challenge === undefined && method === undefined && !ctx.seams.pkceRequired(client);
    if (!exempt && (challenge === undefined || method !== 'S256')) return fail('invalid_request', 'PKCE with code_challenge_method S256 is required');
    if (!exempt && !wellFormedChallenge(challenge)) return fail('invalid_request', 'code_challenge is not a base64url SHA-256');
  }
  const scopes = [...new Set((one('scope') ?? '').split(' ').filter((s) => grantableScopes(ctx, client).includes(s)))];
  const prompts = (one('prompt') ?? '').split(' ').filter((p) => p !== '');
  if (prompts.some((p) => !PROMPTS.has(p)) || (prompts.includes('none') && prompts.length > 1)) return fail('invalid_request', 'prompt is not valid');
  const maxAgeRaw = one('max_age');
  if (maxAgeRaw !== undefined && !/^\d{1,9}$/.test(maxAgeRaw)) return fail('invalid_request', 'max_age must be a non-negative integer');
  const maxAge = maxAgeRaw === undefined ? null : Number(maxAgeRaw);
  const nonce = one('nonce') ?? null;

  const session = await currentSession(ctx, req);
  const fresh = session !== undefined && !prompts.includes('login') && (maxAge === null || ctx.now() - session.authTime <= maxAge * 1000);
  const covered = fresh && !prompts.includes('consent') && (await consentCovers(ctx, client, session.identity, scopes));

  const txId = newSecret(128);
  // One binding per browser: a second sign-in in another tab keeps the first one's cookie valid.
  const held = readCookies(req).get(txCookieName(ctx));
  const binding = wellFormedSecret(held) ? held : newSecret();
  await ctx.store.createTx({
    id: txId,
    ttlSeconds: ctx.seams.txTtlSeconds(ctx.config.txTtlSeconds),
    clientId: client.clientId,
    redirectUri,
    state: ctx.seams.heldState(state),
    nonce,
    challenge: challenge ?? '',
    scopes,
    prompt: prompts.join(' ') || null,
    maxAge,
    bindingHash: hashSecret(binding),
    browser: browserLabel(req.headers.get('user-agent')),
  });
  const tx = (await ctx.store.tx(txId))!;
  if (prompts.includes('none')) {
    if (!fresh) {
      await ctx.store.move(tx.id, 'identify', 'access_denied');
      return fail('login_required', 'no live session');
    }
    if (!covered) {
      await ctx.store.move(tx.id, 'identify', 'access_denied');
      return fail('consent_required', 'consent is needed');
    }
  }
  if (covered) {
    const stored = (await ctx.store.consent(session.identity, client.clientId)) ?? [];
    const claims = claimScopes(ctx, scopes).filter((c) => stored.includes(c));
    return await issueCode(ctx, tx, 'identify', { ...session, authTime: ctx.seams.sessionAuthTime(session.authTime, ctx.now()) }, claims);
  }
  const txCookie = serializeCookie(txCookieName(ctx), binding, { secure: ctx.secure, maxAge: limits.bridge_transaction_max_ttl_seconds });
  const headers: Record<string, string> = { 'set-cookie': txCookie };
  if (fresh) {
    // A live session without a covering consent: no new proof, straight to consent.
    await ctx.store.move(tx.id, 'identify', 'consent', { identity: session.identity, auth_time: session.authTime, delegated: session.delegated ? 1 : 0, key_fingerprint: session.keyFingerprint });
  }
  // IndieAuth's `me` is a hint like login_hint.
  const hint = one('login_hint') ?? one('me');
  const location = `${ctx.config.issuer}${PATHS.transaction}${tx.id}${hint !== undefined && !fresh ? `?login_hint=${encodeURIComponent(hint)}` : ''}`;
  return redirect(location, headers);
}

// ---------------------------------------------------------------- /t/{id}

/** The transaction, only for the browser holding its cookie (ob.contract.transaction). */
async function boundTx(ctx: BridgeContext, req: Request, id: string): Promise<BridgeTx | Response> {
  const tx = /^[A-Za-z0-9_-]{22}$/.test(id) ? await ctx.store.tx(id) : undefined;
  if (!tx) return answer(req, ctx, 404, 'no such sign-in', 'ob.contract.transaction');
  const cookie = readCookies(req).get(txCookieName(ctx));
  // The transaction is bound to the browser that started it (ob.transaction.create).
  if (!wellFormedSecret(cookie) || !sameHash(hashSecret(cookie), tx.bindingHash)) return answer(req, ctx, 403, 'this sign-in belongs to another browser', 'ob.transaction.create');
  // Another process may have begun it: make its URL client known here (a stale copy will do).
  await ctx.clients.resolve(tx.clientId).catch(() => undefined);
  return tx;
}

function answer(
  req: Request,
  ctx: BridgeContext,
  status: number,
  detail: string,
  rule: 'ob.contract.transaction' | 'ob.transaction.create' | 'ob.transaction.resume-binding' | 'ob.transaction.identify' | 'ob.transaction.failed' | 'ob.contract.push',
): Response {
  if (prefersJson(req)) return oauthJson({ error: 'invalid_request', error_description: detail, rule }, status);
  return pageError(ctx, status, detail, rule);
}

/** The status view a page script or the harness polls (ob.contract.transaction). */
function view(ctx: BridgeContext, tx: BridgeTx): TransactionView {
  const out: TransactionView = { state: tx.status };
  if (tx.status === 'awaiting_signature' && tx.request && tx.refCode) {
    out.request = encodeObject(tx.request);
    out.request_uri = `${ctx.config.issuer}${PATHS.reference}${tx.refCode}`;
    if (tx.matchCode !== null) out.match_code = tx.matchCode;
    if (tx.requestExpiresAt !== null) out.request_expires_at = formatRfc3339(tx.requestExpiresAt);
    if (ctx.config.push) out.push = pushView(ctx, ctx.config.push, tx);
  }
  if (tx.status === 'consent') {
    const client = ctx.clients.get(tx.clientId);
    out.consent = ctx.seams.consentNames({
      client_name: client?.name ?? tx.clientId,
      host: new URL(tx.redirectUri).host,
      verified: client ? hostVerified(ctx, client, tx.redirectUri) : false,
      identity: tx.identity ?? '',
      claims: claimScopes(ctx, tx.scopes),
    });
  }
  if ((tx.status === 'code_issued' || tx.status === 'access_denied') && tx.redirect) out.redirect = tx.redirect;
  if (tx.status === 'failed' && tx.error) out.error = tx.error;
  return out;
}

/** The sign-in page; the launcher is the one other origin its content policy lets it reach (the visitor offer). */
async function signInPage(ctx: BridgeContext, tx: BridgeTx, client: Client, hint: string | undefined, status: number, headers: Record<string, string>, problem?: string): Promise<Response> {
  const res = html(identifyPage(ctx, tx, client, hint, await visitorOffer(ctx, tx), problem), status, headers);
  const launcher = launcherOrigin(ctx);
  if (launcher) res.headers.set('content-security-policy', CSP.replace("connect-src 'self'", `connect-src 'self' ${launcher}`).replace("form-action 'self'", `form-action 'self' ${launcher}`));
  return res;
}

/** GET /t/{id} and /t/{id}/status: the page (HTML) or the status view (JSON). */
export async function transactionHandler(ctx: BridgeContext, req: Request, id: string): Promise<Response> {
  const bound = await boundTx(ctx, req, id);
  if (bound instanceof Response) return bound;
  let tx = bound;
  const headers: Record<string, string> = {};
  // A cross-device approval continues in the browser that polls with the transaction cookie.
  if (tx.status === 'authenticated' && tx.crossDevice && tx.identity !== null && tx.authTime !== null) {
    if (await ctx.store.move(tx.id, 'authenticated', 'resumed')) {
      headers['set-cookie'] = await newSessionCookie(ctx, {
        identity: tx.identity,
        authTime: tx.authTime,
        delegated: tx.delegated,
        keyFingerprint: tx.keyFingerprint,
        expiresAt: ctx.now() + limits.session_cookie_ttl_seconds * 1000,
      });
      await afterSignIn(ctx, (await ctx.store.tx(tx.id))!);
    }
    tx = (await ctx.store.tx(tx.id))!;
  }
  if (prefersJson(req)) return json(view(ctx, tx), 200, headers);
  const client = ctx.clients.get(tx.clientId);
  if (!client) return pageError(ctx, 400, 'this application was suspended', 'ob.authorize.bad-client-no-redirect');
  switch (tx.status) {
    case 'identify':
      return await signInPage(ctx, tx, client, new URL(req.url).searchParams.get('login_hint') ?? undefined, 200, headers);
    case 'awaiting_signature': {
      const requestUri = `${ctx.config.issuer}${PATHS.reference}${tx.refCode}`;
      const deepLink = `${ctx.profile.ids.deep_link}?request_uri=${encodeURIComponent(requestUri)}`;
      // The handoff link of document 1 (`<signer>/app/?auth=<request>`), for each signer in order.
      const encoded = tx.request ? encodeObject(tx.request) : '';
      const signers = tx.signers.map((base) => `${base}?auth=${encodeURIComponent(encoded)}`);
      const push = ctx.config.push ? pushView(ctx, ctx.config.push, tx) : undefined;
      return html(waitingPage(ctx, tx, { requestUri, deepLink, signers, qr: await qrSvg(requestUri), ...(push ? { push } : {}) }), 200, headers);
    }
    case 'consent': {
      // The consent form's answer redirects to the client: the page's form-action allows that origin alone besides this one.
      const page = html(consentPage(ctx, tx, client, claimScopes(ctx, tx.scopes)), 200, headers);
      page.headers.set('content-security-policy', CSP.replace("form-action 'self'", `form-action 'self' ${new URL(tx.redirectUri).origin}`));
      return page;
    }
    case 'code_issued':
    case 'access_denied':
      return tx.redirect ? redirect(tx.redirect, headers) : html(messagePage(ctx, 'Done', 'You can close this tab.'), 200, headers);
    case 'failed':
      return pageError(ctx, 400, `the sign-in failed${tx.error ? `: ${tx.error}` : ''}`, 'ob.transaction.failed');
    case 'expired':
      return pageError(ctx, 410, 'this sign-in has expired; start again from the application', 'ob.transaction.expiry');
    default:
      return html(messagePage(ctx, 'Signing in', 'One moment.'), 200, { ...headers, refresh: '1' });
  }
}

/** A page's form (or the same fields as a JSON object): the body the route layer read under its cap. */
function readForm(bytes: Uint8Array): URLSearchParams {
  const text = utf8Text(bytes) ?? '';
  if (text.trim().startsWith('{')) {
    const parsed = parseJson(text);
    const out = new URLSearchParams();
    const obj = parsed.ok ? asObject(parsed.value) : undefined;
    for (const [k, v] of Object.entries(obj ?? {})) for (const item of Array.isArray(v) ? v : [v]) if (typeof item === 'string') out.append(k, item);
    return out;
  }
  return new URLSearchParams(text);
}

const resultFor = async (ctx: BridgeContext, req: Request, tx: BridgeTx): Promise<Response> =>
  prefersJson(req) ? json(view(ctx, (await ctx.store.tx(tx.id))!)) : redirect(`${ctx.config.issuer}${PATHS.transaction}${tx.id}`);

/** POST /t/{id}/identify: the ID normalizes and resolves, then a login-only native request (ob.transaction.identify). */
export async function identifyHandler(ctx: BridgeContext, req: Request, id: string, body: Uint8Array): Promise<Response> {
  const bound = await boundTx(ctx, req, id);
  if (bound instanceof Response) return bound;
  const tx = bound;
  const input = readForm(body).get('id') ?? '';
  if (!ctx.seams.identifies(tx.status)) return answer(req, ctx, 409, `this sign-in is ${tx.status}`, 'ob.transaction.identify');
  const client = ctx.clients.get(tx.clientId)!;
  const parsed = normalizeIdInput(ctx.seams.typedId(input), { allowHttp: !ctx.secure });
  const refuse = async (why: string) => (prefersJson(req) ? answer(req, ctx, 400, why, 'ob.transaction.identify') : await signInPage(ctx, tx, client, input, 400, {}, why));
  if (!parsed.ok) return refuse(`this is not a valid ID (${parsed.reason})`);
  let signers: string[];
  try {
    signers = findSigners(ctx, parsed.id, await ctx.resolver.resolve(parsed.id), await ctx.profiles.webSigner(parsed.id));
  } catch {
    return refuse(`${parsed.id} does not resolve to an identity`);
  }
  const issued = Math.floor(ctx.now() / 1000) * 1000;
  const requestExpires = issued + limits.bridge_native_request_max_seconds * 1000;
  const request: Record<string, unknown> = {
    [ctx.profile.ids.auth_field]: '1',
    request_id: newRequestId(),
    domain: new URL(ctx.config.issuer).host,
    audience: ctx.config.issuer,
    nonce: newNonce(),
    issued_at: formatRfc3339(issued),
    expires_at: formatRfc3339(requestExpires),
    action: 'signin',
    // ob.native.login-only: a fixed statement naming the bridge, never the client.
    statement: `Sign in with ${ctx.config.name}`,
    response_uri: `${ctx.config.issuer}${ctx.profile.ids.callback_path}`,
  };
  const set = {
    signers: JSON.stringify(signers),
    request_id: request.request_id as string,
    request: JSON.stringify(request),
    ref_code: newReferenceCode(),
    match_code: newMatchCode(),
    request_expires_at: requestExpires,
    push_to: parsed.id,
  };
  if (!(await ctx.store.move(tx.id, tx.status, 'awaiting_signature', set))) return answer(req, ctx, 409, 'this sign-in moved on', 'ob.contract.transaction');
  return resultFor(ctx, req, tx);
}

/** POST /t/{id}/retry: back to identify (ob.transaction.retry). */
export async function retryHandler(ctx: BridgeContext, req: Request, id: string): Promise<Response> {
  const bound = await boundTx(ctx, req, id);
  if (bound instanceof Response) return bound;
  await ctx.store.move(bound.id, 'awaiting_signature', 'identify', { request_id: null, ref_code: null, match_code: null, push_to: null });
  return resultFor(ctx, req, bound);
}

/** POST /t/{id}/push: Send to my app, one prompt if one is due (ob.contract.push, ob.push.limits). */
export async function pushHandler(ctx: BridgeContext, req: Request, id: string): Promise<Response> {
  const bound = await boundTx(ctx, req, id);
  if (bound instanceof Response) return bound;
  const push = ctx.config.push;
  if (!push) return answer(req, ctx, 404, 'this bridge does not push to apps', 'ob.contract.push');
  if (bound.status !== 'awaiting_signature') return answer(req, ctx, 409, `this sign-in is ${bound.status}`, 'ob.contract.push');
  const outcome = await sendPrompt(ctx, push, bound);
  if (outcome === undefined && prefersJson(req)) {
    const left = pushView(ctx, push, (await ctx.store.tx(bound.id)) ?? bound);
    return answer(req, ctx, 429, left.remaining === 0 ? 'no prompt is left for this sign-in' : `the next prompt may go at ${left.next_at ?? 'once the last one is sent'}`, 'ob.contract.push');
  }
  return resultFor(ctx, req, bound);
}

/** POST /t/{id}/creating: up to 30 minutes, at most an hour from the start (ob.transaction.creating). */
export async function creatingHandler(ctx: BridgeContext, req: Request, id: string): Promise<Response> {
  const bound = await boundTx(ctx, req, id);
  if (bound instanceof Response) return bound;
  const until = Math.min(ctx.now() + txExtensionMs(ctx.config), ctx.seams.capFrom(bound.createdAt, ctx.now()) + txCapMs(ctx.config));
  if (ctx.seams.creatingExtends()) await ctx.store.extend(bound.id, until);
  return new Response(null, { status: 204 });
}

/** POST /t/{id}/consent: `decision` approve|deny and the `claims` left ticked (ob.consent.release). */
export async function consentHandler(ctx: BridgeContext, req: Request, id: string, body: Uint8Array): Promise<Response> {
  const bound = await boundTx(ctx, req, id);
  if (bound instanceof Response) return bound;
  const tx = bound;
  const form = readForm(body);
  if (tx.status !== 'consent' || tx.identity === null || tx.authTime === null) return answer(req, ctx, 409, `this sign-in is ${tx.status}`, 'ob.contract.transaction');
  if (form.get('decision') === 'deny') {
    const location = authorizationRedirect(ctx, tx.redirectUri, { error: 'access_denied', state: tx.state });
    if (!(await ctx.store.move(tx.id, 'consent', 'access_denied', { redirect: location }))) return answer(req, ctx, 409, 'this sign-in moved on', 'ob.contract.transaction');
    return prefersJson(req) ? json(view(ctx, (await ctx.store.tx(tx.id))!)) : redirect(location);
  }
  if (form.get('decision') !== 'approve') return answer(req, ctx, 400, 'decision must be approve or deny', 'ob.contract.transaction');
  const offered = claimScopes(ctx, tx.scopes);
  const ticked = form.getAll('claims');
  const released = ctx.seams.released(offered, ticked);
  await ctx.store.saveConsent(tx.identity, tx.clientId, released);
  const res = await issueCode(ctx, tx, 'consent', { identity: tx.identity, authTime: tx.authTime, delegated: tx.delegated, keyFingerprint: tx.keyFingerprint }, released);
  return res.status === 409 ? answer(req, ctx, 409, 'this sign-in moved on', 'ob.contract.transaction') : prefersJson(req) ? json(view(ctx, (await ctx.store.tx(tx.id))!)) : res;
}

/** After the proof: consent, or a code at once when a stored consent (or first-party) covers it. */
async function afterSignIn(ctx: BridgeContext, tx: BridgeTx): Promise<Response | undefined> {
  if (tx.status !== 'resumed' || tx.identity === null || tx.authTime === null) return undefined;
  const client = ctx.clients.get(tx.clientId);
  // prompt=consent, alone or beside login, shows the consent step again (ob.authorize.prompt-consent).
  if (client && !(tx.prompt ?? '').split(' ').includes('consent') && (await consentCovers(ctx, client, tx.identity, tx.scopes))) {
    const stored = (await ctx.store.consent(tx.identity, tx.clientId)) ?? [];
    return await issueCode(
      ctx,
      tx,
      'resumed',
      { identity: tx.identity, authTime: tx.authTime, delegated: tx.delegated, keyFingerprint: tx.keyFingerprint },
      claimScopes(ctx, tx.scopes).filter((c) => stored.includes(c)),
    );
  }
  await ctx.store.move(tx.id, 'resumed', 'consent');
  return undefined;
}

// ---------------------------------------------------------------- native sign-in

/**
 * Where to send the user to sign (document 2, Finding a signer), in order: the identity's
 * `endpoints.web_signer`, else `https://<id>/app/` when it resolved over HTTPS; then the
 * operator's default web signer (it works only if the browser already holds the keys there).
 * The deep link and the QR code of the short link are always offered beside them.
 */
function findSigners(ctx: BridgeContext, id: string, resolved: ResolvedIdentity, declared: string | undefined): string[] {
  const out: string[] = [];
  // `declared`: endpoints.web_signer of the capabilities document (document 3's file at
  // capabilities_path, read by ctx.profiles), not a field of the identity document.
  if (typeof declared === 'string' && /^https:\/\/[^\s]+$/.test(declared)) out.push(declared.endsWith('/') ? declared : `${declared}/`);
  else if (resolved.source === 'https') out.push(`https://${id}/app/`);
  if (ctx.config.defaultSigner) out.push(`${ctx.config.defaultSigner}/app/`);
  return out;
}

/** The fingerprint of the key the identity holds now (svc_key_fingerprint). */
export async function fingerprintOf(ctx: BridgeContext, identity: string): Promise<string | null> {
  try {
    const resolved = await ctx.resolver.resolve(identity);
    return keyFingerprint(ctx.profile, formatKey(resolved.publicKey), 'signing') ?? null;
  } catch {
    return null;
  }
}

/** A same-device approval goes on with a resume code; cross-device with the match code (ob.transaction.callback). */
export async function approved(ctx: BridgeContext, tx: BridgeTx, identity: string, delegated: boolean, crossDevice: boolean): Promise<{ ok: boolean; resumeUri?: string }> {
  const set: Record<string, string | number | null> = {
    identity,
    delegated: delegated ? 1 : 0,
    auth_time: ctx.now(),
    key_fingerprint: await fingerprintOf(ctx, identity),
    cross_device: crossDevice ? 1 : 0,
  };
  let code: string | undefined;
  if (!crossDevice) {
    code = newSecret();
    set.resume_hash = hashSecret(code);
    set.resume_expires_at = ctx.now() + ctx.config.resumeTtlSeconds * 1000;
  }
  if (!(await ctx.store.move(tx.id, 'awaiting_signature', 'authenticated', set))) return { ok: false };
  return code === undefined ? { ok: true } : { ok: true, resumeUri: `${ctx.config.issuer}${ctx.profile.ids.resume_path}?code=${code}` };
}

/** GET /svc/resume?code=: the resume code AND the transaction cookie (ob.transaction.resume-binding). */
export async function resumeHandler(ctx: BridgeContext, req: Request): Promise<Response> {
  const codes = new URL(req.url).searchParams.getAll('code');
  const code = codes[0];
  if (codes.length !== 1 || !wellFormedSecret(code)) return pageError(ctx, 400, 'the resume link has no valid code', 'ob.transaction.resume-binding');
  const tx = await ctx.store.txByResume(hashSecret(code));
  if (!ctx.seams.resumable(tx) || tx.resumeExpiresAt === null || ctx.seams.resumeExpired(ctx.now(), tx.resumeExpiresAt) || tx.identity === null || tx.authTime === null) {
    return pageError(ctx, 410, 'this sign-in link was already used or has expired', 'ob.transaction.resume-binding');
  }
  const cookie = readCookies(req).get(txCookieName(ctx));
  if (!ctx.seams.resumeBrowserMatches(wellFormedSecret(cookie) ? hashSecret(cookie) : undefined, tx.bindingHash)) {
    await ctx.store.move(tx.id, 'authenticated', 'failed', { error: 'opened in another browser', resume_hash: null });
    return pageError(ctx, 403, 'this sign-in was started in another browser', 'ob.transaction.resume-binding');
  }
  if (ctx.seams.resumeSpends(tx) && !(await ctx.store.move(tx.id, 'authenticated', 'resumed', ctx.seams.resumeClears())))
    return pageError(ctx, 410, 'this sign-in link was already used', 'ob.transaction.resume-binding');
  const cookieHeader = await newSessionCookie(ctx, {
    identity: tx.identity,
    authTime: tx.authTime,
    delegated: tx.delegated,
    keyFingerprint: tx.keyFingerprint,
    expiresAt: ctx.now() + limits.session_cookie_ttl_seconds * 1000,
  });
  const after = await afterSignIn(ctx, (await ctx.store.tx(tx.id))!);
  if (after) {
    const h = new Headers(after.headers);
    h.append('set-cookie', cookieHeader);
    return new Response(null, { status: after.status, headers: h });
  }
  return redirect(`${ctx.config.issuer}${PATHS.transaction}${tx.id}`, { 'set-cookie': cookieHeader });
}
