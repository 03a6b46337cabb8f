// The rest of document 2's matrix that the client kinds and the windows leave (spec/facets/bridge.yaml):
// consent is skipped for a first-party client asking for openid alone, and for no other kind (a
// confidential client, a public one, a first-party client asking for claims: each sees the consent
// step, and a refusal there holds); and the inside side of two windows a target cannot shorten: an
// access token (10 minutes) and a resume code (60 seconds) still work seconds after they were issued
// (a lifetime counted in the wrong unit is the bug). Their outside sides are unobservable (the facets say why).
// And a signed approval, verified "using an atomic nonce cache", authenticates once: replayed, and raced.
import type { Check } from '../../../run/model.ts';
import { together } from '../../../actors/oidc/race.ts';
import { bridgeCheck } from '../check.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { matrixSignIn } from './matrix-pace.ts';
import { approvedUnresumed, continued } from './transactions-matrix.ts';
import { CheckFailure, CheckSkip, said, type BridgeSession, type BridgeTarget, type ClientRole } from '../driver.ts';

/** How long after issue the inside cells use a secret: longer than any unit slip of its lifetime makes it. */
const INSIDE_MS = 3000;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Refused {
  /** The value of ob.consent.first-party's who facet. */
  who: string;
  client: ClientRole;
  scope: (t: BridgeTarget) => string;
}

const REFUSED: Refused[] = [
  { who: 'confidential', client: 'basic', scope: () => 'openid' },
  { who: 'public', client: 'public', scope: () => 'openid' },
  { who: 'first-party-with-claims', client: 'first_party', scope: (t) => `openid ${t.profile.ids.id_scope}` },
];

function consentKindsCheck(t: BridgeTarget): Check {
  const kinds = REFUSED.filter((r) => t.clients[r.client] !== undefined);
  return bridgeCheck(t, {
    id: 'bridge/matrix/consent-kinds',
    title:
      'a confidential client and a public one asking for openid alone, and a first-party client asking for svc_id, each see the consent step, and a refusal there ends the sign-in with access_denied and no code',
    rules: ['ob.consent.first-party'],
    context: ['ob.contract.transaction'],
    cells: kinds.flatMap((k) => ['authorize', 'consent'].map((operation) => ({ rule: 'ob.consent.first-party' as const, facet: 'who', value: k.who, operation }))),
    run: async (s, e) => {
      const one = async (k: Refused) => {
        const r = await matrixSignIn(() => s.signIn({ client: k.client, scope: k.scope(t), deny: true }));
        e.that(r.consent !== undefined, `${k.who} (${k.client}, scope ${k.scope(t)}): the sign-in skipped consent and ended at ${r.response.location}`);
        e.that(
          r.response.code === undefined && r.response.error === 'access_denied',
          `${k.who} (${k.client}): refused at consent, the sign-in ended ${r.response.code !== undefined ? 'with a code' : `with ${r.response.error ?? 'no error'}`} at ${r.response.location}`,
        );
      };
      await Promise.all(kinds.map(one));
    },
  });
}

function accessTokenInsideCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/access-token-inside',
    title: `an access token still reads /userinfo ${INSIDE_MS / 1000} s after it was issued (its lifetime is 10 minutes)`,
    rules: ['ob.token.access-token'],
    cells: [{ rule: 'ob.token.access-token', facet: 'window', value: 'inside', operation: 'userinfo' }],
    lane: 'bridge/matrix/inside',
    run: async (s, e) => {
      const { body } = await matrixSignIn(() => s.tokens({ client: 'basic' }));
      if (typeof body.access_token !== 'string') throw new CheckFailure(`the token response has no access_token: ${JSON.stringify(body).slice(0, 200)}`);
      const issued = Date.now();
      await sleep(INSIDE_MS);
      const ui = await (await s.oidc()).userinfo(body.access_token);
      e.that(ui.status === 200, `an access token ${((Date.now() - issued) / 1000).toFixed(1)} s old no longer reads /userinfo: ${said(ui)}`);
    },
  });
}

