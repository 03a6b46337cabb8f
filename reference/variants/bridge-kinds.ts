// The reference bridge broken across the rest of document 2's matrix (issue 25): the client kinds
// (a credential read from the Authorization header only, PKCE asked of public clients only), a suspension the
// running process never sees, lifetimes counted in the wrong unit, an extension granted once, a
// push cap counted per browser, a revocation that finds tokens by prefix, and consent skipped
// whenever no claim is asked. Each is one realistic bug, the document's sentence beside it. See
// wire.ts for how a variant wraps the server; bridge-matrix.ts for the first round.
import { profileFor } from '../../protocol/common/profile.ts';
import { verifierMatches } from '../../protocol/bridge/pkce.ts';
import { sameHash } from '../shared/secrets.ts';
import { PATHS } from '../bridge/context.ts';
import type { BridgeSeams } from '../bridge/seams.ts';
import { untouched, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;
const json = (body: unknown, status: number) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
const isPost = (req: Request, path: string) => req.method === 'POST' && new URL(req.url).pathname === path;
const form = async (req: Request) => new URLSearchParams(await req.clone().text());

/** Access tokens as the token endpoint issued them, with the moment it did. */
function issuedTokens(): { wire: Wire; issued: Map<string, number> } {
  const issued = new Map<string, number>();
  const wire: Wire = async (req, next) => {
    const res = await next(req);
    if (!isPost(req, PATHS.token) || res.status !== 200) return res;
    const body = (await res.clone().json()) as { access_token?: unknown };
    if (typeof body.access_token === 'string') issued.set(body.access_token, Date.now());
    return res;
  };
  return { wire, issued };
}

/** The client_id of an HTTP Basic client authentication (RFC 6749 section 2.3.1: form-encoded). */
function basicClient(req: Request): string | undefined {
  const b = /^Basic\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];
  if (b === undefined) return undefined;
  const [id] = Buffer.from(b, 'base64').toString('utf8').split(':');
  return id === undefined ? undefined : decodeURIComponent(id.replace(/\+/g, ' '));
}

const bearer = (req: Request) => /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];

/** The browser's session cookie (the bridge's `..._session`), when it has one. */
const sessionOf = (req: Request) => /(?:^|;\s*)[^=;]*session=([^;]+)/.exec(req.headers.get('cookie') ?? '')?.[1];

/** The claims a transaction page's JSON view offers at consent, or undefined when it is not at consent. */
async function consentOffered(req: Request, res: Response): Promise<string[] | undefined> {
  const url = new URL(req.url);
  if (req.method !== 'GET' || !new RegExp(`^${PATHS.transaction}[A-Za-z0-9_-]+$`).test(url.pathname) || !(res.headers.get('content-type') ?? '').includes('json')) return undefined;
  const view = (await res.clone().json()) as { state?: unknown; consent?: { claims?: unknown } };
  const claims = view.consent?.claims;
  return view.state === 'consent' && Array.isArray(claims) ? claims.map(String) : undefined;
}

/** Approves the consent of the transaction page `req` asked for, on the user's behalf, with the browser's own cookies. */
function approveFor(req: Request, next: (r: Request) => Promise<Response>, claims: string[]): Promise<Response> {
  const url = new URL(req.url);
  const headers = new Headers({ 'content-type': 'application/json', accept: 'application/json', cookie: req.headers.get('cookie') ?? '' });
  return next(new Request(`${url.origin}${url.pathname}/consent`, { method: 'POST', headers, body: JSON.stringify({ decision: 'approve', claims }) }));
}

/** The decision and ticked claims of a consent form, posted as JSON or as a form. */
function parseDecision(body: string): { decision: string; claims: string[] } {
  try {
    const j = JSON.parse(body) as { decision?: unknown; claims?: unknown };
    return { decision: String(j.decision), claims: Array.isArray(j.claims) ? j.claims.map(String) : [] };
  } catch {
    const f = new URLSearchParams(body);
    return { decision: f.get('decision') ?? '', claims: f.getAll('claims') };
  }
}

/** A transaction id from a /t/{id}/<rest> path, when the path is that one. */
const txOf = (url: URL, rest: string) => new RegExp(`^${PATHS.transaction}([A-Za-z0-9_-]+)/${rest}$`).exec(url.pathname)?.[1];

