// Small web-standard helpers shared by the handlers: JSON and HTML answers with the RP's security
// headers, cookies, content negotiation and a capped body reader. Nothing here trusts the client.
import { RpError, ruleError } from './errors.ts';
import { errorPage } from './pages/error-page.ts';

/** A strict Content-Security-Policy: scripts and styles only from this origin, no framing. */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export const CORS_ANY = { 'access-control-allow-origin': '*' } as const;

export function json(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set('content-type', 'application/json; charset=utf-8');
  if (!h.has('cache-control')) h.set('cache-control', 'no-store');
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) h.set(k, v);
  return new Response(JSON.stringify(body), { status, headers: h });
}

export function html(body: string, status = 200, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set('content-type', 'text/html; charset=utf-8');
  h.set('content-security-policy', CSP);
  h.set('cache-control', 'no-store');
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) h.set(k, v);
  return new Response(body, { status, headers: h });
}

export function errorJson(error: RpError, extra: HeadersInit = {}): Response {
  const h = new Headers(extra);
  for (const [k, v] of Object.entries(error.headers)) h.set(k, v);
  return json(error.envelope(), error.status, h);
}

export function errorHtml(error: RpError, rpName: string, extra: HeadersInit = {}): Response {
  const h = new Headers(extra);
  for (const [k, v] of Object.entries(error.headers)) h.set(k, v);
  return html(errorPage(error, rpName), error.status, h);
}

/** Renders `error` as JSON or HTML, whichever the request prefers (JSON when it asks for it). */
export function errorFor(req: Request, error: RpError, rpName: string, extra: HeadersInit = {}): Response {
  return prefersJson(req) ? errorJson(error, extra) : errorHtml(error, rpName, extra);
}

// ---- content negotiation ----

interface MediaRange { type: string; q: number; index: number }

function parseAccept(header: string | null): MediaRange[] {
  if (!header) return [];
  return header.split(',').slice(0, 64).flatMap((part, index) => {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!type) return [];
    let q = 1;
    for (const p of params) {
      const m = /^q=([01](?:\.\d{0,3})?)$/.exec(p);
      if (m) q = Math.min(1, Number(m[1]));
    }
    return [{ type, q, index }];
  });
}

function quality(ranges: MediaRange[], type: string): { q: number; index: number } {
  const [major] = type.split('/');
  let best = { q: 0, index: Infinity, specificity: -1 };
  for (const r of ranges) {
    const specificity = r.type === type ? 2 : r.type === `${major}/*` ? 1 : r.type === '*/*' ? 0 : -1;
    if (specificity > best.specificity) best = { q: r.q, index: r.index, specificity };
  }
  return best;
}

/** True when `Accept` prefers application/json over text/html (ties go to the one listed first). */
export function prefersJson(req: Request): boolean {
  const ranges = parseAccept(req.headers.get('accept'));
  if (ranges.length === 0) return false;
  const j = quality(ranges, 'application/json');
  const h = quality(ranges, 'text/html');
  if (j.q === 0) return false;
  if (j.q !== h.q) return j.q > h.q;
  return j.index < h.index;
}

// ---- cookies ----

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

export interface CookieOptions { secure: boolean; maxAge?: number; httpOnly?: boolean }

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

// ---- bodies ----

/**
 * Reads the body as bytes, refusing more than `max` bytes with 413 before anything is parsed
 * (ns.delivery.body-cap): first by Content-Length, then while streaming.
 */
export async function readCappedBody(req: Request, max: number): Promise<Uint8Array> {
  const tooLarge = () => ruleError(413, 'ns.delivery.body-cap', `the body is larger than ${max} bytes`);
  const declared = req.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > max) throw tooLarge();
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof RpError) throw error;
    // srvx aborts an over-large stream with status 413; anything else is a broken upload.
    if ((error as { status?: number })?.status === 413) throw tooLarge();
    throw new RpError(400, 'malformed_body', 'the request body could not be read', 'ns.delivery.never-500');
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict UTF-8 text, or undefined when the bytes are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The media type of the request without parameters, lower case ('' when absent). */
export function mediaType(req: Request): string {
  return (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}
