// The owner headers one at a time (issue 25's whole-area run of auth.ts): a pickup whose signed
// request or challenge answer lacks X-Svc-Identity or X-Svc-Signature, carries a signature that is
// not base64 or not 64 bytes, a timestamp without its nonce (or a nonce without its timestamp), or
// a timestamp that is not Unix seconds, is refused with a 4xx, never met with a 5xx, and drains
// nothing. Which code each refusal carries is the project's (relay/profile/auth-codes).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { adminEnvelope, newNonce, now, sessionRegistration, signedRequestHeaders, type RelayIdentity } from '../../../actors/relay/index.ts';
import { publicKey } from '../../../impl/noble.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { codeOf, pickupOf, said, sleep, type RelayTarget, type Session } from '../driver.ts';
import { expectInbox, mail } from './messaging.ts';

const without = (h: Record<string, string>, name: string) => Object.fromEntries(Object.entries(h).filter(([k]) => k.toLowerCase() !== name.toLowerCase()));
const withHeader = (h: Record<string, string>, name: string, value: string) => ({ ...without(h, name), [name]: value });

/** A 63-byte signature: base64, but not an Ed25519 one. */
const SHORT_SIGNATURE = Buffer.alloc(63, 7).toString('base64');

/** `b`'s pickup path, and fresh headers for it: a signed request, and a challenge answer. */
function pickupHeaders(s: Session, b: RelayIdentity) {
  const path = `/messages/${encodeURIComponent(b.identity)}`;
  return {
    signed: () => signedRequestHeaders(s.profile, { identity: b.identity, seed: b.seed, method: 'GET', path, body: '' }),
    answered: () => s.relay.authHeaders(b, 'GET', path, { mode: 'challenge' }),
    signedAs: (timestamp: string) => signedRequestHeaders(s.profile, { identity: b.identity, seed: b.seed, method: 'GET', path, body: '', timestamp }),
  };
}

export function headerPartsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/header-parts',
    title:
      'a pickup whose signed request or challenge answer lacks X-Svc-Identity or X-Svc-Signature, whose signature is not base64 or not 64 bytes, that sends X-Svc-Timestamp without X-Svc-Nonce (or the nonce alone), or whose timestamp, signed as sent, is not Unix seconds (a letter before or after, a fraction, a sign, a space, an exponent, hex), and an admin envelope whose signature is not base64 or 63 bytes, are refused with a 4xx; nothing is drained',
    rules: ['ra.signed-request', 'ra.pickup.auth', 'ra.auth.signed-request-window', 'ra.errors.listed-statuses'],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const m = mail(s, a, b, 'kept');
      if (!e.that((await s.relay.send(m)).status === 202, 'the message was not accepted')) return;
      const ids = s.profile.ids;
      const { signed, answered, signedAs } = pickupHeaders(s, b);
      const short = SHORT_SIGNATURE;
      const cases: Array<[string, () => Promise<Record<string, string>>]> = [
        ['a signed request without X-Svc-Identity', async () => without(signed(), ids.header_identity)],
        ['a signed request without X-Svc-Signature', async () => without(signed(), ids.header_signature)],
        ['a signed request whose X-Svc-Signature is not base64', async () => withHeader(signed(), ids.header_signature, '*** not base64 ***')],
        ['a signed request whose X-Svc-Signature is 63 bytes', async () => withHeader(signed(), ids.header_signature, short)],
        ['a signed request with X-Svc-Timestamp and no X-Svc-Nonce', async () => without(signed(), ids.header_nonce)],
        ['a signed request with X-Svc-Nonce and no X-Svc-Timestamp', async () => without(signed(), ids.header_timestamp)],
        ['a challenge answer without X-Svc-Identity', async () => without(await answered(), ids.header_identity)],
        ['a challenge answer without X-Svc-Signature', async () => without(await answered(), ids.header_signature)],
        ['a challenge answer whose X-Svc-Signature is 63 bytes', async () => withHeader(await answered(), ids.header_signature, short)],
      ];
      // Signed as sent: only the timestamp's form is at fault, and a relay that reads it as a
      // number it cannot compare skips the 60 s window (ra.auth.signed-request-window).
      const now = Math.floor(Date.now() / 1000);
      for (const form of [`x${now}`, `${now}x`, `${now}.0`, `+${now}`, ` ${now}`, `${now}e0`, `0x${now.toString(16)}`])
        cases.push([`a signed request, signed as sent, with X-Svc-Timestamp ${JSON.stringify(form)}`, async () => signedAs(form)]);
      for (const [what, headers] of cases) {
        const r = await s.relay.pickup(b, { mode: 'headers', headers: await headers() });
        e.that(r.status >= 400 && r.status < 500 && typeof pickupOf(r) === 'string', `${what}: ${said(r)}, not a 4xx`);
      }
      // The admin envelope's signature (Authentication 4), malformed the same ways.
      for (const [form, sig] of [
        ['not base64', '*** not base64 ***'],
        ['63 bytes', short],
      ]) {
        const r = await s.relay.post('/sessions', { ...sessionRegistration(s.profile, b, new Uint8Array(randomBytes(32))), identity_signature: sig });
        e.that(r.status >= 400 && r.status < 500, `a session registration whose identity_signature is ${form}: ${said(r)}, not a 4xx`);
      }
      await expectInbox(s, e, b, [m]);
    },
  });
}