export const BRIDGE_KINDS_WIRE: Record<string, WireVariant> = {
  // Document 2, Authentication 3: "Clients authenticate at `/token` by `client_secret_basic`,
  // `client_secret_post` or `private_key_jwt`". The bug: the token endpoint reads a client's
  // secret from the Authorization header only, so a client_secret_post client is a stranger there.
  'token-header-only': {
    rule: 'ob.token.client-auth',
    what: 'a client_secret in the form body is ignored at /token (only HTTP Basic is read)',
    wire: async (req, next) =>
      isPost(req, PATHS.token) && (await form(req)).has('client_secret') ? json({ error: 'invalid_client', error_description: 'client authentication failed' }, 401) : next(req),
  },
  // Document 2, Endpoints: "`/introspect` serves only the owning client." The bug: the
  // hand-written endpoint reads the caller from the Authorization header only, so a
  // client_secret_post owner is a stranger to its own token (answered inactive).
  'introspect-header-only': {
    rule: 'ob.introspect.owner',
    what: 'a client_secret_post owner introspects its own token inactive (only HTTP Basic is read at /introspect)',
    wire: async (req, next) => (isPost(req, PATHS.introspect) && (await form(req)).has('client_secret') ? json({ active: false }, 200) : next(req)),
  },
  // Document 2, Endpoints: "POST /revoke: RFC 7009 access-token revocation". The bug: the
  // endpoint reads the caller from the Authorization header only and, as RFC 7009 lets it, answers
  // 200 whatever it did: a client_secret_post owner's revocation silently does nothing.
  'revoke-header-only': {
    rule: 'ob.revoke',
    what: "a client_secret_post owner's revocation answers 200 and revokes nothing (only HTTP Basic is read at /revoke)",
    wire: async (req, next) => (isPost(req, PATHS.revoke) && (await form(req)).has('client_secret') ? json({}, 200) : next(req)),
  },
  // Document 2, States and transitions: "The bridge continues only if the resume code AND the
  // transaction's `__Host-` cookie both match." The bug: the cookie is compared only when the
  // browser sends one (meant for browsers that drop cookies), so a forwarded link continues.
  'resume-cookie-optional': {
    rule: 'ob.transaction.resume-binding',
    what: 'a resume link opened in a browser without the transaction cookie continues the sign-in',
    wire: untouched,
    seams: { resumeBrowserMatches: (cookieHash, bindingHash) => cookieHash === undefined || sameHash(cookieHash, bindingHash) } satisfies Partial<BridgeSeams>,
  },
  // Document 2, ID token: "`nonce` is echoed when sent and is optional." The bug: the nonce is
  // echoed to public clients only (confidential ones "have PKCE and a secret already").
  'nonce-public-only': {
    rule: 'ob.token.id-token',
    what: "a confidential client's ID token leaves out the nonce its request sent",
    wire: untouched,
    seams: { idTokenNonce: (client, nonce) => (client.authMethod === 'none' ? nonce : null) } satisfies Partial<BridgeSeams>,
  },
  // Document 2, Authorization code: "bound to client, redirect URI, PKCE challenge, nonce and
  // identity". The bug: /token compares redirect_uri only for being one the client registered,
  // not the one the code was issued for (here: any near-miss is taken as the registered one).
  'token-redirect-registered': (() => {
    const registered = new Map<string, string>();
    return {
      rule: 'ob.code.binding',
      what: "a code redeems with any redirect_uri near its client's registered one",
      wire: async (req, next) => {
        const url = new URL(req.url);
        if (req.method === 'GET' && url.pathname === PATHS.authorize) {
          const res = await next(req);
          const client = url.searchParams.get('client_id');
          const redirect = url.searchParams.get('redirect_uri');
          if (res.status >= 300 && res.status < 400 && client && redirect && !registered.has(client)) registered.set(client, redirect);
          return res;
        }
        if (!isPost(req, PATHS.token)) return next(req);
        const f = await form(req);
        const client = f.get('client_id') ?? basicClient(req);
        const own = client === undefined ? undefined : registered.get(client);
        if (own === undefined || !f.has('redirect_uri') || f.get('redirect_uri') === own) return next(req);
        f.set('redirect_uri', own);
        const headers = new Headers(req.headers);
        headers.delete('content-length');
        return next(new Request(req.url, { method: 'POST', headers, body: f.toString() }));
      },
    } satisfies WireVariant;
  })(),
  // Document 2, OIDC profile rule 1: "PKCE `S256` is required for every client". The bug: PKCE
  // asked of public clients only (confidential ones "have a secret already").
  'pkce-public-only': {
    rule: 'ob.authorize.pkce-required',
    what: 'a confidential client may leave PKCE out (its codes then redeem without a verifier)',
    wire: untouched,
    seams: {
      pkceRequired: (client) => client.authMethod === 'none',
      pkceMatches: (client, verifier, challenge) => (client.authMethod !== 'none' && challenge === '') || verifierMatches(verifier, challenge),
    } satisfies Partial<BridgeSeams>,
  },
  // Document 2, Operator commands: "`svc-oauth clients suspend <id>` (stops an application at
  // once)". The bug: the running process serves from the client list it loaded at start, so a
  // suspension recorded by the operator takes effect only at the next restart.
  'suspend-at-restart': {
    rule: 'ob.clients.suspend',
    what: 'a suspension takes effect only after a restart: the suspended client goes on signing in, redeeming and introspecting',
    wire: async (req, next) => (isPost(req, PATHS.suspend) ? json({ status: 'suspended' }, 200) : next(req)),
  },
  // Document 2, Access token: "opaque, lifetime 10 minutes, accepted only at `/userinfo`". The
  // bug: the lifetime counted in the wrong unit (600 read as milliseconds, rounded up to a second).
  'access-token-unit': (() => {
    const { wire: record, issued } = issuedTokens();
    return {
      rule: 'ob.token.access-token',
      what: 'an access token stops reading /userinfo a second after it was issued (its lifetime counted in the wrong unit)',
      wire: async (req, next) => {
        const token = bearer(req);
        const at = token === undefined ? undefined : issued.get(token);
        if (new URL(req.url).pathname === PATHS.userinfo && at !== undefined && Date.now() - at > 1000) return json({ error: 'invalid_token' }, 401);
        return record(req, next);
      },
    } satisfies WireVariant;
  })(),
  // Document 2, States and transitions: "the resume code is 256-bit random, single-use, valid 60
  // seconds". The bug: its lifetime counted in the wrong unit (60 read as milliseconds, rounded up
  // to a second), so only a resume opened at once works.
  'resume-unit': (() => {
    const issued = new Map<string, number>();
    return {
      rule: 'ob.transaction.resume-binding',
      what: 'a resume code is refused a second after the callback issued it',
      wire: async (req, next) => {
        const url = new URL(req.url);
        if (req.method === 'GET' && url.pathname === ids.resume_path) {
          const at = issued.get(url.searchParams.get('code') ?? '');
          if (at !== undefined && Date.now() - at > 1000) return new Response('this sign-in link has expired', { status: 400, headers: { 'content-type': 'text/plain' } });
          return next(req);
        }
        const res = await next(req);
        if (req.method === 'POST' && url.pathname === ids.callback_path && res.status === 200) {
          const body = (await res.clone().json()) as { resume_uri?: unknown };
          if (typeof body.resume_uri === 'string') issued.set(new URL(body.resume_uri, req.url).searchParams.get('code') ?? '', Date.now());
        }
        return res;
      },
    } satisfies WireVariant;
  })(),
  // Document 2, Transaction: "`POST /t/{id}/creating` extends the transaction to 30 minutes,
  // capped at one hour from its start." The bug: the extension is a one-time flag, so the page
  // that keeps the sign-in open while an ID is made is refused its next extension.
  'creating-once': (() => {
    const extended = new Set<string>();
    return {
      rule: 'ob.transaction.creating',
      what: 'a transaction is extended once: a second POST /t/{id}/creating is refused',
      wire: async (req, next) => {
        const id = req.method === 'POST' ? txOf(new URL(req.url), 'creating') : undefined;
        if (id === undefined) return next(req);
        if (extended.has(id)) return json({ error: 'invalid_request', error_description: 'already extended' }, 409);
        const res = await next(req);
        if (res.status < 300) extended.add(id);
        return res;
      },
    } satisfies WireVariant;
  })(),
  // Document 2, Authentication 7: "the waiting page offers Send to my app (at most three times,
  // 15 seconds apart)". The bug: the three are counted per browser (its transaction cookie), not
  // per sign-in, so the user's next sign-in in the same browser can push no more.
  'push-cap-per-browser': (() => {
    const sent = new Map<string, number>();
    return {
      rule: 'ob.push.limits',
      what: 'the three prompts are counted per browser: a later sign-in in the same browser sends none',
      wire: async (req, next) => {
        if (req.method !== 'POST' || txOf(new URL(req.url), 'push') === undefined) return next(req);
        const browser = req.headers.get('cookie') ?? '';
        if ((sent.get(browser) ?? 0) >= 3) return json({ error: 'invalid_request', error_description: 'no prompt left' }, 429);
        const res = await next(req);
        if (res.status === 200) sent.set(browser, (sent.get(browser) ?? 0) + 1);
        return res;
      },
    } satisfies WireVariant;
  })(),
  // Document 2, IndieAuth: the access token "can be revoked at `/revoke` without client
  // authentication". The bug: the token is looked up by an indexed prefix, so a string that is not
  // the token but shares all of it but the last character revokes it.
  'revoke-by-prefix': (() => {
    const { wire: record, issued } = issuedTokens();
    return {
      rule: 'ob.indieauth.access-token',
      what: 'a token that differs from a live one only in its last character revokes it at /revoke',
      wire: async (req, next) => {
        if (!isPost(req, PATHS.revoke)) return record(req, next);
        const f = await form(req);
        const asked = f.get('token') ?? '';
        const live = asked.length > 8 && !issued.has(asked) ? [...issued.keys()].find((t) => t.slice(0, -1) === asked.slice(0, -1)) : undefined;
        if (live === undefined) return next(req);
        f.set('token', live);
        const headers = new Headers(req.headers);
        headers.delete('content-length');
        return next(new Request(req.url, { method: 'POST', headers, body: f.toString() }));
      },
    } satisfies WireVariant;
  })(),
  // Document 2, OIDC profile rule 2: "`prompt=login`, or an exceeded `max_age`, forces a new
  // native proof." The bug: any max_age forces one, exceeded or not.
  'max-age-always-login': {
    rule: 'ob.authorize.prompt-login',
    what: 'a max_age the session has not exceeded still forces a new native proof',
    wire: async (req, next) => {
      const url = new URL(req.url);
      if (req.method !== 'GET' || url.pathname !== PATHS.authorize || !url.searchParams.has('max_age') || url.searchParams.has('prompt')) return next(req);
      url.searchParams.set('prompt', 'login');
      return next(new Request(url.href, { method: 'GET', headers: req.headers }));
    },
  },
  // Document 2, Endpoints of the bridge: "It verifies sign-ins with the native verifier whose
  // origin is the issuer, using an atomic nonce cache shared across instances." The bug: the
  // callback keeps its answers per body (an idempotency cache in front of the verifier), so an
  // approval delivered again, or several times at once, is answered as accepted every time.
  'callback-idempotent': (() => {
    const answered = new Map<string, Promise<{ status: number; headers: Headers; body: string }>>();
    return {
      rule: 'ob.native.verifier',
      what: 'an approval delivered again (or several times at once) to /svc/callback is answered ok every time',
      wire: async (req, next) => {
        if (!isPost(req, ids.callback_path)) return next(req);
        const body = await req.clone().text();
        let kept = answered.get(body);
        if (kept === undefined) {
          kept = next(req).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.text() }));
          answered.set(body, kept);
        }
        const k = await kept;
        if (k.status !== 200) answered.delete(body);
        return new Response(k.body, { status: k.status, headers: k.headers });
      },
    } satisfies WireVariant;
  })(),
  // Document 2, Consent: "A static client may set `first_party` to true, which skips consent for
  // `openid` alone". The bug: the skip keyed on the scope alone, so every client asking for
  // `openid` alone is signed in without the consent step.
  'openid-skips-consent': {
    rule: 'ob.consent.first-party',
    what: 'every client asking for openid alone skips consent (the first_party flag is not read)',
    wire: async (req, next) => {
      const res = await next(req);
      const offered = await consentOffered(req, res);
      return offered !== undefined && offered.length === 0 ? approveFor(req, next, offered) : res;
    },
  },
  // Document 2, OIDC profile rule 1: "With a live session and stored consent covering the claims,
  // a later `/authorize` issues a code without another signature"; Consent: "A consent records the
  // client, the claims released". The bug: the consent is stored for the user's session alone, so
  // another client's sign-in in the same session skips consent for claims approved elsewhere.
  'consent-per-session': (() => {
    const approved = new Map<string, Set<string>>();
    return {
      rule: 'ob.sso.reuse',
      what: 'a consent given to one client covers every client in the same browser session',
      wire: async (req, next) => {
        const session = sessionOf(req);
        if (req.method === 'POST' && txOf(new URL(req.url), 'consent') !== undefined) {
          const body = await req.clone().text();
          const res = await next(req);
          const decided = parseDecision(body);
          if (res.status < 400 && session !== undefined && decided.decision === 'approve') approved.set(session, new Set([...(approved.get(session) ?? []), ...decided.claims]));
          return res;
        }
        const res = await next(req);
        const offered = await consentOffered(req, res);
        const held = session === undefined ? undefined : approved.get(session);
        return offered !== undefined && held !== undefined && offered.every((c) => held.has(c)) ? approveFor(req, next, offered) : res;
      },
    } satisfies WireVariant;
  })(),
};
