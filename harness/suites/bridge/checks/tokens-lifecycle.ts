// What a revocation ends, judged for every client kind (spec/facets/bridge.yaml): after its owner
// revokes an access token at /revoke, the token no longer reads /userinfo and no longer
// introspects active, though both worked just before (an introspection answered from a cache the
// revocation leaves alone is the bug this catches). The code replay's revocation is judged in
// bridge/matrix/code-once.
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { limiter } from '../../../actors/oidc/race.ts';
import { bridgeCheck } from '../check.ts';
import { MATRIX_LANE } from './matrix-lane.ts';
import { CheckFailure, said, type BridgeTarget, type ClientRole } from '../driver.ts';

const KINDS: ClientRole[] = ['basic', 'post', 'jwt', 'public'];
/** Sign-ins in flight at once (each resolves an identity at the bridge). */
const signIns = limiter(3);

const active = (r: HttpResponse) => {
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
    rules: ['ob.revoke'],
    cells: [
      ...kinds.map((k) => ({ rule: 'ob.revoke' as const, facet: 'who', value: k, operation: 'revoke' })),
      { rule: 'ob.revoke', facet: 'lifecycle', value: 'userinfo', operation: 'userinfo' },
      { rule: 'ob.revoke', facet: 'lifecycle', value: 'introspect', operation: 'introspect' },
    ],
    lane: MATRIX_LANE,
    run: async (s, e) => {
      const oidc = await s.oidc();
      const one = async (k: ClientRole) => {
        const own = s.credentials(k);
        const { body } = await signIns(() => s.tokens({ client: k }));
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

export function tokenLifecycleChecks(t: BridgeTarget): Check[] {
  return [revocationEndsCheck(t)];
}
