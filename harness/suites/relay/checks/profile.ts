// The project profile of document 3: what this project decided where the document says "not
// shown" (error codes, cursor names, device replies, the failed-ack fields, naming the challenge,
// the recency window, the message id as inbox key, locality by the document's `relay`). These
// checks gate only with --profile (always for the reference).
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { ack, adminEnvelope, challengeHeaders, now, sessionRegistration } from '../../../actors/relay/index.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import { relayCheck, type Expect } from '../check.ts';
import { CheckSkip, codeOf, isObject, pickupOf, refusedWith, safeJson, said, inviteOf, type RelayTarget } from '../driver.ts';
import { mail } from './messaging.ts';
import { cursorFormsCheck } from './cursor-forms.ts';

/** The hosted-handle policy and reserved labels, as spec/vocabulary decides them. */
const POLICY = vocabulary.hosted_policy;
const RESERVED = vocabulary.reserved_labels.values.filter((l) => !l.includes('{'));

const code = (e: Expect, what: string, r: HttpResponse, status: number, want: string) => e.that(r.status === status && codeOf(r) === want, `${what}: ${said(r)}, not ${status} ${want}`);

function profileErrorCodesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/error-codes',
    title: "the project's codes: invalid_request, signature_invalid, challenge_invalid, request_expired, request_replayed, not_found, payload_too_large; every error has detail",
    rules: ['ra.errors.invalid-request', 'ra.errors.challenge-invalid', 'ra.errors.request-expired', 'ra.errors.request-replayed', 'ra.errors.not-found', 'ra.errors.payload-too-large'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      code(e, 'invalid JSON', await s.relay.send('{'), 400, 'invalid_request');
      code(e, 'a pickup without headers', await s.relay.pickup(a, { mode: 'none' }), 401, 'challenge_invalid');
      code(e, 'a stale signed request', await s.relay.pickup(a, { mode: 'signed-request', timestamp: Math.floor(Date.now() / 1000) - 600 }), 401, 'request_expired');
      const ts = Math.floor(Date.now() / 1000);
      await s.relay.pickup(a, { mode: 'signed-request', nonce: 'n'.repeat(20), timestamp: ts });
      code(e, 'a replayed signed request', await s.relay.pickup(a, { mode: 'signed-request', nonce: 'n'.repeat(20), timestamp: ts }), 401, 'request_replayed');
      code(e, 'an unknown route', await s.relay.get('/no/such/route'), 404, 'not_found');
      code(e, 'an oversized message', await s.relay.send(mail(s, a, b, 'x'.repeat(limits.message_body_max_bytes))), 413, 'payload_too_large');
      const bad = await s.relay.send('{');
      const body = safeJson(bad);
      e.that(isObject(body) && typeof body.detail === 'string', `the error envelope has no detail: ${said(bad)}`);
    },
  });
}

function profileRegistrationAndSignatureCodesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/registration-and-signature-codes',
    title: 'a second registration answers 409 already_registered; a message whose signature fails 401 signature_invalid',
    rules: ['ra.errors.already-registered', 'ra.errors.signature-invalid'],
    context: ['ra.messages.signature', 'ra.identities.conflict'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const facts = (await s.facts()).relay;
      if (facts.hostedDomains.length > 0) code(e, 'a second registration', await s.relay.register(a, facts.relayAddress, inviteOf(t)), 409, 'already_registered');
      code(e, 'a zero signature', await s.relay.send({ ...mail(s, a, b), signature: Buffer.alloc(64).toString('base64') }), 401, 'signature_invalid');
    },
  });
}

function profileCursorCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/cursor',
    title: 'cursor reads answer cursor and ack_cursor; consume with them answers 200 {consumed, acks_consumed} and drops exactly that',
    rules: ['ra.pickup.cursor-names'],
    context: ['ra.pickup.cursor'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const m1 = mail(s, a, b, 'one');
      await s.relay.send(m1);
      const read = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      if (typeof read === 'string') return e.fail(read);
      const cursor = read.body.cursor;
      const ackCursor = read.body.ack_cursor;
      e.that(typeof cursor === 'string' && /^\d+$/.test(cursor), `cursor ${JSON.stringify(cursor)} is not a decimal string`);
      e.that(typeof ackCursor === 'string' && /^\d+$/.test(ackCursor), `ack_cursor ${JSON.stringify(ackCursor)} is not a decimal string`);
      const m2 = mail(s, a, b, 'two');
      await s.relay.send(m2);
      const c = await s.relay.consume(b, { through: cursor, ack_through: ackCursor }, { mode: 'signed-request' });
      const cb = safeJson(c);
      e.that(c.status === 200 && isObject(cb) && cb.consumed === 1 && cb.acks_consumed === 0, `consume: ${said(c)}, not 200 {consumed: 1, acks_consumed: 0}`);
      const after = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }, '0'));
      e.that(
        typeof after !== 'string' && after.messages.length === 1 && after.messages[0]!.id === m2.id,
        `after consume the read gives ${typeof after === 'string' ? after : after.messages.map((x) => String(x.id)).join(', ')}, not only ${String(m2.id)}`,
      );
    },
  });
}

function profileDevicesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/devices',
    title: 'POST /sessions with X-Svc-Device-* headers makes a device row; GET /devices answers {devices}; revoke answers {device_id, sessions_revoked} and ends its sessions',
    rules: ['ra.devices.bodies'],
    context: ['ra.devices.rows', 'ra.devices.list'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const ids = s.profile.ids;
      const seed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const headers = {
        [ids.header_device.toLowerCase()]: `install-${Date.now()}`,
        [ids.header_device_name.toLowerCase()]: 'n'.repeat(100),
        [ids.header_device_client.toLowerCase()]: 'toaster',
        [ids.header_device_platform.toLowerCase()]: 'linux',
      };
      const reg = await s.relay.post('/sessions', sessionRegistration(s.profile, a, seed), headers);
      const sessionId = (safeJson(reg) as Record<string, unknown> | undefined)?.session_id;
      e.that(reg.status === 201 && typeof sessionId === 'string', `POST /sessions with device headers: ${said(reg)}`);
      const path = `/devices/${a.identity}`;
      const list = await s.relay.get(path, await s.relay.authHeaders(a, 'GET', path, { mode: 'signed-request' }));
      const lb = safeJson(list);
      const rows = isObject(lb) && Array.isArray(lb.devices) ? lb.devices.filter(isObject) : undefined;
      if (!rows) return e.fail(`GET /devices: ${said(list)}, not {devices: [...]}`);
      const row = rows[0];
      e.that(rows.length === 1 && row !== undefined && typeof row.id === 'string' && row.id.startsWith('dev_'), `rows: ${JSON.stringify(rows).slice(0, 300)}`);
      if (row) {
        e.that(typeof row.name === 'string' && Buffer.byteLength(row.name) <= limits.device_name_max_bytes, `the name is not cut to ${limits.device_name_max_bytes} bytes: ${String(row.name)}`);
        e.that(row.client === null || row.client === undefined, `client "toaster" was kept: ${String(row.client)}`);
        e.that(row.platform === 'linux', `platform ${String(row.platform)}`);
        const rpath = `/devices/${a.identity}/revoke`;
        const rbody = JSON.stringify({ device_id: row.id });
        const rv = await s.relay.post(rpath, rbody, await s.relay.authHeaders(a, 'POST', rpath, { mode: 'signed-request' }, rbody));
        const rvb = safeJson(rv);
        e.that(rv.status === 200 && isObject(rvb) && rvb.device_id === row.id && rvb.sessions_revoked === 1, `revoke: ${said(rv)}`);
        if (typeof sessionId === 'string') {
          const m = await s.relay.send(mail(s, a, b, 'revoked device', { session: { seed, sessionId } }));
          e.that(m.status === 401, `a message on the revoked device's session: ${said(m)}, not 401`);
        }
      }
    },
  });
}

function profileRateLimitDefaultCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/rate-limit-default',
    title: `the per-sender bucket holds the project's default, ${limits.relay_rate_sender_max} envelopes per ${limits.relay_rate_window_seconds} s`,
    rules: ['ra.messages.rate-limit-defaults'],
    run: async (s, e) => {
      if (t.declared.senderLimit !== undefined && t.declared.senderLimit !== limits.relay_rate_sender_max) throw new CheckSkip(`the target declares its own bucket (${t.declared.senderLimit})`);
      const [a, b] = [await s.identity(), await s.identity()];
      const statuses: number[] = [];
      for (let i = 0; i <= limits.relay_rate_sender_max; i++) statuses.push((await s.relay.send({ ...mail(s, a, b, `n${i}`), signature: 'AAAA' })).status);
      const first429 = statuses.indexOf(429);
      e.that(first429 === limits.relay_rate_sender_max, `the first 429 came at envelope ${first429 + 1} (statuses ${[...new Set(statuses)].join(', ')}), not ${limits.relay_rate_sender_max + 1}`);
    },
  });
}

function profileSignedLinesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/signed-lines',
    title: "messages, acks, challenge answers and rotations signed over the project's lines (the interop set's) are accepted",
    rules: ['ra.signing.message', 'ra.signing.ack', 'ra.signing.format', 'ra.challenge'],
    context: ['ra.messages.accepted', 'ra.acks.accepted'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const m = mail(s, a, b);
      const r1 = await s.relay.send(m);
      e.that(r1.status === 202, `a message: ${said(r1)}`);
      const r2 = await s.relay.ack(ack(s.profile, b, a.identity, String(m.id)));
      e.that(r2.status === 202, `an ack: ${said(r2)}`);
      const r3 = await s.relay.pickup(b, { mode: 'challenge' });
      e.that(r3.status === 200, `a challenge answer: ${said(r3)}`);
    },
  });
}

function profileHostedPolicyCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/hosted-policy',
    title: `availability follows the hosted-handle policy of spec/vocabulary: ${POLICY.min_len} to ${POLICY.max_len} characters, a-z 0-9 - (a second label or an underscore is charset), the reserved labels`,
    rules: ['ra.names.hosted', 'ra.names.reserved', 'ra.names.case'],
    context: ['ra.availability'],
    run: async (s, e) => {
      const domain = (await s.facts()).relay.hostedDomains[0];
      if (!domain) throw new CheckSkip('the relay hosts no domain');
      for (const [handle, want] of [
        [RESERVED[0]!, 'reserved'],
        [RESERVED.at(-1)!, 'reserved'],
        ['a'.repeat(POLICY.min_len - 1), 'too_short'],
        ['x'.repeat(POLICY.max_len + 1), 'too_long'],
        // Outside a-z 0-9 -: a second label, an underscore.
        [`${'d'.repeat(POLICY.min_len)}.${'e'.repeat(POLICY.min_len)}`, 'charset'],
        [`${'f'.repeat(POLICY.min_len)}_g`, 'charset'],
      ] as const) {
        const r = await s.relay.get(`/hosted/availability?handle=${handle}&domain=${domain}`);
        const b = safeJson(r);
        e.that(isObject(b) && b.reason === want, `handle ${handle.slice(0, 10)}: ${said(r)}, not ${want}`);
        if (isObject(b) && isObject(b.policy)) e.that(b.policy.min_len === POLICY.min_len && b.policy.max_len === POLICY.max_len, `policy ${JSON.stringify(b.policy)}`);
      }
      // Names compare ignoring case, and the handle is read trimmed (ra.names.case): a registered name asked in capitals is taken.
      const id = await s.identity();
      const label = id.identity.slice(0, -domain.length - 1);
      const upper = await s.relay.get(`/hosted/availability?handle=${encodeURIComponent(` ${label.toUpperCase()} `)}&domain=${domain}`);
      const ub = safeJson(upper);
      e.that(isObject(ub) && ub.reason === 'taken' && ub.handle === label, `handle " ${label.toUpperCase()} " of the registered ${id.identity}: ${said(upper)}, not taken as ${label}`);
    },
  });
}

function profileReservedRegistrationCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/reserved-registration',
    title: 'hosted registration of a reserved handle is refused with 400 name_unavailable and reason reserved, as availability says',
    rules: ['ra.errors.name-unavailable'],
    context: ['ra.names.reserved', 'ra.identities.hosted'],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      const domain = facts.hostedDomains[0];
      if (!domain) throw new CheckSkip('the relay hosts no domain');
      const { newRelayIdentity } = await import('../../../actors/relay/index.ts');
      const r = await s.relay.register(newRelayIdentity(`www.${domain}`), facts.relayAddress, inviteOf(t));
      const b = safeJson(r);
      e.that(r.status === 400 && isObject(b) && b.error === 'name_unavailable' && b.reason === 'reserved', `www.${domain}: ${said(r)}, expected 400 name_unavailable, reason reserved`);
    },
  });
}

function profileMoreCodesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/more-codes',
    title: 'the project codes of the stream cap (too_many_streams), the invite gate (invite_required) and an unreachable recipient relay (502 relay_unreachable)',
    rules: ['ra.errors.too-many-streams', 'ra.errors.invite-required', 'ra.errors.relay-unreachable'],
    run: async (s, e) => {
      const a = await s.identity();
      const x = await s.stranger();
      code(e, 'to a recipient whose relay nobody serves', await s.relay.send(mail(s, a, x)), 502, 'relay_unreachable');
      const facts = (await s.facts()).relay;
      if (t.declared.inviteCode && facts.hostedDomains[0]) {
        const { newRelayIdentity } = await import('../../../actors/relay/index.ts');
        const id = newRelayIdentity(`t${Date.now().toString(36)}z.${facts.hostedDomains[0]}`);
        code(e, 'no invite under the invite gate', await s.relay.register(id, facts.relayAddress), 403, 'invite_required');
      }
      const cap = t.declared.maxStreams ?? limits.max_streams_per_identity_default;
      const streams = [];
      try {
        for (let i = 0; i <= cap; i++) streams.push(await s.relay.events(a));
        const over = streams.at(-1)!;
        e.that(over.status === 429 && (over.body ?? '').includes('too_many_streams'), `stream ${cap + 1}: ${over.status} ${over.body ?? ''}`);
      } finally {
        await Promise.all(streams.map((x) => x.close()));
      }
    },
  });
}

function profileChallengeHeaderCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/challenge-header',
    title: 'with two outstanding challenges, the one named in X-Svc-Challenge is the one judged',
    rules: ['ra.auth.challenge-header'],
    run: async (s, e) => {
      const a = await s.identity();
      const c1 = safeJson(await s.relay.challenge(a.identity)) as Record<string, string>;
      const c2 = safeJson(await s.relay.challenge(a.identity)) as Record<string, string>;
      const r = await s.relay.pickup(a, { mode: 'headers', headers: challengeHeaders(s.profile, a.identity, c1.challenge!, a.seed) });
      e.that(r.status === 200, `the older challenge, named: ${said(r)}`);
      const r2 = await s.relay.pickup(a, { mode: 'headers', headers: challengeHeaders(s.profile, a.identity, c2.challenge!, a.seed, undefined, false) });
      e.that(r2.status === 200, `the newer challenge, not named: ${said(r2)}`);
    },
  });
}

function profileRecencyWindowCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/recency-window',
    title: 'an admin envelope issued more than 300 s ago is refused, one a minute old accepted',
    rules: ['ra.auth.recency-window'],
    run: async (s, e) => {
      const a = await s.identity();
      const seed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
      const old = await s.relay.post('/sessions', sessionRegistration(s.profile, a, seed, 3600, now(-(limits.admin_recency_seconds + 60))));
      e.that(old.status >= 400 && old.status < 500, `a session registration issued ${limits.admin_recency_seconds + 60} s ago: ${said(old)}, not refused`);
      const fine = await s.relay.post('/sessions', sessionRegistration(s.profile, a, seed, 3600, now(-60)));
      e.that(fine.status === 201, `one issued 60 s ago: ${said(fine)}`);
      const revoke = { identity: a.identity, ...adminEnvelope(s.profile, 'session-revocation', { identity: a.identity, session_id: 'sess_x' }, a.seed, now(-(limits.admin_recency_seconds + 60))) };
      const r = await s.relay.post('/sessions/sess_x', revoke, {}, 'DELETE');
      e.that(r.status === 401 || r.status === 400, `a stale revocation: ${said(r)}`);
    },
  });
}

function profileMessageIdKeyCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/message-id-key',
    title: 'the same message sent twice is answered 202 both times and delivered once',
    rules: ['ra.messages.id-key'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const m = mail(s, a, b);
      const r1 = await s.relay.send(m);
      const r2 = await s.relay.send(m);
      e.that(r1.status === 202 && r2.status === 202, `twice: ${said(r1)} then ${said(r2)}`);
      const p = pickupOf(await s.relay.pickup(b));
      e.that(typeof p !== 'string' && p.messages.filter((x) => x.id === m.id).length === 1, `delivered ${typeof p === 'string' ? p : p.messages.filter((x) => x.id === m.id).length} times`);
    },
  });
}

function profileMessageIdConflictCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/message-id-conflict',
    title: 'an envelope whose id already waits in the inbox under other bytes (another sender) is refused 409 id_conflict, and the first is delivered intact',
    rules: ['ra.messages.id-key'],
    run: async (s, e) => {
      const [a, b, c] = [await s.identity(), await s.identity(), await s.identity()];
      const first = mail(s, a, b, 'first', { id: `m_shared_${Date.now().toString(36)}` });
      e.that((await s.relay.send(first)).status === 202, 'the first envelope was not accepted');
      const r = await s.relay.send(mail(s, c, b, 'second', { id: String(first.id) }));
      e.that(refusedWith(r, 409, 'id_conflict'), `another sender's envelope under the same id: ${said(r)}, not 409 id_conflict`);
      const p = pickupOf(await s.relay.pickup(b));
      e.that(
        typeof p !== 'string' && p.messages.length === 1 && p.messages[0]!.sender === a.identity && p.messages[0]!.payload === first.payload,
        `the inbox holds ${typeof p === 'string' ? p : JSON.stringify(p.messages).slice(0, 200)}`,
      );
    },
  });
}

function profileDnsLocalityCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/dns-locality',
    title: 'an identity known only by DNS, whose document names this relay, is local: mail to it is accepted and it picks it up',
    rules: ['ra.relay.dns-locality', 'ra.pickup.local'],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      const x = await s.stranger();
      await s.publish(x, facts.relayAddress);
      const y = await s.stranger();
      const m = mail(s, y, x);
      const r = await s.relay.send(m);
      e.that(r.status === 202, `to an identity whose document names this relay: ${said(r)}, not 202`);
      const p = pickupOf(await s.relay.pickup(x, { mode: 'signed-request' }));
      e.that(typeof p !== 'string' && p.messages.some((k) => k.id === m.id), `its pickup: ${typeof p === 'string' ? p : 'no message'}`);
    },
  });
}

function profileFailedAckCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/failed-ack',
    lane: 'relay/profile/failed-ack',
    title: 'the sys.delivery.failed ack has type ack, a sys_ id, message_id, sender (original recipient), recipient (original sender), timestamp, and no signature',
    rules: ['ra.spool.failed-ack'],
    timeoutMs: 120_000,
    run: async (s, e, ctx) => {
      const ttl = t.declared.spoolTtlS;
      if (ttl === undefined || ttl > 30) throw new CheckSkip('no short SPOOL_TTL declared: the fields are judged only with one');
      const [a, b] = [await s.identity(), await s.identity()];
      const m = mail(s, a, b, 'to expire');
      await s.relay.send(m);
      const deadline = Date.now() + (ttl + 45) * 1000;
      while (Date.now() < deadline && !ctx.signal.aborted) {
        await new Promise((r) => setTimeout(r, 1000));
        const p = pickupOf(await s.relay.pickup(a, { mode: 'signed-request' }));
        if (typeof p === 'string') return e.fail(p);
        const k = p.acks.find((x) => x.message_id === m.id);
        if (!k) continue;
        e.that(k.type === 'ack' && typeof k.id === 'string' && k.id.startsWith('sys_'), `type/id: ${JSON.stringify(k)}`);
        e.that(k.sender === b.identity && k.recipient === a.identity && typeof k.timestamp === 'string', `sender/recipient/timestamp: ${JSON.stringify(k)}`);
        e.that(!('signature' in k), 'it carries a signature field');
        return;
      }
      e.fail('no sys.delivery.failed ack arrived');
    },
  });
}

export function profileChecks(t: RelayTarget): Check[] {
  return [
    profileErrorCodesCheck(t),
    profileRegistrationAndSignatureCodesCheck(t),
    profileCursorCheck(t),
    cursorFormsCheck(t),
    profileDevicesCheck(t),
    profileRateLimitDefaultCheck(t),
    profileSignedLinesCheck(t),
    profileHostedPolicyCheck(t),
    profileReservedRegistrationCheck(t),
    profileMoreCodesCheck(t),
    profileChallengeHeaderCheck(t),
    profileRecencyWindowCheck(t),
    profileMessageIdKeyCheck(t),
    profileMessageIdConflictCheck(t),
    profileDnsLocalityCheck(t),
    profileFailedAckCheck(t),
  ];
}
