// URL client IDs (document 2, Clients 3: IndieAuth and the client-ID-metadata-document draft), as
// pure rules the fetcher and the registry apply: which client_id URLs may be fetched at all, the
// address a fetch may connect to (no private addresses), the document's fields, and how long a
// fetched document is cached (the HTTP cache headers clamped to 5 minutes .. 24 hours).
import { isIP } from 'node:net';
import { limits } from '../../schemas/ts/limits.ts';
import { isLoopbackRedirect } from './redirect.ts';

export type UrlClientCheck<T> = { ok: true; value: T } | { ok: false; reason: string };
const fail = <T>(reason: string): UrlClientCheck<T> => ({ ok: false, reason });

/** A client_id that is a URL the bridge may fetch: https, a dotted host, no userinfo, fragment or port-less IP tricks. */
export function clientIdUrl(clientId: string): UrlClientCheck<URL> {
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    return fail('not a URL');
  }
  if (u.protocol !== 'https:') return fail('a URL client ID is https only');
  if (u.username !== '' || u.password !== '') return fail('no userinfo');
  if (u.hash !== '' || clientId.includes('#')) return fail('no fragment');
  if (isIP(u.hostname.replace(/^\[|\]$/g, '')) !== 0) return fail('a host name, not an IP address');
  if (!u.hostname.includes('.')) return fail('a dotted host name');
  if (u.href !== clientId && `${u.href}` !== `${clientId}/`) return fail('the client ID must be in its normal form');
  return { ok: true, value: u };
}

/** Addresses a fetch must never connect to: loopback, private, link-local, unique-local, unspecified, multicast, CGNAT. */
export function privateAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || a >= 224;
  }
  if (v === 6) {
    const x = address.toLowerCase();
    if (x === '::' || x === '::1') return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(x);
    if (mapped) return privateAddress(mapped[1]!);
    return /^(fc|fd|fe[89ab]|ff)/.test(x);
  }
  return true; // not an address at all: refuse
}

export interface UrlClientDocument {
  clientId: string;
  name: string;
  redirectUris: string[];
  authMethod: 'none' | 'private_key_jwt';
  jwksUri?: string;
  logoUri?: string;
}

/**
 * The document served at a client_id URL (the fields of document 2's table): `client_id` equal
 * to the URL it came from, `redirect_uris` HTTPS or loopback http, `none` or `private_key_jwt`
 * with a same-origin `jwks_uri` (`client_secret_*` refused), `logo_uri` same-origin or ignored.
 */
export function urlClientDocument(fetchedFrom: string, body: unknown): UrlClientCheck<UrlClientDocument> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return fail('the document is not a JSON object');
  const d = body as Record<string, unknown>;
  if (d.client_id !== fetchedFrom) return fail('client_id differs from the URL it was fetched from');
  const origin = new URL(fetchedFrom).origin;
  const uris = d.redirect_uris === undefined ? [] : d.redirect_uris;
  if (!Array.isArray(uris) || !uris.every((u): u is string => typeof u === 'string' && (u.startsWith('https://') || isLoopbackRedirect(u)) && !u.includes('#'))) {
    return fail('redirect_uris must be HTTPS or loopback http URIs');
  }
  const method = d.token_endpoint_auth_method ?? 'none';
  if (typeof method === 'string' && method.startsWith('client_secret')) return fail(`${method} is refused for a URL client`);
  if (method !== 'none' && method !== 'private_key_jwt') return fail('token_endpoint_auth_method must be none or private_key_jwt');
  const out: UrlClientDocument = { clientId: fetchedFrom, name: typeof d.client_name === 'string' ? d.client_name : new URL(fetchedFrom).host, redirectUris: uris, authMethod: method };
  if (method === 'private_key_jwt') {
    if (typeof d.jwks_uri !== 'string' || !URL.canParse(d.jwks_uri) || new URL(d.jwks_uri).origin !== origin) return fail('private_key_jwt needs a same-origin jwks_uri');
    out.jwksUri = d.jwks_uri;
  }
  if (typeof d.logo_uri === 'string' && URL.canParse(d.logo_uri) && new URL(d.logo_uri).origin === origin) out.logoUri = d.logo_uri;
  return { ok: true, value: out };
}

/** Where a request may return: one of the document's redirect URIs, or the client_id's own origin when no document was published. */
export function urlClientRedirectAllowed(clientId: string, document: UrlClientDocument | undefined, redirectUri: string): boolean {
  if (document && document.redirectUris.length > 0) return document.redirectUris.includes(redirectUri);
  return URL.canParse(redirectUri) && new URL(redirectUri).origin === new URL(clientId).origin;
}

/** Whether consent may call the redirect host verified: it is the client's own host. */
export const verifiedHost = (clientId: string, redirectUri: string): boolean => new URL(clientId).host === new URL(redirectUri).host;

/** Seconds to cache a fetched document: its max-age (or Expires), clamped to the document's 5 minutes .. 24 hours. */
export function urlClientCacheSeconds(headers: { cacheControl?: string | null; expires?: string | null; date?: string | null }, nowMs: number): number {
  let seconds: number | undefined;
  const cc = headers.cacheControl ?? '';
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/i.test(cc)) seconds = 0;
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cc);
  if (seconds === undefined && m) seconds = Number(m[1]);
  if (seconds === undefined && headers.expires) {
    const expires = Date.parse(headers.expires);
    const base = headers.date ? Date.parse(headers.date) : nowMs;
    if (!Number.isNaN(expires)) seconds = Math.floor((expires - (Number.isNaN(base) ? nowMs : base)) / 1000);
  }
  return Math.min(limits.url_client_cache_max_seconds, Math.max(limits.url_client_cache_min_seconds, seconds ?? 0));
}

/** The body cap and timeout of a fetch (16 KiB, 5 seconds). */
export const URL_CLIENT_FETCH = { maxBytes: limits.url_client_doc_max_bytes, timeoutMs: limits.url_client_fetch_timeout_seconds * 1000, redirects: 0 } as const;
