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
import { jsonAnswer, type Next, type Wire, type WireVariant } from './kit.ts';

const profile = profileFor();
const ids = profile.ids;

interface Refusal {
  status: number;
  rule?: string;
  error?: string;
  detail?: string;
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
  readonly challenges = new Map<string, { identity: string; at: number; expiresAt: number }>();
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
        const got = parse(await res.clone().text());
        if (typeof got.challenge === 'string')
          this.challenges.set(got.challenge, { identity: String(url.searchParams.get('identity')), at: Date.now(), expiresAt: Date.parse(String(got.expires_at)) });
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

export function parse(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function refusal(res: Response): Promise<Refusal> {
  const e = parse(await res.clone().text());
  return {
    status: res.status,
    ...(typeof e.rule === 'string' ? { rule: e.rule } : {}),
    ...(typeof e.error === 'string' ? { error: e.error } : {}),
    ...(typeof e.detail === 'string' ? { detail: e.detail } : {}),
  };
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
export const accepted202 = (body: string) => jsonAnswer({ id: parse(body).id ?? 'accepted' }, 202);

/** Refusals of matching requests answered `success` when `waive` says the bug lets them through. */
export function waived(match: (req: Request, url: URL) => boolean, waive: (r: Refusal, req: Request, url: URL, body: string) => boolean, success: (req: Request, body: string) => Response): Wire {
  const ledger = new Ledger();
  return ledger.wire(async (req, next, body) => {
    const url = new URL(req.url);
    const res = await next(req);
    if (res.status < 400 || !match(req, url)) return res;
    return waive(await refusal(res), req, url, body) ? success(req, body) : res;
  });
}

/** A variant needing the ledger itself. */
export function withLedger(make: (ledger: Ledger) => (req: Request, next: Next, body: string) => Promise<Response>): Wire {
  const ledger = new Ledger();
  return ledger.wire(make(ledger));
}

/** A signed request (svc-request/v1 headers present). */
const signedRequest = (req: Request) => req.headers.has(ids.header_nonce) && req.headers.has(ids.header_timestamp);

/** What a relay that let a signed owner call through answers: the inbox's answers, else an empty success. */
const ownerSuccess = (req: Request): Response => (inboxCall(req, new URL(req.url)) ? inboxSuccess(req) : jsonAnswer({}));

export const RELAY_CORE_WIRE: Record<string, WireVariant> = {
  // A relay that looks a named challenge up among every identity's, never asking whose it is:
  // another identity's live challenge, signed by this one's key, opens this inbox.
  'core-challenge-any-identity': {
    rule: 'ra.pickup.auth',
    what: "an owner call answering another identity's live challenge with the owner's key is let through",
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (res.status !== 401 || !inboxCall(req, url) || signedRequest(req)) return res;
      const named = req.headers.get(ids.header_challenge) ?? '';
      const c = ledger.challenges.get(named);
      const key = ledger.keys.get(pathIdentity(url));
      if (!c || c.identity.toLowerCase() === pathIdentity(url) || Date.now() > c.expiresAt || !key || !signedWith(req, body, key)) return res;
      ledger.challenges.delete(named);
      return inboxSuccess(req);
    }),
  },
  // A relay that caches verified signatures by the signature alone (to verify a retried envelope
  // once): the same signature under another id, though document 3 says the id is "bound into the
  // signing string", is taken as verified.
  'core-signature-cache-without-id': {
    rule: 'ra.messages.signature',
    what: 'a message re-sent under another id with its verified signature is accepted',
    wire: (() => {
      const verified = new Map<string, Record<string, unknown>>();
      return async (req: Request, next: Next) => {
        const url = new URL(req.url);
        const body = req.method === 'POST' && url.pathname === '/messages' ? await req.clone().text() : '';
        const res = await next(req);
        if (body === '') return res;
        const { id, signature, ...rest } = parse(body);
        if (res.status === 202 && typeof signature === 'string') verified.set(signature, rest);
        const seen = typeof signature === 'string' ? verified.get(signature) : undefined;
        return res.status === 401 && seen && JSON.stringify(seen) === JSON.stringify(rest) && typeof id === 'string' ? accepted202(body) : res;
      };
    })(),
  },
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
  ...windows(),
  ...singleUse(),
  ...limited(),
  ...lifecycle(),
};

const envelopes = (req: Request, url: URL) => req.method === 'POST' && (url.pathname === '/messages' || url.pathname === '/acks');

/**
 * A relay that records a spent nonce or challenge behind its answer (check, serve, then record in a
 * write-behind store, here a quarter of a second later): copies arriving meanwhile are served too.
 */
function recordedLate(key: (req: Request) => string | undefined, rule: string): Wire {
  const firstUse = new Map<string, number>();
  return async (req, next) => {
    const k = inboxCall(req, new URL(req.url)) ? key(req) : undefined;
    if (k === undefined) return next(req);
    const started = firstUse.get(k);
    if (started === undefined) firstUse.set(k, Date.now());
    const res = await next(req);
    if (started !== undefined && Date.now() - started < 250 && res.status === 401 && (await refusal(res)).rule === rule) return inboxSuccess(req);
    return res;
  };
}

/** Windows broken: let through just outside, or cut short just inside. */
function windows(): Record<string, WireVariant> {
  return {
    // A relay whose clock window is 90 s ("a minute and a half, to be kind to phones"): a signed
    // request 65 s old or ahead is let through.
    'core-window-loose': {
      rule: 'ra.auth.signed-request-window',
      what: 'signed requests up to 90 s from the relay clock are let through',
      wire: waived(
        inboxCall,
        (r, req) => r.rule === 'ra.errors.request-expired' && Math.abs(Number(req.headers.get(ids.header_timestamp)) * 1000 - Date.now()) <= 90_000,
        (req) => inboxSuccess(req),
      ),
    },
    // A relay that checks a session's expires_at when it registers it, never when it is used.
    'core-session-expiry-unchecked': {
      rule: 'ra.auth.session-key',
      what: 'an owner call by an expired (never revoked) session is let through',
      wire: withLedger((ledger) => async (req, next, body) => {
        const url = new URL(req.url);
        const res = await next(req);
        if (res.status !== 401 || !inboxCall(req, url)) return res;
        const s = ledger.sessions.get(req.headers.get(ids.header_session_id) ?? '');
        return s && !s.revoked && s.expiresAt <= Date.now() && s.identity.toLowerCase() === pathIdentity(url) && signedWith(req, body, s.key) ? inboxSuccess(req) : res;
      }),
    },
    // A relay whose challenges live twice as long as they say (expiry compared to issued_at + 2 x life).
    'core-challenge-life-doubled': {
      rule: 'ra.auth.challenge-single-use',
      what: 'a challenge answered after its life (within twice it) is let through, once',
      wire: withLedger((ledger) => async (req, next, body) => {
        const url = new URL(req.url);
        const res = await next(req);
        const named = req.headers.get(ids.header_challenge) ?? '';
        const c = ledger.challenges.get(named);
        if (res.status !== 401 || !inboxCall(req, url) || !c || c.identity.toLowerCase() !== pathIdentity(url)) return res;
        const expired = Date.now() > c.expiresAt && Date.now() <= c.expiresAt + (c.expiresAt - c.at);
        const key = ledger.keys.get(c.identity.toLowerCase());
        if (!expired || !key || !signedWith(req, body, key)) return res;
        ledger.challenges.delete(named);
        return inboxSuccess(req);
      }),
    },
    // A relay that expires mail at half its SPOOL_TTL (it sweeps mail older than TTL / 2):
    // mail picked up shortly before SPOOL_TTL is gone.
    'core-spool-early': {
      rule: 'ra.spool.expiry',
      what: 'mail older than half SPOOL_TTL is dropped from the pickup',
      wire: (() => {
        const accepted = new Map<string, number>();
        const argv = process.argv.indexOf('--spool-ttl');
        const ttlMs = (argv > 0 ? Number(process.argv[argv + 1]) : limits.spool_ttl_default_seconds) * 1000;
        return async (req: Request, next: Next) => {
          const url = new URL(req.url);
          const sent = req.method === 'POST' && url.pathname === '/messages' ? parse(await req.clone().text()) : {};
          const res = await next(req);
          if (res.status === 202 && typeof sent.id === 'string') accepted.set(sent.id, Date.now());
          if (req.method !== 'GET' || !/^\/messages\/[^/]+$/.test(url.pathname) || res.status !== 200) return res;
          const b = parse(await res.clone().text());
          const messages = (Array.isArray(b.messages) ? b.messages : []) as Array<Record<string, unknown>>;
          const kept = messages.filter((m) => Date.now() - (accepted.get(String(m.id)) ?? Date.now()) < ttlMs / 2);
          return jsonAnswer({ ...b, messages: kept });
        };
      })(),
    },
  };
}

/** Single use broken: spent secrets recorded behind the answer. */
function singleUse(): Record<string, WireVariant> {
  return {
    // A relay that records a signed request's nonce behind its answer: copies sent at once are served.
    'core-nonce-race': {
      rule: 'ra.auth.signed-request-replay',
      what: 'copies of a signed request arriving while its first use is served are let through',
      wire: recordedLate((req) => (signedRequest(req) ? `n|${req.headers.get(ids.header_identity) ?? ''}|${req.headers.get(ids.header_nonce) ?? ''}` : undefined), 'ra.errors.request-replayed'),
    },
    // The same for a challenge: looked up, answered, and only then deleted.
    'core-challenge-race': {
      rule: 'ra.auth.challenge-single-use',
      what: 'answers to one challenge arriving while its first use is served are let through',
      wire: recordedLate((req) => (!signedRequest(req) && req.headers.has(ids.header_challenge) ? `c|${req.headers.get(ids.header_challenge) ?? ''}` : undefined), 'ra.errors.challenge-invalid'),
    },
  };
}

/** Limits broken: off by one, in the wrong unit, or in the wrong scope. */
function limited(): Record<string, WireVariant> {
  let relayWindow = { start: 0, count: 0 };
  const senderCap = limits.relay_rate_sender_max;
  return {
    // A relay that keeps nonces of 16 to 32 characters (it stores them in a 32-character column).
    'core-nonce-max-32': {
      rule: 'ra.auth.signed-request-nonce',
      what: 'signed requests with a nonce longer than 32 characters are refused 400',
      wire: async (req, next) =>
        signedRequest(req) && (req.headers.get(ids.header_nonce) ?? '').length > 32 ? jsonAnswer({ error: 'invalid_request', detail: 'the nonce is too long' }, 400) : next(req),
    },
    // A relay that caps a session's life with >= instead of >: exactly 24 hours is refused.
    'core-session-ttl-exclusive': {
      rule: 'ra.sessions.ttl',
      what: 'a session of exactly 24 hours is refused 400',
      wire: async (req, next) => {
        const url = new URL(req.url);
        if (req.method !== 'POST' || url.pathname !== '/sessions') return next(req);
        const b = parse(await req.clone().text());
        const life = Date.parse(String(b.expires_at)) - Date.parse(String(b.issued_at));
        return life >= limits.relay_session_ttl_max_seconds * 1000 ? jsonAnswer({ error: 'invalid_request', detail: 'a session lives less than 24 hours' }, 400) : next(req);
      },
    },
    // A relay that measures the 512 KB on the decoded payload instead of the body.
    'core-body-cap-on-payload': {
      rule: 'ra.messages.body-cap',
      what: 'a body over 512 KB whose decoded payload is under it is accepted',
      wire: async (req, next) => {
        const url = new URL(req.url);
        const text = envelopes(req, url) ? await req.clone().text() : '';
        const res = await next(req);
        if (res.status !== 413 || !envelopes(req, url)) return res;
        const b = parse(text);
        const payload = typeof b.payload === 'string' ? Buffer.from(b.payload, 'base64url').length : 0;
        return payload <= limits.message_body_max_bytes ? accepted202(text) : res;
      },
    },
    // A relay with one bucket for every sender (its "per-sender" counter keyed by the relay):
    // once any N envelopes arrived in the window, everyone is throttled.
    'core-rate-per-relay': {
      rule: 'ra.messages.rate-limit-body',
      what: 'the sender bucket counts every envelope of the relay, whoever sends it',
      wire: async (req, next) => {
        const url = new URL(req.url);
        if (!envelopes(req, url)) return next(req);
        const now = Date.now();
        if (now - relayWindow.start >= limits.relay_rate_window_seconds * 1000) relayWindow = { start: now, count: 0 };
        if (++relayWindow.count > senderCap)
          return jsonAnswer(
            { error: 'rate_limit_exceeded', detail: 'the sender bucket is spent', scope: 'sender', window: 60, limit: senderCap, reset_at: formatRfc3339(relayWindow.start + 60_000) },
            429,
          );
        return next(req);
      },
    },
  };
}

/** Lifecycle broken: what a revocation ends, or who may end it. */
function lifecycle(): Record<string, WireVariant> {
  return {
    // A relay whose revocation ends a session's inbox access but not its envelopes: a revoked
    // session still acks (its key is still looked up by id for envelopes).
    'core-revoked-session-acks': {
      rule: 'ra.sessions.revoke',
      what: 'an ack signed by a revoked session (by session_id) is accepted',
      wire: withLedger((ledger) => async (req, next, body) => {
        const url = new URL(req.url);
        const res = await next(req);
        if (res.status !== 401 || req.method !== 'POST' || url.pathname !== '/acks') return res;
        const e = parse(body);
        const s = ledger.sessions.get(String(e.session_id ?? ''));
        if (!s?.revoked || s.identity.toLowerCase() !== String(e.sender).toLowerCase()) return res;
        const { signature, ...unsigned } = e;
        const sig = decodeBase64Any(String(signature));
        return sig && sig.length === 64 && verifyEd25519(s.key, canonicalString(profile, 'ack', unsigned), sig) ? accepted202(body) : res;
      }),
    },
    // A relay that refuses to revoke another identity's session but answers 204 anyway.
    'core-revoke-other-identity': {
      rule: 'ra.sessions.revoke',
      what: "a revocation of another identity's session, signed by the caller's own key, is answered 204",
      wire: waived(
        (req, url) => req.method === 'DELETE' && url.pathname.startsWith('/sessions/'),
        (r) => r.rule === 'ra.sessions.revoke' && r.status === 401,
        () => new Response(null, { status: 204 }),
      ),
    },
  };
}
