// Web-standard HTTP helpers shared by the reference servers: JSON and HTML answers with security
// headers, the error envelope and content negotiation (bodies are read by ./body.ts). Nothing here
// trusts the client.
import type { ServerResponse } from 'node:http';
import type { HttpError } from './errors.ts';
import { errorPage, type Site } from './pages.ts';

/** A strict Content-Security-Policy: scripts and styles only from this origin, no framing. */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const CORS_ANY: Readonly<Record<string, string>> = Object.freeze({ 'access-control-allow-origin': '*' });

/**
 * An answer before it becomes a web Response or is written to a node ServerResponse: both
 * paths send the same status, headers and bytes.
 */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A JSON reply with the security headers; `headers` may set cache-control and add others. */
export function jsonReply(body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): Reply {
  const h = { 'cache-control': 'no-store', ...headers, 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
  return { status, headers: h, body: JSON.stringify(body) };
}

export function errorReply(error: HttpError): Reply {
  return jsonReply(error.envelope(), error.status, error.headers);
}

export function toResponse(reply: Reply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/** Writes a reply on node's ServerResponse (one write: headers and a string body together). */
export function writeReply(res: ServerResponse, reply: Reply): void {
  reply.headers['content-length'] = String(Buffer.byteLength(reply.body));
  res.writeHead(reply.status, reply.headers);
  res.end(reply.body);
}

export function json(body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): Response {
  return toResponse(jsonReply(body, status, headers));
}

const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function html(body: string, status = 200, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set('content-type', 'text/html; charset=utf-8');
  h.set('content-security-policy', CSP);
  h.set('cache-control', 'no-store');
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) h.set(k, v);
  return new Response(body, { status, headers: h });
}

/** A static asset (script, stylesheet) from this origin. */
export function asset(body: string, contentType: string): Response {
  return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' } });
}

export function errorJson(error: HttpError, extra: Readonly<Record<string, string>> = {}): Response {
  return json(error.envelope(), error.status, { ...extra, ...error.headers });
}

export function errorHtml(error: HttpError, site: Site, extra: Readonly<Record<string, string>> = {}): Response {
  return html(errorPage(error, site), error.status, { ...extra, ...error.headers });
}

/** Renders `error` as JSON or HTML, whichever the request prefers (JSON when it asks for it). */
export function errorFor(req: Request, error: HttpError, site: Site, extra: Readonly<Record<string, string>> = {}): Response {
  return prefersJson(req) ? errorJson(error, extra) : errorHtml(error, site, extra);
}

// ---- content negotiation ----

interface MediaRange {
  type: string;
  q: number;
  index: number;
}

function parseAccept(header: string | null): MediaRange[] {
  if (!header) return [];
  return header
    .split(',')
    .slice(0, 64)
    .flatMap((part, index) => {
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict UTF-8 text, or undefined when the bytes are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
