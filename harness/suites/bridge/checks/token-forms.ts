// The token side's forms across their matrix (rule ob.errors.oauth-body, the project's: document 2
// shows no error bodies). RFC 6749 section 3.2 forbids a repeated parameter; the project caps
// every form at bridge_form_body_max_bytes and reads only form-urlencoded UTF-8. At /token,
// /revoke and /introspect, a repeated parameter, a body that is not UTF-8, one that is not a form
// and one a byte over the cap are each refused 400 `invalid_request` and spend nothing; a form of
// exactly the cap is read. And /userinfo (ob.userinfo, the document's) reads only a bearer token
// sent as one: no header, another scheme and near-misses are refused, never a 5xx.
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bridgeCheck } from '../check.ts';
import { errorOf, said, type BridgeSession, type BridgeTarget } from '../driver.ts';

const CAP = limits.bridge_form_body_max_bytes;
const invalidRequest = (r: HttpResponse) => r.status === 400 && errorOf(r) === 'invalid_request';

/** The form `fields` with a `pad` parameter that brings it to exactly `bytes` bytes. */
function padded(fields: URLSearchParams, bytes: number): string {
  const text = fields.toString();
  return `${text}&pad=${'a'.repeat(bytes - text.length - '&pad='.length)}`;
}

/** The bad forms of one endpoint, each built from its good one. */
function badForms(good: URLSearchParams, repeat: string): Array<{ what: string; body: string | Uint8Array; type?: string }> {
  const text = good.toString();
  const without = new URLSearchParams(good);
  without.delete(repeat);
  return [
    { what: `no ${repeat}`, body: without.toString() },
    { what: `${repeat} sent twice`, body: `${text}&${repeat}=${encodeURIComponent(good.get(repeat) ?? '')}` },
    { what: 'a body that is not UTF-8', body: new Uint8Array([...Buffer.from(`${text}&pad=`), 0xff, 0xfe]) },
    { what: 'a JSON body', body: JSON.stringify(Object.fromEntries(good)), type: 'application/json' },
    { what: `a form of ${CAP + 1} bytes, one over the cap`, body: padded(good, CAP + 1) },
  ];
}

/** POSTs `body` to `url` as the basic client (its credentials, or a wrong secret, in the Authorization header). */
async function send(s: BridgeSession, url: string, body: string | Uint8Array, type = 'application/x-www-form-urlencoded', secret?: string): Promise<HttpResponse> {
  const oidc = await s.oidc();
  const c = s.credentials('basic');
  const auth = await oidc.authenticate(secret === undefined ? c : { ...c, client_secret: secret }, 'basic', oidc.discovery.token_endpoint);
  return oidc.http.post(url, body, { headers: { 'content-type': type, accept: 'application/json', ...auth.headers }, noCookies: true });
}

/** Basic credentials that cannot be read (RFC 6749 section 2.3.1): no colon, and a bad %-escape. */
const MALFORMED_BASIC = [
  ['a Basic header with no colon', `Basic ${Buffer.from('no-colon').toString('base64')}`],
  ['a Basic header with a bad %-escape', `Basic ${Buffer.from('%zz:secret').toString('base64')}`],
] as const;

/** POSTs the form `body` to `url` with `authorization` as is. */
async function sendAs(s: BridgeSession, url: string, body: string, authorization: string): Promise<HttpResponse> {
  const oidc = await s.oidc();
  return oidc.http.post(url, body, { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization }, noCookies: true });
}

function tokenFormsCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/token-forms',
    title: `at /token, /revoke and /introspect a missing code or token, a wrong client secret or Basic credentials that cannot be read (401 \`invalid_client\`), a repeated parameter, a body that is not UTF-8, a JSON body and a form over ${CAP} bytes are refused 400 \`invalid_request\` and spend nothing; a form of exactly ${CAP} bytes is read`,
    rules: ['ob.errors.oauth-body'],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const c = s.credentials('basic');
      const { response, pkce } = await s.signIn({ client: 'basic' });
      if (!e.that(typeof response.code === 'string', `the sign-in gave no code: ${response.location}`)) return;
      const redeem = new URLSearchParams({ grant_type: 'authorization_code', code: response.code!, redirect_uri: c.redirect_uri, code_verifier: pkce.verifier });
      for (const bad of badForms(redeem, 'code')) {
        const r = await send(s, oidc.discovery.token_endpoint, bad.body, bad.type);
        e.that(invalidRequest(r), `/token with ${bad.what} answered ${said(r)}, not 400 invalid_request`);
      }
      // A wrong secret in the Authorization header: 401 invalid_client, challenging Basic (RFC 6749 section 5.2).
      const wrong = await send(s, oidc.discovery.token_endpoint, redeem.toString(), undefined, `${c.client_secret}x`);
      e.that(
        wrong.status === 401 && errorOf(wrong) === 'invalid_client' && /^basic\b/i.test(wrong.headers['www-authenticate'] ?? ''),
        `/token with a wrong secret answered ${said(wrong)}, not 401 invalid_client with WWW-Authenticate: Basic`,
      );
      for (const [what, authorization] of MALFORMED_BASIC) {
        const r = await sendAs(s, oidc.discovery.token_endpoint, redeem.toString(), authorization);
        e.that(r.status === 401 && errorOf(r) === 'invalid_client', `/token with ${what} answered ${said(r)}, not 401 invalid_client`);
      }
      const redeemed = await send(s, oidc.discovery.token_endpoint, padded(redeem, CAP));
      const token = redeemed.status === 200 ? (redeemed.json() as Record<string, unknown>).access_token : undefined;
      if (!e.that(typeof token === 'string', `the code, after the refused forms, redeemed by a form of exactly ${CAP} bytes answered ${said(redeemed)}, not 200 with an access token`)) return;
      const asked = new URLSearchParams({ token: token as string });
      const introspect = oidc.discovery.introspection_endpoint ?? `${t.issuer}/introspect`;
      const revoke = oidc.discovery.revocation_endpoint ?? `${t.issuer}/revoke`;
      for (const [name, url] of [
        ['/introspect', introspect],
        ['/revoke', revoke],
      ] as const) {
        for (const bad of badForms(asked, 'token')) {
          const r = await send(s, url, bad.body, bad.type);
          e.that(invalidRequest(r), `${name} with ${bad.what} answered ${said(r)}, not 400 invalid_request`);
        }
        const wrongSecret = await send(s, url, asked.toString(), undefined, `${c.client_secret}x`);
        e.that(wrongSecret.status === 401 && errorOf(wrongSecret) === 'invalid_client', `${name} with a wrong secret answered ${said(wrongSecret)}, not 401 invalid_client`);
        for (const [what, authorization] of MALFORMED_BASIC) {
          const r = await sendAs(s, url, asked.toString(), authorization);
          e.that(r.status === 401 && errorOf(r) === 'invalid_client', `${name} with ${what} answered ${said(r)}, not 401 invalid_client`);
        }
      }
      const active = await send(s, introspect, padded(asked, CAP));
      e.that(
        active.status === 200 && (active.json() as Record<string, unknown>).active === true,
        `/introspect of the live token by a form of exactly ${CAP} bytes (the refused revocations spent nothing) answered ${said(active)}`,
      );
      const revoked = await send(s, revoke, padded(asked, CAP));
      e.that(revoked.status === 200, `/revoke by a form of exactly ${CAP} bytes answered ${said(revoked)}`);
      const after = await oidc.introspect(c, 'basic', token as string);
      e.that(after.status === 200 && (after.json() as Record<string, unknown>).active === false, `/introspect after the revocation of exactly ${CAP} bytes answered ${said(after)}, not active false`);
    },
  });
}

function bearerFormsCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/userinfo/bearer-forms',
    title:
      '/userinfo reads a live access token sent as `Bearer <token>`, and refuses with a 4xx (never a 5xx) no Authorization, `Bearer` alone, another scheme, and near-misses: the token with a word after it, a prefix before the scheme, the token cut short',
    rules: ['ob.userinfo'],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const { body } = await s.tokens({ client: 'basic' });
      const token = String(body.access_token ?? '');
      const url = oidc.discovery.userinfo_endpoint ?? `${t.issuer}/userinfo`;
      const read = (authorization: string | undefined) => oidc.http.get(url, { headers: { accept: 'application/json', ...(authorization !== undefined ? { authorization } : {}) }, noCookies: true });
      const live = await read(`Bearer ${token}`);
      if (!e.that(live.status === 200, `the live access token as \`Bearer <token>\` answered ${said(live)}, not 200`)) return;
      const cases: Array<[string, string | undefined]> = [
        ['no Authorization', undefined],
        ['`Bearer` alone', 'Bearer'],
        ['another scheme (`Basic`)', `Basic ${Buffer.from(`x:${token}`).toString('base64')}`],
        ['the token with a word after it', `Bearer ${token} x`],
        ['a prefix before the scheme', `xBearer ${token}`],
        ['the token cut short', `Bearer ${token.slice(0, -1)}`],
      ];
      for (const [what, authorization] of cases) {
        const r = await read(authorization);
        e.that(r.status >= 400 && r.status < 500, `/userinfo with ${what} answered ${said(r)}, not a 4xx refusal`);
      }
    },
  });
}

export function tokenFormChecks(t: BridgeTarget): Check[] {
  return [tokenFormsCheck(t), bearerFormsCheck(t)];
}
