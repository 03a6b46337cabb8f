// Behaviours an independent client of document 2 judged and this suite did not: redemption
// without the redirect_uri the authorization request carried, auth_time of a code issued from the
// session, and iss on every prompt=none error. Each is proven by a --break variant of the reference.
import type { Check } from '../../../run/model.ts';
import { decodeJwt } from 'jose';
import { newPkce } from '../../../actors/oidc/client.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bridgeCheck } from '../check.ts';
import { nextBridgeSecond } from '../clock.ts';
import { CheckFailure, CheckSkip, said, type BridgeTarget } from '../driver.ts';

function codeRedirectUriOmittedCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/code/redirect-uri-omitted',
    title: 'a code from a request that named redirect_uri is not redeemed without it (RFC 6749 §4.1.3)',
    rules: ['ob.code.binding'],
    run: async (s, e) => {
      const r = await s.signIn();
      if (!r.response.code) throw new CheckFailure(`no code: the bridge answered ${r.response.location}`);
      const oidc = await s.oidc();
      const c = s.credentials('basic');
      const fields = { grant_type: 'authorization_code', code: r.response.code, code_verifier: r.pkce.verifier, redirect_uri: undefined };
      const omitted = await oidc.postForm(oidc.discovery.token_endpoint, c, s.style('basic'), fields);
      e.that(omitted.status >= 400 && omitted.status < 500, `the code redeemed without redirect_uri: ${said(omitted)}`);
    },
  });
}

function ssoAuthTimeCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/sso/auth-time',
    title: "a code issued from the session carries the native proof's auth_time, not the time of the later authorization",
    rules: ['ob.token.id-token'],
    context: ['ob.sso.reuse'],
    run: async (s, e) => {
      const first = await s.tokens();
      const proof = decodeJwt(String(first.body.id_token)).auth_time;
      // auth_time is in seconds: the second authorization starts in a later second of the bridge's clock.
      await nextBridgeSecond(s);
      const second = await s.tokens({ user: first.signIn.user });
      if (second.signIn.signed) throw new CheckSkip('the bridge asked for a new proof instead of issuing from the session (ob.sso.reuse judges that)');
      const reused = decodeJwt(String(second.body.id_token)).auth_time;
      e.that(typeof proof === 'number' && reused === proof, `auth_time is ${JSON.stringify(reused)} for the code issued from the session, the proof was at ${JSON.stringify(proof)}`);
    },
  });
}

function ssoPromptNoneIssCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/sso/prompt-none-iss',
    title: 'every prompt=none error (login_required and consent_required) carries iss (RFC 9207)',
    rules: ['ob.authorize.iss'],
    context: ['ob.authorize.prompt-none'],
    run: async (s, e) => {
      const user = await s.newUser();
      const noSession = await s.openAuthorize(user.browser, { ...s.params('basic', newPkce(), 'st', 'n'), prompt: 'none' });
      const r1 = s.authorizationResponse(noSession.location, s.credentials('basic').redirect_uri);
      if (!r1?.error) throw new CheckFailure(`prompt=none without a session gave no error on the redirect URI: ${said(noSession)}`);
      e.that(r1.iss === t.issuer, `the ${r1.error} error carries iss ${JSON.stringify(r1.iss)}, expected ${t.issuer}: ${r1.location}`);
      await s.signIn({ user });
      const other = t.clients.other_sector ? 'other_sector' : 'basic';
      const scope = other === 'basic' ? `openid ${t.profile.ids.id_scope} profile` : 'openid';
      const noConsent = await s.openAuthorize(user.browser, { ...s.params(other, newPkce(), 'st', 'n', scope), prompt: 'none' });
      const r2 = s.authorizationResponse(noConsent.location, s.credentials(other).redirect_uri);
      if (!r2?.error) throw new CheckFailure(`prompt=none without consent gave no error on the redirect URI: ${said(noConsent)}`);
      e.that(r2.iss === t.issuer, `the ${r2.error} error carries iss ${JSON.stringify(r2.iss)}, expected ${t.issuer}: ${r2.location}`);
    },
  });
}

function transactionResumeReusedCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/transaction/resume-reused',
    title: 'a resume code is single-use: opened again in the same browser, with its cookie, after the sign-in ended, it does not sign in again',
    rules: ['ob.transaction.resume-binding'],
    context: ['ob.contract.transaction'],
    run: async (s, e) => {
      const reg = s.credentials('basic').redirect_uri;
      const { user, txUrl, request } = await s.waitingSignIn();
      const approved = await s.signer.approve(request, { key: user.key, sameDevice: true, browser: user.browser });
      if (!approved.resumeUri || !approved.resumed || approved.resumed.status >= 400) throw new CheckFailure(`the first resume did not continue: ${approved.resumed?.status}`);
      let end = s.authorizationResponse(approved.resumed.location, reg);
      if (!end) {
        const consent = (await s.view(user.browser, txUrl)).view;
        const offered = ((consent.consent ?? {}) as { claims?: string[] }).claims ?? [];
        const decided = await s.post(user.browser, `${txUrl}/consent`, { decision: 'approve', claims: offered });
        end = s.authorizationResponse(typeof decided.view.redirect === 'string' ? decided.view.redirect : decided.res.location, reg);
      }
      if (!end?.code) throw new CheckFailure(`the sign-in did not end with a code: ${end?.location ?? 'no redirect to the client'}`);
      const again = await user.browser.http.get(approved.resumeUri, { headers: { accept: 'text/html' } });
      const reached = s.authorizationResponse(again.location, reg);
      const cookies = again.setCookies.filter((c) => !/^[^=]*=\s*(;|$)/.test(c) && !/max-age=0/i.test(c));
      e.that(reached === undefined, `the used resume code sent the browser to the client again: ${said(again)}`);
      e.that(again.status >= 400 || cookies.length === 0, `the used resume code was accepted again (${cookies.length} cookie(s) set): ${said(again)}`);
    },
  });
}

function authorizeLoopbackConfidentialCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/authorize/loopback-confidential',
    title: "the loopback any-port exception is for public clients only: a confidential client's loopback redirect on another port is an error page",
    rules: ['ob.authorize.loopback', 'ob.authorize.redirect-exact'],
    cells: [{ rule: 'ob.authorize.loopback', facet: 'normalization', value: 'near-miss', operation: 'authorize' }],
    run: async (s, e) => {
      const reg = s.credentials('loopback_confidential').redirect_uri;
      const m = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d+)?(\/.*)?$/.exec(reg);
      if (!m) throw new CheckFailure(`the loopback_confidential client's redirect ${reg} is not a loopback redirect (bridge.clients.loopback_confidential)`);
      const other = `http://${m[1]}:${40000 + Math.floor(Math.random() * 20000)}${m[2] ?? ''}`;
      const user = await s.newUser();
      const res = await s.openAuthorize(user.browser, s.params('loopback_confidential', newPkce(), 'st', 'n', 'openid', other));
      e.that(res.location === undefined && res.status >= 400 && res.status < 500, `redirect_uri ${other} was accepted for a confidential client: ${said(res)}`);
    },
  });
}

function transactionValidApprovalInUrlCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/transaction/valid-approval-in-url',
    title: "a valid approval placed in the callback's query string is refused and does not authenticate the transaction",
    rules: ['ob.transaction.no-response-in-url'],
    context: ['ob.contract.transaction'],
    run: async (s, e) => {
      const waiting = await s.waitingSignIn();
      const { user, txUrl } = waiting;
      const { request } = await s.signer.loadRequest(waiting.request);
      if (typeof request.response_uri !== 'string') throw new CheckFailure('the native request names no response_uri');
      const { encoded } = s.signer.sign(request, user.key);
      const u = new URL(request.response_uri);
      u.searchParams.set('response', encoded);
      const answer = await s.http.post(u.href, '', { headers: { 'content-type': 'text/plain', accept: 'application/json' }, noCookies: true });
      e.that(answer.status >= 400 && answer.status < 500, `the approval in the URL was answered ${said(answer)}`);
      const after = (await s.view(user.browser, txUrl)).view;
      e.that(after.state === 'awaiting_signature' || after.state === 'failed', `after the approval in the URL the transaction is ${JSON.stringify(after.state)}`);
    },
  });
}

