// The transaction's single-use secret, judged across its matrix (spec/facets/bridge.yaml): the
// resume code ("single-use, valid 60 seconds, bound to the transaction") opened again in the same
// browser, with the same cookies, while the sign-in is still going on and after it ended, and
// opened 20 ways at once. The forwarded link (another browser) is bridge/transaction/forwarded-resume.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { together } from '../../../actors/oidc/race.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bridgeCheck } from '../check.ts';
import { matrixSignIn, WINDOW_LANE } from './matrix-pace.ts';
import { CheckFailure, said, type BridgeSession, type BridgeTarget, type User } from '../driver.ts';

const RACE = 20;

/** Resolves at the wall-clock moment `at` (ms), or at once when it has passed. */
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/** A same-device sign-in approved by the signer, its resume link not yet opened. */
export async function approvedUnresumed(s: BridgeSession): Promise<{ user: User; txUrl: string; resumeUri: string; redirectUri: string }> {
  const redirectUri = s.credentials('basic').redirect_uri;
  const { user, txUrl, request } = await s.waitingSignIn();
  const approved = await s.signer.approve(request, { key: user.key, sameDevice: true });
  if (!approved.resumeUri) throw new CheckFailure('the callback answered no resume_uri for a same-device approval');
  return { user, txUrl, resumeUri: approved.resumeUri, redirectUri };
}

/** Whether opening the resume link signed the browser in: a 2xx/3xx that sets a live cookie, or a redirect to the client. */
export function continued(s: BridgeSession, res: HttpResponse, redirectUri: string): boolean {
  if (res.status >= 400) return false;
  if (s.authorizationResponse(res.location, redirectUri)) return true;
  return res.setCookies.some((c) => !/^[^=]*=\s*(;|$)/.test(c) && !/max-age=0/i.test(c));
}

// "The resume code is still reusable in the same browser." (issue 25)
function resumeOnceCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/resume-once',
    title:
      'a resume link without a code, or with one never issued, is a 4xx; an issued code continues the browser once: opened again in the same browser (same cookies) during consent and after the code, it signs nothing in; opened 20 ways at once, exactly one continues',
    rules: ['ob.transaction.resume-binding'],
    context: ['ob.contract.transaction'],
    cells: [
      { rule: 'ob.transaction.resume-binding', facet: 'once', value: 'replay', operation: 'resume' },
      { rule: 'ob.transaction.resume-binding', facet: 'once', value: 'race', operation: 'resume' },
    ],
    run: async (s, e) => {
      const replay = async () => {
        const a = await matrixSignIn(() => approvedUnresumed(s));
        const open = () => a.user.browser.http.get(a.resumeUri, { headers: { accept: 'text/html' } });
        // A code of the same form that was never issued, in the browser holding the transaction's
        // cookie: a 4xx that continues nothing (the code must match; a server error is no refusal).
        const forged = new URL(a.resumeUri);
        forged.searchParams.set('code', randomBytes(32).toString('base64url'));
        const unknown = await a.user.browser.http.get(forged.href, { headers: { accept: 'text/html' } });
        e.that(unknown.status >= 400 && unknown.status < 500 && !continued(s, unknown, a.redirectUri), `a resume code never issued answered ${said(unknown)}, not a 4xx that continues nothing`);
        forged.searchParams.delete('code');
        const none = await a.user.browser.http.get(forged.href, { headers: { accept: 'text/html' } });
        e.that(none.status >= 400 && none.status < 500 && !continued(s, none, a.redirectUri), `the resume link without a code answered ${said(none)}, not a 4xx that continues nothing`);
        const first = await open();
        if (!continued(s, first, a.redirectUri)) throw new CheckFailure(`the resume link did not continue the browser that started the sign-in: ${said(first)}`);
        // The sign-in is at consent now: the same link, same browser, same cookies.
        const during = await open();
        e.that(!continued(s, during, a.redirectUri), `the used resume code continued the same browser again before consent: ${said(during)}`);
        const { view } = await s.view(a.user.browser, a.txUrl);
        if (view.state !== 'consent') return;
        const offered = ((view.consent ?? {}) as { claims?: string[] }).claims ?? [];
        const decided = await s.post(a.user.browser, `${a.txUrl}/consent`, { decision: 'approve', claims: offered });
        const end = s.authorizationResponse(typeof decided.view.redirect === 'string' ? decided.view.redirect : decided.res.location, a.redirectUri);
        if (!end?.code) throw new CheckFailure(`consent did not end with a code: ${said(decided.res)}`);
        const after = await open();
        e.that(!continued(s, after, a.redirectUri), `the used resume code continued the same browser again after the code was issued: ${said(after)}`);
      };
      const race = async () => {
        const b = await matrixSignIn(() => approvedUnresumed(s));
        const answers = await together(RACE, () => b.user.browser.http.get(b.resumeUri, { headers: { accept: 'text/html' } }));
        const winners = answers.filter((r) => continued(s, r, b.redirectUri));
        e.that(
          winners.length === 1,
          `opened ${RACE} ways at once in the same browser, the resume code continued ${winners.length} times: ${answers.map((r) => r.status).join(' ')}; ${said(winners[1] ?? answers[0]!)}`,
        );
      };
      await Promise.all([replay(), race()]);
    },
  });
}

