// The seams of URL clients (document 2, Clients 3): the decisions of fetching and reading a client
// ID metadata document that a broken variant (reference/variants/url-clients.ts) replaces, since
// the wire between the bridge and the document's host is not the bridge's own to wrap. The
// reference's own answers are these defaults; a variant's replacements come only with a hidden
// --break flag and SVC_REFERENCE_ALLOW_BREAKAGE=1.
import { URL_CLIENT_FETCH } from '../../protocol/bridge/url-client.ts';

export interface UrlClientSeams {
  /** The client_id as its URL is checked before the fetch (ob.clients.url-fetch-https). */
  checkedAs(clientId: string): string;
  /** The fetched document as read, from `fetchedFrom` (ob.clients.url-document, ob.clients.url-client-secret-refused). */
  document(fetchedFrom: string, body: unknown): unknown;
  /** Whether a client that published a document (`published`) is held to its redirect_uris (ob.clients.url-redirect). */
  published(published: boolean): boolean;
  /** A URL client's pairwise sector, from its client_id's host (ob.subject.url-client-sector). */
  sector(host: string, clientId: string): string;
  /** How many redirects a fetch follows (ob.clients.url-fetch-no-redirect). */
  redirectsFollowed(): number;
  /** The largest document read, in bytes (ob.clients.url-fetch-size). */
  sizeCap(): number;
  /** How long a fetch waits, in ms (ob.clients.url-fetch-timeout). */
  timeoutMs(): number;
  /** How long a fetched document is kept, given the seconds its cache headers allow (ob.clients.url-fetch-cache). */
  cacheSeconds(seconds: number): number;
  /** Whether consent calls a return host verified, given whether it is on the client_id's host (ob.clients.url-consent). */
  hostVerified(verified: boolean): boolean;
  /** Whether a URL client presenting a secret at /token is taken without checking it (ob.clients.url-client-secret-refused). */
  secretTaken(): boolean;
  /** Whether a fetch refuses `address` when it is private (ob.clients.url-fetch-private). */
  privateRefused(address: string): boolean;
  /** Whether a URL client the operator suspended (`suspended`) is held suspended (ob.clients.suspend). */
  suspensionHeld(suspended: boolean): boolean;
}

export const URL_CLIENT_SEAMS: UrlClientSeams = {
  checkedAs: (clientId) => clientId,
  document: (_fetchedFrom, body) => body,
  published: (published) => published,
  sector: (host) => host,
  redirectsFollowed: () => 0,
  sizeCap: () => URL_CLIENT_FETCH.maxBytes,
  timeoutMs: () => URL_CLIENT_FETCH.timeoutMs,
  cacheSeconds: (seconds) => seconds,
  hostVerified: (verified) => verified,
  secretTaken: () => false,
  privateRefused: () => true,
  suspensionHeld: (suspended) => suspended,
};
