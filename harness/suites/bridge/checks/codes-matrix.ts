// The authorization code judged across its matrix (spec/facets/bridge.yaml): "bound to client,
// redirect URI, PKCE challenge, nonce and identity", "single-use, 60 seconds". For every client
// kind (the three confidential methods and a public client) each bound part is swapped alone for
// another valid one; the code is replayed and raced 20 ways; it is redeemed just inside and just
// past its lifetime; and every near-miss of a registered redirect URI is refused at /authorize.
import type { Check } from '../../../run/model.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { nearMisses } from '../../../actors/oidc/near-miss.ts';
import { together } from '../../../actors/oidc/race.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bridgeCheck } from '../check.ts';
import { matrixSignIn, WINDOW_LANE } from './matrix-pace.ts';
import { CheckFailure, said, type BridgeSession, type BridgeTarget, type ClientRole } from '../driver.ts';

/** The client kinds a code is redeemed by: each authentication method of document 2, Authentication 3. */
const KINDS: ClientRole[] = ['basic', 'post', 'jwt', 'public'];
/** Every declared client, for the redirect comparison (each registered URI is its own case). */
const ALL: ClientRole[] = ['basic', 'post', 'jwt', 'public', 'first_party', 'other_sector', 'same_sector', 'loopback_confidential'];
const RACE = 20;

const declared = (t: BridgeTarget, roles: ClientRole[]) => roles.filter((r) => t.clients[r] !== undefined);
const refused = (status: number) => status >= 400 && status < 500;

/** A sign-in of `role` ending with a code. */
async function codeFor(s: BridgeSession, role: ClientRole, consentAfterMs?: number) {
  const r = await matrixSignIn(() => s.signIn({ client: role, ...(consentAfterMs ? { consentAfterMs } : {}) }));
  if (!r.response.code) throw new CheckFailure(`${role}: no code, the bridge answered ${r.response.location}`);
  return { ...r, code: r.response.code };
}

function codeBindingCheck(t: BridgeTarget): Check {
  const kinds = declared(t, KINDS);
  return bridgeCheck(t, {
    id: 'bridge/matrix/code-binding',
    title:
      "for every client kind, a code redeems only with its own client, its own redirect_uri and its own verifier (each swapped alone for another valid one), and its ID token carries the request's nonce and the client as audience",
    rules: ['ob.code.binding', 'ob.code.wrong-verifier', 'ob.token.id-token'],
    cells: [
      { rule: 'ob.code.binding', facet: 'binding', value: 'client', operation: 'token' },
      { rule: 'ob.code.binding', facet: 'binding', value: 'redirect-uri', operation: 'token' },
      { rule: 'ob.code.wrong-verifier', facet: 'binding', value: 'code-verifier', operation: 'token' },
      { rule: 'ob.token.id-token', facet: 'binding', value: 'nonce', operation: 'token' },
      { rule: 'ob.token.id-token', facet: 'binding', value: 'audience', operation: 'token' },
    ],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const one = async (k: ClientRole, i: number) => {
        const own = s.credentials(k);
        const other = kinds[(i + 1) % kinds.length]!;
        const [v, b] = await Promise.all([codeFor(s, k), codeFor(s, k)]);
        // The verifier swapped for another valid one, then left out: refused, the code unspent.
        const wrong = await oidc.token(own, s.style(k), v.code, newPkce().verifier);
        e.that(refused(wrong.status), `${k}: another valid verifier redeemed the code: ${said(wrong)}`);
        const none = await oidc.token(own, s.style(k), v.code, undefined);
        e.that(refused(none.status), `${k}: the code redeemed without a verifier: ${said(none)}`);
        // The client swapped: another declared client presents the code with everything else right.
        if (other !== k) {
          const swapped = await oidc.token(s.credentials(other), s.style(other), b.code, b.pkce.verifier, own.redirect_uri);
          e.that(refused(swapped.status), `${k}: the ${other} client redeemed ${k}'s code: ${said(swapped)}`);
        }
        // The redirect URI swapped for each near-miss of the registered one.
        for (const m of nearMisses(own.redirect_uri, { loopbackPublic: k === 'public' })) {
          const res = await oidc.token(own, s.style(k), b.code, b.pkce.verifier, m.uri);
          e.that(refused(res.status), `${k}: the code redeemed with redirect_uri ${m.uri} (${m.form}), registered ${own.redirect_uri}: ${said(res)}`);
        }
        const good = await oidc.token(own, s.style(k), v.code, v.pkce.verifier);
        if (!e.that(good.status === 200, `${k}: after the refused verifiers the right one no longer redeems: ${said(good)}`)) return;
        const idToken = String((good.json() as Record<string, unknown>).id_token);
        try {
          const { payload } = await oidc.verifyIdToken(idToken, own.client_id);
          e.that(payload.nonce === v.nonce, `${k}: the ID token's nonce is ${JSON.stringify(payload.nonce)}, the request sent ${v.nonce}`);
        } catch (error) {
          e.fail(`${k}: the ID token does not verify for audience ${own.client_id}: ${(error as Error).message}`);
        }
      };
      await Promise.all(kinds.map(one));
    },
  });
}