/** A transaction opened for a fresh user: its page URL. */
async function opened(s: BridgeSession): Promise<{ user: User; txUrl: string }> {
  return s.startSignIn();
}

function transactionWindowCheck(t: BridgeTarget): Check {
  const lifeS = t.declared?.transactionLifetimeS ?? limits.bridge_transaction_ttl_seconds;
  const insideMs = lifeS * 1000 - 2000;
  const pastMs = lifeS * 1000 + 1000;
  return bridgeCheck(t, {
    id: 'bridge/matrix/transaction-window',
    title: `a transaction takes an ID ${(insideMs / 1000).toFixed(0)} s after /authorize created it, and not ${(pastMs / 1000).toFixed(0)} s after even when its page was polled half-way (its life of ${lifeS} s counts from /authorize, declared or the document's)`,
    rules: ['ob.transaction.expiry'],
    context: ['ob.contract.transaction'],
    cells: [
      { rule: 'ob.transaction.expiry', facet: 'window', value: 'inside', operation: 'identify' },
      { rule: 'ob.transaction.expiry', facet: 'window', value: 'outside', operation: 'identify' },
    ],
    lane: WINDOW_LANE,
    timeoutMs: pastMs + 60_000,
    run: async (s, e) => {
      const inside = async () => {
        const a = await opened(s);
        const start = Date.now();
        await sleepUntil(start + insideMs);
        const { res, view } = await s.post(a.user.browser, `${a.txUrl}/identify`, { id: a.user.key.identity });
        e.that(view.state === 'awaiting_signature', `${((Date.now() - start) / 1000).toFixed(1)} s into its life of ${lifeS} s the transaction took no ID: ${said(res)}`);
      };
      const past = async () => {
        // Opened, then polled half-way: activity does not restart its life.
        const b = await opened(s);
        const start = Date.now();
        await sleepUntil(start + (lifeS * 1000) / 2);
        await s.view(b.user.browser, b.txUrl);
        await sleepUntil(start + pastMs);
        const { res, view } = await s.post(b.user.browser, `${b.txUrl}/identify`, { id: b.user.key.identity });
        e.that(
          view.state !== 'awaiting_signature' && typeof view.request !== 'string',
          `${((Date.now() - start) / 1000).toFixed(1)} s after /authorize (life ${lifeS} s, polled half-way) the transaction still took an ID: ${said(res)}`,
        );
      };
      await Promise.all([inside(), past()]);
    },
  });
}

