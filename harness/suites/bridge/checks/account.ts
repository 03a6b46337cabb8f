// The user's record of what it authorized (document 2, Consent and account records): "Revoking an
// app deletes the stored consent, revokes live access tokens and forces new consent". The harness
// revokes as the user does, with the form the bridge's own `/account` page shows for the client
// (found by the client_id it carries), and then uses what the revocation ended.
import type { Check } from '../../../run/model.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { bridgeCheck } from '../check.ts';
import { CheckSkip, said, type BridgeTarget } from '../driver.ts';
import { forms } from '../pages.ts';
import { active } from './tokens-lifecycle.ts';

function accountRevokeCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/account/revoke-app',
    title:
      "revoking an app with the form /account shows for it ends the app's live access token (at /userinfo and /introspect) and its stored consent: the next authorization from the live session asks for consent again; another user's token and consent for the app stay",
    rules: ['ob.consent.record'],
    context: ['ob.sso.reuse', 'ob.userinfo', 'ob.introspect.owner'],
    cells: [
      { rule: 'ob.consent.record', facet: 'lifecycle', value: 'userinfo', operation: 'userinfo' },
      { rule: 'ob.consent.record', facet: 'lifecycle', value: 'introspect', operation: 'introspect' },
      { rule: 'ob.consent.record', facet: 'lifecycle', value: 'sso-code', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const scope = `openid ${t.profile.ids.id_scope}`;
      const own = s.credentials('basic');
      const oidc = await s.oidc();
      const [{ signIn, body }, theirs] = await Promise.all([s.tokens({ scope }), s.tokens({ scope })]);
      const access = String(body.access_token);
      const user = signIn.user;
      const before = await oidc.userinfo(access);
      if (!e.that(before.status === 200, `the fresh access token does not read /userinfo: ${said(before)}`)) return;
      // The consent is stored: the live session is given a code at once.
      const reused = await s.signIn({ user, scope });
      if (!e.that(reused.consent === undefined && reused.response.code !== undefined, `before the revocation the live session was not given a code on the stored consent: ${reused.response.location}`))
        return;

      const pageUrl = new URL('/account', t.issuer).href;
      const page = await user.browser.http.get(pageUrl, { headers: { accept: 'text/html' } });
      const form = forms(page.text()).find((f) => f.method === 'post' && f.controls.some((c) => c.value === own.client_id));
      if (!form) throw new CheckSkip(`the /account page (${said(page)}) shows no form carrying the client_id ${own.client_id}: the harness cannot revoke the app as the user would`);
      const fields = new URLSearchParams(form.controls.filter((c) => c.type !== 'checkbox' || c.value === own.client_id).map((c) => [c.name, c.value]));
      const revoked = await user.browser.http.post(new URL(form.action || pageUrl, pageUrl).href, fields.toString(), {
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      });
      if (!e.that(revoked.status < 400, `submitting the /account form for ${own.client_id} answered ${said(revoked)}`)) return;

      const after = await oidc.userinfo(access);
      e.that(after.status >= 400 && after.status < 500, `after the app was revoked at /account its live access token still reads /userinfo: ${said(after)}`);
      const i = await oidc.introspect(own, s.style('basic'), access);
      e.that(!active(i), `after the app was revoked at /account its live access token still introspects active: ${said(i)}`);
      const again = await s.signIn({ user, scope });
      e.that(again.consent !== undefined, `after the app was revoked at /account the live session was given a code without consent: ${again.response.location}`);
      // The revocation is this user's: another user's consent to the same app and its token stay.
      const still = await oidc.userinfo(String(theirs.body.access_token));
      e.that(still.status === 200, `after one user revoked the app, another user's access token for it no longer reads /userinfo: ${said(still)}`);
      const kept = await s.signIn({ user: theirs.signIn.user, scope });
      e.that(
        kept.consent === undefined && kept.response.code !== undefined,
        `after one user revoked the app, another user's live session was not given a code on its own stored consent: ${kept.response.location}`,
      );
    },
  });
}

/**
 * "`/account` lists ... and a sign-out": signing out ends the session at the bridge, not only the
 * cookie in this browser. The session's cookie, kept from before and sent again from another
 * browser, no longer gets a code at once on the stored consent.
 */
function accountSignOutCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/account/sign-out',
    title: 'the sign-out /account shows ends the bridge session: its cookie, sent again afterwards, is not given a code on the stored consent',
    rules: ['ob.account.sign-out'],
    context: ['ob.sso.reuse'],
    cells: [{ rule: 'ob.account.sign-out', facet: 'lifecycle', value: 'sso-code', operation: 'authorize' }],
    run: async (s, e) => {
      const scope = `openid ${t.profile.ids.id_scope}`;
      const own = s.credentials('basic');
      const { signIn } = await s.tokens({ scope });
      const user = signIn.user;
      const jar = user.browser.http.jar;
      if (!jar) throw new CheckSkip('the harness browser keeps no cookies');
      const kept = await jar.getCookieString(t.issuer);
      // The session's cookie sent from a browser that holds nothing else: a code at once before the sign-out.
      const oidc = await s.oidc();
      const replay = (state: string) => user.browser.http.get(oidc.authorizeUrl(s.params('basic', newPkce(), state, 'n', scope)), { headers: { accept: 'text/html', cookie: kept }, noCookies: true });
      const before = s.authorizationResponse((await replay('before')).location, own.redirect_uri);
      if (!e.that(before?.code !== undefined, `before the sign-out the session's cookie, sent again, was not given a code on the stored consent`)) return;

      const pageUrl = new URL('/account', t.issuer).href;
      const page = await user.browser.http.get(pageUrl, { headers: { accept: 'text/html' } });
      const form = forms(page.text()).find((f) => f.method === 'post' && /sign.?out|log.?out/i.test(f.action));
      if (!form) throw new CheckSkip(`the /account page (${said(page)}) shows no POST form whose action signs out (sign-out, logout): the harness cannot sign out as the user would`);
      const fields = new URLSearchParams(form.controls.map((c) => [c.name, c.value]));
      const out = await user.browser.http.post(new URL(form.action || pageUrl, pageUrl).href, fields.toString(), {
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      });
      if (!e.that(out.status < 400, `submitting the sign-out form answered ${said(out)}`)) return;
      const after = await replay('after');
      const code = s.authorizationResponse(after.location, own.redirect_uri)?.code;
      e.that(code === undefined, `after the sign-out the session's old cookie, sent again, was given a code at once: ${said(after)}`);
    },
  });
}

export function accountChecks(t: BridgeTarget): Check[] {
  return [accountRevokeCheck(t), accountSignOutCheck(t)];
}
