// The reference bridge's URL clients broken one way each (hidden --break flags, only with
// SVC_REFERENCE_ALLOW_BREAKAGE=1), each breaking exactly one rule of document 2: a variant
// replaces decisions at the URL clients' seams (reference/bridge/url-client-seams.ts), and the
// fetch and the flow keep only the reference's own code.
import type { RuleId } from '../../schemas/ts/rules.ts';
import { URL_CLIENT_FETCH } from '../../protocol/bridge/url-client.ts';
import { URL_CLIENT_SEAMS, type UrlClientSeams } from '../bridge/url-client-seams.ts';

export interface UrlClientVariant {
  /** The one rule the variant breaks. */
  rule: RuleId;
  /** What it does, in a line. */
  what: string;
  seams: Partial<UrlClientSeams>;
}

const isObject = (body: unknown): body is Record<string, unknown> => body !== null && typeof body === 'object' && !Array.isArray(body);

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
  'url-client-private',
  'url-jwks-dropped',
  'url-suspension-ignored',
] as const;
export type UrlClientBreakage = (typeof URL_CLIENT_BREAKAGES)[number];

export const URL_CLIENT_VARIANTS: Record<UrlClientBreakage, UrlClientVariant> = {
  'url-client-id-any': {
    rule: 'ob.clients.url-document',
    what: "a document naming another client_id is taken as the fetched one's",
    seams: { document: (fetchedFrom, body) => (isObject(body) ? { ...body, client_id: fetchedFrom } : body) },
  },
  'url-client-secret': {
    rule: 'ob.clients.url-client-secret-refused',
    what: 'a document naming client_secret_* is read as public, and a URL client presenting any secret at /token is let through',
    seams: {
      document: (_fetchedFrom, body) => {
        const method = isObject(body) ? body.token_endpoint_auth_method : undefined;
        return typeof method === 'string' && method.startsWith('client_secret') ? { ...(body as object), token_endpoint_auth_method: 'none' } : body;
      },
      secretTaken: () => true,
    },
  },
  'url-redirect-origin': {
    rule: 'ob.clients.url-redirect',
    what: "the client_id's own origin stays allowed although a document was published",
    seams: { published: () => false },
  },
  'url-consent-verified': { rule: 'ob.clients.url-consent', what: "consent calls every return host the application's own", seams: { hostVerified: () => true } },
  'url-http': {
    rule: 'ob.clients.url-fetch-https',
    what: 'an http client_id is checked as if it were https, then fetched over http',
    seams: { checkedAs: (clientId) => clientId.replace(/^http:/i, 'https:') },
  },
  'url-follow-redirects': { rule: 'ob.clients.url-fetch-no-redirect', what: 'up to 5 redirects are followed', seams: { redirectsFollowed: () => 5 } },
  'url-no-size-cap': { rule: 'ob.clients.url-fetch-size', what: 'documents of any size are read', seams: { sizeCap: () => Number.POSITIVE_INFINITY } },
  'url-slow-timeout': {
    rule: 'ob.clients.url-fetch-timeout',
    what: "the fetch waits four times the document's limit",
    seams: { timeoutMs: () => URL_CLIENT_FETCH.timeoutMs * 4 },
  },
  'url-no-cache': { rule: 'ob.clients.url-fetch-cache', what: 'every request fetches the document again', seams: { cacheSeconds: () => 0 } },
  'url-client-private': { rule: 'ob.clients.url-fetch-private', what: 'every address counts as public', seams: { privateRefused: () => false } },
  // The survivor of url-clients.ts line 171 (issue 25's mutation run): no check had a URL client authenticate with private_key_jwt.
  'url-jwks-dropped': {
    rule: 'ob.clients.url-client-secret-refused',
    what: "a document's jwks_uri is dropped as it is read: a private_key_jwt URL client is never authenticated by its key set",
    seams: { document: (_fetchedFrom, body) => (isObject(body) && 'jwks_uri' in body ? { ...body, jwks_uri: undefined } : body) },
  },
  // The survivor of clients.ts line 89 (issue 25's mutation run): no check suspended a URL client.
  'url-suspension-ignored': {
    rule: 'ob.clients.suspend',
    what: "the operator's suspension holds static and console clients only: a suspended URL client still signs in and redeems",
    seams: { suspensionHeld: () => false },
  },
  'url-sector-client-id': {
    rule: 'ob.subject.url-client-sector',
    what: "a URL client's sector is its whole client_id, not its host",
    seams: { sector: (_host, clientId) => clientId },
  },
};

/** The URL clients' seams under the bridge's --break flags: the reference's own, with the named variants' replacements. */
export function urlClientSeams(breaks: ReadonlySet<string>): UrlClientSeams {
  const chosen = URL_CLIENT_BREAKAGES.filter((b) => breaks.has(b));
  return chosen.length === 0 ? URL_CLIENT_SEAMS : Object.assign({ ...URL_CLIENT_SEAMS }, ...chosen.map((b) => URL_CLIENT_VARIANTS[b].seams));
}
