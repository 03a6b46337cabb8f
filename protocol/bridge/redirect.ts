// redirect_uri matching (ob.authorize.redirect-exact, ob.authorize.loopback): an exact string
// match, except that a public client's registered loopback redirect matches the same URI on any
// port (RFC 8252 section 7.3). Custom schemes are not redirects in this version.

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/** `http://127.0.0.1:<port>/...` or `http://[::1]:<port>/...`; undefined otherwise. */
function loopbackParts(uri: string): { host: string; rest: string } | undefined {
  const m = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?(\/[^#]*)?$/.exec(uri);
  if (!m || !LOOPBACK_HOSTS.has(m[1]!)) return undefined;
  if (m[2] !== undefined && Number(m[2]) > 65535) return undefined;
  return { host: m[1]!, rest: m[3] ?? '' };
}

export const isLoopbackRedirect = (uri: string): boolean => loopbackParts(uri) !== undefined;

/** A redirect URI a client may register: HTTPS, or loopback HTTP; no fragment. */
export function registrableRedirect(uri: string): boolean {
  if (uri.includes('#')) return false;
  if (isLoopbackRedirect(uri)) return true;
  try {
    const u = new URL(uri);
    return u.protocol === 'https:' && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/** The registered URI `requested` matches, or undefined (exact, or the loopback exception for public clients). */
export function matchRedirect(requested: string, registered: readonly string[], publicClient: boolean): string | undefined {
  if (registered.includes(requested)) return requested;
  if (!publicClient) return undefined;
  const asked = loopbackParts(requested);
  if (!asked) return undefined;
  return registered.find((r) => {
    const reg = loopbackParts(r);
    return reg !== undefined && reg.host === asked.host && reg.rest === asked.rest;
  });
}

/** The sector of a registered client (ob.subject.pairwise): an explicit sector host, else the first redirect URI's host. */
export function sectorOf(redirectUris: readonly string[], sectorHost?: string): string {
  if (sectorHost !== undefined && sectorHost !== '') return sectorHost.toLowerCase();
  const first = redirectUris[0];
  if (first === undefined) throw new TypeError('a client needs a redirect URI or a sector host');
  return new URL(first).hostname.toLowerCase();
}
