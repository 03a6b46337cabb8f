// The `lifecycle` facets of the relay's core (spec/facets/relay-core.yaml): after an event, every
// use of what it ended. A session revoked by DELETE /sessions/:id no longer opens the pickup, its
// cursor read, consume or events (by challenge or signed request), nor signs a message or an ack;
// another session of the same identity, which the revocation did not end, still does all of them.
import type { Check } from '../../../run/model.ts';
import { ack } from '../../../actors/relay/index.ts';
import { relayCheck } from '../check.ts';
import { pickupOf, refusedWith, said, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';
import { by, inboxCall, INBOX_OPS, MODES, ok, pooled, session, type InboxOp } from './matrix-ops.ts';

const ENDS = ['pickup', 'consume', 'events', 'postMessage', 'postAck'] as const;

function revocationCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/lifecycle-revocation',
    title: 'after DELETE /sessions/:id the revoked session opens no pickup, consume or events and signs no message or ack (401); a session of the same identity not revoked still does',
    rules: ['ra.sessions.revoke'],
    cells: ENDS.map((operation) => ({
      rule: 'ra.sessions.revoke' as const,
      facet: 'lifecycle',
      value: 'session-key',
      operation,
    })),
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const [ended, kept] = await Promise.all([session(s, a), session(s, a)]);
      const m = mail(s, b, a, 'waiting for the owner');
      e.that((await s.relay.send(m)).status === 202, 'the message waiting for the owner was not accepted');
      const revoked = await s.relay.revokeSession(a, ended.sessionId);
      e.that(revoked.status === 204, `DELETE /sessions/:id: ${said(revoked)}, not 204`);
      const uses = (sess: typeof ended) => [
        ...INBOX_OPS.flatMap((op: InboxOp) => MODES.map((mode) => ({ what: `${op} by ${mode}`, call: () => inboxCall(s, op, a, by(mode, sess)) }))),
        {
          what: 'a message',
          call: async () => {
            const r = await s.relay.send(mail(s, a, b, 'by session', { session: sess }));
            return { status: r.status, text: said(r), expired: refusedWith(r, 401, 'session_expired') };
          },
        },
        {
          what: 'an ack',
          call: async () => {
            const r = await s.relay.ack(ack(s.profile, a, b.identity, String(m.id), { session: sess }));
            return { status: r.status, text: said(r) };
          },
        },
      ];
      const after = await pooled(uses(ended).map((u) => u.call));
      uses(ended).forEach((u, i) => e.that(after[i]!.status === 401, `${u.what} by the revoked session: ${after[i]!.text}, not 401`));
      const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
      e.that(
        typeof p !== 'string' && p.messages.length === 0 && p.acks.length === 0,
        `the revoked session's envelopes reached ${b.identity}: ${typeof p === 'string' ? p : JSON.stringify([...p.messages, ...p.acks].map((x) => x.id))}`,
      );
      const still = await pooled(uses(kept).map((u) => u.call));
      uses(kept).forEach((u, i) => e.that(ok(still[i]!), `${u.what} by a session the revocation did not end: ${still[i]!.text}, not a success`));
    },
  });
}

export function matrixLifecycleChecks(t: RelayTarget): Check[] {
  return [revocationCheck(t)];
}
