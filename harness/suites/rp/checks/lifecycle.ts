// What ends a transaction's links (the lifecycle facets of ns.reference.gone and
// ns.transport.context): a wrong match code ends its context record; its window's end ends its
// reference link, its context record and its poll. Expiry is waited out on the short-window
// instance the target names (the reference starts one), or on the RP itself when its window is at
// most a minute.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Check } from '../../../run/model.ts';
import { parseRfc3339 } from '../../../../protocol/common/time.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { rpCheck } from '../check.ts';
import { CheckFailure, CheckSkip, accepted, onProcess, otherMatchCode, refused, safeJson, said, sign, type RpTarget, type Session, type Started } from '../driver.ts';
import { contextOf } from './surface.ts';

function contextEndedCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/context/ended',
    title: 'context_uri refuses a request a wrong match code ended (it can no longer be approved)',
    rules: ['ns.transport.context'],
    context: ['ns.start.contract', 'ns.metadata.context-uri', 'ns.transaction.match-wrong'],
    cells: [{ rule: 'ns.transport.context', facet: 'ended', value: 'context-record', operation: 'getContext' }],
    run: async (s, e) => {
      const { t, url, res } = await contextOf(s);
      if (!e.that(accepted(res), `context answered ${said(res)} before the wrong code`)) return;
      const code = otherMatchCode(t.matchCode);
      const wrong = await s.deliver(t.request, sign(s.profile, t.request, await s.identity()), { match: code });
      e.that(refused(wrong), `a wrong match code answered ${said(wrong)}`);
      const after = await s.signer.get(url, { headers: { accept: 'application/json' } });
      e.that(refused(after), `context after a wrong match code answered ${said(after)}, expected a refusal`);
    },
  });
}

/**
 * A transaction whose window a check waits out: started on the short-window instance when the
 * target names one (the reference's lives REFERENCE_SHORT_WINDOW_S), else on the RP itself when
 * its window ends within a minute (a longer one skips, naming the option).
 */
async function windowed(s: Session): Promise<{ t: Started; base: string; expires: number }> {
  const instance = s.target.shortWindow;
  const t = await s.start(undefined, instance?.startUrl ?? s.target.startUrl);
  const expires = parseRfc3339(String(t.request.expires_at));
  if (expires === undefined) throw new CheckFailure(`the request's expires_at ${JSON.stringify(t.request.expires_at)} is not RFC 3339`);
  if (instance === undefined && expires - Date.now() > EXPIRY_WAIT_MAX_MS) {
    throw new CheckSkip(
      `the RP's requests live ${Math.round((expires - Date.now()) / 1000)} s; name an instance of it whose requests live seconds (--rp-short-window ORIGIN) to reach the end of a window`,
    );
  }
  return { t, base: instance?.origin ?? s.target.origin, expires };
}

/** Waits out a transaction's window (windowed); the margin covers two machines' clocks and the RP's reading of "past". */
async function expiredTransaction(s: Session, meanwhile?: (t: Started, base: string) => Promise<void>): Promise<{ t: Started; base: string }> {
  const { t, base, expires } = await windowed(s);
  await meanwhile?.(t, base);
  await sleep(Math.max(0, expires + EXPIRY_MARGIN_MS - Date.now()), undefined, { signal: s.signal });
  return { t, base };
}
const EXPIRY_MARGIN_MS = 2000;
const EXPIRY_WAIT_MAX_MS = 60_000;
/** How long before expires_at the inside delivery arrives: room for one verification on a loaded machine. */
const INSIDE_MS = 1000;
const expiryTimeoutMs = limits.window_max_seconds * 1000 + EXPIRY_MARGIN_MS + 30_000;

function transactionExpiredCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/expired',
    // Mostly a wait on a transaction of its own: its own lane, beside the suite's other checks.
    lane: 'rp/transaction/expired',
    title: "once a transaction is past its request's expires_at, its reference link answers 404 or 410 and context_uri refuses it",
    rules: ['ns.reference.gone', 'ns.transport.context'],
    context: ['ns.start.contract', 'ns.transaction.expiry', 'ns.metadata.context-uri'],
    cells: [
      { rule: 'ns.reference.gone', facet: 'expired', value: 'reference', operation: 'getRequestByReference' },
      { rule: 'ns.transport.context', facet: 'expired', value: 'context-record', operation: 'getContext' },
    ],
    timeoutMs: expiryTimeoutMs,
    run: async (s, e) => {
      const { t, base } = await expiredTransaction(s);
      if (!t.requestUri) return e.fail('the start result has no request_uri');
      const link = await s.signer.get(t.requestUri, { headers: { accept: 'application/json' } });
      e.that(link.status === 404 || link.status === 410, `the expired transaction's reference link answered ${said(link)}, expected 404 or 410`);
      const ctxUri = (await s.published()).contextUri;
      if (ctxUri === undefined) return s.note('the metadata publishes no context_uri (optional in document 1): the context record is not asked');
      const url = `${onProcess(ctxUri, base)}${ctxUri.includes('?') ? '&' : '?'}request_id=${encodeURIComponent(String(t.request.request_id))}`;
      const ctx = await s.signer.get(url, { headers: { accept: 'application/json' } });
      e.that(refused(ctx), `context for the expired transaction answered ${said(ctx)}, expected a refusal`);
    },
  });
}

function transactionWindowInsideCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/window-inside',
    lane: 'rp/transaction/window-inside',
    title: `an approval delivered ${INSIDE_MS / 1000} s before its request's expires_at completes the login`,
    rules: ['ns.transaction.expiry'],
    context: ['ns.start.contract', 'ns.verify.4', 'ns.transaction.cross-device'],
    cells: [{ rule: 'ns.transaction.expiry', facet: 'window', value: 'inside', operation: 'postDelivery' }],
    timeoutMs: expiryTimeoutMs,
    run: async (s, e) => {
      const { t, base, expires } = await windowed(s);
      const wait = expires - INSIDE_MS - Date.now();
      const approval = sign(s.profile, t.request, await s.identity());
      await sleep(Math.max(0, wait), undefined, { signal: s.signal });
      const d = await s.deliver(t.request, approval, { url: onProcess(await s.responseUri(t.request), base), match: t.matchCode });
      e.that(accepted(d), `delivered ${Math.round((expires - Date.now()) / 100) / 10} s before expires_at, the approval answered ${said(d)}`);
    },
  });
}

function profilePollExpiredCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/profile/poll-expired',
    lane: 'rp/profile/poll-expired',
    title: 'past its request\'s expires_at, the poll of a pending transaction answers 200 {"status": "expired"}, and of one completed before, still completed',
    rules: ['ns.transport.poll-shape'],
    context: ['ns.start.contract', 'ns.transaction.expiry', 'ns.transaction.states'],
    timeoutMs: expiryTimeoutMs,
    run: async (s, e) => {
      let done: { t: Started; identity: string } | undefined;
      const { t, base } = await expiredTransaction(s, async (_, at) => {
        const c = await s.start(undefined, s.target.shortWindow?.startUrl ?? s.target.startUrl);
        const who = await s.identity();
        const d = await s.deliver(c.request, sign(s.profile, c.request, who), { url: onProcess(await s.responseUri(c.request), at), match: c.matchCode });
        const p = await s.poll(c.pollSecret, s.client(false), onProcess(await s.pollUrl(), at));
        if (e.that(accepted(d) && (safeJson(p) as { status?: unknown } | undefined)?.status === 'completed', `a cross-device login within the window answered ${said(d)}, then the poll ${said(p)}`))
          done = { t: c, identity: who.identity };
      });
      const poll = async (u: Started) => s.poll(u.pollSecret, s.client(false), onProcess(await s.pollUrl(), base));
      const r = await poll(t);
      e.that(r.status === 200 && JSON.stringify(safeJson(r)) === '{"status":"expired"}', `the poll of the pending transaction answered ${said(r)}, expected 200 {"status":"expired"}`);
      if (!done) return;
      // Started a moment after the other: its window may end a second later.
      await sleep(Math.max(0, (parseRfc3339(String(done.t.request.expires_at)) ?? 0) + EXPIRY_MARGIN_MS - Date.now()), undefined, { signal: s.signal });
      const kept = JSON.stringify({ status: 'completed', identity: done.identity });
      const c = await poll(done.t);
      e.that(c.status === 200 && JSON.stringify(safeJson(c)) === kept, `the poll of the transaction completed within its window answered ${said(c)}, expected 200 ${kept}`);
    },
  });
}

export function lifecycleChecks(target: RpTarget): Check[] {
  return [contextEndedCheck(target), transactionExpiredCheck(target), transactionWindowInsideCheck(target), profilePollExpiredCheck(target)];
}
