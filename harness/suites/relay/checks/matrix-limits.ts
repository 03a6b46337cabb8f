// The `limit` facets of the relay's core (spec/facets/relay-core.yaml), each at N, at N + 1 and
// outside its scope: a sender's rate-limit bucket (its N envelopes accepted, the next 429 with
// scope `sender`, another sender untouched) for messages and for acks; the 512 KB body (512 000
// bytes accepted, one byte over 512 KiB refused 413: both readings of "KB" agree on these); the
// signed request's nonce of 16 to 64 characters; a session's 24-hour cap; availability's per-IP
// limit (an address's N lookups answered, the next 429, another address untouched).
import { randomInt } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { ack, now, sessionRegistration, signEnvelope, type Envelope, type RelayIdentity } from '../../../actors/relay/index.ts';
import { Expect, relayCheck } from '../check.ts';
import { CheckSkip, hostedDomain, isObject, pickupOf, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import { mail } from './messaging.ts';
import { inboxCall, INBOX_OPS, ok, pooled, randomSeed } from './matrix-ops.ts';
import type { HttpResponse } from '../../../actors/http.ts';

type Kind = 'message' | 'ack';

const post = (s: Session, kind: Kind, env: Envelope) => (kind === 'message' ? s.relay.send(env) : s.relay.ack(env));
/** Well-signed envelopes from `from` to `to`, each with its own id: one is sealed, each copy signed again. */
function envelopes(s: Session, kind: Kind, from: RelayIdentity, to: RelayIdentity, sender = from.identity): (n: number) => Envelope {
  const base = kind === 'message' ? mail(s, from, to, 'limit') : ack(s.profile, from, to.identity, 'm_limit');
  return (n) => signEnvelope(s.profile, kind, { ...base, sender, id: `${String(base.id)}_${n}` }, from.seed);
}

/** `cap` well-signed envelopes from `from`, 20 at a time, then one more: the answers. */
async function spend(s: Session, kind: Kind, from: RelayIdentity, to: RelayIdentity, cap: number): Promise<{ within: HttpResponse[]; past: HttpResponse }> {
  const next = envelopes(s, kind, from, to);
  const within = await pooled(
    Array.from({ length: cap }, (_, i) => () => post(s, kind, next(i))),
    20,
  );
  return { within, past: await post(s, kind, next(cap)) };
}

function senderRateCheck(t: RelayTarget): Check {
  const cap = t.declared.senderLimit ?? limits.relay_rate_sender_max;
  const declared = t.declared.senderLimit === undefined ? ", the project's default: declare the target's with --relay-sender-limit" : '';
  return relayCheck(t, {
    id: 'relay/matrix/limit-sender-rate',
    title: `a sender's ${cap} well-signed messages (and acks) in a window are accepted, the next is 429 rate_limit_exceeded with scope sender, the same sender in capitals is not accepted, and another sender is not limited by it`,
    rules: ['ra.messages.rate-limit-body', 'ra.acks.signature'],
    timeoutMs: 60_000,
    // Spending a bucket is a few hundred requests: in a lane of its own, beside the suite's other checks.
    lane: 'relay/matrix/rate',
    cells: ['at', 'past', 'other-scope'].flatMap((value) => [
      { rule: 'ra.messages.rate-limit-body' as const, facet: 'limit', value, operation: 'postMessage' },
      { rule: 'ra.acks.signature' as const, facet: 'rate-limit', value, operation: 'postAck' },
    ]),
    run: async (s, e) => {
      const [b, other] = await Promise.all([s.identity(), s.identity()]);
      // The recipient's inbox is left to SPOOL_TTL: reading 2 × N envelopes back would judge nothing here.
      const judge = async (kind: Kind, ee: Expect): Promise<void> => {
        const from = await s.identity();
        const { within, past } = await spend(s, kind, from, b, cap);
        const refusedWithin = within.filter((r) => r.status !== 202);
        ee.that(
          refusedWithin.length === 0,
          `${refusedWithin.length} of a sender's first ${cap} ${kind}s were not accepted (the bucket is ${cap}${declared}): ${refusedWithin.map(said).slice(0, 2).join('; ')}`,
        );
        const body = safeJson(past);
        ee.that(
          past.status === 429 && isObject(body) && body.error === 'rate_limit_exceeded' && body.scope === 'sender',
          `${kind} ${cap + 1} from one sender: ${said(past)}, not 429 rate_limit_exceeded with scope sender`,
        );
        // A service ID is a DNS name, which compares without case (RFC 4343): the same sender in
        // capitals is the same bucket, whatever else the relay answers it.
        const capitals = await post(s, kind, envelopes(s, kind, from, b, from.identity.toUpperCase())(cap + 1));
        ee.that(capitals.status !== 202, `${kind} ${cap + 2} from the same sender written ${from.identity.toUpperCase()}: ${said(capitals)}, accepted past the sender's bucket`);
        const elsewhere = await post(s, kind, envelopes(s, kind, other, b)(0));
        ee.that(elsewhere.status === 202, `${kind === 'ack' ? 'an' : 'a'} ${kind} from another sender while the first is over its bucket: ${said(elsewhere)}, not 202`);
      };
      // The bucket's window may turn while it is spent: a miss is judged again once, with a fresh sender.
      for (const kind of ['message', 'ack'] as const) {
        const first = new Expect();
        await judge(kind, first);
        if (first.problems.length === 0) continue;
        await judge(kind, e);
      }
    },
  });
}

/** A signed message (or ack) whose JSON body is exactly `bytes` long: sealed once, its id pads it to the byte. */
function sized(s: Session, kind: Kind, from: RelayIdentity, to: RelayIdentity, bytes: number): string {
  // A message's payload grows 4 bytes per 3 of text and takes most of the size; an ack's id takes all of it.
  const base: Envelope = kind === 'message' ? mail(s, from, to, 'x'.repeat(Math.max(0, Math.floor(((bytes - 1500) * 3) / 4)))) : ack(s.profile, from, to.identity, 'm_sized');
  const withId = (pad: number) => JSON.stringify(signEnvelope(s.profile, kind, { ...base, id: `${kind === 'message' ? 'm' : 'a'}_${'p'.repeat(pad)}` }, from.seed));
  // Only the id's length changes the size (a signature is always 88 characters).
  return withId(Math.max(0, bytes - withId(0).length));
}

function bodyCapCheck(t: RelayTarget): Check {
  const at = 512_000;
  const past = limits.message_body_max_bytes + 1;
  return relayCheck(t, {
    id: 'relay/matrix/limit-body',
    title: `a signed message of ${at} bytes is accepted and delivered; a message or ack of ${past} bytes is refused 413`,
    rules: ['ra.messages.body-cap'],
    // An ack has no field the document lets grow to 512 000 bytes (only an id padded past any
    // reasonable length would), so its `at` cell is not applicable; its `past` cell is judged.
    cells: [
      { rule: 'ra.messages.body-cap', facet: 'limit', value: 'at', operation: 'postMessage' },
      ...['postMessage', 'postAck'].map((operation) => ({ rule: 'ra.messages.body-cap' as const, facet: 'limit', value: 'past', operation })),
    ],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      for (const kind of ['message', 'ack'] as const) {
        const ok = sized(s, kind, a, b, at);
        const over = sized(s, kind, a, b, past);
        e.that(ok.length === at && over.length === past, `the harness built ${ok.length} and ${over.length} bytes, not ${at} and ${past}`);
        if (kind === 'message') {
          const r1 = await s.relay.send(ok);
          e.that(r1.status === 202, `a ${at}-byte message: ${said(r1)}, not 202`);
        }
        const r2 = await (kind === 'message' ? s.relay.send(over) : s.relay.ack(over));
        e.that(r2.status === 413, `a ${past}-byte ${kind}: ${said(r2)}, not 413`);
      }
      const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
      e.that(typeof p !== 'string' && p.messages.length === 1, `the ${at}-byte message is not what the recipient holds: ${typeof p === 'string' ? p : `${p.messages.length} messages`}`);
    },
  });
}

