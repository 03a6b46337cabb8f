// The relay's core broken on the wire the way implementers ship it (issue 25): each variant does
// one realistic bug of messaging, sessions and owner authentication, judged by the matrix checks
// (harness/suites/relay/checks/matrix-*.ts). The wrapper learns what a relay would know from the
// traffic it sees (sessions registered and revoked, challenges issued, senders throttled) and
// re-checks signatures itself, so a refusal is waved through only in exactly the case the bug
// lets through; what it answers then is what the broken relay would answer.
import { createHash } from 'node:crypto';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { previousKeys, verifyDocument } from '../../protocol/common/document.ts';
import { verifyEd25519 } from '../../protocol/common/ed25519.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { jsonAnswer, type Next, type Wire, type WireVariant } from './wire.ts';

const profile = profileFor();
const ids = profile.ids;

interface Refusal {
  status: number;
  rule?: string;
  error?: string;
}

interface Known {
  identity: string;
  key: Uint8Array;
  expiresAt: number;
  revoked: boolean;
}

/** What the wrapper learned from the traffic: sessions, challenges issued, senders throttled. */
class Ledger {
  readonly sessions = new Map<string, Known>();
  readonly challenges = new Map<string, { identity: string; at: number }>();
  readonly throttled = new Map<string, number>();
  /** Identity keys registered here (POST /identities). */
  readonly keys = new Map<string, Uint8Array>();

  /** Watches registrations, revocations, challenges and 429s; `then` decides the rest. */
  wire(then: (req: Request, next: Next, body: string) => Promise<Response>): Wire {
    return async (req, next) => {
      const url = new URL(req.url);
      // The request reaches the wrapper rereadable (server.ts): its copy's text is the body as sent.
      const body = req.method === 'GET' || req.method === 'HEAD' ? '' : await req.clone().text();
      const res = await then(req, next, body);
      if (url.pathname === '/sessions' && req.method === 'POST' && res.status === 201) {
        const sent = parse(body);
        const got = parse(await res.clone().text());
        const key = parseKey(sent.session_public_key, 'signing');
        if (typeof got.session_id === 'string' && key) this.sessions.set(got.session_id, { identity: String(sent.identity), key, expiresAt: Date.parse(String(sent.expires_at)), revoked: false });
      }
      if (url.pathname === '/identities' && req.method === 'POST' && res.status === 201) {
        const sent = parse(body);
        const key = parseKey(sent.public_key, 'signing');
        if (key) this.keys.set(String(sent.identity).toLowerCase(), key);
      }
      if (url.pathname.startsWith('/sessions/') && req.method === 'DELETE' && res.status === 204) {
        const known = this.sessions.get(decodeURIComponent(url.pathname.slice('/sessions/'.length)));
        if (known) known.revoked = true;
      }
      if (url.pathname === '/auth/challenge' && res.status === 200) {
        const c = parse(await res.clone().text()).challenge;
        if (typeof c === 'string') this.challenges.set(c, { identity: String(url.searchParams.get('identity')), at: Date.now() });
      }
      if ((url.pathname === '/messages' || url.pathname === '/acks') && req.method === 'POST' && res.status === 429) this.throttled.set(String(parse(body).sender).toLowerCase(), Date.now());
      return res;
    };
  }

  /** The live session named by the request's X-Svc-Session-Id (not revoked, not expired). */
  live(id: string | null): Known | undefined {
    const k = id === null ? undefined : this.sessions.get(id);
    return k && !k.revoked && k.expiresAt > Date.now() ? k : undefined;
  }
}

function parse(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function refusal(res: Response): Promise<Refusal> {
  const e = parse(await res.clone().text());
  return { status: res.status, ...(typeof e.rule === 'string' ? { rule: e.rule } : {}), ...(typeof e.error === 'string' ? { error: e.error } : {}) };
}

/** The inbox's owner-only calls: pickup (and its cursor read), consume, events. */
const inboxCall = (req: Request, url: URL): boolean =>
  (req.method === 'GET' && /^\/(messages|events)\/[^/]+$/.test(url.pathname)) || (req.method === 'POST' && /^\/messages\/[^/]+\/consume$/.test(url.pathname));

/** What a relay that let the call through answers it (nothing pending: the variant cannot read the inbox). */
function inboxSuccess(req: Request): Response {
  const url = new URL(req.url);
  if (url.pathname.startsWith('/events/'))
    return new Response(`event: ready\ndata: ${JSON.stringify({ type: 'ready', identity: decodeURIComponent(url.pathname.split('/')[2] ?? ''), timestamp: formatRfc3339(Date.now()) })}\n\n`, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
    });
  if (url.pathname.endsWith('/consume')) return jsonAnswer({ consumed: 0, acks_consumed: 0 });
  const since = url.searchParams.get('since');
  return jsonAnswer({ messages: [], acks: [], ...(since !== null ? { cursor: since, ack_cursor: since } : {}) });
}

