// The owner headers broken on the wire (issue 25's whole-area run of reference/relay/auth.ts),
// each the way a relay that reads the headers loosely would answer.
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { answer, at, editJson, jsonAnswer, type WireVariant } from './kit.ts';

const ids = profileFor().ids;
/** The identity an owner route names: /messages/:id, /events/:id, /devices/:id, /identities/:id/... */
const OWNER_ROUTE = /^\/(?:messages|events|devices|identities)\/([^/]+)/;

export const RELAY_HEADERS_WIRE: Record<string, WireVariant> = {
  // "Headers: `X-Svc-Identity`, ...": the identity that signs, which this relay never compares.
  'identity-header-unbound': {
    rule: 'ra.signed-request',
    what: "X-Svc-Identity is read as the route's identity, whatever it names",
    wire: async (req, next) => {
      const m = OWNER_ROUTE.exec(new URL(req.url).pathname);
      if (!m || !req.headers.has(ids.header_identity)) return next(req);
      const headers = new Headers(req.headers);
      headers.set(ids.header_identity, decodeURIComponent(m[1]!));
      return next(new Request(req, { headers }));
    },
  },
  // "input a client sends, valid or not ... is refused with a 4xx and never met with a 5xx"
  'identity-header-crash': {
    rule: 'ra.errors.listed-statuses',
    what: 'an owner request with X-Svc-Signature and no X-Svc-Identity is answered 500',
    wire: answer(
      (req, url) => OWNER_ROUTE.test(url.pathname) && req.headers.has(ids.header_signature) && !req.headers.has(ids.header_identity),
      () => jsonAnswer({ error: 'internal', detail: "TypeError: Cannot read properties of undefined (reading 'toLowerCase')" }, 500),
    ),
  },
  // The reference before issue 25's run of auth.ts: a malformed signature judged before the flow.
  'challenge-signature-code': {
    rule: 'ra.errors.challenge-invalid',
    what: 'a challenge answer whose signature is not 64 bytes of base64 answers 401 signature_invalid',
    wire: answer(
      (req, url) => {
        const sig = req.headers.get(ids.header_signature);
        const challengeFlow = !req.headers.has(ids.header_timestamp) && !req.headers.has(ids.header_nonce);
        return OWNER_ROUTE.test(url.pathname) && challengeFlow && sig !== null && decodeBase64Any(sig)?.length !== 64;
      },
      () => jsonAnswer({ error: 'signature_invalid', detail: 'X-Svc-Signature is not a base64 Ed25519 signature' }, 401),
    ),
  },
  // "The relay accepts it within 60 seconds of its own clock": a timestamp read loosely has no
  // distance, so the window never refuses it (answered as the pickup it would let through).
  'timestamp-loose': {
    rule: 'ra.auth.signed-request-window',
    what: 'a pickup whose X-Svc-Timestamp has other characters around its digits is answered 200',
    wire: answer(
      (req, url) => {
        const ts = req.headers.get(ids.header_timestamp);
        const loose = ts !== null && /\d/.test(ts) && !/^\d{1,12}$/.test(ts);
        return req.method === 'GET' && /^\/messages\/[^/]+$/.test(url.pathname) && loose;
      },
      () => jsonAnswer({ messages: [], acks: [] }),
    ),
  },
  // "refuses a nonce already seen in that window": a relay that forgets nonces after half of it.
  'nonce-memory-short': {
    rule: 'ra.auth.signed-request-replay',
    what: 'a pickup replaying a nonce first seen more than 30 s ago is answered 200 (the nonce forgotten)',
    wire: (() => {
      const seen = new Map<string, number>();
      return async (req, next) => {
        const nonce = req.headers.get(ids.header_nonce);
        if (req.method !== 'GET' || !/^\/messages\/[^/]+$/.test(new URL(req.url).pathname) || nonce === null) return next(req);
        const first = seen.get(nonce) ?? (seen.set(nonce, Date.now()), Date.now());
        const res = await next(req);
        return res.status === 401 && Date.now() - first > (limits.signed_request_window_seconds / 2) * 1000 ? jsonAnswer({ messages: [], acks: [] }) : res;
      };
    })(),
  },
  // "`client` (`app`, `web` or `cli`)": a relay that knows only the app.
  'device-client-narrow': {
    rule: 'ra.devices.rows',
    what: 'a device row whose client is web or cli is listed with client null',
    wire: editJson(
      at((u) => /^\/devices\/[^/]+$/.test(u.pathname), 'GET'),
      (body) => {
        const walk = (v: unknown): void => {
          if (Array.isArray(v)) return v.forEach(walk);
          if (v === null || typeof v !== 'object') return;
          const row = v as Record<string, unknown>;
          if (row.client === 'web' || row.client === 'cli') row.client = null;
          Object.values(row).forEach(walk);
        };
        walk(body);
      },
    ),
  },
  // "POST /devices/:identity/revoke with `device_id` ... ends that device's sessions": a relay
  // that looks the device up by id alone, whoever's it is.
  'foreign-device-revoked': {
    rule: 'ra.devices.list',
    what: "an owner's revocation naming a device of another identity is answered 200",
    wire: async (req, next) => {
      const res = await next(req);
      if (req.method !== 'POST' || !/^\/devices\/[^/]+\/revoke$/.test(new URL(req.url).pathname) || res.status !== 404) return res;
      return jsonAnswer({ device_id: 'dev_elsewhere', sessions_revoked: 1, dav_tokens_revoked: 0, app_passwords_revoked: 0 });
    },
  },
};
