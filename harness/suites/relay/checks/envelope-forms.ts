// The envelopes' field forms (issue 25's whole-area run of reference/relay/messages.ts): the
// fields were only ever sent missing, one message field and one ack field at a time. Document 3's
// tables give each field's type and form (a string; an RFC 3339 timestamp; a base64url payload;
// an ack's `type` `ack`; `encryption` an object of three parts), so each out of form is a
// malformed envelope, 400, and never delivered. An empty string is a string: refusing it is the
// project's (a profile check).
import type { Check } from '../../../run/model.ts';
import { ack, signEnvelope, type Envelope } from '../../../actors/relay/index.ts';
import { relayCheck, type Expect } from '../check.ts';
import { codeOf, isObject, pickupOf, refusedWith, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { expectInbox, mail } from './messaging.ts';
import { pooled } from './matrix-ops.ts';

const MESSAGE_FIELDS = ['id', 'sender', 'recipient', 'timestamp', 'payload', 'signature'] as const;
const ACK_FIELDS = ['type', 'id', 'message_id', 'state', 'sender', 'recipient', 'timestamp', 'signature'] as const;
/** Payloads out of base64url: the standard alphabet's own characters, a space, none of either. */
const NOT_BASE64URL = ['ab+c/d==', 'abc def', '!!!!', 'abc=d'] as const;

type Case = readonly [what: string, kind: 'message' | 'ack', envelope: Envelope | string];

/** Sends every case at once, expects each `refused`, then that nothing reached either inbox. */
async function judge(s: Session, e: Expect, cases: readonly Case[], refused: (r: HttpResponse) => boolean, want: string): Promise<HttpResponse[]> {
  const answers = await pooled(
    cases.map(
      ([, kind, env]) =>
        () =>
          kind === 'message' ? s.relay.send(env) : s.relay.ack(env),
    ),
  );
  cases.forEach(([what], i) => {
    const r = answers[i]!;
    const body = safeJson(r);
    e.that(refused(r), `${what}: ${said(r)}, not ${want}`);
    // Every error answers the envelope {error, detail} (ra.errors.envelope).
    e.that(r.status < 400 || (isObject(body) && typeof body.error === 'string' && body.error !== '' && typeof body.detail === 'string'), `${what}: ${said(r)} is not {error, detail}`);
  });
  return answers;
}

/** The sender's pickup holds no ack: none of the refused acks was kept. */
async function noAcks(s: Session, e: Expect, who: Parameters<Session['relay']['pickup']>[0]): Promise<void> {
  const p = pickupOf(await s.relay.pickup(who));
  if (typeof p === 'string') return e.fail(p);
  e.that(p.acks.length === 0 && p.messages.length === 0, `refused envelopes reached ${String(who.identity)}: ${JSON.stringify([...p.messages, ...p.acks].map((x) => x.id))}`);
}

/** Forms of the instant `rfc3339` names that are not RFC 3339 (section 5.6), though `Date.parse` reads each. */
const NOT_RFC3339 = (rfc3339: string): Array<[string, string]> => {
  const d = new Date(rfc3339);
  return [
    ['a date in words', d.toUTCString()],
    ['a date alone', rfc3339.slice(0, 10)],
    ['without its offset', rfc3339.replace(/(Z|[+-]\d\d:\d\d)$/, '')],
    ['seconds since 1970', String(Math.floor(d.getTime() / 1000))],
  ];
};

export function envelopeFormsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/messages/field-forms',
    title:
      'a message or an ack with any required field missing or not a string, an ack whose type is not ack, a timestamp not RFC 3339 (in words, a date alone, without offset, in seconds), a payload not base64url, or encryption not an object: refused 400 (encryption_required for encryption); an optional field of another type or a signature not base64 a 4xx; each in the error envelope, none delivered',
    rules: ['ra.messages.fields', 'ra.acks.state', 'ra.messages.encryption-required', 'ra.errors.listed-statuses', 'ra.errors.envelope'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const m = mail(s, a, b);
      const k = ack(s.profile, b, a.identity, String(m.id));
      const without = (env: Envelope, field: string): Envelope => Object.fromEntries(Object.entries(env).filter(([f]) => f !== field));
      const malformed: Case[] = [
        ...['[]', '"envelope"', '7', 'null'].flatMap((json): Case[] => [
          [`a message body of JSON ${json}, not an object`, 'message', json],
          [`an ack body of JSON ${json}, not an object`, 'ack', json],
        ]),
        // A number where a string is due, signed as sent (the signature itself stays a string): only the type is at fault.
        ...MESSAGE_FIELDS.map((f): Case => [`a message whose ${f} is a number`, 'message', f === 'signature' ? { ...m, [f]: 7 } : signEnvelope(s.profile, 'message', { ...m, [f]: 7 }, a.seed)]),
        ...ACK_FIELDS.map((f): Case => [`an ack without ${f}`, 'ack', without(k, f)]),
        ...ACK_FIELDS.map((f): Case => [`an ack whose ${f} is a number`, 'ack', f === 'signature' ? { ...k, [f]: 7 } : signEnvelope(s.profile, 'ack', { ...k, [f]: 7 }, b.seed)]),
        // Signed as sent: only the form is at fault.
        ['an ack whose type is "receipt"', 'ack', signEnvelope(s.profile, 'ack', { ...k, type: 'receipt' }, b.seed)],
        ['an ack whose state is "read"', 'ack', signEnvelope(s.profile, 'ack', { ...k, state: 'read' }, b.seed)],
        ['an ack whose timestamp is "yesterday"', 'ack', signEnvelope(s.profile, 'ack', { ...k, timestamp: 'yesterday' }, b.seed)],
        // Near misses of RFC 3339 that a general date parser reads: a date in words, a date alone, no offset, seconds since 1970.
        ...NOT_RFC3339(String(m.timestamp)).flatMap(([what, timestamp], i): Case[] => [
          [`a message whose timestamp is ${what} (${JSON.stringify(timestamp)})`, 'message', signEnvelope(s.profile, 'message', { ...m, id: `${String(m.id)}_t${i}`, timestamp }, a.seed)],
          [`an ack whose timestamp is ${what} (${JSON.stringify(timestamp)})`, 'ack', signEnvelope(s.profile, 'ack', { ...k, id: `${String(k.id)}_t${i}`, timestamp }, b.seed)],
        ]),
        ...NOT_BASE64URL.map((payload): Case => [`a message whose payload is ${JSON.stringify(payload)}`, 'message', signEnvelope(s.profile, 'message', { ...m, payload }, a.seed)]),
      ];
      await judge(s, e, malformed, (r) => r.status === 400, '400');
      const unencrypted: Case[] = [null, [], 'x25519-chacha20-poly1305', 7].map((encryption): Case => [`a message whose encryption is ${JSON.stringify(encryption)}`, 'message', { ...m, encryption }]);
      await judge(s, e, unencrypted, (r) => refusedWith(r, 400, 'encryption_required'), '400 encryption_required');
      // Optional fields (signed lines of the interop set) of another type: a refusal, never a 5xx.
      const optional: Case[] = (
        [
          ['type', {}],
          ['thread_id', []],
          ['expires_at', { at: 'soon' }],
          ['metadata', 5],
          ['session_id', 7],
          ['session_proof', 'proof'],
        ] as const
      ).map(([f, v]): Case => [`a message whose optional ${f} is ${JSON.stringify(v)}`, 'message', { ...m, id: `${String(m.id)}_${f}`, [f]: v }]);
      // A signature not base64 at all: a malformed field or a failed signature, 400 or 401.
      optional.push(['a message whose signature is "!!!!" (not base64)', 'message', { ...m, signature: '!!!!' }], ['an ack whose signature is "!!!!"', 'ack', { ...k, signature: '!!!!' }]);
      await judge(s, e, optional, (r) => r.status >= 400 && r.status < 500, 'a 4xx');
      await expectInbox(s, e, b, []);
      await noAcks(s, e, a);
    },
  });
}

