// Session registrations, revocations and proofs broken on the wire where mutants of
// reference/relay/sessions.ts survived (issue 25): each variant does one bug, judged by
// harness/suites/relay/checks/sessions-matrix.ts. Built with relay-core.ts's ledger and waivers.
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { verifyEd25519 } from '../../protocol/common/ed25519.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { accepted202, parse, waived, withLedger } from './relay-core.ts';
import { at, editJson, editRequest, jsonAnswer, type WireVariant } from './kit.ts';

const profile = profileFor();

/** A session registration answered 201 as a relay that let it through would (the variant keeps no session). */
function registered(body: string): Response {
  const b = parse(body);
  const object = { session_id: `sess_variant${Date.now().toString(36)}`, identity: b.identity, session_public_key: b.session_public_key, issued_at: b.issued_at, expires_at: b.expires_at };
  return jsonAnswer(object, 201);
}

function registration(req: Request, url: URL): boolean {
  return req.method === 'POST' && url.pathname === '/sessions';
}

const revocation = (req: Request, url: URL) => req.method === 'DELETE' && url.pathname.startsWith('/sessions/');

function lifeOf(body: string): { issued: number; expires: number } {
  const b = parse(body);
  return { issued: Date.parse(String(b.issued_at)), expires: Date.parse(String(b.expires_at)) };
}

