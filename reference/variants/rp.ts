// The reference RP broken on the wire, one rule each (see wire.ts): its metadata, the request it
// builds, its receipts, context records and reference links, edited on the way out.
import { profileFor } from '../../protocol/common/profile.ts';
import { decodeObject, encodeObject } from '../../protocol/common/codec.ts';
import { encodeBase64url, utf8 } from '../../protocol/common/base64.ts';
import { pathsFor } from '../rp/config.ts';
import { rpMatrixWire } from './rp-matrix.ts';
import { answer, at, both, editHeaders, editJson, editRequest, jsonAnswer, withBody, type Wire, type WireVariant } from './kit.ts';

const profile = profileFor();
const p = pathsFor(profile);
const AUTH = profile.ids.auth_field;
const ELSEWHERE = 'https://elsewhere.example';

const metadata = (edit: (m: Record<string, unknown>) => void) => editJson(at(p.metadata, 'GET'), (m) => void edit(m), [200]);

/** Edits the request the RP's start answer carries (re-encoded, so it decodes as edited). */
const request = (edit: (r: Record<string, unknown>) => void, encode: (r: Record<string, unknown>) => string = encodeObject) =>
  editJson(
    at(p.login, 'POST'),
    (body) => {
      const decoded = decodeObject(String(body.request));
      if (!decoded.ok) return;
      edit(decoded.value);
      body.request = encode(decoded.value);
    },
    [201],
  );

const receipt = (edit: (r: Record<string, unknown>) => void) => editJson(at(p.response, 'POST'), (r) => void edit(r), [200]);

const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const refusal = (status: number, error: string) => jsonAnswer({ error, detail: 'refused by the broken variant' }, status);
const gone = (path: string, method?: string) => answer(at(path, method), () => refusal(404, 'not_found'));

/** The delivery's approval and match, read from a copy of the request (undefined when unreadable). */
async function delivery(req: Request): Promise<{ text: string; approval?: Record<string, unknown>; match?: unknown }> {
  const text = await req.clone().text();
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (typeof body.response === 'string') {
      const d = decodeObject(body.response);
      return { text, match: body.match, ...(d.ok ? { approval: d.value } : {}) };
    }
    return { text, approval: body };
  } catch {
    const d = decodeObject(text);
    return { text, ...(d.ok ? { approval: d.value } : {}) };
  }
}

/**
 * The delivery again, from the text read: the RP's body reader may not see a body once a clone of
 * it was read (seen with the in-process RP: "the body is empty").
 */
const again = (req: Request, text: string) => new Request(req.url, { method: req.method, headers: req.headers, body: text });

/**
 * Hands out `alias(real)` in place of a secret the start answer (or a receipt) carries, and maps
 * the alias back wherever it comes in (path, query, JSON body, cookie): the RP works as before
 * while its client sees the weaker secret.
 */
function aliasing(out: (req: Request, url: URL, res: Response) => boolean, field: (body: Record<string, unknown>) => [string, (v: string) => void] | undefined, alias: (real: string) => string): Wire {
  const real = new Map<string, string>();
  return async (req, next) => {
    let text: string | undefined;
    let url = req.url;
    for (const [a, r] of real) if (url.includes(a)) url = url.replace(a, r);
    if (req.method === 'POST') {
      text = await req.text();
      for (const [a, r] of real) text = text.replace(`"${a}"`, `"${r}"`);
    }
    const headers = new Headers(req.headers);
    const cookie = headers.get('cookie');
    if (cookie) {
      let c = cookie;
      for (const [a, r] of real) c = c.replace(`=${a}`, `=${r}`);
      headers.set('cookie', c);
    }
    const res = await next(new Request(url, { method: req.method, headers, ...(text !== undefined ? { body: text } : {}) }));
    if (!out(req, new URL(req.url), res) || !(res.headers.get('content-type') ?? '').includes('json')) return res;
    const body = (await res.json()) as Record<string, unknown>;
    const f = field(body);
    if (f) {
      const a = alias(f[0]);
      real.set(a, f[0]);
      f[1](a);
    }
    return withBody(res, JSON.stringify(body));
  };
}

const started = (req: Request, url: URL, res: Response) => req.method === 'POST' && url.pathname === p.login && res.status === 201;
const lastSegment = (u: string) => new URL(u).pathname.split('/').at(-1) ?? '';

