// The `window` facets of the relay's core (spec/facets/relay-core.yaml), each just inside and just
// outside: the signed request's 60-second clock window on both sides of the relay's clock (learned
// from its Date header, as document 3 tells clients to) on every signed operation, a session's life up to its expires_at, a
// challenge's life (document 3's 60 s, or the shorter one the target declares), and the spool's
// SPOOL_TTL when the target declares a short one. The waiting checks take lanes of their own.
import type { Cell, Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { ack, challengeHeaders, sessionRegistration, type RelayIdentity } from '../../../actors/relay/index.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, CheckSkip, isObject, pickupOf, refusedWith, safeJson, said, sleep, type RelayTarget, type Session } from '../driver.ts';
import { mail } from './messaging.ts';
import { by, inboxCall, INBOX_OPS, ok, pooled, randomSeed, refused4xx, signedCall, signedOperations, type InboxOp, type Sess } from './matrix-ops.ts';
import { asSigned, concrete, inOrder, type Concrete } from './matrix-binding.ts';
import { formatRfc3339 } from '../../../../protocol/common/time.ts';
import { EnvironmentError } from '../../../run/verdict.ts';
import { reportOwnFault } from '../../../run/environment.ts';

const inboxCells = (rule: RuleId, facet: string, values: readonly string[]): Array<Cell & { rule: RuleId }> =>
  values.flatMap((value) => INBOX_OPS.map((operation) => ({ rule, facet, value, operation })));

/** The relay's clock minus ours, in ms, from its Date header (document 3: clients learn its clock there). */
async function clockOffset(s: Session): Promise<number> {
  const r = await s.relay.get('/health');
  const at = Date.parse(r.headers.date ?? '');
  return Number.isFinite(at) ? at + 500 - Date.now() : 0;
}

function signedRequestWindowCheck(t: RelayTarget): Check {
  const w = limits.signed_request_window_seconds;
  const inside = [-(w - 5), w - 5];
  const outside = [-(w + 5), w + 5];
  return relayCheck(t, {
    id: 'relay/matrix/window-signed-request',
    title: `every operation the relay OpenAPI opens with a signed request, signed ${w - 5} s behind or ahead of the relay's clock, succeeds; ${w + 5} s behind or ahead it is refused`,
    rules: ['ra.auth.signed-request-window'],
    cells: ['inside', 'outside'].flatMap((value) => signedOperations().map((o) => ({ rule: 'ra.auth.signed-request-window' as const, facet: 'window', value, operation: o.id }))),
    run: async (s, e) => {
      const a = await s.identity();
      const [offset, { ops }] = await Promise.all([clockOffset(s), concrete(s, a)]);
      const at = (skew: number) => Math.floor((Date.now() + offset) / 1000) + skew;
      const ordered = inOrder(ops);
      const call = (c: Concrete, skew: number) => {
        const p = asSigned(a, c, { timestamp: at(skew) });
        return signedCall(s, p, p);
      };
      const skewed = (skew: number) => `${skew > 0 ? '+' : ''}${skew} s`;
      // Outside first, while the system document exists: a late read, write or delete let through shows.
      const first = ordered.find((c) => c.op.id === 'systemPut');
      if (first) await call(first, 0);
      const late = ordered.flatMap((c) => outside.map((skew) => ({ c, skew })));
      const answers = await pooled(late.map((x) => () => call(x.c, x.skew)));
      late.forEach((x, i) => {
        const r = answers[i]!;
        const inbox = (INBOX_OPS as readonly string[]).includes(x.c.op.id);
        e.that(inbox ? r.status === 401 : refused4xx(r), `${x.c.op.id} signed ${skewed(x.skew)} from the relay's clock (outside its ${w} s): ${r.text}, not ${inbox ? '401' : 'refused'}`);
      });
      // Inside, one operation after another in an order where each finds what it needs.
      for (const skew of inside)
        for (const c of ordered) {
          const r = await call(c, skew);
          e.that(ok(r), `${c.op.id} signed ${skewed(skew)} from the relay's clock (inside its ${w} s): ${r.text}, not a success`);
        }
    },
  });
}

/** A session of `id` registered at the relay's clock, living `ttlS` seconds. */
async function shortSession(s: Session, id: RelayIdentity, ttlS: number, offset: number): Promise<Sess & { expiresAt: number }> {
  const seed = randomSeed();
  const issued = formatRfc3339(Date.now() + offset);
  const body = sessionRegistration(s.profile, id, seed, ttlS, issued);
  const r = await s.relay.post('/sessions', body);
  const b = safeJson(r);
  if (r.status !== 201 || !isObject(b) || typeof b.session_id !== 'string') throw new CheckFailure(`POST /sessions of ${ttlS} s answered ${said(r)}, not 201 with a session_id`);
  return { seed, sessionId: b.session_id, expiresAt: Date.parse(body.expires_at!) - offset };
}

const SESSION_TTL_S = 8;

function sessionWindowCheck(t: RelayTarget): Check {
  const envelopeOps = ['postMessage', 'postAck'];
  return relayCheck(t, {
    id: 'relay/matrix/window-session',
    title: `a ${SESSION_TTL_S}-second session opens pickup, consume and events and signs messages and acks until its expires_at; after it, each is refused 401 (session_expired for pickups and messages)`,
    rules: ['ra.auth.session-key', 'ra.messages.session-expired', 'ra.pickup.auth', 'ra.messages.signature', 'ra.acks.signature'],
    lane: 'relay/matrix/window-session',
    timeoutMs: 40_000,
    cells: [
      ...inboxCells('ra.auth.session-key', 'window', ['inside', 'outside']),
      ...['inside', 'outside'].flatMap((value) => envelopeOps.map((operation) => ({ rule: 'ra.messages.session-expired' as const, facet: 'window', value, operation }))),
      ...inboxCells('ra.pickup.auth', 'who', ['expired-session']),
      { rule: 'ra.messages.signature', facet: 'who', value: 'expired-session', operation: 'postMessage' },
      { rule: 'ra.acks.signature', facet: 'who', value: 'expired-session', operation: 'postAck' },
    ],
    run: async (s, e, ctx) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const asked = Date.now();
      const offset = await clockOffset(s);
      const sess = await shortSession(s, a, SESSION_TTL_S, offset);
      // The inside calls leave early enough to come back inside on this machine: three round trips of
      // the set-up (two requests) ahead, at least 2 s, at most 5 s before the end.
      const lead = Math.min(5000, Math.max(2000, 1000 + 1.5 * (Date.now() - asked)));
      const sent: Record<string, string> = {};
      // Every use at once, each judged only when it left on its side of expires_at (a loaded machine is slow).
      const uses = async (phase: 'inside' | 'outside', expect: (what: string, status: number, code: boolean, text: string, back: number) => void) => {
        const when = phase === 'inside' ? 'just before the session expires' : 'just after the session expired';
        const env = mail(s, a, b, when, { session: sess });
        sent[phase] = String(env.id);
        const calls: Array<[string, () => Promise<{ status: number; text: string; code: boolean }>]> = [
          ...INBOX_OPS.flatMap((op: InboxOp) =>
            (['challenge', 'signed-request'] as const).map((mode): [string, () => Promise<{ status: number; text: string; code: boolean }>] => [
              `${op} by ${mode}`,
              async () => {
                const r = await inboxCall(s, op, a, by(mode, sess));
                return { ...r, code: r.text.includes('session_expired') || op !== 'pickup' };
              },
            ]),
          ),
          [
            'a message',
            async () => {
              const m = await s.relay.send(env);
              return { status: m.status, text: said(m), code: refusedWith(m, 401, 'session_expired') };
            },
          ],
          [
            'an ack',
            async () => {
              const k = await s.relay.ack(ack(s.profile, a, b.identity, `m_${phase}`, { session: sess }));
              return { status: k.status, text: said(k), code: true };
            },
          ],
        ];
        const answers = await Promise.all(calls.map(([, call]) => call().then((a) => ({ ...a, back: Date.now() }))));
        calls.forEach(([what], i) => expect(`${what} ${when}`, answers[i]!.status, answers[i]!.code, answers[i]!.text, answers[i]!.back));
      };
      // An inside call answered after expires_at (less the Date header's second) may have reached the
      // relay after it: a refusal then is the machine's slowness, not the target's (the runner runs it again).
      const inTime = (what: string, back: number) => {
        if (back >= sess.expiresAt - 1000)
          reportOwnFault('outlived-window', `${what} came back ${((back - sess.expiresAt) / 1000).toFixed(1)} s from the session's expires_at: too late to tell a refusal from its expiry`);
      };
      const wait = async (until: number) => sleep(Math.max(0, until - Date.now()), ctx.signal);
      await wait(sess.expiresAt - lead);
      if (Date.now() >= sess.expiresAt - 1000)
        throw new EnvironmentError(
          'outlived-window',
          `the set-up took ${((Date.now() - sess.expiresAt) / 1000 + SESSION_TTL_S).toFixed(1)} s of the session's ${SESSION_TTL_S} s life: its inside cannot be judged`,
        );
      await uses('inside', (what, status, _code, text, back) => e.that(status >= 200 && status < 300, `${what}: ${text}, not a success`) || inTime(what, back));
      await wait(sess.expiresAt + 1500);
      await uses('outside', (what, status, code, text) => e.that(status === 401 && code, `${what}: ${text}, not 401${code ? '' : ' session_expired'}`));
      const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
      if (typeof p === 'string') return e.fail(p);
      e.that(!p.messages.some((x) => x.id === sent.outside), `the message signed by the expired session was delivered (${sent.outside ?? '?'})`);
    },
  });
}