/** The longest access token life the window check waits out; a longer one is judged inside only (access-token-inside). */
const WINDOW_WAIT_MAX_S = 120;

function accessTokenWindowCheck(t: BridgeTarget): Check {
  const lifetimeS = t.declared?.accessTokenLifetimeS ?? limits.access_token_ttl_seconds;
  // Just inside: 2.5 s before its end; just past: 1 s after it, counted from when the harness
  // received the token (after the bridge issued it, so the bridge's clock is further on).
  const insideMs = lifetimeS * 1000 - 2500;
  const pastMs = lifetimeS * 1000 + 1000;
  return bridgeCheck(t, {
    id: 'bridge/matrix/access-token-window',
    title: `an access token reads /userinfo and introspects active ${(insideMs / 1000).toFixed(1)} s after it was issued, and ${(pastMs / 1000).toFixed(1)} s after does neither (its lifetime of ${lifetimeS} s, declared or the document's)`,
    rules: ['ob.token.access-token'],
    context: ['ob.userinfo', 'ob.introspect.owner'],
    cells: [
      { rule: 'ob.token.access-token', facet: 'window', value: 'inside', operation: 'userinfo' },
      { rule: 'ob.token.access-token', facet: 'window', value: 'outside', operation: 'userinfo' },
    ],
    lane: 'bridge/matrix/access-token-window',
    timeoutMs: pastMs + 60_000,
    run: async (s, e) => {
      if (lifetimeS > WINDOW_WAIT_MAX_S)
        throw new CheckSkip(
          `an access token lives ${lifetimeS} s here, longer than this check waits (${WINDOW_WAIT_MAX_S} s): declare a shorter one (bridge.declared.access_token_lifetime_s, --bridge-access-token-lifetime) to judge its end`,
        );
      const oidc = await s.oidc();
      const own = s.credentials('basic');
      const scope = `openid ${t.profile.ids.id_scope}`;
      const { body } = await matrixSignIn(() => s.tokens({ client: 'basic', scope }));
      const received = Date.now();
      if (typeof body.access_token !== 'string') throw new CheckFailure(`the token response has no access_token: ${JSON.stringify(body).slice(0, 200)}`);
      const token = body.access_token;
      const at = async (ms: number) => {
        await sleep(Math.max(0, received + ms - Date.now()));
        const [ui, intro] = [await oidc.userinfo(token), await oidc.introspect(own, s.style('basic'), token)];
        return { ui, intro, age: ((Date.now() - received) / 1000).toFixed(1) };
      };
      const active = (r: { status: number; json(): unknown }) => r.status === 200 && (r.json() as Record<string, unknown>).active === true;
      const inside = await at(insideMs);
      e.that(inside.ui.status === 200, `an access token ${inside.age} s old (lifetime ${lifetimeS} s) no longer reads /userinfo: ${said(inside.ui)}`);
      e.that(active(inside.intro), `an access token ${inside.age} s old (lifetime ${lifetimeS} s) does not introspect active: ${said(inside.intro)}`);
      // RFC 7662's iat and exp, where given, count seconds: issued about when received, ending a lifetime later.
      const b = inside.intro.status === 200 ? (inside.intro.json() as Record<string, unknown>) : {};
      const near = (v: unknown, s: number) => v === undefined || (typeof v === 'number' && Math.abs(v - s) < 10);
      e.that(
        b.scope === undefined || (typeof b.scope === 'string' && b.scope.split(' ').sort().join(' ') === scope.split(' ').sort().join(' ')),
        `the token introspects scope ${JSON.stringify(b.scope)}, not the granted ${scope}, space-separated`,
      );
      // RFC 7662's token_type and client_id, where given: the token's type (Bearer) and its client.
      e.that(
        b.token_type === undefined || (typeof b.token_type === 'string' && b.token_type.toLowerCase() === 'bearer'),
        `the token introspects token_type ${JSON.stringify(b.token_type)}, not Bearer`,
      );
      e.that(b.client_id === undefined || b.client_id === own.client_id, `the token introspects client_id ${JSON.stringify(b.client_id)}, not ${own.client_id}, the client it was issued to`);
      e.that(
        near(b.iat, received / 1000) && near(b.exp, received / 1000 + lifetimeS),
        `the token introspects iat ${JSON.stringify(b.iat)} and exp ${JSON.stringify(b.exp)}, not seconds of its issue and its end ${lifetimeS} s later`,
      );
      const past = await at(pastMs);
      e.that(past.ui.status >= 400 && past.ui.status < 500, `an access token ${past.age} s old (lifetime ${lifetimeS} s) still reads /userinfo: ${said(past.ui)}`);
      e.that(past.intro.status === 200 && !active(past.intro), `an access token ${past.age} s old (lifetime ${lifetimeS} s) introspects ${said(past.intro)}, not active false`);
    },
  });
}

function resumeInsideCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/resume-inside',
    title: `a resume link opened ${INSIDE_MS / 1000} s after the callback issued it still continues the browser that started the sign-in (its lifetime is 60 seconds)`,
    rules: ['ob.transaction.resume-binding'],
    context: ['ob.contract.transaction'],
    cells: [{ rule: 'ob.transaction.resume-binding', facet: 'resume-life', value: 'inside', operation: 'resume' }],
    lane: 'bridge/matrix/inside',
    run: async (s: BridgeSession, e) => {
      const a = await matrixSignIn(() => approvedUnresumed(s));
      const issued = Date.now();
      await sleep(INSIDE_MS);
      const res = await a.user.browser.http.get(a.resumeUri, { headers: { accept: 'text/html' } });
      e.that(continued(s, res, a.redirectUri), `a resume link ${((Date.now() - issued) / 1000).toFixed(1)} s old did not continue the browser: ${said(res)}`);
    },
  });
}

const RACE = 20;

function approvalOnceCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/approval-once',
    title: `a signed approval authenticates its sign-in once: delivered again to /svc/callback after it was accepted it is refused, and delivered ${RACE} ways at once at most one delivery is accepted`,
    rules: ['ob.native.verifier'],
    context: ['ob.contract.transaction', 'ob.transaction.callback'],
    cells: [
      { rule: 'ob.native.verifier', facet: 'once', value: 'replay', operation: 'callback' },
      { rule: 'ob.native.verifier', facet: 'once', value: 'race', operation: 'callback' },
    ],
    run: async (s, e) => {
      const replay = async () => {
        const w = await matrixSignIn(() => s.waitingSignIn());
        const first = await s.signer.approve(w.request, { key: w.user.key, sameDevice: true });
        if (first.delivery?.status !== 200) throw new CheckFailure(`the approval was not accepted: ${first.delivery?.status} ${JSON.stringify(first.delivery?.body).slice(0, 200)}`);
        const again = await s.signer.deliver(String(first.loaded.request.response_uri), first.encodedApproval);
        e.that(again.status >= 400 && again.status < 500, `the same approval delivered again was answered ${again.status} ${JSON.stringify(again.body).slice(0, 200)}`);
      };
      const race = async () => {
        const w = await matrixSignIn(() => s.waitingSignIn());
        const loaded = await s.signer.loadRequest(w.request);
        const { encoded } = s.signer.sign(loaded.request, w.user.key);
        const answers = await together(RACE, () => s.signer.deliver(String(loaded.request.response_uri), encoded));
        // At most one: the deliveries that lose to a spent nonce are verification errors, which
        // may fail the transaction before the winner moves it (ob.transaction.failed).
        const accepted = answers.filter((a) => a.status === 200).length;
        e.that(accepted <= 1, `one approval delivered ${RACE} ways at once was accepted ${accepted} times: ${answers.map((a) => a.status).join(' ')}`);
      };
      await Promise.all([replay(), race()]);
    },
  });
}

export function kindsMatrixChecks(t: BridgeTarget): Check[] {
  return [consentKindsCheck(t), accessTokenInsideCheck(t), accessTokenWindowCheck(t), resumeInsideCheck(t), approvalOnceCheck(t)];
}
