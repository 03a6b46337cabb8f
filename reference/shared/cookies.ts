// Cookies: a tolerant reader, and names and attributes for this origin (`__Host-` only over https).

export function readCookies(req: Request): Map<string, string> {
  const out = new Map<string, string>();
  const header = req.headers.get('cookie');
  if (!header) return out;
  for (const part of header.split(';').slice(0, 128)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

export interface CookieOptions {
  secure: boolean;
  maxAge?: number;
  httpOnly?: boolean;
}

/**
 * The cookie name for this origin: over https the profile's `__Host-` name; over plain http
 * (development) the prefix is dropped, because browsers refuse `__Host-` cookies without Secure.
 */
export function cookieName(profileName: string, secure: boolean): string {
  return secure ? profileName : profileName.replace(/^__Host-/, '');
}

export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, 'Path=/', 'SameSite=Lax'];
  if (options.httpOnly !== false) parts.push('HttpOnly');
  if (options.secure) parts.push('Secure');
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`);
  return parts.join('; ');
}