/** "512 KB" read as the project reads it, 512 KiB: the body at the cap itself is accepted. */
function bodyCapKibCheck(t: RelayTarget): Check {
  const cap = limits.message_body_max_bytes;
  return relayCheck(t, {
    id: 'relay/profile/body-cap-kib',
    title: `a signed message of exactly ${cap} bytes (512 KiB) is accepted and delivered`,
    rules: ['ra.messages.body-cap-kib'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const body = sized(s, 'message', a, b, cap);
      if (!e.that(body.length === cap, `the harness built ${body.length} bytes, not ${cap}`)) return;
      const r = await s.relay.send(body);
      e.that(r.status === 202, `a ${cap}-byte message: ${said(r)}, not 202`);
      const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
      e.that(typeof p !== 'string' && p.messages.length === 1, `the ${cap}-byte message is not what the recipient holds: ${typeof p === 'string' ? p : `${p.messages.length} messages`}`);
    },
  });
}

function nonceLengthCheck(t: RelayTarget): Check {
  const [min, max] = [limits.signed_request_nonce_min_chars, limits.signed_request_nonce_max_chars];
  return relayCheck(t, {
    id: 'relay/matrix/limit-nonce',
    title: `pickup, consume and events signed with a nonce of ${min} or ${max} characters succeed; of ${min - 1} or ${max + 1} they are refused`,
    rules: ['ra.auth.signed-request-nonce'],
    cells: ['at', 'past'].flatMap((value) => INBOX_OPS.map((operation) => ({ rule: 'ra.auth.signed-request-nonce' as const, facet: 'limit', value, operation }))),
    run: async (s, e) => {
      const a = await s.identity();
      const nonce = (n: number) => Array.from({ length: n }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)]).join('');
      const calls = INBOX_OPS.flatMap((op) => [min, max, min - 1, max + 1].map((n) => ({ op, n, within: n >= min && n <= max })));
      const answers = await pooled(calls.map((x) => () => inboxCall(s, x.op, a, { mode: 'signed-request', nonce: nonce(x.n) })));
      calls.forEach((x, i) => {
        const r = answers[i]!;
        if (x.within) e.that(ok(r), `${x.op} with a ${x.n}-character nonce: ${r.text}, not a success`);
        else e.that(r.status >= 400 && r.status < 500, `${x.op} with a ${x.n}-character nonce: ${r.text}, not refused`);
      });
    },
  });
}