function codeOnceCheck(t: BridgeTarget): Check {
  const kinds = declared(t, ['basic', 'public']);
  return bridgeCheck(t, {
    id: 'bridge/matrix/code-once',
    title: 'a code redeems once: replayed it is refused and the first access token stops reading /userinfo and introspecting active; redeemed 20 ways at once, exactly one gets tokens',
    rules: ['ob.code.replay-revokes'],
    cells: [
      { rule: 'ob.code.replay-revokes', facet: 'once', value: 'replay', operation: 'token' },
      { rule: 'ob.code.replay-revokes', facet: 'once', value: 'race', operation: 'token' },
      { rule: 'ob.code.replay-revokes', facet: 'lifecycle', value: 'userinfo', operation: 'userinfo' },
      { rule: 'ob.code.replay-revokes', facet: 'lifecycle', value: 'introspect', operation: 'introspect' },
    ],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const one = async (k: ClientRole) => {
        const own = s.credentials(k);
        const [a, b] = await Promise.all([codeFor(s, k), codeFor(s, k)]);
        const first = await oidc.token(own, s.style(k), a.code, a.pkce.verifier);
        if (first.status !== 200) throw new CheckFailure(`${k}: the code did not redeem: ${said(first)}`);
        const access = String((first.json() as Record<string, unknown>).access_token);
        const again = await oidc.token(own, s.style(k), a.code, a.pkce.verifier);
        e.that(refused(again.status), `${k}: the code redeemed twice: ${said(again)}`);
        const ui = await oidc.userinfo(access);
        e.that(refused(ui.status), `${k}: after the replay the first access token still reads /userinfo: ${said(ui)}`);
        if (k !== 'public') {
          const intro = await oidc.introspect(own, s.style(k), access);
          e.that(intro.status !== 200 || (intro.json() as Record<string, unknown>).active !== true, `${k}: after the replay the first access token still introspects active: ${said(intro)}`);
        }
        const answers = await together(RACE, () => oidc.token(own, s.style(k), b.code, b.pkce.verifier));
        const won = answers.filter((r) => r.status === 200).length;
        e.that(won === 1, `${k}: redeemed ${RACE} ways at once, the code gave tokens ${won} times: ${answers.map((r) => r.status).join(' ')}`);
      };
      await Promise.all(kinds.map(one));
    },
  });
}

