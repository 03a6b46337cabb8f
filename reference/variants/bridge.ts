// The reference bridge broken on the wire, one rule each (see wire.ts): the ID it reads from the
// sign-in form, its discovery, keys, pages and token answers, and what /authorize lets through.
import { decodeJwt } from 'jose';
import { profileFor } from '../../protocol/common/profile.ts';
import { decodeObject, encodeObject } from '../../protocol/common/codec.ts';
import { PATHS } from '../bridge/context.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';
import { answer, at, editHeaders, editJson, editRequest, jsonAnswer, withBody, type Wire, type WireVariant } from './kit.ts';

const profile = profileFor();
const ids = profile.ids;
const refusal = (status: number, error: string) => jsonAnswer({ error, error_description: 'refused by the broken variant' }, status);
const isIdentify = (req: Request, url: URL) => req.method === 'POST' && url.pathname.startsWith(PATHS.transaction) && url.pathname.endsWith('/identify');

/** Rewrites the typed ID of matching sign-in forms (`to` returns the ID the bridge then sees). */
function typedId(when: (id: string) => boolean, to: (id: string) => string): Wire {
  return editRequest(isIdentify, async (req) => {
    const text = await req.clone().text();
    // The form as a browser posts it, or the JSON body the bridge takes as well.
    if (text.trimStart().startsWith('{')) {
      const body = JSON.parse(text) as { id?: unknown };
      if (typeof body.id !== 'string' || !when(body.id)) return req;
      return new Request(req.url, { method: 'POST', headers: req.headers, body: JSON.stringify({ ...body, id: to(body.id) }) });
    }
    const form = new URLSearchParams(text);
    const id = form.get('id');
    if (id === null || !when(id)) return req;
    form.set('id', to(id));
    return new Request(req.url, { method: 'POST', headers: req.headers, body: form.toString() });
  });
}

/** An ID the bridge refuses (a broken bridge that does not accept this form). */
const REFUSED = 'not a valid id!';
const refuseId = (when: (id: string) => boolean): Wire => typedId(when, () => REFUSED);

/** An ID form the document refuses, repaired into the plain ID (a broken bridge that accepts it). */
const acceptId = (when: (id: string) => boolean, repair: (id: string) => string): Wire => typedId(when, repair);

const idCase = (rule: RuleId, what: string, wire: Wire): WireVariant => ({ rule, what, wire });

/** Rewrites the session cookie wherever the bridge sets it (in either cookie name form). */
const sessionCookie = (edit: (header: string) => string): Wire =>
  editHeaders(
    () => true,
    (h) => {
      const set = h.getSetCookie();
      const isSession = (c: string) => c.split('=')[0] === ids.session_cookie || c.split('=')[0] === ids.session_cookie.replace(/^__Host-/, '');
      if (!set.some(isSession)) return;
      h.delete('set-cookie');
      for (const c of set) h.append('set-cookie', isSession(c) ? edit(c) : c);
    },
  );

/** The bridge's query parameters at /authorize, edited before it sees them. */
const authorizeQuery = (edit: (q: URLSearchParams) => boolean): Wire =>
  editRequest(at(PATHS.authorize, 'GET'), (req, url) => {
    const q = new URLSearchParams(url.search);
    return edit(q) ? new Request(`${url.origin}${url.pathname}?${q.toString()}`, { method: 'GET', headers: req.headers }) : req;
  });

const discovery = (edit: (d: Record<string, unknown>) => void) =>
  editJson(
    (req, url) => req.method === 'GET' && (url.pathname === PATHS.discovery || url.pathname === PATHS.asMetadata),
    (d) => void edit(d),
    [200],
  );

const redirected = (res: Response) => res.status >= 300 && res.status < 400 && res.headers.has('location');