export function envelopeFormsProfileCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/envelope-forms',
    title:
      'the project\'s empty fields: a required field of a message or an ack present as "" is 400 invalid_request, an encryption part present as "" or a number is 400 encryption_required, never delivered',
    rules: ['ra.messages.empty-fields'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const m = mail(s, a, b);
      const k = ack(s.profile, b, a.identity, String(m.id));
      const enc = m.encryption as Record<string, unknown>;
      const empty: Case[] = [
        ...MESSAGE_FIELDS.map((f): Case => [`a message whose ${f} is ""`, 'message', { ...m, [f]: '' }]),
        ...ACK_FIELDS.map((f): Case => [`an ack whose ${f} is ""`, 'ack', { ...k, [f]: '' }]),
      ];
      await judge(s, e, empty, (r) => r.status === 400 && codeOf(r) === 'invalid_request', '400 invalid_request');
      const parts: Case[] = Object.keys(enc).flatMap((p): Case[] => [
        [`a message whose encryption.${p} is ""`, 'message', { ...m, encryption: { ...enc, [p]: '' } }],
        [`a message whose encryption.${p} is a number`, 'message', { ...m, encryption: { ...enc, [p]: 7 } }],
      ]);
      await judge(s, e, parts, (r) => refusedWith(r, 400, 'encryption_required'), '400 encryption_required');
      await expectInbox(s, e, b, []);
      await noAcks(s, e, a);
    },
  });
}