function lifetimesExpiredCheck(t: BridgeTarget): Check {
  const codeS = t.declared?.codeLifetimeS ?? limits.authorization_code_ttl_seconds;
  const txS = t.declared?.transactionLifetimeS ?? limits.bridge_transaction_ttl_seconds;
  return bridgeCheck(t, {
    id: 'bridge/lifetimes/expired',
    title:
      'past their lifetimes (60 s and 10 minutes, or the shorter ones the target declares) a code is refused and a transaction cannot continue, unless /t/{id}/creating extended it (and then it takes the next extension too)',
    rules: ['ob.code.format', 'ob.transaction.expiry', 'ob.transaction.creating'],
    cells: [
      { rule: 'ob.code.format', facet: 'window', value: 'outside', operation: 'token' },
      { rule: 'ob.transaction.expiry', facet: 'window', value: 'outside', operation: 'identify' },
      { rule: 'ob.transaction.creating', facet: 'window', value: 'inside', operation: 'identify' },
      { rule: 'ob.transaction.creating', facet: 'window', value: 'inside', operation: 'creating' },
      // The extended transaction's identify, past its declared life, is inside its cap.
      { rule: 'ob.transaction.creating', facet: 'cap', value: 'inside', operation: 'identify' },
    ],
    context: ['ob.contract.transaction'],
    // It mostly waits, on transactions of its own: a lane of its own overlaps the wait with the other checks.
    lane: 'bridge/lifetimes/expired',
    timeoutMs: Math.max(codeS, txS) * 1000 + 60_000,
    run: async (s, e) => {
      // One wait for both clocks: the transaction opened first, then a code issued.
      const { user, txUrl } = await s.startSignIn();
      // A second transaction the user extends while creating an ID: it outlives the declared life.
      const { user: creator, txUrl: extendedUrl } = await s.startSignIn();
      const creating = await creator.browser.http.post(`${extendedUrl}/creating`, '', { headers: { accept: 'application/json' } });
      if (creating.status >= 300) throw new CheckFailure(`POST /t/{id}/creating was refused: ${said(creating)}`);
      const r = await s.signIn();
      if (!r.response.code) throw new CheckFailure(`no code: the bridge answered ${r.response.location}`);
      const issuedAt = Date.now();
      await new Promise((done) => setTimeout(done, Math.max(codeS, txS) * 1000 + 1000));
      const late = await (await s.oidc()).token(s.credentials('basic'), s.style('basic'), r.response.code, r.pkce.verifier);
      const codeAge = Math.round((Date.now() - issuedAt) / 1000);
      e.that(late.status >= 400 && late.status < 500, `the code redeemed ${codeAge} s after it was issued (declared lifetime ${codeS} s): ${said(late)}`);
      const identified = await s.post(user.browser, `${txUrl}/identify`, { id: user.key.identity });
      e.that(identified.view.state !== 'awaiting_signature' && typeof identified.view.request !== 'string', `the transaction went on past its declared lifetime of ${txS} s: ${said(identified.res)}`);
      // Past the declared life but inside the extension, the page that keeps the sign-in open extends it again.
      const again = await creator.browser.http.post(`${extendedUrl}/creating`, '', { headers: { accept: 'application/json' } });
      e.that(again.status >= 200 && again.status < 300, `POST /t/{id}/creating inside the extension, past the declared lifetime of ${txS} s, was refused: ${said(again)}`);
      const extended = await s.post(creator.browser, `${extendedUrl}/identify`, { id: creator.key.identity });
      e.that(extended.view.state === 'awaiting_signature', `the transaction extended by /t/{id}/creating ended with the declared lifetime of ${txS} s: ${said(extended.res)}`);
    },
  });
}

/** The longest declared cap the creating check waits for. */
const MAX_CAP_WAIT_S = 60;

/**
 * "`POST /t/{id}/creating` extends the transaction to 30 minutes, capped at one hour from its
 * start", on the declared shorter extension and cap: an extension not renewed ends, and one
 * renewed again and again ends at the cap counted from the start, not from the last renewal.
 */
