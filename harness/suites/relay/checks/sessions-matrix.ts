// Sessions across their matrix (issue 25, mutation survivors of reference/relay/sessions.ts):
// every part the registration and revocation envelopes sign, swapped alone for another valid
// value; each field the registration needs, missing or mistyped; and the project's lower bound
// on a session's life (a TTL of zero or less, or a session already expired when registered),
// which document 3 leaves open (it bounds the TTL only from above).
import type { Check } from '../../../run/model.ts';
import { publicKey } from '../../../impl/noble.ts';
import { adminEnvelope, newNonce, now, sessionProof, sessionRegistration, type RelayIdentity } from '../../../actors/relay/index.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { formatRfc3339 } from '../../../../protocol/common/time.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { refusedWith, said, type RelayTarget, type Session } from '../driver.ts';
import { expectInbox, mail } from './messaging.ts';
import { by, inboxCall, ok, randomSeed, session } from './matrix-ops.ts';

const REGISTRATION_PARTS = ['identity', 'session-public-key', 'issued-at', 'expires-at', 'nonce'] as const;
type RegistrationPart = (typeof REGISTRATION_PARTS)[number];

/**
 * A registration for `a` whose signature covers `part` with another valid value than the body
 * sends: another identity, another session key, an issued_at five seconds earlier, an
 * expires_at half an hour earlier, another nonce.
 */
function registrationSwapped(s: Session, a: RelayIdentity, other: RelayIdentity, part: RegistrationPart): Record<string, string> {
  const issued = Date.now();
  const sent = { identity: a.identity, session_public_key: encodeBase64url(publicKey(randomSeed())), expires_at: formatRfc3339(issued + 3600_000) };
  const signed = { ...sent };
  if (part === 'identity') signed.identity = other.identity;
  if (part === 'session-public-key') signed.session_public_key = encodeBase64url(publicKey(randomSeed()));
  if (part === 'expires-at') signed.expires_at = formatRfc3339(issued + 1800_000);
  const envelope = adminEnvelope(s.profile, 'session-registration', signed, a.seed, formatRfc3339(part === 'issued-at' ? issued - 5000 : issued));
  return { ...sent, ...envelope, issued_at: formatRfc3339(issued), ...(part === 'nonce' ? { nonce: newNonce() } : {}) };
}

function registrationBindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/binding-session-registration',
    title:
      'POST /sessions whose identity_signature covers another identity, session key, issued_at, expires_at or nonce than the body sends is refused 401; the same registration signed as sent is 201',
    rules: ['ra.signing.session-registration', 'ra.sessions.register'],
    cells: REGISTRATION_PARTS.map((value) => ({ rule: 'ra.signing.session-registration' as const, facet: 'binding', value, operation: 'registerSession' })),
    run: async (s, e) => {
      const [a, other] = await Promise.all([s.identity(), s.identity()]);
      const control = await s.relay.post('/sessions', sessionRegistration(s.profile, a, randomSeed()));
      e.that(control.status === 201, `a registration signed as sent: ${said(control)}, not 201`);
      for (const part of REGISTRATION_PARTS) {
        const r = await s.relay.post('/sessions', registrationSwapped(s, a, other, part));
        e.that(r.status === 401, `a registration whose signature covers another ${part}: ${said(r)}, not 401`);
      }
    },
  });
}

const REVOCATION_PARTS = ['identity', 'session-id', 'issued-at', 'nonce'] as const;
type RevocationPart = (typeof REVOCATION_PARTS)[number];

/** DELETE /sessions/:id of `sessionId` whose signature covers `part` otherwise: another identity, another live session of `a`, an earlier issued_at, another nonce. */
function revokeSwapped(s: Session, a: RelayIdentity, other: RelayIdentity, sessionId: string, otherSession: string, part: RevocationPart) {
  const issued = Date.now();
  const signed = { identity: part === 'identity' ? other.identity : a.identity, session_id: part === 'session-id' ? otherSession : sessionId };
  const envelope = adminEnvelope(s.profile, 'session-revocation', signed, a.seed, formatRfc3339(part === 'issued-at' ? issued - 5000 : issued));
  const body = { identity: a.identity, ...envelope, issued_at: formatRfc3339(issued), ...(part === 'nonce' ? { nonce: newNonce() } : {}) };
  return s.relay.post(`/sessions/${encodeURIComponent(sessionId)}`, body, {}, 'DELETE');
}

function revocationBindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/binding-session-revocation',
    title: 'DELETE /sessions/:id whose identity_signature covers another identity, another session of the owner, another issued_at or nonce is refused 401, and both sessions still open a pickup',
    rules: ['ra.signing.session-revocation', 'ra.sessions.revoke'],
    cells: REVOCATION_PARTS.map((value) => ({ rule: 'ra.signing.session-revocation' as const, facet: 'binding', value, operation: 'revokeSession' })),
    run: async (s, e) => {
      const [a, other] = await Promise.all([s.identity(), s.identity()]);
      const [target, beside] = await Promise.all([session(s, a), session(s, a)]);
      for (const part of REVOCATION_PARTS) {
        const r = await revokeSwapped(s, a, other, target.sessionId, beside.sessionId, part);
        e.that(r.status === 401, `a revocation whose signature covers another ${part}: ${said(r)}, not 401`);
      }
      for (const [name, sess] of [
        ['the session named in the path', target],
        ['the session the swapped signature named', beside],
      ] as const) {
        const r = await inboxCall(s, 'pickup', a, by('signed-request', sess));
        e.that(ok(r), `${name}, after the refused revocations: ${r.text}, not a pickup`);
      }
    },
  });
}

/** A well-signed registration of `a`, with `change` applied to the body after signing (the fields it removes or mistypes are not signed anyway). */
function registrationWith(s: Session, a: RelayIdentity, change: (b: Record<string, unknown>) => void): Record<string, unknown> {
  const b: Record<string, unknown> = sessionRegistration(s.profile, a, randomSeed());
  change(b);
  return b;
}

function registrationFieldsCheck(t: RelayTarget): Check {
  const cases: Array<[string, (b: Record<string, unknown>) => void]> = [
    ...['identity', 'session_public_key', 'issued_at', 'expires_at', 'nonce', 'identity_signature'].map((f): [string, (b: Record<string, unknown>) => void] => [`without ${f}`, (b) => delete b[f]]),
    ...['identity', 'session_public_key', 'issued_at', 'expires_at'].map((f): [string, (b: Record<string, unknown>) => void] => [`${f} a number`, (b) => (b[f] = 1700000000)]),
    ['session_public_key not an Ed25519 key', (b) => (b.session_public_key = encodeBase64url(new Uint8Array(31).fill(7)))],
    ['expires_at not RFC 3339', (b) => (b.expires_at = 'tomorrow')],
  ];
  return relayCheck(t, {
    id: 'relay/sessions/registration-fields',
    title:
      'POST /sessions missing identity, session_public_key, issued_at, expires_at or the admin envelope, with one of them mistyped, a session key that is not a key, a malformed expires_at or an issued_at an hour ahead, is refused 400',
    rules: ['ra.sessions.register', 'ra.sessions.ttl'],
    run: async (s, e) => {
      const a = await s.identity();
      for (const [name, change] of cases) {
        const r = await s.relay.post('/sessions', registrationWith(s, a, change));
        e.that(r.status === 400, `a registration ${name}: ${said(r)}, not 400`);
      }
      // "issued_at too far in the future": an hour ahead of the relay's clock, living an hour.
      const ahead = await s.relay.post('/sessions', sessionRegistration(s.profile, a, randomSeed(), 3600, now(3600)));
      e.that(ahead.status === 400, `a registration issued an hour ahead: ${said(ahead)}, not 400`);
      // A name that resolves to no identity: its signature cannot verify against a published key.
      const nobody = await s.unresolvable();
      const r = await s.relay.post(
        '/sessions',
        registrationWith(s, { ...a, identity: nobody }, () => undefined),
      );
      e.that(r.status === 401, `a registration for ${nobody}, which resolves to no identity: ${said(r)}, not 401`);
    },
  });
}

/** A registration of `a` issued `issuedS` seconds from now and living `ttlS` seconds (zero or less included). */
const lifeOf = (s: Session, a: RelayIdentity, issuedS: number, ttlS: number) => sessionRegistration(s.profile, a, randomSeed(), ttlS, now(issuedS));

function profileSessionLifeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/session-life-positive',
    title: 'POST /sessions with a TTL of zero or less (issued 30 s ahead), or already expired (issued 60 s ago, for 30 s), is refused 400 invalid_request; one second of life 30 s ahead is 201',
    rules: ['ra.sessions.ttl-positive'],
    context: ['ra.sessions.ttl'],
    cells: [
      { rule: 'ra.sessions.ttl-positive', facet: 'limit', value: 'at', operation: 'registerSession' },
      { rule: 'ra.sessions.ttl-positive', facet: 'limit', value: 'past', operation: 'registerSession' },
    ],
    run: async (s, e) => {
      const a = await s.identity();
      // Issued ahead of the relay's clock (within the signed-request window), so that a zero-length
      // session is not also already expired: only the comparison with issued_at refuses it.
      const cases: Array<[string, Record<string, string>, number]> = [
        ['a TTL of 1 s, issued 30 s ahead', lifeOf(s, a, 30, 1), 201],
        ['a TTL of 0 (expires_at = issued_at), issued 30 s ahead', lifeOf(s, a, 30, 0), 400],
        ['a TTL of -10 s, issued 30 s ahead', lifeOf(s, a, 30, -10), 400],
        ['a session issued 60 s ago for 30 s (already expired)', lifeOf(s, a, -60, 30), 400],
      ];
      for (const [name, body, want] of cases) {
        const r = await s.relay.post('/sessions', body);
        e.that(want === 201 ? r.status === 201 : refusedWith(r, 400, 'invalid_request'), `${name}: ${said(r)}, not ${want === 201 ? '201' : '400 invalid_request'}`);
      }
    },
  });
}

const PROOF_PARTS = ['identity', 'key', 'session-public-key', 'issued-at', 'expires-at', 'nonce'] as const;
type ProofPart = (typeof PROOF_PARTS)[number];

/**
 * A session proof for `a`'s session key `seed` with `part` signed otherwise than sent: lines naming
 * another identity, signed by another identity's key, or a session key, issued_at, expires_at or
 * nonce changed after signing (each still a valid value).
 */
function proofSwapped(s: Session, a: RelayIdentity, other: RelayIdentity, seed: Uint8Array, part: ProofPart): Record<string, string> {
  if (part === 'identity') return sessionProof(s.profile, { ...a, identity: other.identity }, seed);
  if (part === 'key') return sessionProof(s.profile, { ...a, seed: other.seed }, seed);
  const proof = sessionProof(s.profile, a, seed);
  if (part === 'session-public-key') proof.session_public_key = encodeBase64url(publicKey(randomSeed()));
  if (part === 'issued-at') proof.issued_at = formatRfc3339(Date.parse(proof.issued_at!) - 5000);
  if (part === 'expires-at') proof.expires_at = formatRfc3339(Date.parse(proof.expires_at!) - 1800_000);
  if (part === 'nonce') proof.nonce = newNonce();
  return proof;
}

function sessionProofMatrixCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/session-proof',
    title:
      'a message signed by a session key with its session_proof is accepted while the proof lives and refused 401 once it expired; a proof whose identity_signature covers another identity, key, session key, issued_at, expires_at or nonce is refused 401; only the accepted ones arrive',
    rules: ['ra.messages.session-proof', 'ra.messages.signature'],
    cells: [
      ...PROOF_PARTS.map((value) => ({ rule: 'ra.messages.session-proof' as const, facet: 'binding', value, operation: 'postMessage' })),
      ...['inside', 'outside'].map((value) => ({ rule: 'ra.messages.session-proof' as const, facet: 'window', value, operation: 'postMessage' })),
    ],
    run: async (s, e) => {
      const [a, b, other] = await Promise.all([s.identity(), s.identity(), s.identity()]);
      const seed = randomSeed();
      // Just inside: it expires 30 s from now; just outside: it expired 5 s ago (issued 35 s ago for 30 s).
      const inside = mail(s, a, b, 'proof inside', { session: { seed, proof: sessionProof(s.profile, a, seed, 60, now(-30)) } });
      const r1 = await s.relay.send(inside);
      e.that(r1.status === 202, `a message by a session proof expiring in 30 s: ${said(r1)}, not 202`);
      const outside = mail(s, a, b, 'proof outside', { session: { seed, proof: sessionProof(s.profile, a, seed, 30, now(-35)) } });
      const r2 = await s.relay.send(outside);
      e.that(r2.status === 401, `a message by a session proof that expired 5 s ago: ${said(r2)}, not 401`);
      for (const part of PROOF_PARTS) {
        const r = await s.relay.send(mail(s, a, b, `proof ${part}`, { session: { seed, proof: proofSwapped(s, a, other, seed, part) } }));
        e.that(r.status === 401, `a message whose session proof's signature covers another ${part}: ${said(r)}, not 401`);
      }
      await expectInbox(s, e, b, r1.status === 202 ? [inside] : []);
    },
  });
}