export const BRIDGE_WIRE: Record<string, WireVariant> = {
  // A blind broken server (bridge-10, written without the suites): "revoking an app on /account leaves its live access tokens usable";
  // here the revocation's form is taken and does nothing at all.
  'account-revoke-ignored': {
    rule: 'ob.consent.record',
    what: "the /account page's revocation answers as done and ends neither the app's consent nor its tokens",
    wire: answer(at(`${PATHS.account}/revoke`, 'POST'), () => new Response(null, { status: 302, headers: { location: PATHS.account } })),
  },
  // A blind broken server (round 3, bridge-07, written without the suites): "Sign-out passes the identity
  // instead of the session hash, so only the browser cookie is cleared"; here the sign-out ends nothing.
  'sign-out-cookie-only': {
    rule: 'ob.account.sign-out',
    what: "the /account page's sign-out answers as done and leaves the bridge session live",
    wire: answer(at(`${PATHS.account}/logout`, 'POST'), () => new Response(null, { status: 302, headers: { location: PATHS.account } })),
  },
  // A blind broken server (round 3, bridge-08, written without the suites): "The check is `>` instead of
  // `>=`, so the 11th `POST /developers/clients` creates a client instead of being refused with 409".
  'console-limit-off-by-one': {
    rule: 'ob.console.forms',
    what: "the console registers an owner's eleventh application",
    wire: async (req, next) => {
      const res = await next(req);
      return req.method === 'POST' && new URL(req.url).pathname === `${PATHS.developers}/clients` && res.status === 409
        ? jsonAnswer({ client_id: 'svc_eleventh', client_secret: 'shown-once-eleventh-secret' }, 201)
        : res;
    },
  },
  // A blind broken server (round 4, bridge-01, written without the suites): "`GET /authorize` with
  // `response_type=code id_token` is accepted (303 to `/t/{id}`)".
  'response-type-hybrid-taken': {
    rule: 'ob.authorize.response-type',
    what: 'a response_type that lists code among others (code id_token) is taken as code',
    wire: editRequest(
      (req, url) => req.method === 'GET' && url.pathname === PATHS.authorize && (url.searchParams.get('response_type') ?? '').split(' ').includes('code'),
      async (req) => {
        const u = new URL(req.url);
        u.searchParams.set('response_type', 'code');
        return new Request(u, { method: 'GET', headers: req.headers });
      },
    ),
  },
  'id-uppercase': idCase(
    'ob.id-input.case.uppercase',
    'an ID in capitals is refused',
    refuseId((id) => /^[A-Z0-9.-]+$/.test(id) && /[A-Z]/.test(id)),
  ),
  'id-trailing-dot': idCase(
    'ob.id-input.case.trailing-dot',
    'an ID with a trailing dot is refused',
    refuseId((id) => /^[a-z0-9.-]+\.$/.test(id)),
  ),
  'id-leading-at': idCase(
    'ob.id-input.case.leading-at',
    'an ID with a leading @ is refused',
    refuseId((id) => id.startsWith('@')),
  ),
  'id-trim': idCase(
    'ob.id-input.trim',
    'an ID with surrounding white space is refused',
    refuseId((id) => /^\s+[^@\s]|\S\s+$/.test(id) && !id.includes('@')),
  ),
  'id-https-url': idCase(
    'ob.id-input.case.https-url',
    'an ID typed as an https URL is refused',
    refuseId((id) => id.startsWith('https://')),
  ),
  'id-lowercase': idCase(
    'ob.id-input.lowercase',
    'an ID typed as a URL in capitals is refused',
    refuseId((id) => id.startsWith('HTTPS://')),
  ),
  'id-order': idCase(
    'ob.id-input.order',
    'the @ is stripped before the white space, so " @x" is refused',
    refuseId((id) => /^\s+@/.test(id)),
  ),
  'id-http-url': idCase(
    'ob.id-input.case.http-url',
    'an http URL is refused also in development',
    refuseId((id) => id.startsWith('http://')),
  ),
  'id-xn-label': idCase(
    'ob.id-input.case.xn-label',
    'an ID with an xn-- label is refused',
    refuseId((id) => /(^|\.)xn--/.test(id)),
  ),
  'id-url-path': idCase(
    'ob.id-input.case.url-path',
    'a URL with a path is read as its host',
    acceptId(
      (id) => /^https:\/\/[^/]+\/.+/.test(id) && !id.includes('?'),
      (id) => new URL(id).hostname,
    ),
  ),
  'id-url-port': idCase(
    'ob.id-input.case.url-port',
    'a URL with a port is read as its host',
    acceptId(
      (id) => /^https:\/\/[^/@]+:\d+/.test(id),
      (id) => new URL(id).hostname,
    ),
  ),
  'id-url-parts': idCase(
    'ob.id-input.url',
    'a URL with userinfo or a query is read as its host',
    acceptId(
      (id) => /^https:\/\/[^/]*@|\?/.test(id),
      (id) => new URL(id).hostname,
    ),
  ),
  'id-non-ascii': idCase(
    'ob.id-input.case.non-ascii',
    'non-ASCII letters are dropped',
    acceptId(
      (id) => /[^\x00-\x7f]/.test(id),
      (id) => id.replace(/[^\x00-\x7f]/g, ''),
    ),
  ),
  'id-valid-name': idCase(
    'ob.id-input.valid-name',
    'a leading hyphen is dropped',
    acceptId(
      (id) => id.startsWith('-'),
      (id) => id.slice(1),
    ),
  ),
  'id-no-alias': idCase(
    'ob.id-input.no-alias',
    'www. is read as an alias of the ID',
    acceptId(
      (id) => id.startsWith('www.'),
      (id) => id.slice(4),
    ),
  ),
  // The near-misses of the one-character steps: "remove one trailing dot", "strip one leading @".
  'id-trailing-dots': idCase(
    'ob.id-input.case.trailing-dot',
    'every trailing dot is removed, so two are accepted',
    acceptId(
      (id) => /\.\.$/.test(id),
      (id) => id.replace(/\.+$/, ''),
    ),
  ),
  'id-leading-ats': idCase(
    'ob.id-input.case.leading-at',
    'every leading @ is stripped, so two are accepted',
    acceptId(
      (id) => id.startsWith('@@'),
      (id) => id.replace(/^@+/, ''),
    ),
  ),
  // "an internationalized name only in its `xn--` form, no Unicode-to-punycode conversion".
  'id-unicode-punycoded': idCase(
    'ob.id-input.valid-name',
    'a Unicode name is converted to its xn-- form',
    acceptId(
      (id) => /[^\x00-\x7f]/.test(id),
      (id) => new URL(`https://${id}/`).hostname,
    ),
  ),
  'id-single-label': {
    rule: 'ob.id-input.case.single-label',
    what: 'a single label is completed with the zone of the last ID typed',
    wire: (() => {
      let zone = '';
      const remember = typedId(
        (id) => {
          const host = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.exec(id.trim().toLowerCase())?.[0];
          if (host) zone = host.slice(host.indexOf('.'));
          return !id.includes('.') && zone !== '';
        },
        (id) => `${id}${zone}`,
      );
      return remember;
    })(),
  },
  'issuer-slash': { rule: 'ob.issuer.exact-url', what: 'discovery names the issuer with a trailing slash', wire: discovery((d) => (d.issuer = `${String(d.issuer)}/`)) },
  'as-metadata-gone': { rule: 'ob.discovery.paths', what: 'oauth-authorization-server answers 404', wire: answer(at(PATHS.asMetadata), () => refusal(404, 'not_found')) },
  'alg-none': { rule: 'ob.discovery.rs256', what: 'discovery also publishes alg none', wire: discovery((d) => (d.id_token_signing_alg_values_supported = ['RS256', 'none'])) },
  'response-type-token': { rule: 'ob.authorize.response-type', what: 'discovery also publishes response_type token', wire: discovery((d) => (d.response_types_supported = ['code', 'token'])) },
  'jwks-private': {
    rule: 'ob.keys.jwks',
    what: 'the key set publishes the private exponent',
    wire: editJson(at(PATHS.jwks, 'GET'), (j) => void (j.keys as Record<string, unknown>[]).forEach((k) => (k.d = 'AQAB')), [200]),
  },
  'health-503': { rule: 'ob.health', what: '/health answers 503', wire: answer(at(PATHS.health), () => jsonAnswer({ status: 'down' }, 503)) },
  'no-referrer-policy': {
    rule: 'ob.pages.security-headers',
    what: 'pages send no Referrer-Policy',
    wire: editHeaders(
      (req, url) => req.method === 'GET' && url.pathname.startsWith(PATHS.transaction),
      (h) => h.delete('referrer-policy'),
    ),
  },
  // Issue 25: "a rule is judged on one case, the one its author thought of": the transaction
  // cookie's attributes were judged, never those of the session cookie a sign-in ends with.
  'session-cookie-scriptable': {
    rule: 'ob.cookies.host-prefix',
    what: 'the session cookie is set without HttpOnly, so scripts on the page read it',
    wire: sessionCookie((c) => c.replace(/;\s*HttpOnly/i, '')),
  },
  'session-cookie-browser-life': {
    rule: 'ob.cookies.host-prefix',
    what: 'the session cookie has no Max-Age: it lives as long as the browser runs, not 12 hours',
    wire: sessionCookie((c) => c.replace(/;\s*Max-Age=\d+/i, '')),
  },
  'native-metadata': {
    rule: 'ob.native.rp-metadata',
    what: 'the RP metadata lists a second response URI',
    wire: editJson(at(ids.metadata_path, 'GET'), (m) => void (m.response_uris = [...(m.response_uris as string[]), 'https://elsewhere.example/callback']), [200]),
  },
  'native-scopes': {
    rule: 'ob.native.login-only',
    what: 'the native request asks for the profile scope',
    wire: editJson(
      (req, url) => url.pathname.startsWith(PATHS.transaction),
      (v) => {
        if (typeof v.request !== 'string') return;
        const d = decodeObject(v.request);
        if (d.ok) v.request = encodeObject({ ...d.value, scopes: ['profile'] });
      },
      [200],
    ),
  },
  'userinfo-no-sub': { rule: 'ob.userinfo', what: '/userinfo answers without sub', wire: editJson(at(PATHS.userinfo), (u) => void delete u.sub, [200]) },
  'access-token-long': { rule: 'ob.token.access-token', what: 'access tokens are said to last an hour', wire: editJson(at(PATHS.token, 'POST'), (t) => void (t.expires_in = 3600), [200]) },
  'revoke-noop': { rule: 'ob.revoke', what: '/revoke answers 200 and revokes nothing', wire: answer(at(PATHS.revoke, 'POST'), () => new Response(null, { status: 200 })) },
  'state-optional': { rule: 'ob.authorize.state-required', what: 'an authorization request without state gets one', wire: authorizeQuery((q) => !q.has('state') && (q.set('state', 'added'), true)) },
  'pkce-plain': {
    rule: 'ob.authorize.pkce-plain-refused',
    what: 'code_challenge_method plain is read as S256',
    wire: authorizeQuery((q) => q.get('code_challenge_method') === 'plain' && (q.set('code_challenge_method', 'S256'), true)),
  },
  'prompt-none-ignored': { rule: 'ob.authorize.prompt-none', what: 'prompt=none is ignored', wire: authorizeQuery((q) => q.get('prompt') === 'none' && (q.delete('prompt'), true)) },
  'prompt-login-ignored': {
    rule: 'ob.authorize.prompt-login',
    what: 'prompt=login and max_age are ignored',
    wire: authorizeQuery((q) => (q.get('prompt') === 'login' || q.has('max_age')) && (q.delete('prompt'), q.delete('max_age'), true)),
  },
  'sso-forgotten': {
    rule: 'ob.sso.reuse',
    what: 'the browser session is not read at /authorize',
    wire: editRequest(at(PATHS.authorize, 'GET'), (req) => {
      const headers = new Headers(req.headers);
      headers.delete('cookie');
      return new Request(req.url, { method: 'GET', headers });
    }),
  },
  'error-as-page': {
    rule: 'ob.authorize.error-redirect',
    what: 'authorization errors are shown as a page, not redirected to the client',
    wire: async (req, next) => {
      const res = await next(req);
      const url = new URL(req.url);
      if (url.pathname !== PATHS.authorize || !redirected(res) || !/[?&]error=/.test(res.headers.get('location')!)) return res;
      return new Response('<!doctype html><p>authorization error', { status: 400, headers: { 'content-type': 'text/html; charset=utf-8' } });
    },
  },
  'bad-client-redirect': {
    rule: 'ob.authorize.bad-client-no-redirect',
    what: 'an unknown client or redirect_uri is redirected to the redirect_uri with an error',
    wire: async (req, next) => {
      const res = await next(req);
      const url = new URL(req.url);
      const to = url.searchParams.get('redirect_uri');
      if (url.pathname !== PATHS.authorize || res.status !== 400 || !to?.startsWith('http')) return res;
      return new Response(null, { status: 302, headers: { location: `${to}${to.includes('?') ? '&' : '?'}error=invalid_request&state=${encodeURIComponent(url.searchParams.get('state') ?? '')}` } });
    },
  },
  'unknown-scope-refused': {
    rule: 'ob.authorize.unknown-scope',
    what: 'a scope outside scopes_supported is refused with invalid_scope',
    wire: async (req, next) => {
      const url = new URL(req.url);
      if (url.pathname !== PATHS.authorize || req.method !== 'GET') return next(req);
      const d = (await (await next(new Request(`${url.origin}${PATHS.discovery}`))).json()) as { scopes_supported?: string[] };
      const asked = (url.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
      const to = url.searchParams.get('redirect_uri');
      if (!to || asked.every((x) => d.scopes_supported?.includes(x))) return next(req);
      const q = new URLSearchParams({ error: 'invalid_scope', state: url.searchParams.get('state') ?? '', iss: url.origin });
      return new Response(null, { status: 302, headers: { location: `${to}${to.includes('?') ? '&' : '?'}${q.toString()}` } });
    },
  },
  // The fuzz's own test: client credentials decoded unguarded, so a Basic header without a colon throws.
  'basic-colonless-500': {
    rule: 'ob.robustness.never-500',
    what: '/revoke answers 500 to Basic credentials that decode to no `id:secret`',
    wire: answer(
      (req, url) =>
        req.method === 'POST' &&
        url.pathname === PATHS.revoke &&
        /^basic /i.test(req.headers.get('authorization') ?? '') &&
        !Buffer.from((req.headers.get('authorization') ?? '').slice(6), 'base64')
          .toString('latin1')
          .includes(':'),
      () => jsonAnswer({ error: 'server_error', error_description: 'credentials without a colon' }, 500),
    ),
  },
  'client-secret-post-refused': {
    rule: 'ob.token.client-auth',
    what: 'client_secret_post is refused',
    wire: answer(
      (req, url) => req.method === 'POST' && url.pathname === PATHS.token,
      async (req, next) => (new URLSearchParams(await req.clone().text()).has('client_secret') ? refusal(401, 'invalid_client') : next(req)),
    ),
  },
  'deny-as-server-error': {
    rule: 'ob.transaction.deny',
    what: 'a denied sign-in reaches the client as server_error',
    wire: async (req, next) => {
      const res = await next(req);
      const location = res.headers.get('location');
      if (redirected(res) && location?.includes('error=access_denied')) {
        const headers = new Headers(res.headers);
        headers.set('location', location.replace('error=access_denied', 'error=server_error'));
        return new Response(res.body, { status: res.status, headers });
      }
      if (!(res.headers.get('content-type') ?? '').includes('json')) return res;
      // The transaction's JSON view hands the client redirect to the page.
      const text = await res.text();
      return withBody(res, text.replaceAll('error=access_denied', 'error=server_error'));
    },
  },
  'identify-gone': { rule: 'ob.transaction.identify', what: 'the sign-in form answers 404', wire: answer(isIdentify, () => refusal(404, 'not_found')) },
  'callback-gone': { rule: 'ob.transaction.callback', what: 'the native callback answers 404', wire: answer(at(ids.callback_path, 'POST'), () => refusal(404, 'not_found')) },
  'push-refusal-200': {
    rule: 'ob.contract.push',
    what: 'a press with no prompt due answers 200 instead of 429',
    wire: async (req, next) => {
      const res = await next(req);
      return req.method === 'POST' && new URL(req.url).pathname.endsWith('/push') && res.status === 429 ? withBody(res, await res.text(), 200) : res;
    },
  },
  // The survivor of flow.ts line 38 (issue 25's mutation run): a URL client under OAUTH_URL_CLIENTS=on losing openid.
  'url-client-no-openid': {
    rule: 'ob.contract.url-client-modes',
    what: 'under OAUTH_URL_CLIENTS=on a URL client is never granted openid: its codes redeem without an ID token',
    wire: editJson(
      at(PATHS.token, 'POST'),
      (t) => {
        if (typeof t.id_token !== 'string' || !String(decodeJwt(t.id_token).aud).startsWith('https://')) return;
        delete t.id_token;
        t.scope = String(t.scope)
          .split(' ')
          .filter((s) => s !== 'openid')
          .join(' ');
      },
      [200],
    ),
  },
  'url-refusal-unnamed': {
    rule: 'ob.contract.url-client-refusals',
    what: "a refused URL client's error page no longer names the rule that refused it",
    wire: async (req, next) => {
      const res = await next(req);
      if (!at(PATHS.authorize, 'GET')(req, new URL(req.url)) || res.status < 400 || !(res.headers.get('content-type') ?? '').includes('html')) return res;
      return withBody(res, (await res.text()).replace(/ \(rule <code>ob\.clients\.[^<]*<\/code>\)/, ''));
    },
  },
  'refresh-token': { rule: 'ob.token.grant-type', what: 'the token response carries a refresh token', wire: editJson(at(PATHS.token, 'POST'), (t) => void (t.refresh_token = 'rt_123'), [200]) },
};
