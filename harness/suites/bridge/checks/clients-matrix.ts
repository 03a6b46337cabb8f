// Who may use a token, judged across every client kind (spec/facets/bridge.yaml): each declared
// client (the three confidential methods, public, first-party, and clients of other and the same
// sector) redeems its own code and its token reads /userinfo and introspects active for it; a
// token of one client is opaque to every other at /introspect, to a caller without credentials,
// and is not revoked when another client asks /revoke (RFC 7009 section 2.1).
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { bridgeCheck } from '../check.ts';
import { matrixSignIn } from './matrix-pace.ts';
import { CheckFailure, said, type BridgeSession, type BridgeTarget, type ClientRole } from '../driver.ts';

const ALL: ClientRole[] = ['basic', 'post', 'jwt', 'public', 'first_party', 'other_sector', 'same_sector', 'loopback_confidential'];
const CONFIDENTIAL: ClientRole[] = ['basic', 'post', 'jwt', 'first_party', 'other_sector', 'same_sector', 'loopback_confidential'];

const declared = (t: BridgeTarget, roles: ClientRole[]) => roles.filter((r) => t.clients[r] !== undefined);
const bodyOf = (r: HttpResponse): Record<string, unknown> => {
  try {
    return r.json() as Record<string, unknown>;
  } catch {
    return {};
  }
};
/** RFC 7662: a token the caller may not see is answered `active: false` and nothing else (or refused). */
const opaque = (r: HttpResponse) => r.status >= 400 || (r.status === 200 && bodyOf(r).active === false && bodyOf(r).sub === undefined && bodyOf(r).scope === undefined);

async function tokensOf(s: BridgeSession, role: ClientRole) {
  const { body } = await matrixSignIn(() => s.tokens({ client: role })).catch((error: unknown) => {
    throw error instanceof CheckFailure ? new CheckFailure(`${role}: ${error.message}`, error.code) : error;
  });
  if (typeof body.access_token !== 'string') throw new CheckFailure(`${role}: the token response has no access_token: ${JSON.stringify(body).slice(0, 200)}`);
  return { access: body.access_token, idToken: String(body.id_token) };
}

function clientKindsCheck(t: BridgeTarget): Check {
  const kinds = declared(t, ALL);
  return bridgeCheck(t, {
    id: 'bridge/matrix/client-kinds',
    title: "every declared client kind redeems its code with its own authentication method, its access token reads /userinfo (the ID token's sub), and a confidential owner introspects it active",
    rules: ['ob.token.client-auth', 'ob.userinfo', 'ob.introspect.owner'],
    cells: [
      ...kinds.map((k) => ({ rule: 'ob.token.client-auth' as const, facet: 'who', value: k.replace(/_/g, '-'), operation: 'token' })),
      ...kinds.map((k) => ({ rule: 'ob.userinfo' as const, facet: 'who', value: k.replace(/_/g, '-'), operation: 'userinfo' })),
      ...kinds.filter((k) => CONFIDENTIAL.includes(k)).map((k) => ({ rule: 'ob.introspect.owner' as const, facet: 'who', value: k.replace(/_/g, '-'), operation: 'introspect' })),
    ],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const one = async (k: ClientRole) => {
        const { access, idToken } = await tokensOf(s, k);
        const sub = (await oidc.verifyIdToken(idToken, s.credentials(k).client_id)).payload.sub;
        const ui = await oidc.userinfo(access);
        e.that(ui.status === 200 && bodyOf(ui).sub === sub, `${k}: its access token does not read its /userinfo: ${said(ui)}`);
        if (!CONFIDENTIAL.includes(k)) return;
        const intro = await oidc.introspect(s.credentials(k), s.style(k), access);
        e.that(intro.status === 200 && bodyOf(intro).active === true, `${k}: the owning client does not introspect its token active: ${said(intro)}`);
      };
      await Promise.all(kinds.map(one));
    },
  });
}