/**
 * A link of each transaction answered as it first was (fetched when the transaction starts), after
 * the RP stops answering it, unless a delivery for the transaction was accepted: a link that
 * outlives every end but the approval (a wrong match code, the window's end).
 */
function outlives(link: (start: Record<string, unknown>, request: Record<string, unknown>) => string | undefined): Wire {
  const kept = new Map<string, { requestId: string; body: string; headers: Headers }>();
  const approved = new Set<string>();
  return async (req, next) => {
    const url = new URL(req.url);
    if (req.method === 'POST' && url.pathname === p.response) {
      const d = await delivery(req);
      const res = await next(again(req, d.text));
      if (res.status < 300 && d.approval) approved.add(String(d.approval.request_id));
      return res;
    }
    const res = await next(req);
    if (started(req, url, res)) {
      const b = (await res.clone().json()) as Record<string, unknown>;
      const r = decodeObject(String(b.request));
      const path = r.ok ? link(b, r.value) : undefined;
      if (r.ok && path !== undefined) {
        const first = await next(new Request(new URL(path, req.url), { headers: { accept: 'application/json' } }));
        if (first.status === 200) kept.set(path, { requestId: String(r.value.request_id), body: await first.text(), headers: first.headers });
      }
      return res;
    }
    const k = req.method === 'GET' ? kept.get(url.pathname + url.search) : undefined;
    if (k && res.status >= 400 && res.status < 500 && !approved.has(k.requestId)) return new Response(k.body, { status: 200, headers: k.headers });
    return res;
  };
}

