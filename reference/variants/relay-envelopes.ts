// Envelopes and their routes broken on the wire (issue 25's whole-area run of
// reference/relay/messages.ts), each the way a relay that checks less than document 3's tables (or
// the project's decisions) would answer: a malformed envelope let through, a route not taken, a
// crash where a refusal was due.
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import { jsonAnswer, type Next, type Wire, type WireVariant } from './kit.ts';

type Obj = Record<string, unknown>;
const ok202 = () => jsonAnswer({ id: 'dropped' }, 202);
const crash = (detail: string) => jsonAnswer({ error: 'internal', detail }, 500);
const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A request's or an answer's JSON body when it is an object, else `{}`. */
async function json(r: Request | Response): Promise<Obj> {
  const v: unknown = await r
    .clone()
    .json()
    .catch(() => undefined);
  return isObject(v) ? v : {};
}

/** POSTs to one of `paths` handed to `handle` with their JSON body; anything else passes. */
function onPost(paths: readonly string[], handle: (body: Obj, req: Request, next: Next) => Promise<Response>): Wire {
  return async (req, next) => (req.method === 'POST' && paths.includes(new URL(req.url).pathname) ? handle(await json(req), req, next) : next(req));
}

/** POSTs to `path` whose body `lets` through answered 202 in place of the relay's 400. */
const letThrough = (path: string, lets: (body: Obj) => boolean): Wire =>
  onPost([path], async (body, req, next) => {
    const res = await next(req);
    return res.status === 400 && lets(body) ? ok202() : res;
  });

/** Whether `identity` is under a domain this relay hosts, as its banner says. */
async function hostedHere(identity: unknown, req: Request, next: Next): Promise<boolean> {
  const banner = await json(await next(new Request(new URL('/', req.url), { headers: { accept: 'application/json' } })));
  const name = String(identity ?? '').toLowerCase();
  return Array.isArray(banner.hosted_domains) && banner.hosted_domains.some((d) => name === String(d).toLowerCase() || name.endsWith(`.${String(d).toLowerCase()}`));
}

const ACK_FIELDS = ['type', 'id', 'message_id', 'state', 'sender', 'recipient', 'timestamp', 'signature'];
const MESSAGE_FIELDS = ['id', 'sender', 'recipient', 'timestamp', 'payload', 'signature'];