/** Whether the owner call's signature (challenge named in X-Svc-Challenge, or svc-request/v1) verifies with `key`. */
function signedWith(req: Request, body: string, key: Uint8Array, line = ownerLine(req, body)): boolean {
  const sig = decodeBase64Any(req.headers.get(ids.header_signature) ?? '');
  return line !== undefined && sig !== undefined && sig.length === 64 && verifyEd25519(key, line, sig);
}

function ownerLine(req: Request, body: string, target?: string): string | undefined {
  const h = (n: string) => req.headers.get(n) ?? undefined;
  const url = new URL(req.url);
  const nonce = h(ids.header_nonce);
  const timestamp = h(ids.header_timestamp);
  if (nonce !== undefined && timestamp !== undefined) {
    const body_sha256 = createHash('sha256').update(body).digest('hex');
    return canonicalString(profile, 'signed-request', { identity: h(ids.header_identity) ?? '', method: req.method, path: target ?? `${url.pathname}${url.search}`, timestamp, nonce, body_sha256 });
  }
  const challenge = h(ids.header_challenge);
  return challenge === undefined ? undefined : canonicalString(profile, 'challenge', { challenge });
}

const pathIdentity = (url: URL) => decodeURIComponent(url.pathname.split('/')[2] ?? '').toLowerCase();
const accepted202 = (body: string) => jsonAnswer({ id: parse(body).id ?? 'accepted' }, 202);

/** Refusals of matching requests answered `success` when `waive` says the bug lets them through. */
function waived(match: (req: Request, url: URL) => boolean, waive: (r: Refusal, req: Request, url: URL, body: string) => boolean, success: (req: Request, body: string) => Response): Wire {
  const ledger = new Ledger();
  return ledger.wire(async (req, next, body) => {
    const url = new URL(req.url);
    const res = await next(req);
    if (res.status < 400 || !match(req, url)) return res;
    return waive(await refusal(res), req, url, body) ? success(req, body) : res;
  });
}

/** A variant needing the ledger itself. */
function withLedger(make: (ledger: Ledger) => (req: Request, next: Next, body: string) => Promise<Response>): Wire {
  const ledger = new Ledger();
  return ledger.wire(make(ledger));
}

/** A signed request (svc-request/v1 headers present). */
const signedRequest = (req: Request) => req.headers.has(ids.header_nonce) && req.headers.has(ids.header_timestamp);

/** What a relay that let a signed owner call through answers: the inbox's answers, else an empty success. */
const ownerSuccess = (req: Request): Response => (inboxCall(req, new URL(req.url)) ? inboxSuccess(req) : jsonAnswer({}));