function sessionTtlCheck(t: RelayTarget): Check {
  const cap = limits.relay_session_ttl_max_seconds;
  return relayCheck(t, {
    id: 'relay/matrix/limit-session-ttl',
    title: `a session of exactly ${cap / 3600} hours is registered (201); one of ${cap / 3600} hours and a second is refused 400, also when issued 30 s before it is sent (the life counts from issued_at)`,
    rules: ['ra.sessions.ttl'],
    cells: [
      { rule: 'ra.sessions.ttl', facet: 'limit', value: 'at', operation: 'registerSession' },
      { rule: 'ra.sessions.ttl', facet: 'limit', value: 'past', operation: 'registerSession' },
    ],
    run: async (s, e) => {
      const a = await s.identity();
      const [at, past] = await Promise.all([
        s.relay.post('/sessions', sessionRegistration(s.profile, a, randomSeed(), cap)),
        s.relay.post('/sessions', sessionRegistration(s.profile, a, randomSeed(), cap + 1)),
      ]);
      e.that(at.status === 201, `a session of ${cap} s: ${said(at)}, not 201`);
      e.that(past.status === 400, `a session of ${cap + 1} s: ${said(past)}, not 400`);
      // The life counts from issued_at, not from when the relay reads it: issued 30 s ago, the same two.
      const [earlyAt, earlyPast] = await Promise.all([
        s.relay.post('/sessions', sessionRegistration(s.profile, a, randomSeed(), cap, now(-30))),
        s.relay.post('/sessions', sessionRegistration(s.profile, a, randomSeed(), cap + 1, now(-30))),
      ]);
      e.that(earlyAt.status === 201, `a session of ${cap} s issued 30 s ago: ${said(earlyAt)}, not 201`);
      e.that(earlyPast.status === 400, `a session of ${cap + 1} s issued 30 s ago (expiring ${cap - 29} s from now): ${said(earlyPast)}, not 400`);
    },
  });
}

/** A loopback address of the harness's own, off 127.0.0.0/24 where every other check calls from. */
const ownLoopback = (): string => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

function availabilityIpCheck(t: RelayTarget): Check {
  const cap = t.declared.availabilityLimit ?? Math.floor(limits.relay_rate_ip_max / limits.availability_charge_units);
  const declared = t.declared.availabilityLimit === undefined ? ", the project's default: declare the target's with --relay-availability-limit" : '';
  return relayCheck(t, {
    id: 'relay/matrix/limit-availability-ip',
    title: `an address's ${cap} availability lookups in a window are answered, its next is 429, and another address is not limited by it`,
    rules: ['ra.availability.ip-limit'],
    timeoutMs: 60_000,
    lane: 'relay/matrix/rate',
    cells: ['at', 'past', 'other-scope'].map((value) => ({ rule: 'ra.availability.ip-limit' as const, facet: 'limit', value, operation: 'availability' })),
    run: async (s, e) => {
      // Spending the bucket of the address every other check calls from would starve them for a
      // window: the lookups leave from addresses of this check's own, which only a target on
      // loopback (or behind a front that keeps the caller's address) sees as callers apart.
      const host = new URL(t.url).hostname;
      if (!/^127\.\d+\.\d+\.\d+$/.test(host))
        throw new CheckSkip(`the relay is reached at ${host}, not a loopback address: the harness has one address toward it, whose per-IP bucket this check would spend`);
      const domain = await hostedDomain(s);
      const judge = async (ee: Expect): Promise<void> => {
        const [mine, other] = [s.from(ownLoopback()), s.from(ownLoopback())];
        const lookup = (c: typeof mine, i: number) => c.get(`/hosted/availability?handle=free${i.toString(36)}x${randomInt(1e9).toString(36)}&domain=${domain}`);
        const within = await pooled(
          Array.from({ length: cap }, (_, i) => () => lookup(mine, i)),
          10,
        );
        const answered = within.filter((r) => r.status !== 200);
        ee.that(answered.length === 0, `${answered.length} of an address's first ${cap} lookups were not answered 200 (the limit is ${cap}${declared}): ${answered.map(said).slice(0, 2).join('; ')}`);
        const past = await lookup(mine, cap);
        ee.that(past.status === 429, `lookup ${cap + 1} from one address: ${said(past)}, not 429`);
        const elsewhere = await lookup(other, 0);
        ee.that(elsewhere.status === 200, `a lookup from another address while the first is over its limit: ${said(elsewhere)}, not 200`);
      };
      // The window may turn while the bucket is spent: a miss is judged again once, from fresh addresses.
      const first = new Expect();
      await judge(first);
      if (first.problems.length > 0) await judge(e);
    },
  });
}

export function matrixLimitChecks(t: RelayTarget): Check[] {
  return [senderRateCheck(t), bodyCapCheck(t), bodyCapKibCheck(t), nonceLengthCheck(t), sessionTtlCheck(t), availabilityIpCheck(t)];
}
