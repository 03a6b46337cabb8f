// The session proof fixtures every vector file signs with (document 1, Session proof).

import { canonicalString } from '../../protocol/common/canonical.ts';
import { signEd25519 } from '../../protocol/common/ed25519.ts';
import { same, type Json, b64u, lines } from './check.ts';
import { profile, type EdKey, ALICE, aliceKey, session, sessionKey } from './fixtures.ts';


/** session-registration, hand-assembled from document 1 and compared with the core's builder. */
export function registrationString(id: string, sessionPublicKey: string, issuedAt: string, expiresAt: string, nonce: string): string {
  const s = lines('session-registration', id, sessionPublicKey, issuedAt, expiresAt, nonce);
  same(
    'session-registration string (core)',
    canonicalString(profile, 'session-registration', { identity: id, session_public_key: sessionPublicKey, issued_at: issuedAt, expires_at: expiresAt, nonce }),
    s,
  );
  return s;
}

export interface ProofSpec {
  issuedAt: string;
  expiresAt: string;
  nonce: string;
  key?: EdKey;
  signer?: EdKey;
}
export function makeProof(spec: ProofSpec): Json {
  const key = spec.key ?? sessionKey;
  const signer = spec.signer ?? aliceKey;
  const signed = registrationString(ALICE, b64u(key.pub), spec.issuedAt, spec.expiresAt, spec.nonce);
  return {
    session_public_key: b64u(key.pub),
    issued_at: spec.issuedAt,
    expires_at: spec.expiresAt,
    nonce: spec.nonce,
    identity_signature: b64u(signEd25519(signer.seed, signed)),
  };
}
export const fixtureProof = makeProof({ issuedAt: session.issued_at, expiresAt: session.expires_at, nonce: session.nonce });
export const SESSION_REGISTRATION = registrationString(ALICE, b64u(sessionKey.pub), session.issued_at, session.expires_at, session.nonce);
