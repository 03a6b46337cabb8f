// The spool: mail survives a restart of the relay (with a restart hook), sessions do not; and
// mail never picked up expires after SPOOL_TTL into an unsigned sys.delivery.failed ack.
import type { Check } from '../../../run/model.ts';
import { relayCheck } from '../check.ts';
import { CheckSkip, isObject, pickupOf, restartTarget, safeJson, said, sleep, type RelayTarget, refusedWith } from '../driver.ts';
import { failedAckWithin, judgePickup, mail } from './messaging.ts';
import { ack } from '../../../actors/relay/index.ts';
import { by, inboxCall, INBOX_OPS, MODES } from './matrix-ops.ts';

/** The longest SPOOL_TTL the expiry check waits for. */
const MAX_WAIT_TTL_S = 30;

export function spoolChecks(t: RelayTarget): Check[] {
  const ttl = t.declared.spoolTtlS;
  const rt = restartTarget(t);
  return [
    relayCheck(rt?.target ?? t, {
      id: 'relay/spool/durable',
      ...(rt?.placement ?? {}),
      title: 'mail accepted before a restart is delivered after it; sessions registered before it are gone: none opens a pickup, consume or events, or signs a message (session_expired) or an ack',
      rules: ['ra.spool.durable', 'ra.sessions.memory'],
      cells: ['pickup', 'consume', 'events', 'postMessage', 'postAck'].map((operation) => ({ rule: 'ra.sessions.memory' as const, facet: 'lifecycle', value: 'session-key', operation })),
      timeoutMs: 60_000,
      run: async (s, e) => {
        if (!rt) throw new CheckSkip('the target declares no way to restart the relay: durability is checked with --reference');
        const [a, b] = [await s.identity(), await s.identity()];
        const seed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
        const reg = safeJson(await s.relay.registerSession(a, seed));
        const sessionId = isObject(reg) && typeof reg.session_id === 'string' ? reg.session_id : undefined;
        const m = mail(s, a, b, 'before the restart');
        const sent = Date.now();
        e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
        await rt.target.restart();
        const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
        if (typeof p === 'string') return e.fail(`after the restart, ${p}`);
        // A restart slower than SPOOL_TTL (a starved machine) lets the message expire, as the
        // document allows: then what was accepted must still not be lost, but end in its sender's
        // sys.delivery.failed ack. Only a pickup answered within SPOOL_TTL of the send must hold it.
        const late = ttl !== undefined && Date.now() - sent >= ttl * 1000;
        if (late && !p.messages.some((x) => x.id === m.id)) {
          s.note(`the restart outlasted SPOOL_TTL (${ttl} s): durability judged by the expired message's sys.delivery.failed ack`);
          e.that(
            await failedAckWithin(s, a, String(m.id), Math.max(10, ttl)),
            `message ${String(m.id)}, accepted before a restart that outlasted SPOOL_TTL, was lost: not delivered, and no sys.delivery.failed ack reached its sender`,
          );
        } else judgePickup(e, b, p.messages, [m]);
        if (!sessionId) return e.fail(`POST /sessions before the restart gave no session_id: ${JSON.stringify(reg)}`);
        const r = await s.relay.send(mail(s, a, b, 'old session', { session: { seed, sessionId } }));
        e.that(refusedWith(r, 401, 'session_expired'), `a message by a session from before the restart: ${said(r)}, not 401 session_expired`);
        const k = await s.relay.ack(ack(s.profile, a, b.identity, String(m.id), { session: { seed, sessionId } }));
        e.that(k.status === 401, `an ack by a session from before the restart: ${said(k)}, not 401`);
        for (const op of INBOX_OPS)
          for (const mode of MODES) {
            const x = await inboxCall(s, op, a, by(mode, { seed, sessionId }));
            e.that(x.status === 401, `${op} by ${mode} with a session from before the restart: ${x.text}, not 401`);
          }
      },
    }),
    relayCheck(t, {
      id: 'relay/spool/expiry',
      lane: 'relay/spool/expiry',
      title: 'mail still undelivered after SPOOL_TTL is dropped, and the sender receives an unsigned sys.delivery.failed ack for it',
      rules: ['ra.spool.expiry'],
      cells: [{ rule: 'ra.spool.expiry', facet: 'window', value: 'outside', operation: 'pickup' }],
      timeoutMs: ((ttl ?? 0) + 60) * 1000,
      run: async (s, e, ctx) => {
        if (ttl === undefined || ttl > MAX_WAIT_TTL_S)
          throw new CheckSkip(`the target declares ${ttl === undefined ? 'no' : `a ${ttl}-second`} SPOOL_TTL (--relay-spool-ttl; the check waits for one of at most ${MAX_WAIT_TTL_S} s)`);
        const [a, b] = [await s.identity(), await s.identity()];
        const m = mail(s, a, b, 'never picked up');
        e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
        const deadline = Date.now() + (ttl + 45) * 1000;
        let failed: Record<string, unknown> | undefined;
        while (!failed && Date.now() < deadline && !ctx.signal.aborted) {
          await sleep(1000, ctx.signal);
          const p = pickupOf(await s.relay.pickup(a, { mode: 'signed-request' }));
          if (typeof p === 'string') return e.fail(p);
          failed = p.acks.find((k) => k.message_id === m.id);
        }
        if (!failed) return e.fail(`no ack for ${String(m.id)} reached the sender within SPOOL_TTL + 45 s`);
        e.that(failed.state === 'sys.delivery.failed', `the ack's state is ${String(failed.state)}`);
        e.that(!('signature' in failed) || failed.signature === '' || failed.signature === null, 'the relay-generated ack carries a signature');
        const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
        e.that(typeof p !== 'string' && !p.messages.some((x) => x.id === m.id), 'the expired message is still delivered to the recipient');
        s.note(`the ack: ${JSON.stringify(failed)}`);
      },
    }),
  ];
}