function challengeWindowCheck(t: RelayTarget): Check {
  const ttl = t.declared.challengeTtlS ?? limits.challenge_ttl_seconds;
  const margin = Math.round(Math.min(2, ttl / 3) * 10) / 10;
  return relayCheck(t, {
    id: 'relay/matrix/window-challenge',
    title: `a challenge answered ${margin} s before its ${ttl} s end opens pickup, consume and events; ${margin} s after it, each is refused 401`,
    rules: ['ra.auth.challenge-single-use'],
    lane: 'relay/matrix/window-challenge',
    timeoutMs: (ttl + 40) * 1000,
    cells: inboxCells('ra.auth.challenge-single-use', 'window', ['inside', 'outside']),
    run: async (s, e, ctx) => {
      const a = await s.identity();
      const t0 = Date.now();
      const issue = async () => {
        const r = await s.relay.challenge(a.identity);
        const b = safeJson(r);
        if (r.status !== 200 || !isObject(b) || typeof b.challenge !== 'string') throw new CheckFailure(`GET /auth/challenge answered ${said(r)}`);
        return b.challenge;
      };
      const inside = await Promise.all(INBOX_OPS.map(issue));
      const outside = await Promise.all(INBOX_OPS.map(issue));
      // The relay made the outside challenges before they came back: they end by then plus their life.
      const outsideBack = Date.now();
      const answer = (challenges: string[]) =>
        Promise.all(INBOX_OPS.map((op, i) => inboxCall(s, op, a, { mode: 'headers', headers: challengeHeaders(s.profile, a.identity, challenges[i]!, a.seed) })));
      await sleep(t0 + (ttl - margin) * 1000 - Date.now(), ctx.signal);
      const early = await answer(inside);
      // Answers back after the challenges' earliest end may have reached the relay after it (a slow machine).
      if (Date.now() >= t0 + ttl * 1000 && !early.every(ok))
        reportOwnFault(
          'outlived-window',
          `the answers to challenges ${margin} s before their end came back ${((Date.now() - t0) / 1000).toFixed(1)} s after they were asked for, past their ${ttl} s life`,
        );
      await sleep(outsideBack + (ttl + margin) * 1000 - Date.now(), ctx.signal);
      const late = await answer(outside);
      INBOX_OPS.forEach((op, i) => {
        e.that(ok(early[i]!), `${op} answering a challenge ${margin} s before its end: ${early[i]!.text}, not a success`);
        e.that(late[i]!.status === 401, `${op} answering a challenge ${margin} s after its end: ${late[i]!.text}, not 401`);
      });
    },
  });
}