export const RP_WIRE: Record<string, WireVariant> = {
  'metadata-version': { rule: 'ns.metadata.version', what: `the metadata says ${AUTH} "2"`, wire: metadata((m) => (m[AUTH] = '2')) },
  'metadata-origin': { rule: 'ns.metadata.origin', what: 'the metadata names another origin', wire: metadata((m) => (m.origin = ELSEWHERE)) },
  'metadata-name': { rule: 'ns.metadata.name', what: 'the metadata has no name', wire: metadata((m) => delete m.name) },
  'metadata-oversize': { rule: 'ns.metadata.body-cap', restates: ['ns.limits.metadata-body'], what: 'the metadata is padded past 16 KiB', wire: metadata((m) => (m.padding = 'x'.repeat(17_000))) },
  'metadata-redirect': {
    rule: 'ns.metadata.no-redirects',
    what: 'the metadata answers 302 to itself with a query',
    wire: answer(
      (req, url) => req.method === 'GET' && url.pathname === p.metadata && url.search === '',
      () => new Response(null, { status: 302, headers: { location: `${p.metadata}?v=1`, 'cache-control': 'no-store' } }),
    ),
  },
  'metadata-path': { rule: 'ns.metadata.path', what: 'the metadata is not at the well-known path', wire: answer(at(p.metadata), () => new Response('not here', { status: 404 })) },
  'metadata-response-uris': {
    rule: 'ns.metadata.response-uris',
    what: 'response_uris lists a URI on another origin',
    wire: metadata((m) => (m.response_uris = [...(m.response_uris as string[]), `${ELSEWHERE}/deliver`])),
  },
  'metadata-poll-uri': { rule: 'ns.metadata.poll-uri', what: 'poll_uri is on another origin', wire: metadata((m) => (m.poll_uri = `${ELSEWHERE}/poll`)) },
  'metadata-context-uri': { rule: 'ns.metadata.context-uri', what: 'context_uri is on another origin', wire: metadata((m) => (m.context_uri = `${ELSEWHERE}/context`)) },
  'metadata-logo-uri': { rule: 'ns.metadata.logo-uri', what: 'logo_uri is on another origin', wire: metadata((m) => (m.logo_uri = `${ELSEWHERE}/logo.png`)) },
  'metadata-app-id': { rule: 'ns.metadata.app-id', what: 'app_id is not the reverse-DNS host', wire: metadata((m) => (m.app_id = 'example.elsewhere.app')) },
  'metadata-scopes': { rule: 'ns.metadata.scopes', what: 'scopes lists one outside the namespace', wire: metadata((m) => (m.scopes = [...(m.scopes as string[]), 'elsewhere.example:read'])) },
  'request-version': { rule: 'ns.request.version', what: `requests say ${AUTH} "2"`, wire: request((r) => (r[AUTH] = '2')) },
  'request-id-short': { rule: 'ns.request.request-id', what: 'request ids are 4 characters', wire: request((r) => (r.request_id = 'abcd')) },
  'request-domain': { rule: 'ns.request.domain', what: 'the domain is not a host', wire: request((r) => (r.domain = 'not a host/')) },
  'request-audience-form': { rule: 'ns.request.audience', what: 'the audience keeps a trailing slash', wire: request((r) => (r.audience = `${String(r.audience)}/`)) },
  'request-audience-other': { rule: 'ns.flow.audience-own-origin', what: 'the audience is another origin', wire: request((r) => (r.audience = ELSEWHERE)) },
  'request-nonce-fixed': { rule: 'ns.request.nonce', what: 'every request carries the same nonce', wire: request((r) => (r.nonce = encodeBase64url(new Uint8Array(32).fill(7)))) },
  'request-timestamps': { rule: 'ns.request.timestamps', what: 'issued_at is epoch milliseconds', wire: request((r) => (r.issued_at = String(Date.parse(String(r.issued_at))))) },
  'request-window': {
    rule: 'ns.request.window',
    what: 'the window is 10 minutes',
    wire: request((r) => (r.expires_at = isoSeconds(Date.parse(String(r.issued_at)) + 600_000))),
  },
  'request-action': { rule: 'ns.request.action', what: 'the action is "pay"', wire: request((r) => (r.action = 'pay')) },
  'request-statement': { rule: 'ns.request.statement', what: 'the statement has a line break', wire: request((r) => (r.statement = 'Sign in\nnow')) },
  'request-scopes': { rule: 'ns.request.scopes', what: 'scopes are unsorted with a duplicate', wire: request((r) => (r.scopes = ['profile', 'email', 'email'])) },
  'request-signed': { rule: 'ns.request.unsigned', what: 'the request carries an RP signature', wire: request((r) => (r.signature = encodeBase64url(new Uint8Array(64).fill(1)))) },
  'request-pretty': {
    rule: 'ns.encoding.compact',
    what: 'the request is encoded as indented JSON',
    wire: request(
      () => undefined,
      (r) => encodeBase64url(utf8(JSON.stringify(r, null, 1))),
    ),
  },
  'request-response-uri': {
    rule: 'ns.request.response-uri',
    what: 'the request names a response_uri the metadata does not list',
    wire: request((r) => (r.response_uri = `${String(r.audience)}/unlisted-deliver`)),
  },
  'receipt-status': { rule: 'ns.delivery.receipt', what: 'the receipt says status "accepted"', wire: receipt((r) => (r.status = 'accepted')) },
  'receipt-token': { rule: 'ns.flow.stateless', what: 'the receipt hands out an access token', wire: receipt((r) => (r.access_token = 'tok_123')) },
  'resume-other-origin': {
    rule: 'ns.auth.6.resume-same-origin',
    what: 'the resume_uri is on another origin',
    wire: receipt((r) => void (typeof r.resume_uri === 'string' && (r.resume_uri = r.resume_uri.replace(/^https?:\/\/[^/]+/, ELSEWHERE)))),
  },
  'match-code-short': { rule: 'ns.limits.match-code', what: 'match codes are one digit', wire: editJson(at(p.login, 'POST'), (b) => void (b.match_code = '7'), [201]) },
  'context-fields': {
    rule: 'ns.context.fields',
    what: 'the context record gives started_at as epoch seconds',
    wire: editJson(at(p.context, 'GET'), (c) => void (c.started_at = Math.floor(Date.parse(String(c.started_at)) / 1000)), [200]),
  },
  'context-location': {
    rule: 'ns.context.no-location',
    what: 'the context record carries coordinates',
    wire: editJson(at(p.context, 'GET'), (c) => void (c.location = { latitude: 48.8566, longitude: 2.3522 }), [200]),
  },
  'expires-early': {
    rule: 'ns.transaction.expiry',
    // Issue 25: "Each window just inside and just outside."
    what: 'a delivery within 2 s of its expires_at is refused as expired (the window ends early)',
    wire: answer(at(p.response, 'POST'), async (req, next) => {
      const d = await delivery(req);
      const end = Date.parse(String(d.approval?.expires_at));
      return end - Date.now() < 2000 ? refusal(400, 'expired') : next(again(req, d.text));
    }),
  },
  'reference-outlives-expiry': {
    rule: 'ns.reference.gone',
    // Issue 25: "After each lifecycle event, every use of what it ended."
    what: 'a reference link keeps answering its request after the transaction expired (until it is used)',
    wire: outlives((b) => (typeof b.request_uri === 'string' ? new URL(b.request_uri).pathname : undefined)),
  },
  'reference-match-code': {
    rule: 'ns.reference.no-match-code',
    what: 'the reference JSON carries the match code',
    wire: editJson(at(p.reference), (b) => void (b.match_code = '42'), [200]),
  },
  'reference-json': { rule: 'ns.reference.json', what: 'the reference JSON names the request "req"', wire: editJson(at(p.reference), (b) => ({ req: b.request }), [200]) },
  'reference-redirect': {
    rule: 'ns.reference.no-redirects',
    what: 'the reference link answers JSON clients with a 302 to itself',
    wire: answer(
      (req, url) => req.method === 'GET' && url.pathname.startsWith(p.reference) && url.search === '' && (req.headers.get('accept') ?? '').includes('json'),
      (req) => new Response(null, { status: 302, headers: { location: `${new URL(req.url).pathname}?v=1` } }),
    ),
  },
  'reference-browser': {
    rule: 'ns.reference.browser',
    what: 'the reference link answers browsers with JSON',
    wire: editRequest(at(p.reference, 'GET'), (req) => {
      const headers = new Headers(req.headers);
      headers.set('accept', 'application/json');
      return new Request(req.url, { method: req.method, headers });
    }),
  },
  'poll-stays-pending': {
    rule: 'ns.transaction.poll',
    restates: ['ns.transport.cross-device-poll'],
    what: 'the poll never reports completion',
    wire: async (req, next) => {
      const res = await next(req);
      if (req.method !== 'POST' || new URL(req.url).pathname !== p.poll || res.status !== 200) return res;
      const body = (await res.json()) as { status?: string };
      if (body.status !== 'completed') return withBody(res, JSON.stringify(body));
      const headers = new Headers(res.headers);
      headers.delete('set-cookie');
      headers.delete('content-length');
      return new Response(JSON.stringify({ status: 'pending' }), { status: 200, headers });
    },
  },
  'no-binding-cookie': { rule: 'ns.transaction.create', what: 'the start answer sets no cookie', wire: editHeaders(at(p.login, 'POST'), (h) => h.delete('set-cookie')) },
  'poll-by-request-id': {
    rule: 'ns.auth.6.poll-secret',
    what: 'the poll secret handed out is the request_id',
    wire: aliasing(
      started,
      (b) => {
        const d = decodeObject(String(b.request));
        return typeof b.poll_secret === 'string' && d.ok ? [b.poll_secret, () => void (b.poll_secret = d.value.request_id)] : undefined;
      },
      (real) => real,
    ),
  },
  'delivery-padded-refused': {
    rule: 'ns.encoding.decode',
    what: 'an approval as raw JSON or padded base64 is refused',
    wire: answer(
      (req, url) => req.method === 'POST' && url.pathname === p.response,
      async (req, next) => {
        const text = (await req.clone().text()).trim();
        return text.startsWith('{"') && !text.includes('"response"') ? refusal(400, 'malformed_response') : text.endsWith('=') ? refusal(400, 'malformed_response') : next(req);
      },
    ),
  },
  'delivery-object-refused': {
    rule: 'ns.delivery.body',
    what: 'the delivery object without match is refused',
    wire: answer(at(p.response, 'POST'), async (req, next) => {
      const d = await delivery(req);
      return d.text.includes('"response"') && d.match === undefined ? refusal(400, 'malformed_response') : next(again(req, d.text));
    }),
  },
  'unpublished-refused': {
    rule: 'ns.metadata.unpublished-response-uris',
    what: 'the metadata publishes no response_uris, and the same-origin response_uri refuses deliveries',
    wire: both(
      metadata((m) => delete m.response_uris),
      answer(at(p.response, 'POST'), () => refusal(403, 'response_uri_not_allowed')),
    ),
  },
  'delivery-gone': { rule: 'ns.transport.delivery', what: 'the delivery endpoint answers 404', wire: gone(p.response, 'POST') },
  'match-signed': {
    rule: 'ns.delivery.match-unsigned',
    restates: ['ns.version.resume-additive', 'ns.transaction.cross-device'],
    what: 'a delivery with a match code is refused as if the match were signed',
    wire: answer(at(p.response, 'POST'), async (req, next) => {
      const d = await delivery(req);
      return d.match !== undefined ? refusal(401, 'signature_invalid') : next(again(req, d.text));
    }),
  },
  'wrong-match-keeps': {
    rule: 'ns.transaction.match-wrong',
    // "The match code is two digits with one attempt": a second attempt is taken.
    restates: ['ns.limits.match-code'],
    what: 'a wrong match code is refused and the transaction stays open',
    wire: (() => {
      const matches = new Map<string, string>();
      return async (req, next) => {
        const url = new URL(req.url);
        if (req.method === 'POST' && url.pathname === p.response) {
          const d = await delivery(req);
          const want = matches.get(String(d.approval?.request_id));
          if (d.match !== undefined && want !== undefined && d.match !== want) return refusal(400, 'match_mismatch');
          req = again(req, d.text);
        }
        const res = await next(req);
        if (started(req, url, res)) {
          const b = (await res.clone().json()) as Record<string, unknown>;
          const r = decodeObject(String(b.request));
          if (r.ok) matches.set(String(r.value.request_id), String(b.match_code));
        }
        return res;
      };
    })() satisfies Wire,
  },
  'poll-completes-early': {
    rule: 'ns.transaction.poll-before-resume',
    what: 'a poll after a same-device approval, before resume, reports the login completed',
    wire: editJson(at(p.poll, 'POST'), (b) => (b.status === 'approved' ? { status: 'completed', identity: 'early.example' } : b), [200]),
  },
  'resume-refused': { rule: 'ns.transaction.resume', restates: ['ns.transport.resume'], what: 'resume answers 403', wire: answer(at(p.resume, 'GET'), () => refusal(403, 'resume_refused')) },
  'reference-reusable': {
    rule: 'ns.reference.gone',
    what: 'a used reference link still answers its request',
    wire: (() => {
      const requests = new Map<string, string>();
      return async (req, next) => {
        const url = new URL(req.url);
        const res = await next(req);
        if (started(req, url, res)) {
          const b = (await res.clone().json()) as Record<string, unknown>;
          requests.set(new URL(String(b.request_uri)).pathname, String(b.request));
        }
        const kept = req.method === 'GET' ? requests.get(url.pathname) : undefined;
        return (res.status === 404 || res.status === 410) && kept !== undefined ? jsonAnswer({ request: kept }) : res;
      };
    })() satisfies Wire,
  },
  'reference-other-origin': {
    rule: 'ns.reference.same-origin',
    what: 'request_uri is on another origin',
    wire: editJson(at(p.login, 'POST'), (b) => void (b.request_uri = `${ELSEWHERE}${new URL(String(b.request_uri)).pathname}`), [201]),
  },
  'reference-code-alphabet': {
    rule: 'ns.reference.code',
    what: 'reference codes carry letters outside Crockford base32',
    wire: aliasing(
      started,
      (b) => [lastSegment(String(b.request_uri)), (a) => void (b.request_uri = String(b.request_uri).replace(/[^/]+$/, a))],
      (real) => `U${real.slice(1).replace(/[0-9]/g, 'U')}`,
    ),
  },
  'reference-code-short': {
    rule: 'ns.limits.reference-code',
    what: 'reference codes are 4 characters',
    wire: aliasing(
      started,
      (b) => [lastSegment(String(b.request_uri)), (a) => void (b.request_uri = String(b.request_uri).replace(/[^/]+$/, a))],
      (real) => real.slice(0, 4),
    ),
  },
  'resume-code-short': {
    rule: 'ns.limits.resume-code',
    what: 'resume codes are 6 characters',
    wire: aliasing(
      (req, url, res) => req.method === 'POST' && url.pathname === p.response && res.status === 200,
      (b) => {
        if (typeof b.resume_uri !== 'string') return undefined;
        const u = new URL(b.resume_uri);
        const code = u.searchParams.get('code') ?? '';
        return [code, (a) => void (b.resume_uri = String(b.resume_uri).replace(code, a))];
      },
      (real) => real.slice(0, 6),
    ),
  },
  'no-deep-link': {
    rule: 'ns.transport.deeplink',
    what: 'the login page offers no deep link',
    wire: async (req, next) => {
      const res = await next(req);
      if (req.method !== 'GET' || !(res.headers.get('content-type') ?? '').includes('html')) return res;
      return withBody(res, (await res.text()).replaceAll(profile.ids.deep_link, 'about:blank#'));
    },
  },
  'no-handoff': {
    rule: 'ns.transport.web-handoff',
    what: 'the login page offers no web-signer handoff',
    wire: async (req, next) => {
      const res = await next(req);
      if (req.method !== 'GET' || !(res.headers.get('content-type') ?? '').includes('html')) return res;
      return withBody(res, (await res.text()).replaceAll('/app/?auth=', '/app/#'));
    },
  },
  'approval-in-url': {
    rule: 'ns.auth.6.no-approval-in-url',
    what: "an approval in the response_uri's query is delivered as if it were the body",
    wire: editRequest(
      (req, url) => url.pathname === p.response && url.searchParams.has('response'),
      (req, url) => new Request(`${url.origin}${url.pathname}`, { method: 'POST', headers: { 'content-type': 'text/plain', accept: 'application/json' }, body: url.searchParams.get('response')! }),
    ),
  },
  'receipt-grant': { rule: 'ns.version.resource-grant-removed', what: 'the receipt carries a v1 resource grant', wire: receipt((r) => (r.grant = { resource: 'profile', expires_in: 3600 })) },
  'poll-gone': { rule: 'ns.transport.poll', what: 'the poll endpoint answers 404', wire: gone(p.poll, 'POST') },
  'context-gone': { rule: 'ns.transport.context', what: 'the context endpoint answers 404', wire: gone(p.context, 'GET') },
  'context-outlives-end': {
    rule: 'ns.transport.context',
    // Issue 25: "After each lifecycle event, every use of what it ended."
    what: 'the context record keeps answering after a wrong match code ended the request or its window ran out (until it is approved)',
    wire: outlives((_, r) => `${p.context}?request_id=${encodeURIComponent(String(r.request_id))}`),
  },
  'reference-json-gone': {
    rule: 'ns.transport.qr',
    what: 'the reference link answers 404 to a signer',
    wire: answer(
      (req, url) => req.method === 'GET' && url.pathname.startsWith(p.reference) && (req.headers.get('accept') ?? '').includes('json'),
      () => refusal(404, 'not_found'),
    ),
  },
  'receipt-no-resume': { rule: 'ns.transport.same-device-return', what: 'same-device receipts carry no resume_uri', wire: receipt((r) => void delete r.resume_uri) },
  'binding-cookie-weak': {
    rule: 'ns.auth.6',
    what: 'the binding cookie carries 8 characters',
    wire: (() => {
      const real = new Map<string, string>();
      return async (req, next) => {
        const headers = new Headers(req.headers);
        const cookie = headers.get('cookie');
        if (cookie)
          headers.set(
            'cookie',
            cookie.replace(/=([^;\s]+)/g, (m, v: string) => `=${real.get(v) ?? v}`),
          );
        const res = await next(new Request(req.url, { method: req.method, headers, ...(req.method === 'POST' ? { body: await req.text() } : {}) }));
        if (!started(req, new URL(req.url), res)) return res;
        const out = new Headers(res.headers);
        out.delete('set-cookie');
        for (const c of res.headers.getSetCookie())
          out.append(
            'set-cookie',
            c.replace(/^([^=]+)=([^;]+)/, (m, name: string, v: string) => {
              real.set(v.slice(0, 8), v);
              return `${name}=${v.slice(0, 8)}`;
            }),
          );
        return new Response(res.body, { status: res.status, headers: out });
      };
    })() satisfies Wire,
  },
  'deep-poll-500': {
    rule: 'ns.delivery.never-500',
    what: 'a poll body nested deeper than 64 levels answers 500 (a parser that recurses without a limit)',
    wire: answer(
      (req, url) => req.method === 'POST' && url.pathname === p.poll,
      async (req, next) => ((await req.clone().text()).includes('['.repeat(65)) ? jsonAnswer({ error: 'internal_error', detail: 'internal error' }, 500) : next(req)),
    ),
  },
  // The matrix variants of issue 25 (rp-matrix.ts).
  ...rpMatrixWire(p.resume),
};