/** Session registrations and revocations broken where mutants of reference/relay/sessions.ts survived. */
export const RELAY_SESSIONS_WIRE: Record<string, WireVariant> = {
  // "a zero-length session (`expires == issued`, a TTL of 0) survives `expires < issued`
  // mutants": a relay that bounds the TTL only from above, as document 3 does.
  'core-session-zero-ttl': {
    rule: 'ra.sessions.ttl-positive',
    what: 'a registration whose expires_at equals its issued_at (30 s ahead) is answered 201',
    wire: waived(
      registration,
      (r, _req, _url, body) => r.status === 400 && r.rule === 'ra.sessions.ttl' && lifeOf(body).expires === lifeOf(body).issued,
      (_req, body) => registered(body),
    ),
  },
  // A relay that checks expires_at against issued_at only, never against its own clock.
  'core-session-already-expired': {
    rule: 'ra.sessions.ttl-positive',
    what: 'a registration whose expires_at is after its issued_at but already past is answered 201',
    wire: waived(
      registration,
      (r, _req, _url, body) => r.status === 400 && r.rule === 'ra.sessions.ttl' && lifeOf(body).expires > lifeOf(body).issued && lifeOf(body).expires <= Date.now(),
      (_req, body) => registered(body),
    ),
  },
  // A relay that reads timestamps with Date.parse, which also takes epoch milliseconds as numbers.
  'core-session-numeric-timestamps': {
    rule: 'ra.sessions.register',
    what: 'a registration whose issued_at or expires_at is a JSON number is answered 201',
    wire: waived(
      registration,
      (r, _req, _url, body) => r.status === 400 && ['issued_at', 'expires_at'].some((f) => typeof parse(body)[f] === 'number'),
      (_req, body) => registered(body),
    ),
  },
  // A relay that checks a revocation's signature against the identity's live sessions, not the
  // one in its path: a signature over another of the owner's sessions is taken (and answered 204).
  'core-revocation-any-session': {
    rule: 'ra.signing.session-revocation',
    what: "a revocation signed over another of the owner's sessions than the one in its path is answered 204",
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (res.status !== 401 || req.method !== 'DELETE' || !url.pathname.startsWith('/sessions/')) return res;
      const b = parse(body);
      const identity = String(b.identity).toLowerCase();
      const key = ledger.keys.get(identity);
      const sig = decodeBase64Any(String(b.identity_signature ?? ''));
      if (!key || !sig || sig.length !== 64) return res;
      const path = decodeURIComponent(url.pathname.slice('/sessions/'.length));
      const others = [...ledger.sessions.entries()].filter(([id, k]) => id !== path && k.identity.toLowerCase() === identity).map(([id]) => id);
      const signs = (sessionId: string) =>
        verifyEd25519(key, canonicalString(profile, 'session-revocation', { identity: b.identity, session_id: sessionId, issued_at: b.issued_at, nonce: b.nonce }), sig);
      return others.some(signs) ? new Response(null, { status: 204 }) : res;
    }),
  },
  // A relay that verifies a session proof's signature but never reads its expires_at.
  'core-session-proof-expiry-ignored': {
    rule: 'ra.messages.session-proof',
    what: 'a message signed by a session key whose well-signed session_proof expired is accepted',
    wire: withLedger((ledger) => async (req, next, body) => {
      const url = new URL(req.url);
      const res = await next(req);
      if (res.status !== 401 || req.method !== 'POST' || url.pathname !== '/messages') return res;
      const { signature, ...unsigned } = parse(body);
      const proof = (unsigned.session_proof ?? {}) as Record<string, unknown>;
      const identityKey = ledger.keys.get(String(unsigned.sender).toLowerCase());
      const sessionKey = parseKey(proof.session_public_key, 'signing');
      const [proofSig, sig] = [decodeBase64Any(String(proof.identity_signature ?? '')), decodeBase64Any(String(signature ?? ''))];
      if (!identityKey || !sessionKey || !proofSig || !sig) return res;
      const lines = { identity: unsigned.sender, session_public_key: proof.session_public_key, issued_at: proof.issued_at, expires_at: proof.expires_at, nonce: proof.nonce };
      const proven = verifyEd25519(identityKey, canonicalString(profile, 'session-registration', lines), proofSig);
      return proven && verifyEd25519(sessionKey, canonicalString(profile, 'message', unsigned), sig) ? accepted202(body) : res;
    }),
  },
  // A relay that keeps signed-request nonces but not the admin envelopes': a registration replayed as sent is taken again.
  'core-admin-nonce-forgotten': {
    rule: 'ra.auth.recency-window',
    what: 'a session registration sent a second time with the same nonce is answered 201',
    wire: waived(
      registration,
      (r) => r.status === 401 && r.rule === 'ra.errors.request-replayed',
      (_req, body) => registered(body),
    ),
  },
  // A relay that checks an envelope's age only backwards (now - issued_at > 300 s): one issued far ahead is taken.
  'core-admin-recency-past-only': {
    rule: 'ra.auth.recency-window',
    what: 'a revocation issued more than 300 s ahead of the relay clock is answered 204',
    wire: waived(
      (req, url) => req.method === 'DELETE' && url.pathname.startsWith('/sessions/'),
      (r, _req, _url, body) => r.rule === 'ra.auth.recency-window' && Date.parse(String(parse(body).issued_at)) > Date.now(),
      () => new Response(null, { status: 204 }),
    ),
  },
  // Document 3, POST /sessions: "`400` (... `issued_at` too far in the future ...)". The bug: the
  // relay leaves a registration issued ahead to the admin envelope's recency window, so one an hour
  // ahead is answered 401 request_expired.
  'session-future-by-recency': {
    rule: 'ra.sessions.register',
    what: 'a registration issued an hour ahead is answered 401 request_expired, not 400',
    wire: waived(
      registration,
      (r, _req, _url, body) => r.status === 400 && r.rule === 'ra.sessions.ttl' && lifeOf(body).issued > Date.now() + 60_000,
      () => jsonAnswer({ error: 'request_expired', detail: 'issued_at is outside the recency window' }, 401),
    ),
  },
  // ra.errors.invalid-request (project): an admin envelope's nonce is text and not empty. The bug:
  // the nonce is only asked to be a string, so "" is a nonce, spent once like any other.
  'admin-nonce-empty': {
    rule: 'ra.errors.invalid-request',
    what: 'a session registration whose nonce is "" (signed so) is answered 201',
    wire: waived(
      registration,
      (r, _req, _url, body) => r.status === 400 && parse(body).nonce === '',
      (_req, body) => registered(body),
    ),
  },
  // Document 3, DELETE /sessions/:id: "`400` (missing id or admin envelope)". The bug: the relay
  // verifies whatever envelope it got, so one missing a field fails as a signature, 401.
  'revocation-missing-as-401': {
    rule: 'ra.sessions.revoke',
    what: 'a revocation without identity or an admin-envelope field is answered 401 signature_invalid',
    wire: waived(
      revocation,
      (r) => r.status === 400,
      () => jsonAnswer({ error: 'signature_invalid', detail: 'identity_signature does not verify' }, 401),
    ),
  },
  // The same endpoint: "`401` (signature failed ...)". The bug: the identity named is looked up and
  // its key read without asking whether anything resolved, so a name nothing resolves is a 500.
  'revocation-stranger-crash': {
    rule: 'ra.sessions.revoke',
    what: 'a revocation naming an identity nothing resolves is answered 500',
    wire: waived(
      revocation,
      (r) => r.status === 401 && r.rule === 'ra.errors.signature-invalid' && / cannot be resolved$/.test(r.detail ?? ''),
      () => jsonAnswer({ error: 'internal_error', detail: 'internal error' }, 500),
    ),
  },
  // ra.devices.id-form (project): "a session opened without `X-Svc-Device` fills no row". The bug:
  // the install id defaults to a constant, so every session without one lands on one row.
  'device-row-without-install': {
    rule: 'ra.devices.id-form',
    what: 'a session opened without X-Svc-Device fills a device row (install "unknown")',
    wire: editRequest(at('/sessions', 'POST'), (req) => {
      if (req.headers.has(profile.ids.header_device)) return req;
      const headers = new Headers(req.headers);
      headers.set(profile.ids.header_device, 'unknown');
      return new Request(req, { headers });
    }),
  },
  // ra.devices.id-form (project): "`dev_` and 32 lowercase hex digits". The bug: the whole hash is
  // kept, 64 digits.
  'device-id-whole-hash': {
    rule: 'ra.devices.id-form',
    what: "a device row's id is dev_ and 64 hex digits",
    wire: editJson(at('/devices/', 'GET'), (body) => JSON.parse(JSON.stringify(body).replace(/"dev_([0-9a-f]{32})"/g, '"dev_$1$1"'))),
  },
  // ra.devices.revoke-form (project). The bug: a device_id is looked up whatever it is, so a
  // malformed one is answered as unknown, 404.
  'device-revoke-any-404': {
    rule: 'ra.devices.revoke-form',
    what: 'a revocation whose device_id is missing, not a string or lacks dev_ is answered 404 not_found',
    wire: waived(
      (req, url) => req.method === 'POST' && /^\/devices\/[^/]+\/revoke$/.test(url.pathname),
      (r) => r.status === 400,
      () => jsonAnswer({ error: 'not_found', detail: 'no such device of this identity' }, 404),
    ),
  },
};
