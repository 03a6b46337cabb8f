// The bridge's seams: the few decisions a broken variant (reference/variants/bridge-matrix.ts)
// replaces where a bug cannot be written on the wire, because the wire never sees the client's
// record or the code's (a code's expiry, its PKCE challenge, whether a client needs PKCE, the
// transaction's browser binding, the nonce a code carries). The reference's own answers are these defaults;
// a variant's replacements come only with SVC_REFERENCE_ALLOW_BREAKAGE=1 (see wire.ts).
import { verifierMatches } from '../../protocol/bridge/pkce.ts';
import { sameHash } from '../shared/secrets.ts';
import type { Client } from './client.ts';

export interface BridgeSeams {
  /** Whether a code that expires at `expiresAt` (ms) is expired at `now` (ob.code.format). */
  codeExpired(now: number, expiresAt: number): boolean;
  /** Whether `/authorize` requires a PKCE challenge of this client (ob.authorize.pkce-required). */
  pkceRequired(client: Client): boolean;
  /** Whether the presented verifier answers the code's challenge, for the client redeeming it (ob.code.wrong-verifier). */
  pkceMatches(client: Client, verifier: string | null, challenge: string): boolean;
  /** Whether the browser opening a resume link holds its transaction's cookie: its hash, undefined without one (ob.transaction.resume-binding). */
  resumeBrowserMatches(cookieHash: string | undefined, bindingHash: string): boolean;
  /** The nonce the ID token carries, for the client redeeming a code whose request sent `nonce` (ob.token.id-token). */
  idTokenNonce(client: Client, nonce: string | null): string | null;
}

export const REFERENCE_SEAMS: BridgeSeams = {
  codeExpired: (now, expiresAt) => now > expiresAt,
  pkceRequired: () => true,
  pkceMatches: (_client, verifier, challenge) => verifierMatches(verifier, challenge),
  resumeBrowserMatches: (cookieHash, bindingHash) => cookieHash !== undefined && sameHash(cookieHash, bindingHash),
  idTokenNonce: (_client, nonce) => nonce,
};
