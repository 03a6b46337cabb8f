// The transaction's status view (rule ob.contract.transaction, the project's test contract:
// document 2 leaves the methods and bodies of /t/{id} unshown). Each state's view carries the
// fields that state has and none of the others': the native request only while it waits for a
// signature, the consent only at consent, the redirect only once the client is answered, an error
// only once the sign-in failed. A view that still offers the request after the proof, or a
// redirect before the decision, would hand a page script what it must not act on.
import type { Check } from '../../../run/model.ts';
import { bridgeCheck } from '../check.ts';
import { safeJson } from '../../../run/answers.ts';
import { foreignSources, forms, originOf } from '../pages.ts';
import { CheckFailure, said, type BridgeSession, type BridgeTarget, type User } from '../driver.ts';
import type { ResumeResult } from '../../../actors/signer/index.ts';

/** What the resume link answered: its status and where it sent the browser, or its body. */
const resumedAs = (r: ResumeResult | undefined) => (r === undefined ? 'nothing' : `${r.status} ${r.location ?? JSON.stringify(r.body).slice(0, 160)}`);
import type { Expect } from '../../../run/verdict.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { newPkce } from '../../../actors/oidc/client.ts';

/** Which of the optional fields each state's view carries (the rest it must not). */
const FIELDS = ['request', 'request_uri', 'match_code', 'request_expires_at', 'push', 'consent', 'redirect', 'error'] as const;
type Field = (typeof FIELDS)[number];
const CARRIES: Record<string, readonly Field[]> = {
  identify: [],
  awaiting_signature: ['request', 'request_uri', 'match_code', 'request_expires_at', 'push'],
  consent: ['consent'],
  code_issued: ['redirect'],
  access_denied: ['redirect'],
  failed: ['error'],
};

/** Judges one view: the state named, its own fields present where they are required, the others' absent. */
function judge(e: Expect, at: string, view: Record<string, unknown>, state: keyof typeof CARRIES, required: readonly Field[]): void {
  if (!e.that(view.state === state, `${at}: the view's state is ${JSON.stringify(view.state)}, expected ${state}`)) return;
  for (const f of required) e.that(f in view && view[f] !== null && view[f] !== undefined, `${at}: the ${state} view has no ${f}: ${JSON.stringify(view).slice(0, 300)}`);
  const foreign = FIELDS.filter((f) => !CARRIES[state]!.includes(f) && f in view);
  e.that(foreign.length === 0, `${at}: the ${state} view carries ${foreign.join(', ')}, which belong to other states: ${JSON.stringify(view).slice(0, 300)}`);
}

const claimScope = (s: BridgeSession) => `openid ${s.target.profile.ids.id_scope}`;

function transactionViewCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/transaction-view',
    title:
      "the status view of each state carries that state's fields only (a registered client's consent marked verified): identify none, awaiting_signature the request (its URI on the issuer, match code and expiry), consent the consent, code_issued and access_denied the redirect, failed the error; another browser gets a 4xx page, or a 4xx JSON error when it polls, and a transaction that does not exist is a 4xx",
    rules: ['ob.contract.transaction'],
    run: async (s, e) => {
      const redirectUri = s.credentials('basic').redirect_uri;
      // Approved: identify, waiting, consent, code.
      const a = await s.startSignIn(claimScope(s));
      judge(e, 'after /authorize', (await s.view(a.user.browser, a.txUrl)).view, 'identify', []);
      const waiting = (await s.post(a.user.browser, `${a.txUrl}/identify`, { id: a.user.key.identity })).view;
      judge(e, 'after the ID', waiting, 'awaiting_signature', ['request', 'request_uri', 'request_expires_at']);
      e.that(typeof waiting.request_uri === 'string' && waiting.request_uri.startsWith(`${t.issuer}/`), `the request_uri ${JSON.stringify(waiting.request_uri)} is not on the issuer`);
      if (typeof waiting.request !== 'string') return;
      const asked = (await s.signer.loadRequest(waiting.request)).request;
      e.that(
        waiting.request_expires_at === asked.expires_at,
        `the view's request_expires_at ${JSON.stringify(waiting.request_expires_at)} is not the request's expires_at ${JSON.stringify(asked.expires_at)}`,
      );
      const approved = await s.signer.approve(waiting.request, { key: a.user.key, sameDevice: true, browser: a.user.browser });
      if (!approved.resumed || approved.resumed.status >= 400) throw new CheckFailure(`the resume link was refused: ${approved.resumed ? `${approved.resumed.status}` : 'no resume link'}`);
      const atConsent = (await s.view(a.user.browser, a.txUrl)).view;
      judge(e, 'after the proof', atConsent, 'consent', ['consent']);
      // A registered client was registered with its hosts: its consent calls the return host verified.
      const shown = (atConsent.consent ?? {}) as { verified?: unknown };
      e.that(shown.verified === true, `consent for the registered client shows verified ${JSON.stringify(shown.verified)}, not true`);
      const claims = ((atConsent.consent ?? {}) as { claims?: unknown }).claims;
      const decided = (await s.post(a.user.browser, `${a.txUrl}/consent`, { decision: 'approve', claims: Array.isArray(claims) ? claims : [] })).view;
      judge(e, 'after approving', decided, 'code_issued', ['redirect']);
      e.that(
        typeof decided.redirect === 'string' && s.authorizationResponse(decided.redirect, redirectUri)?.code !== undefined,
        `the code_issued view's redirect ${JSON.stringify(decided.redirect)} carries no code for the client`,
      );

      // Another browser (no transaction cookie) is refused in the form it asked for: a page, or JSON with an error.
      const stranger = (await s.newUser()).browser;
      const page = await stranger.http.get(a.txUrl, { headers: { accept: 'text/html' } });
      e.that(page.status >= 400 && page.status < 500 && /^text\/html/i.test(page.headers['content-type'] ?? ''), `another browser's page request answered ${said(page)}, not a 4xx HTML page`);
      const polled = await stranger.http.get(a.txUrl, { headers: { accept: 'application/json' } });
      const body = safeJson(polled);
      e.that(
        polled.status >= 400 && polled.status < 500 && typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string' && (body as { error: string }).error !== '',
        `another browser's status poll answered ${said(polled)}, not a 4xx JSON error`,
      );

      // A transaction that does not exist, asked for by a browser holding a live transaction cookie.
      const unknown = a.txUrl.replace(/[^/]+$/, 'A'.repeat(22));
      const none = await a.user.browser.http.get(unknown, { headers: { accept: 'application/json' } });
      e.that(none.status >= 400 && none.status < 500, `a transaction that does not exist answered ${said(none)}, not a 4xx`);

      // Denied: the redirect carries the error.
      const b = await s.waitingSignIn(claimScope(s));
      await s.signer.approve(b.request, { key: b.user.key, sameDevice: true, browser: b.user.browser });
      const denied = (await s.post(b.user.browser, `${b.txUrl}/consent`, { decision: 'deny' })).view;
      judge(e, 'after denying', denied, 'access_denied', ['redirect']);
      e.that(
        typeof denied.redirect === 'string' && s.authorizationResponse(denied.redirect, redirectUri)?.error === 'access_denied',
        `the access_denied view's redirect ${JSON.stringify(denied.redirect)} is no access_denied for the client`,
      );

      // Failed: an approval signed by a key the identity does not publish (document 1, rule 7).
      const c = await s.waitingSignIn(claimScope(s));
      await s.badlySigned(c.request, c.user.key.identity);
      judge(e, 'after a badly signed approval', (await s.view(c.user.browser, c.txUrl)).view, 'failed', ['error']);
    },
  });
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' };

function transactionFormsCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/transaction-forms',
    title:
      "the pages' own forms work without scripting: the ID posted as a form answers a redirect to the transaction's page, a consent denial posted as a form redirects to the client with access_denied; a JSON body may begin with white space; a failed sign-in's page is a 4xx page",
    rules: ['ob.contract.transaction'],
    run: async (s, e) => {
      const redirectUri = s.credentials('basic').redirect_uri;
      const a = await s.startSignIn(claimScope(s));
      const typed = await a.user.browser.http.post(`${a.txUrl}/identify`, new URLSearchParams({ id: a.user.key.identity }).toString(), { headers: FORM });
      e.that(
        typed.status >= 300 && typed.status < 400 && typed.location !== undefined && new URL(typed.location, t.issuer).href.split('?')[0] === a.txUrl,
        `the ID posted as a form answered ${said(typed)}, not a redirect to ${a.txUrl}`,
      );
      const waiting = (await s.view(a.user.browser, a.txUrl)).view;
      if (!e.that(typeof waiting.request === 'string', `after the ID posted as a form the transaction is ${JSON.stringify(waiting.state)}, not waiting for a signature`)) return;
      await s.signer.approve(String(waiting.request), { key: a.user.key, sameDevice: true, browser: a.user.browser });
      const denied = await a.user.browser.http.post(`${a.txUrl}/consent`, 'decision=deny', { headers: FORM });
      e.that(s.authorizationResponse(denied.location, redirectUri)?.error === 'access_denied', `a denial posted as a form answered ${said(denied)}, not a redirect to the client with access_denied`);

      // JSON after white space (a pretty-printed body) is still JSON.
      const b = await s.startSignIn(claimScope(s));
      const spaced = await b.user.browser.http.post(`${b.txUrl}/identify`, `\n  ${JSON.stringify({ id: b.user.key.identity })}`, {
        headers: { 'content-type': 'application/json', accept: 'application/json' },
      });
      const bView = safeJson(spaced);
      e.that(
        spaced.status === 200 && typeof bView === 'object' && bView !== null && (bView as { state?: unknown }).state === 'awaiting_signature',
        `an ID posted as JSON after white space answered ${said(spaced)}`,
      );

      // A failed sign-in is shown as an error page, not as one still going on.
      const c = await s.waitingSignIn(claimScope(s));
      await s.badlySigned(c.request, c.user.key.identity);
      const page = await c.user.browser.http.get(c.txUrl, { headers: { accept: 'text/html' } });
      e.that(page.status >= 400 && page.status < 500 && page.location === undefined, `the failed sign-in's page answered ${said(page)}, not a 4xx error page`);
    },
  });
}

/** A sign-in approved on the same device and resumed in its browser: at consent. */
async function atConsent(s: BridgeSession): Promise<{ user: User; txUrl: string; view: Record<string, unknown>; resumed?: ResumeResult }> {
  const a = await s.waitingSignIn(claimScope(s));
  const { resumed } = await s.signer.approve(a.request, { key: a.user.key, sameDevice: true, browser: a.user.browser });
  const { view } = await s.view(a.user.browser, a.txUrl);
  if (view.state !== 'consent') throw new CheckFailure(`after the proof the transaction is ${JSON.stringify(view.state)}, not at consent`);
  return { user: a.user, txUrl: a.txUrl, view, ...(resumed ? { resumed } : {}) };
}

function transactionPagesCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/transaction-pages',
    title:
      "the pages a browser sees: the resume link redirects to the transaction's page, or straight to the client with the code when a stored consent covers a new proof; at consent a form posting to /t/{id}/consent with approve and deny and one box per offered claim, its policy letting the form reach the client's origin alone besides itself; a decision other than approve or deny is a 400 at consent, consent before the proof a 409, and once answered the page redirects to the client (code or access_denied) and a second decision is a 409 that changes the stored consent in neither direction; twenty approvals at once issue one code and nineteen 409s; retry takes a waiting sign-in back to identify, and the next ID gets a new request (another browser's retry is a 4xx that changes nothing)",
    rules: ['ob.contract.transaction'],
    run: async (s, e) => {
      const redirectUri = s.credentials('basic').redirect_uri;
      const a = await atConsent(s);
      // The resume link takes the browser on: to the transaction's page (consent next).
      const onward = a.resumed?.location === undefined ? undefined : new URL(a.resumed.location, a.resumed.exchange.url).href.split('?')[0];
      e.that(
        a.resumed !== undefined && a.resumed.status >= 300 && a.resumed.status < 400 && onward === a.txUrl,
        `the resume link answered ${resumedAs(a.resumed)}, not a redirect to the transaction's page ${a.txUrl}`,
      );
      const page = await a.user.browser.http.get(a.txUrl, { headers: { accept: 'text/html' } });
      const consent = forms(page.text()).find((f) => f.method === 'post' && new URL(f.action, a.txUrl).href === `${a.txUrl}/consent`);
      const offered = ((a.view.consent ?? {}) as { claims?: unknown }).claims;
      e.that(
        page.status === 200 &&
          consent !== undefined &&
          ['approve', 'deny'].every((d) => consent.controls.some((c) => c.type === 'submit' && c.name === 'decision' && c.value === d)) &&
          (Array.isArray(offered) ? offered : []).every((claim) => consent.controls.some((c) => c.type === 'checkbox' && c.name === 'claims' && c.value === claim)),
        `the consent page (${said(page)}) has no form posting decision approve and deny to ${a.txUrl}/consent with a box per offered claim ${JSON.stringify(offered)}`,
      );
      const reach = foreignSources(page.headers['content-security-policy'] ?? '', ['form-action']).map(originOf);
      const client = new URL(redirectUri).origin;
      e.that(reach.length === 1 && reach[0] === client, `the consent page's form-action reaches ${JSON.stringify(reach)} beside itself, not the client's origin ${client} alone`);
      // A decision other than approve or deny is a 400, and the sign-in stays at consent.
      const odd = await s.post(a.user.browser, `${a.txUrl}/consent`, { decision: 'maybe', claims: Array.isArray(offered) ? offered : [] });
      const stays = (await s.view(a.user.browser, a.txUrl)).view;
      e.that(
        odd.res.status === 400 && stays.state === 'consent',
        `POST /t/{id}/consent with decision maybe answered ${said(odd.res)} and left the sign-in ${JSON.stringify(stays.state)}, not a 400 at consent`,
      );
      await s.post(a.user.browser, `${a.txUrl}/consent`, { decision: 'approve', claims: Array.isArray(offered) ? offered : [] });
      const issued = await a.user.browser.http.get(a.txUrl, { headers: { accept: 'text/html' } });
      e.that(
        s.authorizationResponse(issued.location, redirectUri)?.code !== undefined,
        `the page of a sign-in whose code was issued answered ${said(issued)}, not a redirect to the client with the code`,
      );
      // Once decided, a second decision is a 409 that changes nothing: the consent stored by the
      // first (every claim) still covers the next authorization in that browser's session.
      const regrets = await s.post(a.user.browser, `${a.txUrl}/consent`, { decision: 'approve', claims: [] });
      const covered = await s.openAuthorize(a.user.browser, s.params('basic', newPkce(), 'st', 'n', claimScope(s)));
      e.that(
        regrets.res.status === 409 && s.authorizationResponse(covered.location, redirectUri)?.code !== undefined,
        `after the approval a second one with no claim answered ${said(regrets.res)}, and the next authorization in the session ${said(covered)}: not a 409, then a code on the first consent`,
      );

      // A new proof (prompt=login) that the stored consent covers: the resume link redirects to the client with the code.
      const relogin = await s.openAuthorize(a.user.browser, { ...s.params('basic', newPkce(), 'st', 'n', claimScope(s)), prompt: 'login' });
      const reTx = relogin.location === undefined ? undefined : new URL(relogin.location, t.issuer).href.split('?')[0]!;
      const reView = reTx === undefined ? {} : (await s.post(a.user.browser, `${reTx}/identify`, { id: a.user.key.identity })).view;
      if (typeof reView.request !== 'string') throw new CheckFailure(`prompt=login did not lead to a new native request: ${said(relogin)}`);
      const reResumed = (await s.signer.approve(reView.request, { key: a.user.key, sameDevice: true, browser: a.user.browser })).resumed;
      e.that(
        reResumed !== undefined && reResumed.status >= 300 && reResumed.status < 400 && s.authorizationResponse(reResumed.location, redirectUri)?.code !== undefined,
        `after a new proof covered by the stored consent the resume link answered ${resumedAs(reResumed)}, not a redirect to the client with the code`,
      );

      const b = await atConsent(s);
      await s.post(b.user.browser, `${b.txUrl}/consent`, { decision: 'deny' });
      const denied = await b.user.browser.http.get(b.txUrl, { headers: { accept: 'text/html' } });
      e.that(
        s.authorizationResponse(denied.location, redirectUri)?.error === 'access_denied',
        `the page of a denied sign-in answered ${said(denied)}, not a redirect to the client with access_denied`,
      );
      // An approval after the denial is a 409 and stores no consent: the next authorization asks again.
      const overturn = await s.post(b.user.browser, `${b.txUrl}/consent`, { decision: 'approve', claims: [s.target.profile.ids.id_scope] });
      const asks = await s.openAuthorize(b.user.browser, s.params('basic', newPkce(), 'st', 'n', claimScope(s)));
      e.that(
        overturn.res.status === 409 && s.authorizationResponse(asks.location, redirectUri) === undefined,
        `after the denial an approval answered ${said(overturn.res)}, and the next authorization in the session ${said(asks)}: not a 409, then the consent step again`,
      );

      // Twenty approvals of one consent at once: one issues the code, the other nineteen are 409s
      // (none hands the client a code the bridge never stored).
      const r = await atConsent(s);
      const raced = await Promise.all(Array.from({ length: 20 }, () => s.post(r.user.browser, `${r.txUrl}/consent`, { decision: 'approve', claims: [] })));
      const codes = raced.map((x) => s.authorizationResponse(typeof x.view.redirect === 'string' ? x.view.redirect : x.res.location, redirectUri)?.code).filter((c) => c !== undefined);
      e.that(
        codes.length === 1 && raced.filter((x) => x.res.status === 409).length === 19,
        `twenty approvals of one consent at once handed out ${codes.length} codes and answered ${[...new Set(raced.map((x) => x.res.status))].join(', ')}: not one code and nineteen 409s`,
      );

      // Retry: back to identify, and the next ID issues another request; from another browser, refused.
      const c = await s.startSignIn(claimScope(s));
      // Consent before any proof is a 409, and the sign-in stays at identify.
      const early = await s.post(c.user.browser, `${c.txUrl}/consent`, { decision: 'approve', claims: [s.target.profile.ids.id_scope] });
      const unmoved = (await s.view(c.user.browser, c.txUrl)).view;
      e.that(
        early.res.status === 409 && unmoved.state === 'identify',
        `POST /t/{id}/consent before the ID was entered answered ${said(early.res)} and left the sign-in ${JSON.stringify(unmoved.state)}, not a 409 at identify`,
      );
      const first = (await s.post(c.user.browser, `${c.txUrl}/identify`, { id: c.user.key.identity })).view;
      const stranger = await s.post((await s.newUser()).browser, `${c.txUrl}/retry`, {});
      const still = (await s.view(c.user.browser, c.txUrl)).view;
      e.that(
        stranger.res.status >= 400 && stranger.res.status < 500 && still.state === 'awaiting_signature' && still.request === first.request,
        `another browser's POST /t/{id}/retry answered ${said(stranger.res)} and left the sign-in ${JSON.stringify(still.state)}, not a 4xx that changes nothing`,
      );
      const back = await s.post(c.user.browser, `${c.txUrl}/retry`, {});
      e.that(back.res.status === 200 && back.view.state === 'identify' && !('request' in back.view), `POST /t/{id}/retry on a waiting sign-in answered ${said(back.res)}, not the identify view`);
      const second = (await s.post(c.user.browser, `${c.txUrl}/identify`, { id: c.user.key.identity })).view;
      e.that(typeof second.request === 'string' && second.request !== first.request, 'after a retry the next ID did not issue a new native request');
    },
  });
}