function creatingCapCheck(t: BridgeTarget): Check {
  const extensionS = t.declared?.transactionExtensionS ?? limits.bridge_transaction_creating_ttl_seconds;
  const capS = t.declared?.transactionCapS ?? limits.bridge_transaction_max_ttl_seconds;
  return bridgeCheck(t, {
    id: 'bridge/lifetimes/creating-cap',
    title: `a transaction extended by /t/{id}/creating ends ${extensionS} s after the extension when not extended again, and one extended again and again ends ${capS} s after its start (the extension and the cap, declared or the document's)`,
    rules: ['ob.transaction.creating'],
    cells: [
      ...['identify', 'creating'].map((operation) => ({ rule: 'ob.transaction.creating' as const, facet: 'window', value: 'outside', operation })),
      { rule: 'ob.transaction.creating', facet: 'cap', value: 'inside', operation: 'creating' },
      ...['identify', 'creating'].map((operation) => ({ rule: 'ob.transaction.creating' as const, facet: 'cap', value: 'outside', operation })),
    ],
    context: ['ob.transaction.expiry'],
    lane: 'bridge/lifetimes/creating-cap',
    timeoutMs: (Math.min(capS, MAX_CAP_WAIT_S) + 60) * 1000,
    run: async (s, e) => {
      if (capS > MAX_CAP_WAIT_S) throw new CheckSkip(`the target declares no transaction cap of at most ${MAX_CAP_WAIT_S} s (transaction_cap_s); document 2's hour is not waited for`);
      const [once, renewed] = await Promise.all([s.startSignIn(), s.startSignIn()]);
      const start = Date.now();
      const creating = (x: typeof once) => x.user.browser.http.post(`${x.txUrl}/creating`, '', { headers: { accept: 'application/json' } });
      const at = (seconds: number) => new Promise((r) => setTimeout(r, Math.max(0, start + seconds * 1000 - Date.now())));
      for (const x of [once, renewed]) {
        const r = await creating(x);
        if (r.status >= 300) throw new CheckFailure(`POST /t/{id}/creating was refused: ${said(r)}`);
      }
      // Renewed inside its extension and again past the first one, while the cap still holds.
      await at(Math.min(extensionS, capS) * 0.6);
      const again = await creating(renewed);
      e.that(again.status >= 200 && again.status < 300, `a renewal ${((Date.now() - start) / 1000).toFixed(1)} s into the transaction (cap ${capS} s) was refused: ${said(again)}`);
      await at(extensionS + 1.5);
      // A renewal after the end revives nothing, whatever it answers: the identify after it is judged.
      await creating(once);
      const gone = await s.post(once.user.browser, `${once.txUrl}/identify`, { id: once.user.key.identity });
      e.that(
        gone.view.state !== 'awaiting_signature' && typeof gone.view.request !== 'string',
        `the transaction extended once went on ${extensionS + 1.5} s after its extension of ${extensionS} s (and a renewal then): ${said(gone.res)}`,
      );
      if (extensionS + 1.5 < capS) {
        const late = await creating(renewed);
        e.that(late.status >= 200 && late.status < 300, `a renewal ${((Date.now() - start) / 1000).toFixed(1)} s into the transaction, inside its cap of ${capS} s, was refused: ${said(late)}`);
      }
      await at(capS + 1.5);
      await creating(renewed);
      const capped = await s.post(renewed.user.browser, `${renewed.txUrl}/identify`, { id: renewed.user.key.identity });
      e.that(
        capped.view.state !== 'awaiting_signature' && typeof capped.view.request !== 'string',
        `the transaction renewed again and again went on ${capS + 1.5} s after its start (and a renewal then), past its cap of ${capS} s: ${said(capped.res)}`,
      );
    },
  });
}

export function gapChecks(t: BridgeTarget): Check[] {
  return [
    codeRedirectUriOmittedCheck(t),
    ssoAuthTimeCheck(t),
    ssoPromptNoneIssCheck(t),
    transactionResumeReusedCheck(t),
    authorizeLoopbackConfidentialCheck(t),
    transactionValidApprovalInUrlCheck(t),
    lifetimesExpiredCheck(t),
    creatingCapCheck(t),
  ];
}