export const RELAY_ENVELOPES_WIRE: Record<string, WireVariant> = {
  // "`payload` | string | yes | base64url AEAD ciphertext"
  'payload-form-unchecked': {
    rule: 'ra.messages.fields',
    what: 'a payload out of base64url (standard base64, a space, punctuation) is answered 202',
    wire: letThrough('/messages', (b) => typeof b.payload === 'string' && !/^[A-Za-z0-9_-]*={0,2}$/.test(b.payload)),
  },
  // "`type` (`ack`), `id`, `message_id`, `state` ..., `sender` ..., `recipient` ..., `timestamp`, `signature`"
  'ack-fields-unchecked': {
    rule: 'ra.acks.state',
    what: 'an ack missing a field other than message_id and state, or with one not a string, is answered 202',
    wire: letThrough('/acks', (b) => ACK_FIELDS.some((f) => f !== 'message_id' && f !== 'state' && typeof b[f] !== 'string')),
  },
  // A blind broken server (round 2, relay-13, written without the suites): "accepted because `Date.parse` reads it".
  'timestamp-any-date': {
    rule: 'ra.messages.fields',
    what: 'an envelope whose timestamp is any date Date.parse reads (in words, a date alone, no offset) is answered 202',
    wire: onPost(['/messages', '/acks'], async (body, req, next) => {
      const res = await next(req);
      return res.status === 400 && typeof body.timestamp === 'string' && parseRfc3339(body.timestamp) === undefined && !Number.isNaN(Date.parse(body.timestamp)) ? ok202() : res;
    }),
  },
  // A blind broken server (round 2, relay-05, written without the suites): "the sender bucket key is
  // `String(e.sender)` without `.toLowerCase()` ... Each casing variant is a new bucket".
  'sender-bucket-case': {
    rule: 'ra.messages.rate-limit-body',
    what: "an envelope past its sender's bucket is answered 202 when it writes the sender in capitals",
    wire: onPost(['/messages', '/acks'], async (body, req, next) => {
      const res = await next(req);
      return res.status === 429 && typeof body.sender === 'string' && body.sender !== body.sender.toLowerCase() ? ok202() : res;
    }),
  },
  // A blind broken server (round 3, relay-03, written without the suites): "An unknown `session_id`
  // sent with a valid `session_proof` gets `401` `session_expired`".
  'unknown-session-before-proof': {
    rule: 'ra.messages.session-expired',
    what: 'a message naming a session_id this relay never issued is 401 session_expired though a valid session_proof comes with it',
    wire: (() => {
      const issued = new Set<string>();
      const wire: Wire = async (req, next) => {
        const path = new URL(req.url).pathname;
        if (req.method === 'POST' && path === '/sessions') {
          const res = await next(req);
          const b = await json(res);
          if (typeof b.session_id === 'string') issued.add(b.session_id);
          return res;
        }
        if (req.method === 'POST' && path === '/messages') {
          const b = await json(req);
          if (typeof b.session_id === 'string' && b.session_proof !== undefined && !issued.has(b.session_id))
            return jsonAnswer({ error: 'session_expired', detail: 'the session is unknown or expired' }, 401);
        }
        return next(req);
      };
      return wire;
    })(),
  },
  // A blind broken server (relay-08, written without the suites): "Any ack state starting with `delivered` passes".
  'ack-state-prefix': {
    rule: 'ra.acks.state',
    what: 'an ack whose state begins with "delivered" (delivered, delivered_clients, delivered-client) is answered 202',
    wire: letThrough('/acks', (b) => typeof b.state === 'string' && b.state.startsWith('delivered')),
  },
  // "an envelope without `encryption.alg`, `encryption.ephemeral_public_key` or `encryption.nonce` is rejected with `400` `encryption_required`"
  'encryption-shape-unchecked': {
    rule: 'ra.messages.encryption-required',
    what: 'an encryption that is present but not an object (null, a list, a string) is answered 202',
    wire: letThrough('/messages', (b) => 'encryption' in b && !isObject(b.encryption)),
  },
  // "input a client sends, valid or not ... is refused with a 4xx and never met with a 5xx"
  'odd-fields-crash': {
    rule: 'ra.errors.listed-statuses',
    what: 'a message whose optional signed field is not a string, or whose signature is not base64, is answered 500',
    wire: onPost(['/messages'], async (b, req, next) => {
      const odd = ['type', 'thread_id', 'expires_at'].some((f) => f in b && typeof b[f] !== 'string') || (typeof b.signature === 'string' && !/^[A-Za-z0-9+/_-]*={0,2}$/.test(b.signature));
      return odd ? crash('TypeError: cannot read properties of undefined') : next(req);
    }),
  },
  'expires-any-type': {
    rule: 'ra.messages.expires-line',
    what: 'a message of any type whose expires_at has passed is answered 202 and never held',
    wire: onPost(['/messages'], async (b, req, next) => (typeof b.expires_at === 'string' && Date.parse(b.expires_at) < Date.now() ? ok202() : next(req))),
  },
  'body-cap-decimal': {
    rule: 'ra.messages.body-cap-kib',
    what: 'the cap read as 512 000 bytes: a message over it is refused 413',
    wire: onPost(['/messages'], async (_b, req, next) =>
      (await req.clone().arrayBuffer()).byteLength > 512_000 ? jsonAnswer({ error: 'payload_too_large', detail: 'over 512 000 bytes' }, 413) : next(req),
    ),
  },
  'empty-fields-accepted': {
    rule: 'ra.messages.empty-fields',
    what: 'a required field present as "" is answered 202',
    wire: letThrough('/messages', (b) => MESSAGE_FIELDS.some((f) => b[f] === '')),
  },
};

/** Refusals of POSTs that `when` picks (by status and error envelope) answered `instead`. */
const refusalAnswered = (when: (status: number, e: Obj) => boolean, instead: () => Response): Wire =>
  onPost(['/messages', '/acks'], async (_b, req, next) => {
    const res = await next(req);
    return res.status >= 400 && when(res.status, await json(res)) ? instead() : res;
  });