/** The spool just inside SPOOL_TTL: mail picked up shortly before it is delivered (outside: relay/spool/expiry). */
function spoolWindowCheck(t: RelayTarget): Check {
  const ttl = t.declared.spoolTtlS;
  return relayCheck(t, {
    id: 'relay/matrix/window-spool',
    title: 'mail picked up shortly before SPOOL_TTL ends is delivered, and no sys.delivery.failed ack reaches its sender',
    rules: ['ra.spool.expiry'],
    lane: 'relay/matrix/window-spool',
    timeoutMs: ((ttl ?? 0) + 30) * 1000,
    cells: [{ rule: 'ra.spool.expiry', facet: 'window', value: 'inside', operation: 'pickup' }],
    run: async (s, e, ctx) => {
      if (ttl === undefined || ttl > 30)
        throw new CheckSkip(`the target declares ${ttl === undefined ? 'no' : `a ${ttl}-second`} SPOOL_TTL (--relay-spool-ttl; the check waits for one of at most 30 s)`);
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const m = mail(s, a, b, 'picked up in time');
      const t0 = Date.now();
      e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
      await sleep(t0 + Math.max(ttl - 2, ttl * 0.6) * 1000 - Date.now(), ctx.signal);
      const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
      const delivered = typeof p !== 'string' && p.messages.some((x) => x.id === m.id);
      if (!delivered && Date.now() >= t0 + ttl * 1000)
        reportOwnFault('outlived-window', `the pickup came back ${((Date.now() - t0) / 1000).toFixed(1)} s after the message was sent, past its ${ttl} s SPOOL_TTL`);
      e.that(
        delivered,
        `${Math.round((Date.now() - t0) / 1000)} s into a ${ttl}-second spool the message is not delivered: ${typeof p === 'string' ? p : JSON.stringify(p.messages.map((x) => x.id))}`,
      );
      const back = pickupOf(await s.relay.pickup(a, { mode: 'signed-request' }));
      e.that(
        typeof back !== 'string' && !back.acks.some((k) => k.message_id === m.id),
        `the sender received an ack for mail delivered in time: ${typeof back === 'string' ? back : JSON.stringify(back.acks)}`,
      );
    },
  });
}

export function matrixWindowChecks(t: RelayTarget): Check[] {
  return [signedRequestWindowCheck(t), sessionWindowCheck(t), challengeWindowCheck(t), spoolWindowCheck(t)];
}
