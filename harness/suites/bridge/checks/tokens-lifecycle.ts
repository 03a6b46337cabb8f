// What a revocation ends, judged for every client kind (spec/facets/bridge.yaml): after its owner
// revokes an access token at /revoke, the token no longer reads /userinfo and no longer
// introspects active, though both worked just before (an introspection answered from a cache the
// revocation leaves alone is the bug this catches). After the operator suspends a client (through
// the target's hook, ob.contract.suspend), it starts no sign-in, redeems no code, a sign-in it
// began before yields no tokens however far it goes ("stops an application at once"), and its live
// token neither reads /userinfo nor introspects active. The code replay's revocation is judged in
// bridge/matrix/code-once.
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { bridgeCheck } from '../check.ts';
import { matrixSignIn } from './matrix-pace.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { CheckFailure, said, suspensionHook, type BridgeSession, type BridgeTarget, type ClientRole, type User } from '../driver.ts';
import { failOnServerError } from '../../../run/answers.ts';

/** Every declared client kind but the one the suspension check suspends. */
const KINDS: ClientRole[] = ['basic', 'post', 'jwt', 'public', 'first_party', 'other_sector', 'same_sector', 'loopback_confidential'];

export const active = (r: HttpResponse) => {
  try {
    return r.status === 200 && (r.json() as Record<string, unknown>).active === true;
  } catch {
    return false;
  }
};

function revocationEndsCheck(t: BridgeTarget): Check {
  const kinds = KINDS.filter((k) => t.clients[k] !== undefined);
  return bridgeCheck(t, {
    id: 'bridge/matrix/revocation-ends',
    title: 'for every client kind, an access token its owner revoked no longer reads /userinfo and no longer introspects active',
    rules: ['ob.revoke', 'ob.userinfo'],
    cells: [
      ...kinds.map((k) => ({ rule: 'ob.revoke' as const, facet: 'who', value: k.replace(/_/g, '-'), operation: 'revoke' })),
      { rule: 'ob.revoke', facet: 'lifecycle', value: 'userinfo', operation: 'userinfo' },
      { rule: 'ob.revoke', facet: 'lifecycle', value: 'introspect', operation: 'introspect' },
      // The revoked token presented at /userinfo is the refused principal of ob.userinfo.
      { rule: 'ob.userinfo', facet: 'who', value: 'revoked-token', operation: 'userinfo' },
    ],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const one = async (k: ClientRole) => {
        const own = s.credentials(k);
        const { body } = await matrixSignIn(() => s.tokens({ client: k }));
        const access = String(body.access_token);
        const confidential = own.client_secret !== undefined || own.private_jwk !== undefined;
        // Both uses work before the revocation (and an introspection is answered once).
        const before = await oidc.userinfo(access);
        if (before.status !== 200) throw new CheckFailure(`${k}: the fresh access token does not read /userinfo: ${said(before)}`);
        if (confidential) {
          const i = await oidc.introspect(own, s.style(k), access);
          if (!active(i)) throw new CheckFailure(`${k}: the owner does not introspect its fresh token active: ${said(i)}`);
        }
        const rv = await oidc.revoke(own, s.style(k), access);
        e.that(rv.status === 200, `${k}: /revoke by the owner: ${said(rv)}`);
        const ui = await oidc.userinfo(access);
        e.that(ui.status >= 400 && ui.status < 500, `${k}: the revoked token still reads /userinfo: ${said(ui)}`);
        if (confidential) {
          const i = await oidc.introspect(own, s.style(k), access);
          e.that(!active(i), `${k}: the revoked token still introspects active: ${said(i)}`);
        }
      };
      await Promise.all(kinds.map(one));
    },
  });
}

function suspensionEndsCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/suspension-ends',
    title:
      'after the operator suspends a client, it starts no sign-in and redeems no code, a sign-in it began before yields no tokens, and its live access token neither reads /userinfo nor introspects active',
    rules: ['ob.clients.suspend'],
    context: ['ob.contract.suspend'],
    cells: [
      ...['authorize', 'code-exchange', 'userinfo', 'introspect'].map((use) => ({
        rule: 'ob.clients.suspend' as const,
        facet: 'lifecycle',
        value: use,
        operation: use === 'code-exchange' ? 'token' : use,
      })),
      { rule: 'ob.clients.suspend', facet: 'lifecycle', value: 'sign-in-begun', operation: 'transaction' },
      // The suspended client's own requests, with its own credentials: refused at each operation.
      ...['authorize', 'token', 'introspect'].map((operation) => ({ rule: 'ob.clients.suspend' as const, facet: 'who', value: 'suspended-client', operation })),
    ],
    run: async (s, e) => {
      suspensionHook(t);
      const own = s.credentials('suspendable');
      const oidc = await s.oidc();
      const [live, pending] = await Promise.all([matrixSignIn(() => s.tokens({ client: 'suspendable' })), matrixSignIn(() => s.signIn({ client: 'suspendable' }))]).catch((error: unknown) => {
        throw new CheckFailure(`the suspendable client does not sign in (suspended by an earlier run?): ${(error as Error).message}`);
      });
      const access = String(live.body.access_token);
      if (!pending.response.code) throw new CheckFailure(`suspendable: no code, the bridge answered ${pending.response.location}`);
      // A sign-in begun before the suspension, at its ID step: "at once" ends it too.
      const midUser = await s.newUser();
      const midPkce = newPkce();
      const begun = await s.openAuthorize(midUser.browser, s.params('suspendable', midPkce, 'st', 'n'));
      if (!begun.location) throw new CheckFailure(`suspendable: /authorize answered ${said(begun)}`);
      const midTx = new URL(begun.location, t.issuer).href.split('?')[0]!;
      const before = await oidc.introspect(own, s.style('suspendable'), access);
      if (!active(before)) throw new CheckFailure(`the owner does not introspect its fresh token active: ${said(before)}`);
      await s.suspend(own.client_id);
      const ui = await oidc.userinfo(access);
      e.that(ui.status >= 400 && ui.status < 500, `the suspended client's token still reads /userinfo: ${said(ui)}`);
      const intro = await oidc.introspect(own, s.style('suspendable'), access);
      e.that(!active(intro), `the suspended client's token still introspects active: ${said(intro)}`);
      const redeemed = await oidc.token(own, s.style('suspendable'), pending.response.code, pending.pkce.verifier);
      e.that(redeemed.status >= 400 && redeemed.status < 500, `the suspended client redeemed a code issued before: ${said(redeemed)}`);
      // The sign-in begun before: its page is no 5xx, and however far it goes it yields no tokens.
      failOnServerError(await midUser.browser.http.get(midTx, { headers: { accept: 'text/html' } }), 'the page of a sign-in begun before the suspension');
      const midCode = await finish(s, midUser, midTx, own.redirect_uri);
      if (midCode !== undefined) {
        const late = await oidc.token(own, s.style('suspendable'), midCode, midPkce.verifier);
        e.that(late.status >= 400 && late.status < 500, `a sign-in begun before the suspension ended in a code that redeemed: ${said(late)}`);
      }
      const user = await s.newUser();
      const started = await s.openAuthorize(user.browser, s.params('suspendable', newPkce(), 'st', 'n'));
      const back = s.authorizationResponse(started.location, own.redirect_uri);
      e.that((started.status >= 400 && started.location === undefined) || back?.error !== undefined, `the suspended client still starts a sign-in: ${said(started)}`);
    },
  });
}

/** Continues a transaction as far as the bridge lets it (ID, same-device approval, consent): the code it ends in, if any. */
async function finish(s: BridgeSession, user: User, txUrl: string, redirectUri: string): Promise<string | undefined> {
  const identified = await s.post(user.browser, `${txUrl}/identify`, { id: user.key.identity });
  failOnServerError(identified.res, 'the ID entered');
  if (typeof identified.view.request !== 'string') return undefined;
  const approved = await s.signer.approve(identified.view.request, { key: user.key, sameDevice: true, browser: user.browser }).catch(() => undefined);
  const direct = s.authorizationResponse(approved?.resumed?.location, redirectUri)?.code;
  if (direct !== undefined || !approved?.resumed || approved.resumed.status >= 400) return direct;
  const { view } = await s.view(user.browser, txUrl);
  if (view.state !== 'consent') return undefined;
  const claims = ((view.consent ?? {}) as { claims?: unknown }).claims;
  const decided = await s.post(user.browser, `${txUrl}/consent`, { decision: 'approve', claims: Array.isArray(claims) ? claims : [] });
  failOnServerError(decided.res, 'the consent approved');
  return s.authorizationResponse(typeof decided.view.redirect === 'string' ? decided.view.redirect : decided.res.location, redirectUri)?.code;
}

export function tokenLifecycleChecks(t: BridgeTarget): Check[] {
  return [revocationEndsCheck(t), suspensionEndsCheck(t)];
}
