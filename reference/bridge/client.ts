// A registered client as the registry holds it (clients.ts), whichever kind it came from: static,
// console or URL client ID (url-clients.ts). Types only: the registry and its sources both use them.
import type { JSONWebKeySet } from 'jose';

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