function codeWindowCheck(t: BridgeTarget): Check {
  const lifetimeS = t.declared?.codeLifetimeS ?? limits.authorization_code_ttl_seconds;
  // Just inside: 1.5 s before the end; just past: 0.4 s after it, counted from when the harness
  // received the code (after the bridge issued it, so the bridge's clock is further on).
  const insideMs = lifetimeS * 1000 - 1500;
  const pastMs = lifetimeS * 1000 + 400;
  return bridgeCheck(t, {
    id: 'bridge/matrix/code-window',
    title: `a code redeems ${(insideMs / 1000).toFixed(1)} s after it was issued and is refused ${(pastMs / 1000).toFixed(1)} s after (its lifetime of ${lifetimeS} s, declared or the document's); a code issued after a sign-in longer than that lifetime redeems (its life counts from its issue)`,
    rules: ['ob.code.format'],
    cells: [
      { rule: 'ob.code.format', facet: 'window', value: 'inside', operation: 'token' },
      { rule: 'ob.code.format', facet: 'window', value: 'outside', operation: 'token' },
    ],
    lane: WINDOW_LANE,
    timeoutMs: pastMs + 60_000,
    run: async (s, e) => {
      const oidc = await s.oidc();
      const own = s.credentials('basic');
      // One code after the other (no burst of sign-ins), each redeemed on its own clock.
      const redeemAt = async (c: Awaited<ReturnType<typeof codeFor>>, received: number, delayMs: number) => {
        await new Promise((r) => setTimeout(r, Math.max(0, received + delayMs - Date.now())));
        return { res: await oidc.token(own, s.style('basic'), c.code, c.pkce.verifier), ageMs: Date.now() - received };
      };
      const first = await codeFor(s, 'basic');
      const insideRun = redeemAt(first, Date.now(), insideMs);
      const second = await codeFor(s, 'basic');
      const [inside, past] = await Promise.all([insideRun, redeemAt(second, Date.now(), pastMs)]);
      e.that(inside.res.status === 200, `a code ${(inside.ageMs / 1000).toFixed(1)} s old (lifetime ${lifetimeS} s) was refused: ${said(inside.res)}`);
      e.that(refused(past.res.status), `a code ${(past.ageMs / 1000).toFixed(1)} s old (lifetime ${lifetimeS} s) redeemed: ${said(past.res)}`);
      // The window counts from the code's issue, not from /authorize: a sign-in that stayed on its
      // consent step past the code's lifetime (inside the transaction's) still ends with a live code.
      const slow = await codeFor(s, 'basic', lifetimeS * 1000 + 500);
      const late = await oidc.token(own, s.style('basic'), slow.code, slow.pkce.verifier);
      e.that(
        late.status === 200,
        `a code redeemed at once after a sign-in that stayed ${lifetimeS + 0.5} s on its consent step (the code's lifetime is ${lifetimeS} s from its issue) was refused: ${said(late)}`,
      );
    },
  });
}

function redirectNearMissCheck(t: BridgeTarget): Check {
  const kinds = declared(t, ALL);
  return bridgeCheck(t, {
    id: 'bridge/matrix/redirect-near-miss',
    title:
      'for every declared client, its registered redirect_uri opens a sign-in and each near-miss (a suffix, a further segment, a prefix, a trailing slash, another case, another port) is an error page, never a redirect',
    rules: ['ob.authorize.redirect-exact'],
    cells: [
      { rule: 'ob.authorize.redirect-exact', facet: 'normalization', value: 'exact', operation: 'authorize' },
      { rule: 'ob.authorize.redirect-exact', facet: 'normalization', value: 'near-miss', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const one = async (k: ClientRole) => {
        const reg = s.credentials(k).redirect_uri;
        const user = await s.newUser();
        // The exact URI first: the bridge accepts this client (the near-misses below test the comparison alone).
        const exact = await s.openAuthorize(user.browser, s.params(k, newPkce(), 'st', 'n', 'openid', reg));
        if (!(exact.status >= 300 && exact.status < 400)) throw new CheckFailure(`${k}: its registered redirect_uri ${reg} was refused: ${said(exact)}`);
        for (const m of nearMisses(reg, { loopbackPublic: k === 'public' })) {
          const res = await s.openAuthorize(user.browser, s.params(k, newPkce(), 'st', 'n', 'openid', m.uri));
          e.that(res.location === undefined && refused(res.status), `${k}: redirect_uri ${m.uri} (${m.form} of ${reg}) was accepted: ${said(res)}`);
        }
      };
      await Promise.all(kinds.map(one));
    },
  });
}

export function codeMatrixChecks(t: BridgeTarget): Check[] {
  return [codeBindingCheck(t), codeOnceCheck(t), codeWindowCheck(t), redirectNearMissCheck(t)];
}