// "Each window just inside and just outside." (issue 25): the resume code's 60 seconds, or the
// shorter lifetime the target declares, counted from the approval that issued it.
function resumeWindowCheck(t: BridgeTarget): Check {
  const lifeS = t.declared?.resumeLifetimeS ?? limits.bridge_resume_code_ttl_seconds;
  const insideMs = lifeS * 1000 - 2000;
  const pastMs = lifeS * 1000 + 1000;
  return bridgeCheck(t, {
    id: 'bridge/matrix/resume-window',
    title: `a resume code continues its browser ${(insideMs / 1000).toFixed(0)} s after the approval issued it, and not ${(pastMs / 1000).toFixed(0)} s after (its life of ${lifeS} s, declared or the document's)`,
    rules: ['ob.transaction.resume-binding'],
    context: ['ob.contract.transaction'],
    cells: [
      { rule: 'ob.transaction.resume-binding', facet: 'window', value: 'inside', operation: 'resume' },
      { rule: 'ob.transaction.resume-binding', facet: 'window', value: 'outside', operation: 'resume' },
    ],
    lane: WINDOW_LANE,
    timeoutMs: pastMs + 60_000,
    run: async (s, e) => {
      const openedAfter = async (ms: number) => {
        const a = await matrixSignIn(() => approvedUnresumed(s));
        const approvedAt = Date.now();
        await sleepUntil(approvedAt + ms);
        const res = await a.user.browser.http.get(a.resumeUri, { headers: { accept: 'text/html' } });
        return { res, took: Date.now() - approvedAt, continued: continued(s, res, a.redirectUri) };
      };
      const [inside, past] = await Promise.all([openedAfter(insideMs), openedAfter(pastMs)]);
      e.that(inside.continued, `${(inside.took / 1000).toFixed(1)} s after the approval (life ${lifeS} s) the resume link did not continue its browser: ${said(inside.res)}`);
      e.that(!past.continued && past.res.status >= 400, `${(past.took / 1000).toFixed(1)} s after the approval (life ${lifeS} s) the resume link still continued its browser: ${said(past.res)}`);
    },
  });
}

/** Whether another browser's request moved or showed the transaction: anything but a refusal. */
const refused = (status: number) => status >= 400 && status < 500;

function transactionBrowserCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/transaction-browser',
    title:
      "a transaction answers only the browser that started it: another browser (holding its own transaction's cookie) is refused its page, status poll, ID entry, extension and consent, and the transaction does not move",
    rules: ['ob.transaction.create'],
    context: ['ob.contract.transaction'],
    cells: ['transaction', 'transactionStatus', 'identify', 'creating', 'consent'].map((operation) => ({
      rule: 'ob.transaction.create' as const,
      facet: 'binding',
      value: 'browser-cookie',
      operation,
    })),
    run: async (s, e) => {
      // The stranger holds a valid cookie of its own transaction: the swapped part is another valid one.
      const [owner, stranger] = await Promise.all([matrixSignIn(() => approvedUnresumed(s)), opened(s)]);
      const other = stranger.user.browser;
      const page = await other.http.get(owner.txUrl, { headers: { accept: 'application/json' } });
      e.that(refused(page.status), `another browser read the transaction's page: ${said(page)}`);
      const status = await other.http.get(`${owner.txUrl}/status`, { headers: { accept: 'application/json' } });
      e.that(refused(status.status), `another browser read the transaction's status poll: ${said(status)}`);
      const creating = await other.http.post(`${owner.txUrl}/creating`, '', { headers: { accept: 'application/json' } });
      e.that(refused(creating.status), `another browser extended the transaction: ${said(creating)}`);
      const resumed = await owner.user.browser.http.get(owner.resumeUri, { headers: { accept: 'text/html' } });
      if (resumed.status >= 400) throw new CheckFailure(`the resume link was refused in the browser that started the sign-in: ${said(resumed)}`);
      const { view } = await s.view(owner.user.browser, owner.txUrl);
      if (view.state !== 'consent') throw new CheckFailure(`after the resume the transaction is ${JSON.stringify(view.state)}, not at consent`);
      const identified = await s.post(other, `${owner.txUrl}/identify`, { id: stranger.user.key.identity });
      e.that(refused(identified.res.status), `another browser entered an ID into the transaction: ${said(identified.res)}`);
      const offered = ((view.consent ?? {}) as { claims?: string[] }).claims ?? [];
      const decided = await s.post(other, `${owner.txUrl}/consent`, { decision: 'approve', claims: offered });
      const leaked = s.authorizationResponse(typeof decided.view.redirect === 'string' ? decided.view.redirect : decided.res.location, owner.redirectUri);
      e.that(refused(decided.res.status) && leaked?.code === undefined, `another browser approved the consent: ${said(decided.res)}`);
      const after = (await s.view(owner.user.browser, owner.txUrl)).view;
      e.that(after.state === 'consent', `after another browser's requests the transaction is ${JSON.stringify(after.state)}, not still at consent`);
    },
  });
}