function transactionExpiredCheck(t: BridgeTarget): Check {
  const txS = t.declared?.transactionLifetimeS ?? limits.bridge_transaction_ttl_seconds;
  return bridgeCheck(t, {
    id: 'bridge/profile/transaction-expired',
    title: `past the transaction's lifetime (${txS} s, or the shorter one the target declares) its view is expired with no other field, its page a 4xx error page, and an ID entered then a 4xx`,
    rules: ['ob.contract.transaction'],
    // It mostly waits: a lane of its own overlaps the wait with the other checks.
    lane: 'bridge/profile/transaction-expired',
    timeoutMs: txS * 1000 + 60_000,
    run: async (s, e) => {
      const { user, txUrl } = await s.startSignIn();
      await new Promise((done) => setTimeout(done, txS * 1000 + 1000));
      const { view } = await s.view(user.browser, txUrl);
      e.that(view.state === 'expired' && Object.keys(view).length === 1, `the view ${txS + 1} s after the sign-in began: ${JSON.stringify(view).slice(0, 300)}, not {"state":"expired"}`);
      const page = await user.browser.http.get(txUrl, { headers: { accept: 'text/html' } });
      e.that(page.status >= 400 && page.status < 500 && /^text\/html/i.test(page.headers['content-type'] ?? ''), `the page of an expired sign-in answered ${said(page)}, not a 4xx HTML page`);
      const late = await s.post(user.browser, `${txUrl}/identify`, { id: user.key.identity });
      e.that(late.res.status >= 400 && late.res.status < 500, `an ID entered into an expired sign-in answered ${said(late.res)}, not a 4xx`);
    },
  });
}

export const transactionViewChecks = (t: BridgeTarget): Check[] => [transactionViewCheck(t), transactionFormsCheck(t), transactionPagesCheck(t), transactionExpiredCheck(t)];
