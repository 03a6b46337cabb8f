// Messages and acks: acceptance and delivery, every refusal of the POST /messages and /acks
// tables, the order of the checks (observable through the status an envelope that fails several
// gets), the at-least-one-local rule and forwarding between two relays.
import type { Check } from '../../../run/model.ts';
import { ack, message, now, sessionProof, signEnvelope, type Envelope, type RelayIdentity } from '../../../actors/relay/index.ts';
import { relayCheck, type Expect } from '../check.ts';
import { accepted, pickupOf, refused, said, safeJson, isObject, sleep, type RelayTarget, type Session, refusedWith } from '../driver.ts';
import { limits } from '../../../../schemas/ts/limits.ts';

/** A message from `from` to `to`, sealed for `to`'s key. */
export const mail = (s: Session, from: RelayIdentity, to: RelayIdentity, text = 'hello', options: Parameters<typeof message>[5] = {}): Envelope =>
  message(s.profile, from, to.identity, to.encryption.publicKey, text, options);

/** The same envelope with its signature replaced by a valid-looking one over other bytes. */
export const badlySigned = (s: Session, e: Envelope, by: RelayIdentity): Envelope => ({
  ...signEnvelope(s.profile, 'message', { ...e, payload: `${String(e.payload)}AA` }, by.seed),
  payload: e.payload,
});

/** Drains `id`'s inbox and expects exactly the ids listed (in any order), each as signed. */
export async function expectInbox(s: Session, e: Expect, id: RelayIdentity, expected: Envelope[], where = s.relay): Promise<void> {
  const p = pickupOf(await where.pickup(id));
  if (typeof p === 'string') return e.fail(p);
  judgePickup(e, id, p.messages, expected);
}

/** Expects the pickup's messages to be exactly the ids listed (in any order), each as signed. */
export function judgePickup(e: Expect, id: RelayIdentity, messages: Record<string, unknown>[], expected: Envelope[]): void {
  const got = messages.map((m) => String(m.id));
  for (const m of expected) {
    const found = messages.find((x) => x.id === m.id);
    if (!found) e.fail(`message ${String(m.id)} is not in ${id.identity}'s pickup (got ${got.join(', ') || 'nothing'})`);
    else if (JSON.stringify(sorted(found)) !== JSON.stringify(sorted(m))) e.fail(`message ${String(m.id)} is not delivered as signed: ${JSON.stringify(found).slice(0, 300)}`);
  }
  const extra = got.filter((g) => !expected.some((m) => m.id === g));
  e.that(extra.length === 0, `the pickup holds messages never accepted: ${extra.join(', ')}`);
}

/**
 * Whether the relay ends undelivered message `messageId` in a sys.delivery.failed ack that reaches
 * its sender within `seconds` (the relay gives up on expired mail in a sweep that may come a while
 * after SPOOL_TTL).
 */
export async function failedAckWithin(s: Session, sender: RelayIdentity, messageId: string, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const back = pickupOf(await s.relay.pickup(sender, { mode: 'signed-request' }));
    if (typeof back !== 'string' && back.acks.some((k) => k.message_id === messageId && k.state === 'sys.delivery.failed')) return true;
    if (Date.now() >= deadline) return false;
    await sleep(500);
  }
}

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (isObject(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted(v[k])]),
    );
  return v;
}

function messagesAcceptedIsDeliveredCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/accepted-is-delivered',
    title: 'two senders use one message id: each envelope answered 202 is picked up as sent (a 202 is never dropped)',
    rules: ['ra.messages.accepted'],
    run: async (s, e) => {
      const [a, b, c] = [await s.identity(), await s.identity(), await s.identity()];
      const id = `m_twice_${Date.now().toString(36)}`;
      const sent = [mail(s, a, b, 'from a', { id }), mail(s, c, b, 'from c', { id })];
      const answers = [await s.relay.send(sent[0]!), await s.relay.send(sent[1]!)];
      const p = pickupOf(await s.relay.pickup(b));
      if (typeof p === 'string') return e.fail(p);
      sent.forEach((m, i) => {
        if (answers[i]!.status !== 202) return;
        e.that(
          p.messages.some((x) => x.sender === m.sender && x.payload === m.payload),
          `the envelope from ${String(m.sender)} was answered 202 but never delivered (the inbox: ${JSON.stringify(p.messages.map((x) => x.sender))})`,
        );
      });
    },
  });
}

function messagesLocalDeliveryCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/local-delivery',
    title: 'a message between two local identities is accepted with 202 and its id, and picked up once, as signed',
    rules: ['ra.messages.accepted', 'ra.relay.local-delivery', 'ra.pickup.drain'],
    cells: [{ rule: 'ra.pickup.drain', facet: 'once', value: 'replay', operation: 'pickup' }],
    context: ['ra.pickup.auth', 'ra.auth.challenge'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const m = mail(s, a, b);
      const r = await s.relay.send(m);
      e.that(r.status === 202, `POST /messages answered ${said(r)}, not 202`);
      const body = safeJson(r);
      e.that(isObject(body) && body.id === m.id, `the 202 body does not carry the message id ${String(m.id)}: ${said(r)}`);
      await expectInbox(s, e, b, [m]);
      await expectInbox(s, e, b, []);
    },
  });
}

function messagesFieldsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/fields',
    title: 'a message missing a required field, with invalid JSON or an invalid timestamp is refused with 400 and never delivered',
    rules: ['ra.messages.fields'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      for (const field of ['id', 'sender', 'recipient', 'timestamp', 'payload', 'signature']) {
        const { [field]: _drop, ...rest } = mail(s, a, b);
        void _drop;
        // Without a required field the lines cannot be signed: the envelope keeps its old signature.
        const r = await s.relay.send(rest);
        e.that(r.status === 400, `without ${field}: ${said(r)}, not 400`);
      }
      const r1 = await s.relay.send('{"id": "x", "sender":');
      e.that(r1.status === 400, `invalid JSON: ${said(r1)}, not 400`);
      const r2 = await s.relay.send(mail(s, a, b, 'hi', { timestamp: 'yesterday' }));
      e.that(r2.status === 400, `timestamp "yesterday": ${said(r2)}, not 400`);
      await expectInbox(s, e, b, []);
    },
  });
}

function messagesEncryptionRequiredCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/encryption-required',
    title: 'an envelope without encryption.alg, ephemeral_public_key or nonce is refused 400 encryption_required, even when its signature is also bad',
    rules: ['ra.messages.encryption-required'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      for (const part of ['alg', 'ephemeral_public_key', 'nonce', 'all']) {
        const m = mail(s, a, b);
        const encryption = { ...(m.encryption as Record<string, unknown>) };
        if (part === 'all') delete m.encryption;
        else delete encryption[part];
        const unsigned = part === 'all' ? m : { ...m, encryption };
        // With encryption left out whole the lines still sign (no enc line); with a part left out they cannot.
        const variants: Array<readonly [string, Envelope]> = [['with a bad signature', { ...unsigned, signature: 'AAAA' }]];
        if (part === 'all') variants.push(['signed', signEnvelope(s.profile, 'message', unsigned, a.seed)]);
        for (const [how, env] of variants) {
          const r = await s.relay.send(env);
          e.that(refusedWith(r, 400, 'encryption_required'), `without encryption ${part}, ${how}: ${said(r)}, not 400 encryption_required`);
        }
      }
      await expectInbox(s, e, b, []);
    },
  });
}

function messagesBodyCapCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/body-cap',
    title: 'a message body over 512 KB is refused with 413, signed or not',
    rules: ['ra.messages.body-cap'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const big = mail(s, a, b, 'x'.repeat(limits.message_body_max_bytes));
      const r = await s.relay.send(big);
      e.that(r.status === 413, `a signed ${JSON.stringify(big).length}-byte message: ${said(r)}, not 413`);
      const r2 = await s.relay.send({ ...big, signature: 'AAAA' });
      e.that(r2.status === 413, `the same with a bad signature: ${said(r2)}, not 413`);
      const r3 = await s.relay.ack(JSON.stringify({ ...ack(s.profile, b, a.identity, 'm_x'), padding: 'x'.repeat(limits.message_body_max_bytes) }));
      e.that(r3.status === 413, `an ack over 512 KB: ${said(r3)}, not 413`);
    },
  });
}

function errorsEnvelopeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/errors/envelope',
    title: 'every error answers the envelope {error, detail}: a code string and a human-readable detail',
    rules: ['ra.errors.envelope'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const answers: Array<[string, Awaited<ReturnType<typeof s.relay.send>>]> = [
        ['invalid JSON', await s.relay.send('{')],
        ['a bad signature', await s.relay.send({ ...mail(s, a, b), signature: 'AAAA' })],
        ['between strangers', await s.relay.send(mail(s, await s.stranger(), await s.stranger()))],
        ['a pickup without headers', await s.relay.pickup(a, { mode: 'none' })],
        ['a challenge without identity', await s.relay.get('/auth/challenge')],
      ];
      for (const [what, r] of answers) {
        const body = safeJson(r);
        e.that(r.status >= 400 && isObject(body) && typeof body.error === 'string' && body.error !== '' && typeof body.detail === 'string', `${what}: ${said(r)} is not {error, detail}`);
      }
    },
  });
}

function messagesBadSignatureCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/bad-signature',
    title: 'a message whose signature does not verify is refused with 401 and never reaches the inbox',
    rules: ['ra.messages.signature', 'ra.relay.verify-before-store'],
    run: async (s, e) => {
      const [a, b, c] = [await s.identity(), await s.identity(), await s.identity()];
      const wrongKey = signEnvelope(s.profile, 'message', mail(s, a, b), c.seed);
      const r = await s.relay.send(wrongKey);
      e.that(r.status === 401, `signed by another identity's key: ${said(r)}, not 401`);
      const edited = badlySigned(s, mail(s, a, b), a);
      const r2 = await s.relay.send(edited);
      e.that(r2.status === 401, `payload edited after signing: ${said(r2)}, not 401`);
      await expectInbox(s, e, b, []);
    },
  });
}

function messagesNeitherLocalCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/neither-local',
    title: 'an envelope whose sender and recipient are both homed elsewhere is refused 403 not_authorized, before its signature is checked',
    rules: ['ra.relay.locality'],
    run: async (s, e) => {
      const [x, y] = [await s.stranger(), await s.stranger()];
      const m = mail(s, x, y);
      const r = await s.relay.send(m);
      e.that(refusedWith(r, 403, 'not_authorized'), `a well-signed message between two strangers: ${said(r)}, not 403 not_authorized`);
      const r2 = await s.relay.send({ ...m, signature: 'AAAA' });
      e.that(r2.status === 403, `the same with a bad signature: ${said(r2)}, not 403 (locality comes before the signature)`);
      const r3 = await s.relay.ack(ack(s.profile, x, y.identity, String(m.id)));
      e.that(r3.status === 403, `an ack between two strangers: ${said(r3)}, not 403`);
    },
  });
}

function messagesForwardCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/forward',
    title: 'a local sender writing to an identity homed on the peer relay: 202 with the id, forwarded as signed, picked up at the peer',
    rules: ['ra.relay.forward', 'ra.relay.forward-as-signed', 'ra.messages.accepted'],
    context: ['ra.relay.dns-locality'],
    run: async (s, e) => {
      const a = await s.identity('relay');
      const y = await s.identity('peer');
      const m = mail(s, a, y);
      const r = await s.relay.send(m);
      e.that(r.status === 202, `POST /messages at the sender's relay: ${said(r)}, not 202`);
      const body = safeJson(r);
      e.that(r.status !== 202 || (isObject(body) && body.id === m.id), `the forwarded message's 202 body does not carry its id ${String(m.id)}: ${said(r)}`);
      await expectInbox(s, e, y, [m], s.peer);
    },
  });
}

function messagesRemoteSenderCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/remote-sender',
    title: 'a message from a sender homed elsewhere to a local recipient is accepted and delivered (recipient local)',
    rules: ['ra.relay.local-delivery'],
    run: async (s, e) => {
      const x = await s.stranger();
      const b = await s.identity();
      const m = mail(s, x, b);
      const r = await s.relay.send(m);
      e.that(r.status === 202, `${said(r)}, not 202`);
      await expectInbox(s, e, b, [m]);
    },
  });
}

function acksRoundTripCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/acks/round-trip',
    title: "an ack from the recipient is accepted (202) and drained on the original sender's next pickup",
    rules: ['ra.acks.accepted'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const m = mail(s, a, b);
      e.that((await s.relay.send(m)).status === 202, 'the message was not accepted');
      await expectInbox(s, e, b, [m]);
      const k = ack(s.profile, b, a.identity, String(m.id));
      const r = await s.relay.ack(k);
      e.that(r.status === 202, `POST /acks: ${said(r)}, not 202`);
      const p = pickupOf(await s.relay.pickup(a));
      if (typeof p === 'string') return e.fail(p);
      e.that(
        p.acks.some((x) => x.id === k.id && x.message_id === m.id),
        `the sender's pickup has no ack ${String(k.id)}: ${JSON.stringify(p.acks).slice(0, 300)}`,
      );
      const again = pickupOf(await s.relay.pickup(a));
      e.that(typeof again !== 'string' && again.acks.length === 0, 'the ack was not drained by the pickup');
    },
  });
}

function acksRefusalsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/acks/refusals',
    title: 'an ack with another state (read, or a near miss of delivered_client) or malformed is refused 400; one with a bad signature 401; neither is drained to the sender',
    rules: ['ra.acks.state', 'ra.acks.signature'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const r1 = await s.relay.ack(ack(s.profile, b, a.identity, 'm_1', { state: 'read' }));
      e.that(r1.status === 400, `state "read": ${said(r1)}, not 400`);
      // "only delivered_client in v1": its near misses (a prefix, a suffix, another case, another separator) are other states.
      for (const state of ['delivered', 'delivered_clients', 'delivered_client ', 'Delivered_Client', 'delivered-client', 'xdelivered_client']) {
        const r = await s.relay.ack(ack(s.profile, b, a.identity, `m_${state.length}`, { state }));
        e.that(r.status === 400, `state ${JSON.stringify(state)}: ${said(r)}, not 400`);
      }
      const { message_id: _m, ...noMessage } = ack(s.profile, b, a.identity, 'm_2');
      void _m;
      const r2 = await s.relay.ack(noMessage);
      e.that(r2.status === 400, `without message_id: ${said(r2)}, not 400`);
      const forged = signEnvelope(s.profile, 'ack', { ...ack(s.profile, b, a.identity, 'm_3') }, a.seed);
      const r3 = await s.relay.ack(forged);
      e.that(r3.status === 401, `signed by the wrong identity: ${said(r3)}, not 401`);
      const p = pickupOf(await s.relay.pickup(a));
      e.that(typeof p !== 'string' && p.acks.length === 0, `refused acks reached the sender: ${typeof p === 'string' ? p : JSON.stringify(p.acks).slice(0, 200)}`);
    },
  });
}

function messagesSessionKeyCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/session-key',
    title:
      'a message signed by a registered session key (session_id) is accepted; an unknown session_id without a proof is 401 session_expired, and with a valid one accepted; a session proof alone is accepted',
    rules: ['ra.messages.session-expired', 'ra.messages.session-proof', 'ra.sessions.register', 'ra.signing.session-registration'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const seed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const reg = await s.relay.registerSession(a, seed);
      const session = safeJson(reg);
      e.that(reg.status === 201, `POST /sessions: ${said(reg)}, not 201`);
      const sessionId = isObject(session) && typeof session.session_id === 'string' ? session.session_id : undefined;
      if (!sessionId) return e.fail(`POST /sessions gave no session_id: ${said(reg)}`);
      e.that(sessionId.startsWith('sess_'), `session_id ${sessionId} lacks the sess_ prefix`);
      for (const f of ['identity', 'session_public_key', 'issued_at', 'expires_at']) e.that(isObject(session) && typeof session[f] === 'string', `the session object lacks ${f}`);
      const m1 = mail(s, a, b, 'by session', { session: { seed, sessionId } });
      const r1 = await s.relay.send(m1);
      e.that(r1.status === 202, `signed by the session key with session_id: ${said(r1)}, not 202`);
      const m2 = mail(s, a, b, 'unknown session', { session: { seed, sessionId: 'sess_doesnotexist0000000' } });
      const r2 = await s.relay.send(m2);
      e.that(refusedWith(r2, 401, 'session_expired'), `an unknown session_id: ${said(r2)}, not 401 session_expired`);
      const other = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const m3 = mail(s, a, b, 'by proof', { session: { seed: other, proof: sessionProof(s.profile, a, other) } });
      const r3 = await s.relay.send(m3);
      e.that(r3.status === 202, `signed by a session key with its session_proof: ${said(r3)}, not 202`);
      // "session_expired when session_id is unknown and no valid session_proof is attached": with one, it is taken.
      const third = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const m4 = mail(s, a, b, 'unknown id, valid proof', { session: { seed: third, sessionId: 'sess_doesnotexist0000001', proof: sessionProof(s.profile, a, third) } });
      const r4 = await s.relay.send(m4);
      e.that(r4.status === 202, `an unknown session_id with a valid session_proof: ${said(r4)}, not 202`);
      await expectInbox(
        s,
        e,
        b,
        [m1, m3, m4].filter((_, i) => [r1, r3, r4][i]!.status === 202),
      );
    },
  });
}

function messagesForwardedSessionProofCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/forwarded-session-proof',
    title: 'a forwarded message signed by a session key is judged at the peer by the same session-proof rules: a valid proof arrives, an expired one does not',
    rules: ['ns.session-proof.relay-shared'],
    run: async (s, e) => {
      const a = await s.identity('relay');
      const y = await s.identity('peer');
      const key = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const good = mail(s, a, y, 'proof ok', { session: { seed: key, proof: sessionProof(s.profile, a, key) } });
      const r = await s.relay.send(good);
      e.that(r.status === 202, `a valid session proof: ${said(r)}, not 202`);
      const expired = mail(s, a, y, 'proof expired', { session: { seed: key, proof: sessionProof(s.profile, a, key, 3600, now(-7200)) } });
      const r2 = await s.relay.send(expired);
      e.that(refused(r2) || r2.status === 202, `an expired session proof: ${said(r2)}`);
      await expectInbox(s, e, y, accepted(r) ? [good] : [], s.peer);
    },
  });
}

export function messagingChecks(t: RelayTarget): Check[] {
  return [
    messagesAcceptedIsDeliveredCheck(t),
    messagesLocalDeliveryCheck(t),
    messagesFieldsCheck(t),
    messagesEncryptionRequiredCheck(t),
    messagesBodyCapCheck(t),
    errorsEnvelopeCheck(t),
    messagesBadSignatureCheck(t),
    messagesNeitherLocalCheck(t),
    messagesForwardCheck(t),
    messagesRemoteSenderCheck(t),
    acksRoundTripCheck(t),
    acksRefusalsCheck(t),
    messagesSessionKeyCheck(t),
    messagesForwardedSessionProofCheck(t),
  ];
}
