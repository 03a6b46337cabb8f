// /authorize and the transaction: the open-redirect guard, PKCE, state, iss, redirect matching
// with the loopback exception, unknown scopes, prompt and max_age, SSO, consent and denial, the
// browser binding of the resume link.
import { decodeJwt } from 'jose';
import type { Check } from '../../../run/model.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { bridgeCheck } from '../check.ts';
import { nextBridgeSecond } from '../clock.ts';
import { CheckFailure, said, type BridgeSession, type BridgeTarget } from '../driver.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { SignerError } from '../../../actors/signer/errors.ts';
import { wentOn } from './authorize-forms.ts';

/** An answer that sends the browser to the client (a redirect whose Location is on the redirect URI's origin). */
function redirectsTo(res: HttpResponse, redirectUri: string): boolean {
  if (res.location === undefined) return false;
  try {
    return new URL(res.location).origin === new URL(redirectUri).origin;
  } catch {
    return false;
  }
}

/** The client's error redirect for a refused request, or a refusal page; what was answered otherwise. */
async function refusedRequest(s: BridgeSession, params: Record<string, string | undefined>, redirectUri: string) {
  const user = await s.newUser();
  const res = await s.openAuthorize(user.browser, params);
  const response = s.authorizationResponse(res.location, redirectUri);
  return { res, response };
}

function authorizeCodeFlowCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/code-flow',
    title: 'a valid request ends, after the native proof and consent, in a redirect with code, state and iss',
    rules: ['ob.transaction.create', 'ob.transaction.identify', 'ob.transaction.callback', 'ob.authorize.iss'],
    cells: [{ rule: 'ob.transaction.identify', facet: 'window', value: 'inside', operation: 'callback' }],
    context: ['ob.contract.transaction', 'ob.transaction.resume-binding'],
    run: async (s, e) => {
      const r = await s.signIn();
      e.that(r.signed, 'the bridge issued a code without a native proof for a new browser');
      e.that(r.response.code !== undefined, `no code: ${r.response.location}`);
      e.that(r.response.state === r.state, `state is ${r.response.state}, sent ${r.state}`);
      e.that(r.response.iss === t.issuer, `iss is ${JSON.stringify(r.response.iss)}, not the issuer`);
    },
  });
}

function transactionCrossDeviceCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/transaction/cross-device',
    title: 'a cross-device approval (request by reference and match code) answers status ok alone, and the waiting browser goes on to consent, signed in: after consent prompt=none there gets a code',
    rules: ['ob.transaction.callback', 'ob.sso.reuse'],
    context: ['ob.contract.transaction'],
    run: async (s, e) => {
      const { user, txUrl, view } = await s.waitingSignIn(`openid ${t.profile.ids.id_scope}`);
      if (typeof view.request_uri !== 'string' || typeof view.match_code !== 'string') throw new CheckFailure('the waiting view shows no request link and match code');
      const approved = await s.signer.approve(view.request_uri, { key: user.key, match: view.match_code });
      e.that(approved.receipt?.status === 'ok' && approved.receipt.resume_uri === undefined, `the cross-device receipt is ${JSON.stringify(approved.receipt)}`);
      const after = await s.view(user.browser, txUrl);
      if (!e.that(after.view.state === 'consent', `the waiting browser's transaction is ${JSON.stringify(after.view.state)}, not consent`)) return;
      // Resumed in the waiting browser, so its session cookie is set there: after consent, a later
      // /authorize in that browser gets a code without another signature (SSO rule 1).
      const claims = ((after.view.consent ?? {}) as { claims?: unknown }).claims;
      await s.post(user.browser, `${txUrl}/consent`, { decision: 'approve', claims: Array.isArray(claims) ? claims : [] });
      const again = await s.signIn({ user, scope: `openid ${t.profile.ids.id_scope}`, extra: { prompt: 'none' } });
      e.that(
        again.response.code !== undefined && !again.signed,
        `prompt=none in the browser that continued a cross-device sign-in answered ${again.response.location}, not a code: it holds no live session`,
      );
    },
  });
}

function authorizeUnknownClientNoRedirectCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/unknown-client-no-redirect',
    title: 'an unknown or missing client_id, and a missing redirect_uri, are error pages, never redirects (open-redirect guard)',
    rules: ['ob.authorize.bad-client-no-redirect'],
    run: async (s, e) => {
      const evil = 'https://attacker.example/cb';
      const valid = s.params('basic', newPkce(), 'x', 'n');
      const cases: [string, Record<string, string | undefined>, string][] = [
        ['an unknown client_id', { ...valid, client_id: `unknown-${Date.now()}`, redirect_uri: evil }, evil],
        ['no client_id', { ...valid, client_id: undefined }, s.credentials('basic').redirect_uri],
        ['no redirect_uri', { ...valid, redirect_uri: undefined }, s.credentials('basic').redirect_uri],
      ];
      for (const [what, params, to] of cases) {
        const { res } = await refusedRequest(s, params, to);
        e.that(!redirectsTo(res, to) && res.location === undefined, `${what}: the bridge redirected: ${said(res)}`);
        e.that(res.status >= 400 && res.status < 500, `${what}: expected an error page (4xx): ${said(res)}`);
      }
    },
  });
}

function authorizeRedirectExactCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/redirect-exact',
    title: 'redirect_uri must match exactly: prefix, path, query and case variants are error pages, never redirects',
    rules: ['ob.authorize.redirect-exact', 'ob.authorize.bad-client-no-redirect'],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      const u = new URL(reg);
      const variants = [`${reg}/extra`, `${reg}?x=1`, `${reg}x`, reg.replace(u.host, u.host.toUpperCase()), `${u.protocol}//${u.host}.attacker.example${u.pathname}`];
      for (const v of variants) {
        if (v === reg) continue;
        const { res } = await refusedRequest(s, s.params('basic', newPkce(), 'x', 'n', 'openid', v), v);
        e.that(res.location === undefined && res.status >= 400 && res.status < 500, `redirect_uri ${v} was accepted: ${said(res)}`);
      }
    },
  });
}

function authorizeLoopbackPublicCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/loopback-public',
    title: 'a public client may return to its loopback redirect on any port; a confidential client may not vary its redirect',
    rules: ['ob.authorize.loopback'],
    cells: [{ rule: 'ob.authorize.loopback', facet: 'normalization', value: 'any-port', operation: 'authorize' }],
    run: async (s, e) => {
      const reg = s.credentials('public').redirect_uri;
      const m = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d+)?(\/.*)?$/.exec(reg);
      if (!m) throw new CheckFailure(`the public client's redirect ${reg} is not a loopback redirect (bridge.clients.public)`);
      const other = `http://${m[1]}:${40000 + Math.floor(Math.random() * 20000)}${m[2] ?? ''}`;
      const r = await s.signIn({ client: 'public', redirectUri: other });
      e.that(r.response.code !== undefined, `the loopback redirect on another port was not honoured: ${r.response.location}`);
      const oidc = await s.oidc();
      if (r.response.code) {
        const tok = await oidc.token(s.credentials('public'), 'none', r.response.code, r.pkce.verifier, other);
        e.that(tok.status === 200, `the public client's code did not redeem with auth none: ${said(tok)}`);
      }
    },
  });
}

function authorizePkceRequiredCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/pkce-required',
    title:
      'a request without a PKCE challenge is refused (with iss), and so is PKCE plain; so are a challenge without its method (RFC 7636 would read plain), a method without its challenge, and a method other than S256 by case or name',
    rules: ['ob.authorize.pkce-required', 'ob.authorize.pkce-plain-refused', 'ob.authorize.error-redirect'],
    cells: [
      { rule: 'ob.authorize.pkce-plain-refused', facet: 'normalization', value: 's256', operation: 'authorize' },
      { rule: 'ob.authorize.pkce-plain-refused', facet: 'normalization', value: 'near-miss', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      const base = s.params('basic', newPkce(), 'st-pkce', 'n');
      for (const [what, params] of [
        ['no challenge', { ...base, code_challenge: undefined, code_challenge_method: undefined }],
        ['plain', { ...base, code_challenge: base.code_challenge, code_challenge_method: 'plain' }],
        // Document 2: "code_challenge_method (only S256)"; without it RFC 7636 reads plain.
        ['a challenge without code_challenge_method', { ...base, code_challenge_method: undefined }],
        ['code_challenge_method S256 without a challenge', { ...base, code_challenge: undefined }],
        ['code_challenge_method s256', { ...base, code_challenge_method: 's256' }],
        ['code_challenge_method S512', { ...base, code_challenge_method: 'S512' }],
      ] as const) {
        // The client and redirect URI are valid, so the error goes back to the client (ob.authorize.error-redirect).
        const { res, response } = await refusedRequest(s, params, reg);
        if (response === undefined) {
          e.fail(res.status >= 400 && res.status < 500 ? `${what}: the error was not redirected to the client: ${said(res)}` : `${what}: the bridge went on instead of refusing: ${said(res)}`);
          continue;
        }
        e.that(response!.error !== undefined && response!.code === undefined, `${what}: the bridge went on (${response!.location})`);
        e.that(response!.state === 'st-pkce', `${what}: the error redirect carries state ${JSON.stringify(response!.state)}`);
      }
      // The one accepted form: the same request with S256 goes on to the sign-in.
      const { res, response } = await refusedRequest(s, base, reg);
      e.that(response?.error === undefined && res.location !== undefined && res.status >= 300 && res.status < 400, `S256 with its challenge was not taken: ${said(res)}`);
    },
  });
}

function authorizeStateRequiredCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/state-required',
    title: 'a request without state is refused',
    rules: ['ob.authorize.state-required'],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      const { res, response } = await refusedRequest(s, { ...s.params('basic', newPkce(), 'x', 'n'), state: undefined }, reg);
      if (response) e.that(response.error !== undefined && response.code === undefined, `the bridge went on: ${response.location}`);
      else e.that(res.status >= 400 && res.status < 500, `the bridge went on: ${said(res)}`);
    },
  });
}

function authorizeErrorCodesCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/error-codes',
    title: "refused requests redirect with the project's codes: invalid_request (no challenge, plain, no or an empty state), unsupported_response_type",
    rules: ['ob.errors.authorize-codes'],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      const base = s.params('basic', newPkce(), 'st', 'n');
      const cases: Array<[string, Record<string, string | undefined>, string]> = [
        ['no challenge', { ...base, code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
        ['plain', { ...base, code_challenge_method: 'plain' }, 'invalid_request'],
        ['token', { ...base, response_type: 'token' }, 'unsupported_response_type'],
        ['no state', { ...base, state: undefined }, 'invalid_request'],
        ['an empty state', { ...base, state: '' }, 'invalid_request'],
      ];
      for (const [what, params, code] of cases) {
        const { res, response } = await refusedRequest(s, params, reg);
        e.that(response?.error === code, `${what}: expected a redirect with error ${code}: ${said(res)}`);
      }
    },
  });
}

function authorizeIssOnErrorsCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/iss-on-errors',
    title: 'iss is on error responses too (RFC 9207): an unsupported response_type and a denial',
    rules: ['ob.authorize.iss', 'ob.transaction.deny'],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      const { res, response } = await refusedRequest(s, { ...s.params('basic', newPkce(), 'st', 'n'), response_type: 'token' }, reg);
      if (response) e.that(response.iss === t.issuer, `error redirect without iss: ${response.location}`);
      else e.that(res.status >= 400, `response_type token was not refused: ${said(res)}`);
      const denied = await s.signIn({ scope: `openid ${t.profile.ids.id_scope}`, deny: true });
      e.that(denied.response.error === 'access_denied', `a denial answered ${denied.response.location}`);
      e.that(denied.response.iss === t.issuer, `the denial redirect has iss ${JSON.stringify(denied.response.iss)}`);
      e.that(denied.response.state === denied.state, 'the denial redirect lost state');
    },
  });
}