export const RELAY_ROUTES_WIRE: Record<string, WireVariant> = {
  // "`POST /acks`: Same signature, rate limits and locality rule as messages."
  'acks-not-forwarded': {
    rule: 'ra.relay.forward',
    what: 'an ack to an identity homed elsewhere is answered 202 and never forwarded',
    wire: onPost(['/acks'], async (b, req, next) => (typeof b.recipient === 'string' && !(await hostedHere(b.recipient, req, next)) ? ok202() : next(req))),
  },
  'recipient-case-kept': {
    rule: 'ra.names.case',
    what: 'a message to a recipient written in capitals is answered 202 and kept under the name as written, which no pickup reads',
    wire: onPost(['/messages'], async (b, req, next) => (typeof b.recipient === 'string' && b.recipient !== b.recipient.toLowerCase() ? jsonAnswer({ id: b.id }, 202) : next(req))),
  },
  // "`202` | accepted; body has `id`"
  'forward-answer-bare': {
    rule: 'ra.messages.accepted',
    what: "a message forwarded to the recipient's relay is answered 202 with an empty body",
    wire: onPost(['/messages'], async (b, req, next) => {
      const local = await hostedHere(b.recipient, req, next);
      const res = await next(req);
      return res.status === 202 && !local ? jsonAnswer({}, 202) : res;
    }),
  },
  // "input a client sends, valid or not ... is refused with a 4xx and never met with a 5xx"
  'unknown-sender-crash': {
    rule: 'ra.errors.listed-statuses',
    what: 'an envelope from a sender no directory knows is answered 500 (its key read from nothing)',
    wire: refusalAnswered(
      (status, e) => status === 401 && String(e.detail ?? '').includes('cannot be resolved'),
      () => crash("TypeError: cannot read properties of undefined (reading 'local')"),
    ),
  },
  'forward-refusal-swallowed': {
    rule: 'ra.errors.relay-unreachable',
    what: "a refusal by the recipient's relay is answered 202",
    wire: refusalAnswered((status, e) => status < 500 && e.rule === 'ra.errors.relay-unreachable', ok202),
  },
  // ra.inbox.policy (project): "acks are not filtered".
  'acks-filtered': {
    rule: 'ra.inbox.policy',
    what: "an ack from a sender the recipient's policy refused mail from is refused 403 as its mail was",
    wire: ((): Wire => {
      const refused = new Set<string>();
      const pair = (b: Obj) => `${String(b.sender).toLowerCase()}>${String(b.recipient).toLowerCase()}`;
      return onPost(['/messages', '/acks'], async (b, req, next) => {
        const isAck = new URL(req.url).pathname === '/acks';
        if (isAck && refused.has(pair(b))) return jsonAnswer({ error: 'not_authorized', detail: 'the recipient does not take mail from this sender' }, 403);
        const res = await next(req);
        if (!isAck && res.status === 403 && (await json(res)).rule === 'ra.inbox.policy') refused.add(pair(b));
        return res;
      });
    })(),
  },
  // ra.inbox.auth-request (project): "stored only when its sender is in the recipient's `trusted_auth_services`".
  'trusted-first-only': {
    rule: 'ra.inbox.auth-request',
    what: 'only the first service of trusted_auth_services is trusted: a prompt from a later one is answered 202 and dropped',
    wire: ((): Wire => {
      const later = new Map<string, string[]>();
      const prompts = onPost(['/messages'], async (m, req, next) => {
        const untrusted = later.get(String(m.recipient).toLowerCase())?.includes(String(m.sender).toLowerCase());
        return m.type === vocabulary.message_types.auth_request && untrusted ? jsonAnswer({ id: m.id }, 202) : next(req);
      });
      return async (req, next) => {
        const url = new URL(req.url);
        if (req.method !== 'PUT' || !url.pathname.endsWith('/relay/inbox-policy.json')) return prompts(req, next);
        const b = await json(req);
        const owner = decodeURIComponent(url.pathname.split('/').find((part) => part.includes('.') && !part.endsWith('.json')) ?? '').toLowerCase();
        if (Array.isArray(b.trusted_auth_services))
          later.set(
            owner,
            b.trusted_auth_services.slice(1).map((x) => String(x).toLowerCase()),
          );
        return next(req);
      };
    })(),
  },
};