function otherClientsTokensCheck(t: BridgeTarget): Check {
  const others = declared(t, CONFIDENTIAL).filter((k) => k !== 'basic');
  return bridgeCheck(t, {
    id: 'bridge/matrix/other-clients-tokens',
    title: "a client's access token is opaque at /introspect to every other client and to a caller without credentials, and another client's /revoke leaves it working",
    rules: ['ob.introspect.owner', 'ob.revoke'],
    cells: [
      { rule: 'ob.introspect.owner', facet: 'who', value: 'other-client', operation: 'introspect' },
      { rule: 'ob.introspect.owner', facet: 'who', value: 'unauthenticated', operation: 'introspect' },
      { rule: 'ob.revoke', facet: 'who', value: 'other-client', operation: 'revoke' },
    ],
    run: async (s, e) => {
      if (others.length === 0) throw new CheckFailure('the target declares no confidential client besides basic (bridge.clients)');
      const oidc = await s.oidc();
      const [mine, pub] = await Promise.all([tokensOf(s, 'basic'), t.clients.public ? tokensOf(s, 'public') : undefined]);
      // Every other confidential client introspects basic's token (and the public client's).
      await Promise.all(
        others.map(async (k) => {
          const r = await oidc.introspect(s.credentials(k), s.style(k), mine.access);
          e.that(opaque(r), `${k} learned about basic's token at /introspect: ${said(r)}`);
          if (pub) {
            const p = await oidc.introspect(s.credentials(k), s.style(k), pub.access);
            e.that(opaque(p), `${k} learned about the public client's token at /introspect: ${said(p)}`);
          }
        }),
      );
      const anonymous = await oidc.introspect({ ...s.credentials('basic'), client_secret: undefined }, 'none', mine.access);
      e.that(opaque(anonymous), `a caller without client credentials learned about a token at /introspect: ${said(anonymous)}`);
      // Another client asks to revoke basic's token (and the public client's): both keep working.
      const revoker = others[0]!;
      const rv = await oidc.revoke(s.credentials(revoker), s.style(revoker), mine.access);
      e.that(rv.status < 500, `/revoke by another client: ${said(rv)}`);
      const still = await oidc.userinfo(mine.access);
      e.that(still.status === 200, `after ${revoker} asked /revoke for basic's token, the token no longer reads /userinfo: ${said(still)}`);
      const owner = await oidc.introspect(s.credentials('basic'), s.style('basic'), mine.access);
      e.that(owner.status === 200 && bodyOf(owner).active === true, `after ${revoker} asked /revoke for basic's token, basic no longer introspects it active: ${said(owner)}`);
      if (pub) {
        await oidc.revoke(s.credentials(revoker), s.style(revoker), pub.access);
        const p = await oidc.userinfo(pub.access);
        e.that(p.status === 200, `after ${revoker} asked /revoke for the public client's token, the token no longer reads /userinfo: ${said(p)}`);
      }
    },
  });
}

function pkceEveryClientCheck(t: BridgeTarget): Check {
  const kinds = declared(t, ALL);
  return bridgeCheck(t, {
    id: 'bridge/matrix/pkce-every-client',
    title: 'every declared client kind is refused a sign-in without a PKCE challenge (an error back to the client or an error page, never the sign-in)',
    rules: ['ob.authorize.pkce-required'],
    cells: kinds.map((k) => ({ rule: 'ob.authorize.pkce-required' as const, facet: 'who', value: k.replace(/_/g, '-'), operation: 'authorize' })),
    run: async (s, e) => {
      const user = await s.newUser();
      await Promise.all(
        kinds.map(async (k) => {
          const params = { ...s.params(k, newPkce(), 'st', 'n'), code_challenge: undefined, code_challenge_method: undefined };
          const res = await s.openAuthorize(user.browser, params);
          const back = s.authorizationResponse(res.location, s.credentials(k).redirect_uri);
          e.that(back?.error !== undefined || (res.status >= 400 && res.location === undefined), `${k}: a request without PKCE went on: ${said(res)}`);
        }),
      );
    },
  });
}

export function clientMatrixChecks(t: BridgeTarget): Check[] {
  return [clientKindsCheck(t), otherClientsTokensCheck(t), pkceEveryClientCheck(t)];
}
