// URL handling for origins, links and ID input. Deliberately not WHATWG `URL`: that parser
// punycodes Unicode hosts and rewrites paths, which would turn input the documents refuse (a
// Unicode name, `https://host/?`) into something that passes. This splits by RFC 3986 instead.
const URI = /^([A-Za-z][A-Za-z0-9+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;
const AUTHORITY = /^(?:([^@]*)@)?(\[[0-9A-Fa-f:.]+\]|[^:]*)(?::(.*))?$/;
// A bracketed IPv6 literal, or dot-separated labels of letters, digits and inner hyphens.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)$/;

export interface UrlParts {
  scheme: string; // lower case
  hasAuthority: boolean;
  userinfo?: string;
  host: string; // lower case
  port?: string; // present when the authority has a colon, even with nothing after it
  path: string;
  query?: string; // present (possibly empty) when the text has `?`
  fragment?: string; // present (possibly empty) when the text has `#`
}

export function splitUrl(text: string): UrlParts | undefined {
  const m = URI.exec(text);
  if (!m) return undefined;
  const [, scheme, authority, path, query, fragment] = m;
  const parts: UrlParts = { scheme: scheme!.toLowerCase(), hasAuthority: authority !== undefined, host: '', path: path ?? '' };
  if (query !== undefined) parts.query = query;
  if (fragment !== undefined) parts.fragment = fragment;
  if (authority !== undefined) {
    const a = AUTHORITY.exec(authority);
    if (!a) return undefined;
    if (a[1] !== undefined) parts.userinfo = a[1];
    parts.host = (a[2] ?? '').toLowerCase();
    if (a[3] !== undefined) parts.port = a[3];
  }
  return parts;
}

const DEFAULT_PORT: Record<string, number> = { https: 443, http: 80 };

function originOf(p: UrlParts): string | undefined {
  if (p.scheme !== 'https' && p.scheme !== 'http') return undefined;
  if (!p.hasAuthority || p.host === '' || !HOST.test(p.host) || p.userinfo !== undefined) return undefined;
  if (p.port !== undefined && (!/^\d{1,5}$/.test(p.port) || Number(p.port) > 65535)) return undefined;
  const port = p.port === undefined || Number(p.port) === DEFAULT_PORT[p.scheme] ? '' : `:${Number(p.port)}`;
  return `${p.scheme}://${p.host}${port}`;
}

/**
 * The audience normalization of document 1 (ns.request.audience): lower-case scheme and host,
 * default port dropped, no path (a lone `/` is allowed), query, fragment or userinfo. `http` is
 * accepted here; whether it is allowed is the caller's policy (ns.request.audience-http-dev).
 */
export function normalizeOrigin(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const p = splitUrl(raw.trim());
  if (!p || p.query !== undefined || p.fragment !== undefined) return undefined;
  if (p.path !== '' && p.path !== '/') return undefined;
  return originOf(p);
}

/** ns.auth.5: development hosts are `localhost` (and `*.localhost`), 127.0.0.0/8 and ::1. */
export function isDevelopmentHost(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '[::1]' || h === '::1') return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m?.slice(1).every((o) => Number(o) <= 255) ?? false;
}

/** The origin of any http(s) URL (its path, query and fragment ignored). */
export function urlOrigin(url: string): string | undefined {
  const p = splitUrl(url.trim());
  return p ? originOf(p) : undefined;
}

/** True when `url` is on exactly the origin `origin` (ns.reference.same-origin, ns.request.response-uri). */
export function sameOrigin(origin: string, url: string): boolean {
  const a = normalizeOrigin(origin);
  return a !== undefined && a === urlOrigin(url);
}

/** Decoded query parameters (`+` is a space, as in form encoding). */
export function queryParams(query: string | undefined): URLSearchParams {
  return new URLSearchParams(query ?? '');
}
