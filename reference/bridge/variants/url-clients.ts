// Deliberately broken URL-client behaviours (hidden --break flags, only with
// SVC_REFERENCE_ALLOW_BREAKAGE=1), each breaking exactly one ob.clients.url-* rule of document 2.
// The fetch and the flow keep their correct code and ask these only "is this break on?".
import { URL_CLIENT_FETCH } from '../../../protocol/bridge/url-client.ts';

type Breaks = ReadonlySet<string>;

/** url-client-id-any breaks ob.clients.url-document: a document naming another client_id is taken as the fetched one's. */
export function documentAsFetched(breaks: Breaks, fetchedFrom: string, body: unknown): unknown {
  if (!breaks.has('url-client-id-any') || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  return { ...body, client_id: fetchedFrom };
}

/** url-client-secret breaks ob.clients.url-client-secret-refused: a document naming client_secret_* is read as public. */
export function documentWithSecretMethod(breaks: Breaks, body: unknown): unknown {
  if (!breaks.has('url-client-secret') || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const method = (body as { token_endpoint_auth_method?: unknown }).token_endpoint_auth_method;
  return typeof method === 'string' && method.startsWith('client_secret') ? { ...body, token_endpoint_auth_method: 'none' } : body;
}

// url-client-secret also lets a URL client presenting any secret at /token through (clients.ts asks UrlClients.broken).

/** url-redirect-origin breaks ob.clients.url-redirect: the client_id's own origin stays allowed although a document was published. */
export const ownOriginAlways = (breaks: Breaks): boolean => breaks.has('url-redirect-origin');

/** url-consent-verified breaks ob.clients.url-consent: consent calls every return host the application's own. */
export const everyHostVerified = (breaks: Breaks): boolean => breaks.has('url-consent-verified');

/** url-http breaks ob.clients.url-fetch-https: an http client_id is checked as if it were https, then fetched over http. */
export const asHttps = (breaks: Breaks, clientId: string): string => (breaks.has('url-http') ? clientId.replace(/^http:/i, 'https:') : clientId);

/** url-follow-redirects breaks ob.clients.url-fetch-no-redirect: up to 5 redirects are followed. */
export const redirectsFollowed = (breaks: Breaks): number => (breaks.has('url-follow-redirects') ? 5 : 0);

/** url-no-size-cap breaks ob.clients.url-fetch-size: documents of any size are read. */
export const sizeCap = (breaks: Breaks): number => (breaks.has('url-no-size-cap') ? Number.POSITIVE_INFINITY : URL_CLIENT_FETCH.maxBytes);

/** url-slow-timeout breaks ob.clients.url-fetch-timeout: the fetch waits four times the document's limit. */
export const fetchTimeoutMs = (breaks: Breaks): number => URL_CLIENT_FETCH.timeoutMs * (breaks.has('url-slow-timeout') ? 4 : 1);

/** url-no-cache breaks ob.clients.url-fetch-cache: every request fetches the document again. */
export const cacheSeconds = (breaks: Breaks, seconds: number): number => (breaks.has('url-no-cache') ? 0 : seconds);

/** url-sector-client-id breaks ob.subject.url-client-sector: a URL client's sector is its whole client_id, not its host. */
export const sectorOf = (breaks: Breaks, host: string, clientId: string): string => (breaks.has('url-sector-client-id') ? clientId : host);

export const URL_CLIENT_BREAKAGES = [
  'url-sector-client-id',
  'url-client-id-any',
  'url-client-secret',
  'url-redirect-origin',
  'url-consent-verified',
  'url-http',
  'url-follow-redirects',
  'url-no-size-cap',
  'url-slow-timeout',
  'url-no-cache',
] as const;
