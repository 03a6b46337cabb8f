// A registered client as the registry holds it (clients.ts), whichever kind it came from: static,
// console or URL client ID (url-clients.ts). Types only: the registry and its sources both use them.
import type { JSONWebKeySet, JWTVerifyGetKey, JWTVerifyOptions } from 'jose';

export type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

export interface Client {
  clientId: string;
  name: string;
  redirectUris: string[];
  authMethod: AuthMethod;
  /** SHA-256 (base64url) of each valid secret: two during a rotation. */
  secretHashes: string[];
  jwks?: JSONWebKeySet;
  /** private_key_jwt with a linked key set (a console client): fetched under the URL client fetch rules. */
  jwksUri?: string;
  firstParty: boolean;
  sector: string;
  /** Who registered it (console clients), or the operator for static ones. */
  owner: string;
  suspended: boolean;
  /** A URL client ID: whether it published a document, and its same-origin logo. */
  url?: { published: boolean; logoUri?: string };
}

/** How a private_key_jwt assertion is judged (ob.token.client-auth): seams a broken variant replaces (seams.ts). */
export interface AssertionSeams {
  /** The keys it is verified with: the client's registered set. */
  assertionKeys(jwks: JSONWebKeySet): JWTVerifyGetKey;
  /** What its claims must be: iss and sub the client, aud this bridge, not expired. */
  assertionClaims(clientId: string, audiences: string[]): JWTVerifyOptions;
  /** Whether an accepted assertion spends its jti (OpenID Connect Core 1.0 section 9: "These tokens MUST only be used once"). */
  assertionSpends(): boolean;
}