// The states table: "user enters an ID" moves a transaction on from `identify` only. Once the
// proof is in, another ID entered in the same browser changes nothing: not before the resume link
// is opened, not at consent, not once the code is issued.
function identifyStatesCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/transaction/identify-after-proof',
    title:
      'an ID entered after the proof (before the resume link is opened, at consent, after the code) is refused with a 4xx and changes nothing: the resume continues, consent names the first identity, the code stays issued',
    rules: ['ob.transaction.identify'],
    context: ['ob.contract.transaction', 'ob.transaction.resume-binding'],
    cells: [{ rule: 'ob.transaction.identify', facet: 'lifecycle', value: 'id-entry', operation: 'identify' }],
    run: async (s, e) => {
      const a = await matrixSignIn(() => approvedUnresumed(s));
      const other = await s.newUser();
      const enter = async (when: string) => {
        const r = await s.post(a.user.browser, `${a.txUrl}/identify`, { id: other.key.identity });
        e.that(r.res.status >= 400 && r.res.status < 500, `another ID entered ${when} answered ${said(r.res)}, not a refusal`);
      };
      await enter('after the proof, before the resume link is opened');
      const resumed = await a.user.browser.http.get(a.resumeUri, { headers: { accept: 'text/html' } });
      if (!e.that(continued(s, resumed, a.redirectUri), `the resume link no longer continued after another ID was entered: ${said(resumed)}`)) return;
      const { view } = await s.view(a.user.browser, a.txUrl);
      if (view.state !== 'consent') throw new CheckFailure(`after the resume the transaction is ${JSON.stringify(view.state)}, not at consent`);
      await enter('at consent');
      const still = (await s.view(a.user.browser, a.txUrl)).view;
      const named = ((still.consent ?? {}) as { identity?: unknown }).identity;
      e.that(
        still.state === 'consent' && (named === undefined || named === a.user.key.identity),
        `after another ID at consent the transaction is ${JSON.stringify(still.state)}, naming ${JSON.stringify(named)}`,
      );
      const claims = ((still.consent ?? {}) as { claims?: unknown }).claims;
      await s.post(a.user.browser, `${a.txUrl}/consent`, { decision: 'approve', claims: Array.isArray(claims) ? claims : [] });
      await enter('after the code was issued');
      const done = (await s.view(a.user.browser, a.txUrl)).view;
      e.that(done.state === 'code_issued', `after another ID once the code was issued the transaction is ${JSON.stringify(done.state)}`);
    },
  });
}

export function transactionMatrixChecks(t: BridgeTarget): Check[] {
  return [resumeOnceCheck(t), transactionWindowCheck(t), resumeWindowCheck(t), transactionBrowserCheck(t), identifyStatesCheck(t)];
}