/** "`response_type` (only `code`)": every other value, a hybrid that includes `code` too, is refused and goes no further. */
function authorizeResponseTypeCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/response-type',
    title: 'a response_type other than code (token, id_token, code id_token, code token, Code, code with a space) is refused: never a redirect on into the sign-in, never a code',
    rules: ['ob.authorize.response-type'],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      for (const value of ['token', 'id_token', 'code id_token', 'code token', 'id_token code', 'Code', 'code ']) {
        const { res, response } = await refusedRequest(s, { ...s.params('basic', newPkce(), 'st', 'n'), response_type: value }, reg);
        e.that(
          !wentOn(res, t.issuer) && response?.code === undefined && (response?.error !== undefined || res.status >= 400),
          `response_type ${JSON.stringify(value)} answered ${said(res)}, not a refusal`,
        );
      }
    },
  });
}

function authorizeUnknownScopeCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/unknown-scope',
    title: 'an unknown scope is ignored, not refused; the token response reports the granted scopes',
    rules: ['ob.authorize.unknown-scope', 'ob.token.grant-type'],
    cells: [
      { rule: 'ob.authorize.unknown-scope', facet: 'normalization', value: 'known', operation: 'authorize' },
      { rule: 'ob.authorize.unknown-scope', facet: 'normalization', value: 'unknown-ignored', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const { body } = await s.tokens({ scope: 'openid no-such-scope-here' });
      const granted = String(body.scope ?? '').split(' ');
      e.that(granted.includes('openid'), `scope is ${JSON.stringify(body.scope)}`);
      e.that(!granted.includes('no-such-scope-here'), `the unknown scope was reported as granted: ${JSON.stringify(body.scope)}`);
      e.that(typeof body.id_token === 'string' && typeof body.access_token === 'string', 'id_token or access_token is missing');
      e.that(body.refresh_token === undefined, 'a refresh token was issued (not in this version)');
    },
  });
}

function ssoPromptNoneCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/sso/prompt-none',
    title: 'prompt=none gives login_required without a session, consent_required with a session but no consent, and a code at once with both',
    rules: ['ob.authorize.prompt-none'],
    cells: [
      { rule: 'ob.authorize.prompt-none', facet: 'who', value: 'session-with-consent', operation: 'authorize' },
      { rule: 'ob.authorize.prompt-none', facet: 'who', value: 'no-session', operation: 'authorize' },
      { rule: 'ob.authorize.prompt-none', facet: 'who', value: 'session-without-consent', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      const user = await s.newUser();
      const first = await s.openAuthorize(user.browser, { ...s.params('basic', newPkce(), 'st', 'n'), prompt: 'none' });
      const r1 = s.authorizationResponse(first.location, reg);
      e.that(r1?.error === 'login_required', `no session: ${said(first)}`);
      // A session from another client, then prompt=none for a scope never consented to.
      await s.signIn({ user, client: 'basic' });
      // With the session and the consent it just gave, prompt=none is answered with a code (SSO rule 1).
      const covered = await s.openAuthorize(user.browser, { ...s.params('basic', newPkce(), 'st', 'n'), prompt: 'none' });
      const r0 = s.authorizationResponse(covered.location, reg);
      e.that(r0?.code !== undefined && r0.error === undefined, `session with consent: ${said(covered)}`);
      const other = s.target.clients.other_sector ? 'other_sector' : 'basic';
      const scope = other === 'basic' ? `openid ${t.profile.ids.id_scope} profile` : 'openid';
      const second = await s.openAuthorize(user.browser, { ...s.params(other, newPkce(), 'st', 'n', scope), prompt: 'none' });
      const r2 = s.authorizationResponse(second.location, s.credentials(other).redirect_uri);
      e.that(r2?.error === 'consent_required', `session without consent: ${said(second)}`);
      e.that(r2?.iss === t.issuer, 'the prompt=none error has no iss');
    },
  });
}

function ssoReuseCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/sso/reuse',
    title:
      "with a live session and covering consent a second authorization issues a code without another signature; one asking for a claim the consent does not cover asks for consent; another client's authorization still asks for its own consent",
    rules: ['ob.sso.reuse'],
    cells: [{ rule: 'ob.sso.reuse', facet: 'binding', value: 'client', operation: 'authorize' }],
    run: async (s, e) => {
      const first = await s.signIn();
      const second = await s.signIn({ user: first.user });
      e.that(!second.signed, 'the bridge asked for another signature');
      e.that(second.response.code !== undefined, `no code the second time: ${second.response.location}`);
      // "a stored consent covering the requested claims": one that covers some of them does not.
      const scope = `openid ${t.profile.ids.id_scope}`;
      const some = await s.signIn({ user: first.user, scope });
      const more = await s.signIn({ user: first.user, scope: `${scope} profile` });
      const offered = (more.consent?.claims as unknown[] | undefined) ?? [];
      e.that(
        some.response.code !== undefined && more.consent !== undefined && offered.includes('profile'),
        `after a consent to ${scope}, an authorization also asking for profile was ${more.consent === undefined ? `given a code without consent: ${more.response.location}` : `asked consent offering ${JSON.stringify(offered)}, without profile`}`,
      );
      // The consent is the client's: the same session at another client still asks for it.
      if (t.clients.other_sector) {
        const elsewhere = await s.signIn({ user: first.user, client: 'other_sector', scope: `openid ${t.profile.ids.id_scope}` });
        e.that(elsewhere.consent !== undefined, `another client was given a code on the first client's consent, without its own: ${elsewhere.response.location}`);
        // And that consent, however the bridge reached it, names the session's user.
        if (elsewhere.response.code !== undefined) {
          const oidc = await s.oidc();
          const tok = await oidc.token(s.credentials('other_sector'), s.style('other_sector'), elsewhere.response.code, elsewhere.pkce.verifier);
          const body = tok.status === 200 ? (tok.json() as Record<string, unknown>) : {};
          const id = typeof body.id_token === 'string' ? decodeJwt(body.id_token)[t.profile.ids.id_claim] : undefined;
          e.that(id === first.user.key.identity, `the other client's ID token names ${JSON.stringify(id)}, not the session's ${first.user.key.identity}: ${said(tok)}`);
        }
      }
    },
  });
}

function ssoPromptLoginMaxAgeCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/sso/prompt-login-max-age',
    title: 'prompt=login and max_age=0 force a new native proof despite the session; a max_age of an hour on a fresh session does not',
    rules: ['ob.authorize.prompt-login'],
    cells: [
      { rule: 'ob.authorize.prompt-login', facet: 'window', value: 'inside', operation: 'authorize' },
      { rule: 'ob.authorize.prompt-login', facet: 'window', value: 'outside', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const first = await s.signIn();
      const login = await s.signIn({ user: first.user, extra: { prompt: 'login' } });
      e.that(login.signed, 'prompt=login did not ask for a new proof');
      // A max_age the session has not exceeded forces nothing.
      const young = await s.signIn({ user: first.user, extra: { max_age: '3600' } });
      e.that(!young.signed && young.response.code !== undefined, `max_age=3600 on a fresh session asked for a new proof: ${young.response.location}`);
      // max_age counts whole seconds: the session must be older than 0 s on the bridge's clock.
      await nextBridgeSecond(s);
      const aged = await s.signIn({ user: first.user, extra: { max_age: '0' } });
      e.that(aged.signed, 'max_age=0 did not ask for a new proof');
    },
  });
}

function consentReleaseCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/consent/release',
    title:
      'svc_id (with the key fingerprint and the ID URL) is released only when left ticked on consent, and again to later grants on that consent (from the session, and after a new proof); an unticked claim reaches neither the ID token nor userinfo, and a grant without profile carries no name, picture or profile',
    rules: ['ob.consent.release', 'ob.consent.screen', 'ob.token.claims'],
    run: async (s, e) => {
      const idClaim = t.profile.ids.id_claim;
      const scope = `openid ${t.profile.ids.id_scope}`;
      const oidc = await s.oidc();
      const ticked = await s.tokens({ scope });
      e.that(Array.isArray(ticked.signIn.consent?.claims) && (ticked.signIn.consent.claims as string[]).includes(t.profile.ids.id_scope), 'consent did not offer the svc_id scope');
      // The screen names the client and where it sends the user back (ob.consent.screen).
      const named = ticked.signIn.consent ?? {};
      const host = new URL(s.credentials('basic').redirect_uri).host;
      e.that(typeof named.client_name === 'string' && named.client_name !== '', `consent names the client ${JSON.stringify(named.client_name)}`);
      e.that(named.host === host, `consent names the return host ${JSON.stringify(named.host)}, not ${host}`);
      const tp = (await oidc.verifyIdToken(String(ticked.body.id_token), s.credentials('basic').client_id)).payload;
      e.that(tp[idClaim] === ticked.signIn.user.key.identity, `ticked: ${idClaim} is ${JSON.stringify(tp[idClaim])}`);
      // svc_id releases the key's fingerprint (ra.key-fingerprint's four groups of five digits) and the ID's URL with it.
      const [fingerprint, url] = [tp[t.profile.ids.key_fingerprint_claim], tp[t.profile.ids.id_url_claim]];
      e.that(typeof fingerprint === 'string' && /^\d{5}( \d{5}){3}$/.test(fingerprint), `ticked: ${t.profile.ids.key_fingerprint_claim} is ${JSON.stringify(fingerprint)}, not a key fingerprint`);
      e.that(typeof url === 'string' && url !== '', `ticked: ${t.profile.ids.id_url_claim} is ${JSON.stringify(url)}`);
      // The consent records the claims released (Consent and account records): a later grant to the
      // same client releases what was left ticked, whether from the live session or after a new proof,
      // and whether the bridge shows consent again (every box left ticked) or lets the record cover it.
      for (const [how, extra] of [
        ['from the live session', {}],
        ['after a new proof (prompt=login)', { prompt: 'login' }],
      ] as const) {
        const later = await s.tokens({ scope, user: ticked.signIn.user, extra });
        const lp = (await oidc.verifyIdToken(String(later.body.id_token), s.credentials('basic').client_id)).payload;
        e.that(lp[idClaim] === ticked.signIn.user.key.identity, `a later grant ${how}, on the consent that left ${t.profile.ids.id_scope} ticked: ${idClaim} is ${JSON.stringify(lp[idClaim])}`);
      }
      const un = await s.tokens({ scope, tick: [] });
      const up = (await oidc.verifyIdToken(String(un.body.id_token), s.credentials('basic').client_id)).payload;
      e.that(up[idClaim] === undefined, `unticked: the ID token carries ${idClaim}`);
      const info = await oidc.userinfo(String(un.body.access_token));
      const ib = info.status === 200 ? (info.json() as Record<string, unknown>) : {};
      e.that(info.status === 200 && ib[idClaim] === undefined, `unticked: userinfo answered ${said(info)}`);
      e.that(!String(un.body.scope).includes(t.profile.ids.id_scope), `unticked: the granted scope still lists ${t.profile.ids.id_scope}`);
      e.that(tp.email === undefined, 'an email claim was released');
      // Only `profile` releases name, picture and profile: a grant without it carries none of them.
      for (const [where, claims] of [
        ['the ID token of a grant of openid and svc_id', tp],
        ['userinfo of a grant of openid alone', ib],
      ] as const) {
        const leaked = ['name', 'picture', 'profile'].filter((c) => claims[c] !== undefined);
        e.that(leaked.length === 0, `${where} carries ${leaked.join(', ')}, which only the profile scope releases`);
      }
    },
  });
}

function consentProfileClaimsCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/consent/profile-claims',
    title:
      "with profile released, name and picture come from the identity's public profile document and profile is its URL, in the ID token and at /userinfo; an identity without a profile document gets its URL alone",
    rules: ['ob.profile.claims'],
    context: ['ob.token.claims'],
    run: async (s, e) => {
      const user = await s.newUser();
      const id = user.key.identity;
      await t.authority.publish({ identity: id, seed: user.key.seed, profile: { version: 1, display_name: 'Ada Harness', avatar: 'avatar.png' } });
      const r = await s.tokens({ scope: 'openid profile', user });
      const oidc = await s.oidc();
      const token = (await oidc.verifyIdToken(String(r.body.id_token), s.credentials('basic').client_id)).payload;
      const info = await oidc.userinfo(String(r.body.access_token));
      const fromInfo = info.status === 200 ? (info.json() as Record<string, unknown>) : {};
      const want = { name: 'Ada Harness', picture: `https://${id}${t.profile.ids.public_files_path}avatar.png`, profile: `https://${id}/` };
      for (const [claim, value] of Object.entries(want)) {
        e.that(token[claim] === value, `the ID token's ${claim} is ${JSON.stringify(token[claim])}, not ${value}`);
        e.that(fromInfo[claim] === value, `/userinfo's ${claim} is ${JSON.stringify(fromInfo[claim])}, not ${value} (${said(info)})`);
      }
      // An identity that publishes no profile document: profile is still its URL, and there is no name or picture to release.
      const bare = await s.tokens({ scope: 'openid profile' });
      const bareId = bare.signIn.user.key.identity;
      const bareInfo = await oidc.userinfo(String(bare.body.access_token));
      const claims = bareInfo.status === 200 ? (bareInfo.json() as Record<string, unknown>) : {};
      e.that(
        bareInfo.status === 200 && claims.profile === `https://${bareId}/` && claims.name === undefined && claims.picture === undefined,
        `for an identity without a profile document /userinfo answered ${said(bareInfo)}, not its profile URL without name or picture`,
      );
    },
  });
}

function consentFirstPartyCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/consent/first-party',
    title: 'a first-party client skips consent for openid alone, never for svc_id',
    rules: ['ob.consent.first-party'],
    cells: [
      { rule: 'ob.consent.first-party', facet: 'who', value: 'first-party', operation: 'authorize' },
      { rule: 'ob.consent.first-party', facet: 'who', value: 'first-party-with-claims', operation: 'consent' },
    ],
    run: async (s, e) => {
      s.credentials('first_party');
      const a = await s.signIn({ client: 'first_party' });
      e.that(a.consent === undefined && a.response.code !== undefined, 'consent was shown for openid alone');
      const b = await s.signIn({ client: 'first_party', scope: `openid ${t.profile.ids.id_scope}`, user: a.user });
      e.that(b.consent !== undefined, 'consent was skipped for svc_id');
    },
  });
}

function transactionForwardedResumeCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/transaction/forwarded-resume',
    title: 'a resume link opened in another browser (no transaction cookie) does not continue the sign-in',
    rules: ['ob.transaction.resume-binding'],
    cells: [{ rule: 'ob.transaction.resume-binding', facet: 'binding', value: 'browser-cookie', operation: 'resume' }],
    context: ['ob.contract.transaction'],
    run: async (s, e) => {
      const { user, request } = await s.waitingSignIn();
      const other = (await s.newUser()).browser;
      const approved = await s.signer.approve(request, { key: user.key, sameDevice: true, browser: other });
      const r = approved.resumed;
      e.that(
        r !== undefined && (r.status >= 400 || s.authorizationResponse(r.location, s.credentials('basic').redirect_uri) === undefined),
        `the other browser continued: ${r?.status} ${r?.location ?? ''}`,
      );
      e.that(r !== undefined && r.status >= 400 && r.status < 500, `the forwarded link was not refused: ${r?.status}`);
    },
  });
}

function transactionNoResponseInUrlCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/transaction/no-response-in-url',
    title: 'a native response in the URL of /svc/callback is refused',
    rules: ['ob.transaction.no-response-in-url'],
    run: async (s, e) => {
      const cb = `${t.issuer}${t.profile.ids.callback_path}?response=eyJhIjoiYiJ9`;
      const res = await s.http.post(cb, '', { headers: { 'content-type': 'text/plain' }, noCookies: true });
      e.that(res.status >= 400 && res.status < 500, `the callback answered ${said(res)}`);
    },
  });
}

function transactionFailedNotRedirectedCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/transaction/failed-not-redirected',
    title:
      'an approval that fails verification (a bad signature, a wrong match code) ends the transaction as failed, shown to the user, never redirected to the client; the right match code afterwards does not revive it',
    rules: ['ob.transaction.failed', 'ob.native.verifier'],
    context: ['ob.contract.transaction'],
    run: async (s, e) => {
      const { user, txUrl, request } = await s.waitingSignIn();
      const d = await s.badlySigned(request, user.key.identity);
      e.that(d.status >= 400, `a badly signed approval was accepted: ${d.status}`);
      const after = await s.view(user.browser, txUrl);
      e.that(after.view.state === 'failed', `the transaction is ${JSON.stringify(after.view.state)}, not failed`);
      const page = await user.browser.http.get(txUrl, { headers: { accept: 'text/html' } });
      e.that(s.authorizationResponse(page.location, s.credentials('basic').redirect_uri) === undefined, `the failed sign-in redirected to the client: ${said(page)}`);
      // A cross-device approval with the wrong match code is a verification error too: it ends the
      // sign-in, so the right number afterwards (a guess that came good) does not continue it.
      const waiting = await s.waitingSignIn();
      const [uri, code] = [waiting.view.request_uri, waiting.view.match_code];
      if (typeof uri !== 'string' || typeof code !== 'string') throw new CheckFailure('the waiting view shows no request link and match code');
      const status = (match: string) =>
        s.signer.approve(uri, { key: waiting.user.key, match }).then(
          (r) => r.delivery?.status ?? 200,
          (error: unknown) => (error instanceof SignerError ? (error.exchange?.status ?? 0) : Promise.reject(error)),
        );
      const wrong = await status(String((Number(code) + 1) % 10 ** code.length).padStart(code.length, '0'));
      e.that(wrong >= 400, `an approval with the wrong match code answered ${wrong}, not a refusal`);
      const ended = await s.view(waiting.user.browser, waiting.txUrl);
      e.that(ended.view.state === 'failed', `after a wrong match code the transaction is ${JSON.stringify(ended.view.state)}, not failed`);
      const right = await status(code);
      e.that(right >= 400, `the right match code after a wrong one answered ${right}: the failed sign-in went on`);
    },
  });
}

function nativeLoginOnlyCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/native/login-only',
    title: 'the native request is login-only: action signin, no scopes, a statement that never names the client',
    rules: ['ob.native.login-only'],
    run: async (s, e) => {
      const { request } = await s.waitingSignIn(`openid ${t.profile.ids.id_scope} profile`);
      const req = (await s.signer.loadRequest(request)).request;
      e.that(req.action === 'signin', `action is ${JSON.stringify(req.action)}`);
      e.that(req.scopes === undefined || (Array.isArray(req.scopes) && req.scopes.length === 0), `scopes is ${JSON.stringify(req.scopes)}`);
      e.that(req.audience === t.issuer, `audience is ${JSON.stringify(req.audience)}, not the issuer`);
      const statement = String(req.statement ?? '');
      e.that(!statement.includes(s.credentials('basic').client_id) && !statement.includes(new URL(s.credentials('basic').redirect_uri).host), `the statement names the client: ${statement}`);
    },
  });
}

export function authorizeChecks(t: BridgeTarget): Check[] {
  return [
    authorizeCodeFlowCheck(t),
    transactionCrossDeviceCheck(t),
    authorizeUnknownClientNoRedirectCheck(t),
    authorizeRedirectExactCheck(t),
    authorizeLoopbackPublicCheck(t),
    authorizePkceRequiredCheck(t),
    authorizeStateRequiredCheck(t),
    authorizeErrorCodesCheck(t),
    authorizeIssOnErrorsCheck(t),
    authorizeResponseTypeCheck(t),
    authorizeUnknownScopeCheck(t),
    ssoPromptNoneCheck(t),
    ssoReuseCheck(t),
    ssoPromptLoginMaxAgeCheck(t),
    consentReleaseCheck(t),
    consentProfileClaimsCheck(t),
    consentFirstPartyCheck(t),
    transactionForwardedResumeCheck(t),
    transactionNoResponseInUrlCheck(t),
    transactionFailedNotRedirectedCheck(t),
    nativeLoginOnlyCheck(t),
  ];
}