/** Document 3, DELETE /sessions/:id: "`400` (missing id or admin envelope); `401` (signature failed ...)". */
function revocationFieldsCheck(t: RelayTarget): Check {
  const cases: Array<[string, (b: Record<string, unknown>) => void]> = [
    ...['identity', 'issued_at', 'nonce', 'identity_signature'].map((f): [string, (b: Record<string, unknown>) => void] => [`without ${f}`, (b) => delete b[f]]),
    ['whose identity is a number', (b) => (b.identity = 7)],
  ];
  return relayCheck(t, {
    id: 'relay/sessions/revocation-fields',
    title:
      "DELETE /sessions/:id without identity or one of the admin envelope's fields, or with an identity that is a number, is refused 400; one naming an identity nothing resolves is refused 401; the session still opens a pickup",
    rules: ['ra.sessions.revoke'],
    run: async (s, e) => {
      const a = await s.identity();
      const sess = await session(s, a);
      const path = `/sessions/${encodeURIComponent(sess.sessionId)}`;
      const signed = () => ({ identity: a.identity, ...adminEnvelope(s.profile, 'session-revocation', { identity: a.identity, session_id: sess.sessionId }, a.seed) });
      for (const [name, change] of cases) {
        const body: Record<string, unknown> = signed();
        change(body);
        const r = await s.relay.post(path, body, {}, 'DELETE');
        e.that(r.status === 400, `a revocation ${name}: ${said(r)}, not 400`);
      }
      const nobody = await s.unresolvable();
      const stranger = await s.relay.post(path, { ...signed(), identity: nobody }, {}, 'DELETE');
      e.that(stranger.status === 401, `a revocation naming ${nobody}, which resolves to no identity: ${said(stranger)}, not 401`);
      const r = await inboxCall(s, 'pickup', a, by('signed-request', sess));
      e.that(ok(r), `the session after the refused revocations: ${r.text}, not a pickup`);
    },
  });
}

function profileAdminEnvelopeCheck(t: RelayTarget): Check {
  const window = limits.admin_recency_seconds;
  return relayCheck(t, {
    id: 'relay/profile/admin-envelope-window',
    title: `a session registration sent twice is refused the second time (its nonce was seen, 401); a revocation issued ${window + 60} s ahead of the relay's clock, or with an issued_at that is not RFC 3339, is refused and revokes nothing`,
    rules: ['ra.auth.recency-window'],
    run: async (s, e) => {
      const a = await s.identity();
      const body = sessionRegistration(s.profile, a, randomSeed());
      const [first, again] = [await s.relay.post('/sessions', body), await s.relay.post('/sessions', body)];
      e.that(first.status === 201, `a registration: ${said(first)}, not 201`);
      e.that(again.status === 401, `the same registration again (same nonce): ${said(again)}, not 401`);
      const sess = await session(s, a);
      const revoke = (issuedAt: string) => ({ identity: a.identity, ...adminEnvelope(s.profile, 'session-revocation', { identity: a.identity, session_id: sess.sessionId }, a.seed, issuedAt) });
      const path = `/sessions/${encodeURIComponent(sess.sessionId)}`;
      const ahead = await s.relay.post(path, revoke(now(window + 60)), {}, 'DELETE');
      e.that(ahead.status === 401, `a revocation issued ${window + 60} s ahead: ${said(ahead)}, not 401`);
      const garbled = await s.relay.post(path, revoke('soon'), {}, 'DELETE');
      e.that(garbled.status === 400, `a revocation whose issued_at is "soon": ${said(garbled)}, not 400`);
      const r = await inboxCall(s, 'pickup', a, by('signed-request', sess));
      e.that(ok(r), `the session after the refused revocations: ${r.text}, not a pickup`);
    },
  });
}

export function sessionsMatrixChecks(t: RelayTarget): Check[] {
  return [
    profileAdminEnvelopeCheck(t),
    registrationBindingCheck(t),
    revocationBindingCheck(t),
    registrationFieldsCheck(t),
    revocationFieldsCheck(t),
    profileSessionLifeCheck(t),
    sessionProofMatrixCheck(t),
  ];
}