export function authCodesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/auth-codes',
    title:
      "each owner-header fault answers the project's code: a challenge answer lacking X-Svc-Identity or with a signature not base64 or of 63 bytes 401 challenge_invalid; a signed request with such a signature 401 signature_invalid, without its nonce 400 invalid_request, without its timestamp 401 request_expired; an admin envelope without issued_at, nonce or identity_signature, or whose nonce is empty, 400 invalid_request",
    rules: ['ra.errors.challenge-invalid', 'ra.errors.signature-invalid', 'ra.errors.invalid-request', 'ra.errors.request-expired'],
    run: async (s, e) => {
      const b = await s.identity();
      const ids = s.profile.ids;
      const { signed, answered } = pickupHeaders(s, b);
      const short = SHORT_SIGNATURE;
      const cases: Array<[string, () => Promise<Record<string, string>>, number, string]> = [
        ['a challenge answer without X-Svc-Identity', async () => without(await answered(), ids.header_identity), 401, 'challenge_invalid'],
        ['a challenge answer whose X-Svc-Signature is not base64', async () => withHeader(await answered(), ids.header_signature, '*** not base64 ***'), 401, 'challenge_invalid'],
        ['a challenge answer whose X-Svc-Signature is 63 bytes', async () => withHeader(await answered(), ids.header_signature, short), 401, 'challenge_invalid'],
        ['a signed request whose X-Svc-Signature is not base64', async () => withHeader(signed(), ids.header_signature, '*** not base64 ***'), 401, 'signature_invalid'],
        ['a signed request whose X-Svc-Signature is 63 bytes', async () => withHeader(signed(), ids.header_signature, short), 401, 'signature_invalid'],
        ['a signed request without X-Svc-Nonce', async () => without(signed(), ids.header_nonce), 400, 'invalid_request'],
        ['a signed request without X-Svc-Timestamp', async () => without(signed(), ids.header_timestamp), 401, 'request_expired'],
      ];
      for (const [what, headers, status, want] of cases) {
        const r = await s.relay.pickup(b, { mode: 'headers', headers: await headers() });
        e.that(r.status === status && codeOf(r) === want, `${what}: ${said(r)}, not ${status} ${want}`);
      }
      // An admin envelope missing one of its three fields (Authentication 4) is malformed: 400.
      for (const field of ['issued_at', 'nonce', 'identity_signature']) {
        const body = Object.fromEntries(Object.entries(sessionRegistration(s.profile, b, new Uint8Array(randomBytes(32)))).filter(([k]) => k !== field));
        const r = await s.relay.post('/sessions', body);
        e.that(r.status === 400 && codeOf(r) === 'invalid_request', `a session registration without ${field}: ${said(r)}, not 400 invalid_request`);
      }
      // A nonce that is empty, signed as sent, is no nonce.
      const key = encodeBase64url(publicKey(new Uint8Array(randomBytes(32))));
      const fields = { identity: b.identity, session_public_key: key, expires_at: now(3600) };
      const empty = await s.relay.post('/sessions', { ...fields, ...adminEnvelope(s.profile, 'session-registration', fields, b.seed, now(), '') });
      e.that(empty.status === 400 && codeOf(empty) === 'invalid_request', `a session registration whose nonce is "" (signed so): ${said(empty)}, not 400 invalid_request`);
    },
  });
}

/** How long after the first use the replay is sent: past half the window, well inside the whole. */
const REPLAY_AFTER_S = limits.signed_request_window_seconds / 2 + 3;

export function replayWindowCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/replay-window',
    title: `a signed request stamped ${REPLAY_AFTER_S + 10} s ahead (inside the 60 s window) and sent again ${REPLAY_AFTER_S} s later, still inside it, is refused 401 the second time: its nonce is remembered for the whole window`,
    rules: ['ra.auth.signed-request-replay'],
    // Mostly a wait, on an identity of its own.
    lane: 'relay/auth/replay-window',
    timeoutMs: (REPLAY_AFTER_S + 30) * 1000,
    run: async (s, e) => {
      const a = await s.identity();
      const nonce = newNonce(18);
      // Stamped ahead, so the replay is still inside the window when it is sent.
      const timestamp = Math.floor(Date.now() / 1000) + REPLAY_AFTER_S + 10;
      const first = await s.relay.pickup(a, { mode: 'signed-request', nonce, timestamp });
      if (!e.that(first.status === 200, `the first use, stamped ${REPLAY_AFTER_S + 10} s ahead: ${said(first)}, not 200`)) return;
      await sleep(REPLAY_AFTER_S * 1000, s.signal);
      const replay = await s.relay.pickup(a, { mode: 'signed-request', nonce, timestamp });
      e.that(replay.status === 401, `the same request ${REPLAY_AFTER_S} s later, its timestamp still inside the window: ${said(replay)}, not 401`);
    },
  });
}
