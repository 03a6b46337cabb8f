// Owner-only authentication: challenges (issued, single use, 60 s or the declared test life), signed requests (window,
// replay, nonce length, Date), sessions (registration, TTL cap, revocation) and the pickup's own
// refusals.
import type { Check } from '../../../run/model.ts';
import { challengeHeaders, newNonce, now, sessionProof, sessionRegistration, type RelayIdentity } from '../../../actors/relay/index.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, Session, isObject, pickupOf, refused, safeJson, said, sleep, type RelayTarget, refusedWith } from '../driver.ts';
import { mail } from './messaging.ts';

const randomSeed = () => new Uint8Array(32).map(() => Math.floor(Math.random() * 256));

/** A session registered for `id`: its key's seed and the relay's session id (the check stops without one). */
async function registeredSession(s: Session, id: RelayIdentity): Promise<{ seed: Uint8Array; sessionId: string }> {
  const seed = randomSeed();
  const r = await s.relay.registerSession(id, seed);
  const reg = safeJson(r);
  if (!isObject(reg) || typeof reg.session_id !== 'string') throw new CheckFailure(`POST /sessions gave no session_id: ${said(r)}`);
  return { seed, sessionId: reg.session_id };
}

async function freshChallenge(s: Session, id: RelayIdentity): Promise<string> {
  const r = await s.relay.challenge(id.identity);
  const b = safeJson(r);
  if (r.status !== 200 || !isObject(b) || typeof b.challenge !== 'string') throw new Error(`GET /auth/challenge answered ${said(r)}`);
  return b.challenge;
}

/** A challenge's life: document 3's 60 s, or the shorter one the target declares for tests. */
const challengeTtlS = (t: RelayTarget): number => t.declared.challengeTtlS ?? limits.challenge_ttl_seconds;

/** The expiry check waits past a challenge's life, in a lane of its own so the wait overlaps the other checks. */
export function challengeExpiryCheck(t: RelayTarget): Check {
  const ttl = challengeTtlS(t);
  return relayCheck(t, {
    id: 'relay/auth/challenge-expiry',
    title: `a challenge answered after its ${ttl} seconds is refused 401`,
    rules: ['ra.auth.challenge-single-use'],
    lane: 'relay/auth/challenge-expiry',
    timeoutMs: (ttl + 40) * 1000,
    run: async (s, e, ctx) => {
      const a = await s.identity();
      const challenge = await freshChallenge(s, a);
      const at = Date.now();
      await sleep((ttl + 3) * 1000, ctx.signal);
      const r = await s.relay.pickup(a, { mode: 'headers', headers: challengeHeaders(s.profile, a.identity, challenge, a.seed) });
      e.that(r.status === 401, `a ${Math.round((Date.now() - at) / 1000)}-second-old challenge: ${said(r)}, not 401`);
    },
  });
}

function authChallengeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/challenge',
    title: 'GET /auth/challenge gives a challenge and an RFC 3339 expires_at about 60 s ahead; without identity it answers 400',
    rules: ['ra.auth.challenge', 'ra.names.valid'],
    run: async (s, e) => {
      const a = await s.identity();
      const r = await s.relay.challenge(a.identity);
      const b = safeJson(r);
      e.that(r.status === 200 && isObject(b) && typeof b.challenge === 'string' && b.challenge.length > 0, `${said(r)}: no challenge`);
      const exp = isObject(b) ? Date.parse(String(b.expires_at)) : NaN;
      e.that(
        Number.isFinite(exp) && exp > Date.now() && exp <= Date.now() + (challengeTtlS(t) + 5) * 1000,
        `expires_at ${isObject(b) ? String(b.expires_at) : '?'} is not within the next ${challengeTtlS(t)} s`,
      );
      const r2 = await s.relay.get('/auth/challenge');
      e.that(r2.status === 400, `without identity: ${said(r2)}, not 400`);
      const r3 = await s.relay.get('/auth/challenge?identity=not%20a%20name');
      e.that(r3.status === 400, `identity "not a name": ${said(r3)}, not 400`);
    },
  });
}

function authChallengeSingleUseCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/challenge-single-use',
    title: 'a challenge answered once opens one pickup; the same answer again is refused 401',
    rules: ['ra.auth.challenge-single-use', 'ra.pickup.auth'],
    run: async (s, e) => {
      const a = await s.identity();
      const challenge = await freshChallenge(s, a);
      const headers = challengeHeaders(s.profile, a.identity, challenge, a.seed);
      const r1 = await s.relay.pickup(a, { mode: 'headers', headers });
      e.that(r1.status === 200, `the first use: ${said(r1)}, not 200`);
      const r2 = await s.relay.pickup(a, { mode: 'headers', headers });
      e.that(r2.status === 401, `the same challenge again: ${said(r2)}, not 401`);
    },
  });
}

function authChallengeConcurrentCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/challenge-concurrent',
    title: 'one challenge answered by 8 concurrent pickups, named and unnamed: exactly one is accepted',
    rules: ['ra.auth.challenge-single-use'],
    run: async (s, e) => {
      const a = await s.identity();
      for (const named of [true, false]) {
        const headers = challengeHeaders(s.profile, a.identity, await freshChallenge(s, a), a.seed, undefined, named);
        const answers = await Promise.all(Array.from({ length: 8 }, () => s.relay.pickup(a, { mode: 'headers', headers })));
        const accepted = answers.filter((r) => r.status === 200).length;
        e.that(accepted === 1, `${named ? 'named' : 'unnamed'}: ${accepted} of 8 concurrent answers to one challenge were accepted (${answers.map((r) => r.status).join(',')})`);
      }
    },
  });
}

function pickupRefusalsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pickup/refusals',
    title: "a pickup without headers, signed by another key, or for another identity's challenge is refused 401; one for an identity not hosted there 404",
    rules: ['ra.pickup.auth', 'ra.pickup.not-hosted'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const r1 = await s.relay.pickup(a, { mode: 'none' });
      e.that(r1.status === 401, `no authentication: ${said(r1)}, not 401`);
      const r2 = await s.relay.pickup(a, { mode: 'challenge', seed: b.seed });
      e.that(r2.status === 401, `a challenge signed by another identity's key: ${said(r2)}, not 401`);
      const theirs = await freshChallenge(s, b);
      const r3 = await s.relay.pickup(a, { mode: 'headers', headers: challengeHeaders(s.profile, a.identity, theirs, a.seed) });
      e.that(r3.status === 401, `a challenge issued for another identity: ${said(r3)}, not 401`);
      const x = await s.stranger();
      const r4 = await s.relay.pickup(x, { mode: 'signed-request' });
      e.that(r4.status === 404, `an identity homed elsewhere: ${said(r4)}, not 404`);
      // A name no directory knows is not hosted here either.
      const nobody = s.nobody();
      const r5 = await s.relay.pickup(nobody, { mode: 'signed-request' });
      // No key is known to check its request against, so 401 is as fair an answer as 404.
      e.that(r5.status === 404 || r5.status === 401, `a pickup for an identity no directory knows: ${said(r5)}, not 404 (or 401)`);
      const r6 = await s.relay.consume(nobody, { through: '0' }, { mode: 'signed-request' });
      // Document 3 gives consume no statuses and the stream 200, 401 and 429: a refusal is all it asks there.
      e.that(r6.status >= 400 && r6.status < 500, `a consume for an identity no directory knows: ${said(r6)}, not a 4xx refusal`);
      const r7 = await s.relay.events(nobody);
      await r7.close();
      e.that(r7.status >= 400 && r7.status < 500, `an event stream for an identity no directory knows: ${r7.status} ${r7.body ?? ''}, not a 4xx refusal`);
    },
  });
}

function authSignedRequestCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/signed-request',
    title: 'a signed request (svc-request/v1) opens a pickup without a challenge, and the relay sends a Date header',
    rules: ['ra.signed-request', 'ra.auth.date-header'],
    run: async (s, e) => {
      const a = await s.identity();
      const r = await s.relay.pickup(a, { mode: 'signed-request' });
      e.that(r.status === 200, `a signed request: ${said(r)}, not 200`);
      e.that(typeof r.headers.date === 'string' && Number.isFinite(Date.parse(r.headers.date)), `no Date header (got ${String(r.headers.date)})`);
    },
  });
}

function authSignedRequestWindowCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/signed-request-window',
    title: 'a signed request 120 s in the past or the future is refused 401',
    rules: ['ra.auth.signed-request-window'],
    run: async (s, e) => {
      const a = await s.identity();
      for (const skew of [-120, 120]) {
        const r = await s.relay.pickup(a, { mode: 'signed-request', timestamp: Math.floor(Date.now() / 1000) + skew });
        e.that(r.status === 401, `timestamp ${skew > 0 ? '+' : ''}${skew} s: ${said(r)}, not 401`);
      }
    },
  });
}

function authSignedRequestReplayCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/signed-request-replay',
    title:
      'the same signed request sent twice (same nonce) is refused the second time with 401, and so is its nonce signed anew with a timestamp a second later or earlier, or on the cursor read, inside the window',
    rules: ['ra.auth.signed-request-replay'],
    run: async (s, e) => {
      const a = await s.identity();
      const nonce = newNonce(18);
      const timestamp = Math.floor(Date.now() / 1000);
      const r1 = await s.relay.pickup(a, { mode: 'signed-request', nonce, timestamp });
      e.that(r1.status === 200, `the first: ${said(r1)}, not 200`);
      const r2 = await s.relay.pickup(a, { mode: 'signed-request', nonce, timestamp });
      e.that(r2.status === 401, `the replay: ${said(r2)}, not 401`);
      // "refuses a nonce already seen in that window": the nonce, whatever else the new signature covers.
      for (const [what, r] of [
        ['a second later', await s.relay.pickup(a, { mode: 'signed-request', nonce, timestamp: timestamp + 1 })],
        ['a second earlier', await s.relay.pickup(a, { mode: 'signed-request', nonce, timestamp: timestamp - 1 })],
        ['on the cursor read (another query)', await s.relay.pickup(a, { mode: 'signed-request', nonce, timestamp }, '0')],
      ] as const)
        e.that(r.status === 401, `the nonce already seen, signed anew ${what}: ${said(r)}, not 401`);
    },
  });
}

function authSignedRequestNonceCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/signed-request-nonce',
    title: 'a signed request whose nonce is shorter than 16 or longer than 64 characters is refused',
    rules: ['ra.auth.signed-request-nonce'],
    run: async (s, e) => {
      const a = await s.identity();
      for (const nonce of ['a'.repeat(limits.signed_request_nonce_min_chars - 1), 'b'.repeat(limits.signed_request_nonce_max_chars + 1)]) {
        const r = await s.relay.pickup(a, { mode: 'signed-request', nonce });
        e.that(refused(r), `a ${nonce.length}-character nonce: ${said(r)}, not refused`);
      }
      const ok = await s.relay.pickup(a, { mode: 'signed-request', nonce: 'c'.repeat(limits.signed_request_nonce_min_chars) });
      e.that(ok.status === 200, `a ${limits.signed_request_nonce_min_chars}-character nonce: ${said(ok)}, not 200`);
    },
  });
}

function authSessionPickupCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/auth/session-pickup',
    title: 'a pickup signed by a session key with X-Svc-Session-Id works; an unknown session id is 401 session_expired',
    rules: ['ra.auth.session-key'],
    run: async (s, e) => {
      const a = await s.identity();
      const { seed, sessionId } = await registeredSession(s, a);
      const r1 = await s.relay.pickup(a, { mode: 'challenge', seed, sessionId });
      e.that(r1.status === 200, `a challenge signed by the session key: ${said(r1)}, not 200`);
      const r2 = await s.relay.pickup(a, { mode: 'challenge', seed, sessionId: 'sess_unknown000000000000' });
      e.that(refusedWith(r2, 401, 'session_expired'), `an unknown session: ${said(r2)}, not 401 session_expired`);
    },
  });
}

function sessionsRefusalsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/sessions/refusals',
    title: 'POST /sessions refuses a TTL over 24 hours, malformed timestamps and an issued_at far in the future (400), and a bad signature (401)',
    rules: ['ra.sessions.ttl', 'ra.sessions.register'],
    run: async (s, e) => {
      const a = await s.identity();
      const seed = randomSeed();
      const long = sessionRegistration(s.profile, a, seed, limits.relay_session_ttl_max_seconds + 60);
      const r1 = await s.relay.post('/sessions', long);
      e.that(r1.status === 400, `a TTL of 24 h + 60 s: ${said(r1)}, not 400`);
      const r2 = await s.relay.post('/sessions', { ...sessionRegistration(s.profile, a, seed), issued_at: 'soon' });
      e.that(r2.status === 400, `issued_at "soon": ${said(r2)}, not 400`);
      const r3 = await s.relay.post('/sessions', sessionRegistration(s.profile, a, seed, 3600, now(3 * 3600)));
      e.that(r3.status === 400, `issued_at 3 hours ahead: ${said(r3)}, not 400`);
      const other = await s.identity();
      const forged = { ...sessionRegistration(s.profile, other, seed), identity: a.identity };
      const r4 = await s.relay.post('/sessions', forged);
      e.that(r4.status === 401, `signed by another identity's key: ${said(r4)}, not 401`);
    },
  });
}

function sessionsRevokeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/sessions/revoke',
    title: "DELETE /sessions/:id answers 204 (also for an absent session), 401 for another identity's session, and the revoked session then gets session_expired",
    rules: ['ra.sessions.revoke', 'ra.signing.session-revocation'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const { seed, sessionId } = await registeredSession(s, a);
      const r0 = await s.relay.revokeSession(b, sessionId);
      e.that(r0.status === 401, `revoked by another identity: ${said(r0)}, not 401`);
      const r1 = await s.relay.revokeSession(a, sessionId);
      e.that(r1.status === 204, `revoked by its identity: ${said(r1)}, not 204`);
      const r2 = await s.relay.revokeSession(a, sessionId);
      e.that(r2.status === 204, `revoked again (absent): ${said(r2)}, not 204`);
      const r3 = await s.relay.post(`/sessions/${sessionId}`, { identity: a.identity }, {}, 'DELETE');
      e.that(r3.status === 400, `without the admin envelope: ${said(r3)}, not 400`);
      const m = mail(s, a, b, 'after revocation', { session: { seed, sessionId } });
      const r4 = await s.relay.send(m);
      e.that(refusedWith(r4, 401, 'session_expired'), `a message on the revoked session: ${said(r4)}, not 401 session_expired`);
      const p = pickupOf(await s.relay.pickup(b));
      e.that(typeof p !== 'string' && p.messages.length === 0, 'the message on the revoked session was delivered');
    },
  });
}

function profileRevokedSessionProofCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/revoked-session-proof',
    title: "a revoked session's key is refused with 401 session_expired also when a message attaches the session's proof instead of its id",
    rules: ['ra.sessions.revoked-stays-revoked'],
    context: ['ra.sessions.revoke', 'ra.messages.session-proof'],
    run: async (s, e) => {
      const [a, b] = [await s.identity(), await s.identity()];
      const { seed, sessionId } = await registeredSession(s, a);
      const proof = sessionProof(s.profile, a, seed);
      e.that((await s.relay.send(mail(s, a, b, 'by proof', { session: { seed, proof } }))).status === 202, 'a message by the live session proof was not accepted');
      e.that((await s.relay.revokeSession(a, sessionId)).status === 204, 'the revocation was not answered 204');
      const r = await s.relay.send(mail(s, a, b, 'by proof, revoked', { session: { seed, proof } }));
      e.that(refusedWith(r, 401, 'session_expired'), `a message by the revoked session's proof: ${said(r)}, not 401 session_expired`);
    },
  });
}

export function authChecks(t: RelayTarget): Check[] {
  return [
    authChallengeCheck(t),
    authChallengeSingleUseCheck(t),
    authChallengeConcurrentCheck(t),
    pickupRefusalsCheck(t),
    authSignedRequestCheck(t),
    authSignedRequestWindowCheck(t),
    authSignedRequestReplayCheck(t),
    authSignedRequestNonceCheck(t),
    authSessionPickupCheck(t),
    sessionsRefusalsCheck(t),
    sessionsRevokeCheck(t),
    profileRevokedSessionProofCheck(t),
  ];
}
