// The user's record of what it authorized (document 2, Consent and account records): "Revoking an
// app deletes the stored consent, revokes live access tokens and forces new consent". The harness
// revokes as the user does, with the form the bridge's own `/account` page shows for the client
// (found by the client_id it carries), and then uses what the revocation ended.
import type { Check } from '../../../run/model.ts';
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

export function accountChecks(t: BridgeTarget): Check[] {
  return [accountRevokeCheck(t)];
}