export const RELAY_CORE_WIRE: Record<string, WireVariant> = {
  // A relay that builds svc-request/v1 from the URL's path alone: the query is never signed, so a
  // signed request replayed with another query (another cursor) verifies.
  'core-query-unsigned': {
    rule: 'ra.signed-request',
    what: 'a signed request whose signature covers the path without its query is let through',
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (res.status !== 401 || !signedRequest(req) || url.search === '') return res;
      const identity = (req.headers.get(ids.header_identity) ?? '').toLowerCase();
      const s = ledger.live(req.headers.get(ids.header_session_id));
      const key = s?.key ?? ledger.keys.get(identity);
      return key && identity === pathIdentity(url) && signedWith(req, body, key, ownerLine(req, body, url.pathname)) ? ownerSuccess(req) : res;
    }),
  },
  // Issue 25: "The pickup check uses another identity's *identity* key, never its *session* key
  // with `X-Svc-Session-Id`." The relay verifies the signature by the named session's key and
  // never asks whose session it is: another identity's session opens this inbox.
  'core-session-owner-unchecked': {
    rule: 'ra.auth.session-key',
    what: "an owner call signed by another identity's session (its key, its X-Svc-Session-Id) is let through",
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (res.status !== 401 || !inboxCall(req, url)) return res;
      const s = ledger.live(req.headers.get(ids.header_session_id));
      return s && s.identity.toLowerCase() !== pathIdentity(url) && signedWith(req, body, s.key) ? inboxSuccess(req) : res;
    }),
  },
  // The same issue sentence, its other half: the session id is the identity's own, the key
  // another identity's session key. The relay accepts a signature by any live session key.
  'core-session-key-any': {
    rule: 'ra.auth.session-key',
    what: "an owner call naming its own session but signed by another identity's session key is let through",
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (res.status !== 401 || !inboxCall(req, url)) return res;
      const named = ledger.live(req.headers.get(ids.header_session_id));
      const anyKey = [...ledger.sessions.keys()].some((id) => {
        const s = ledger.live(id);
        return s !== undefined && signedWith(req, body, s.key);
      });
      return named && named.identity.toLowerCase() === pathIdentity(url) && anyKey ? inboxSuccess(req) : res;
    }),
  },
  // Messages: a session_id of another identity's is looked up, its key verifies, and the relay
  // never compares the session's identity with the envelope's sender.
  'core-envelope-session-owner-unchecked': {
    rule: 'ra.messages.session-expired',
    what: "a message or ack signed by another identity's session (its key and its session_id) is accepted",
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (res.status !== 401 || req.method !== 'POST' || (url.pathname !== '/messages' && url.pathname !== '/acks')) return res;
      const e = parse(body);
      const s = ledger.live(typeof e.session_id === 'string' ? e.session_id : null);
      if (!s || s.identity.toLowerCase() === String(e.sender).toLowerCase()) return res;
      const { signature, ...unsigned } = e;
      const sig = decodeBase64Any(String(signature));
      const line = canonicalString(profile, url.pathname === '/acks' ? 'ack' : 'message', unsigned);
      return sig && sig.length === 64 && verifyEd25519(s.key, line, sig) ? accepted202(body) : res;
    }),
  },
  // Issue 25: "The `encryption_required` check faults the signature, never a sender already over
  // its rate limit." The relay charges the sender's bucket before it looks at the envelope's
  // encryption: a throttled sender's unencrypted message is answered 429.
  'core-rate-before-encryption': {
    rule: 'ra.messages.encryption-required',
    what: 'a sender over its rate limit sending without encryption is answered 429, not encryption_required',
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (url.pathname !== '/messages' || req.method !== 'POST' || res.status !== 400 || (await refusal(res)).rule !== 'ra.messages.encryption-required') return res;
      const at = ledger.throttled.get(String(parse(body).sender).toLowerCase());
      if (at === undefined || Date.now() - at > limits.relay_rate_window_seconds * 1000) return res;
      return jsonAnswer({ error: 'rate_limit_exceeded', detail: 'the sender bucket is spent', scope: 'sender', window: 60, limit: 120, reset_at: formatRfc3339(at + 60_000) }, 429);
    }),
  },
  // Issue 25: "The rotation check never sends a new document signed by the wrong key." The relay
  // checks that the document names the new key and lists the old one, never its signature.
  'core-rotation-document-unchecked': {
    rule: 'ra.identities.rotate',
    what: 'a rotation whose new document is signed by another key than the new one is applied',
    wire: waived(
      (req, url) => req.method === 'POST' && url.pathname.endsWith('/rotate'),
      (r, _req, url, body) => {
        const b = parse(body);
        const d = (b.identity_document ?? {}) as Record<string, unknown>;
        const newKey = parseKey(b.new_public_key, 'signing');
        const docKey = parseKey(d.public_key, 'signing');
        const named = String(d.identity ?? '').toLowerCase() === pathIdentity(url);
        return r.rule === 'ra.identities.rotate' && !verifyDocument(d).ok && named && !!newKey && !!docKey && Buffer.from(newKey).equals(docKey) && previousKeys(d).length > 0;
      },
      (_req, body) => jsonAnswer(parse(body).identity_document ?? {}),
    ),
  },
  // The same sentence, the other signature: rotation_signature is checked against the new key
  // (the one the document carries) instead of the old one.
  'core-rotation-signed-by-new-key': {
    rule: 'ra.identities.rotate',
    what: 'a rotation signed by the new key instead of the old one is applied',
    wire: waived(
      (req, url) => req.method === 'POST' && url.pathname.endsWith('/rotate'),
      (r, _req, url, body) => {
        const b = parse(body);
        const newKey = parseKey(b.new_public_key, 'signing');
        const sig = decodeBase64Any(String(b.rotation_signature ?? ''));
        if (r.rule !== 'ra.errors.signature-invalid' || !newKey || !sig || sig.length !== 64) return false;
        // The old key's text is not in the request: any signature by the new key over lines naming it passes.
        const d = (b.identity_document ?? {}) as Record<string, unknown>;
        const old = previousKeys(d).map((p) => Buffer.from(p.publicKey).toString('base64url'));
        return old.some((oldKey) =>
          verifyEd25519(
            newKey,
            canonicalString(profile, 'identity-rotation', { identity: pathIdentity(url), old_public_key: oldKey, new_public_key: b.new_public_key, issued_at: b.issued_at, nonce: b.nonce }),
            sig,
          ),
        );
      },
      (_req, body) => jsonAnswer(parse(body).identity_document ?? {}),
    ),
  },
};
