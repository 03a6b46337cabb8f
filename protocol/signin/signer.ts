// The signer's side of the protocol, pure: turn a request into a signed approval with the
// identity key or a session key and its proof. Scopes are normalized before signing, so the
// order a signer is handed them in never changes the signature (ns.canonical.scopes-joined).
import type { Profile } from '../common/profile.ts';
import { canonicalString } from '../common/canonical.ts';
import { encodeBase64url } from '../common/base64.ts';
import { signEd25519, publicKeyFromSeed } from '../common/ed25519.ts';
import { normalizeScopes } from './scopes.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';

export interface SessionKey {
  sessionId: string;
  seed: Uint8Array;
  proof: Record<string, string>;
}

/** ns.session-proof.*: the identity key signs the session-registration lines. */
export function makeSessionProof(
  profile: Profile,
  identity: string,
  identitySeed: Uint8Array,
  sessionSeed: Uint8Array,
  window: { issued_at: string; expires_at: string; nonce: string },
): Record<string, string> {
  const proof = { session_public_key: encodeBase64url(publicKeyFromSeed(sessionSeed)), ...window };
  const signature = signEd25519(identitySeed, canonicalString(profile, 'session-registration', { identity, ...proof }));
  return { ...proof, identity_signature: encodeBase64url(signature) };
}

const COPIED = ['request_id', 'audience', 'nonce', 'issued_at', 'expires_at', 'action', 'statement', 'scopes'] as const;

/** The response object for `request`, signed by `seed` (identity key) or by `session`. */
export function signApproval(profile: Profile, request: Readonly<Record<string, unknown>>, signer: { identity: string; seed: Uint8Array; session?: SessionKey }): Record<string, unknown> {
  const auth = profile.ids.auth_field;
  const response: Record<string, unknown> = { [auth]: request[auth] };
  for (const f of COPIED) if (request[f] !== undefined) response[f] = request[f];
  if (Array.isArray(request.scopes)) response.scopes = normalizeScopes(request.scopes as string[]);
  response.identity = signer.identity.trim().toLowerCase();
  response.key_id = signer.session ? `${vocabulary.key_ids.session_prefix}${signer.session.sessionId}` : vocabulary.key_ids.identity;
  if (signer.session) response.session_proof = signer.session.proof;
  const seed = signer.session ? signer.session.seed : signer.seed;
  response.signature = encodeBase64url(signEd25519(seed, canonicalString(profile, 'signin', response)));
  return response;
}
