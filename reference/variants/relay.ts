// The reference relay broken on the wire, one rule each (see wire.ts). Most are a refusal the
// document requires answered as a success instead (what the client sees of a relay that skips
// the check); the rest edit what the relay publishes or drop what it was asked to do.
import { createHash } from 'node:crypto';
import { profileFor } from '../../protocol/common/profile.ts';
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { registrableDomain } from '../../protocol/relay/rp-id.ts';
import { challengeCandidates } from '../../protocol/relay/webauthn.ts';
import { answer, at, editHeaders, editJson, jsonAnswer, withBody, type Next, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;
const ok202 = () => jsonAnswer({ id: 'dropped' }, 202);

interface Envelope {
  error?: string;
  rule?: string;
  detail?: string;
}

/** Matching refusals (status and error envelope) answered `success` instead. */
function refusalAnswered(match: (req: Request, url: URL) => boolean, refused: (status: number, e: Envelope) => boolean, success: (req: Request) => Response): Wire {
  return async (req, next) => {
    const res = await next(req);
    if (res.status < 400 || !match(req, new URL(req.url))) return res;
    const e = (await res
      .clone()
      .json()
      .catch(() => ({}))) as Envelope;
    return refused(res.status, e) ? success(req) : res;
  };
}

const messages = at('/messages', 'POST');
const acks = at('/acks', 'POST');
const pickups = (req: Request, url: URL) => req.method === 'GET' && /^\/messages\/[^/]+$/.test(url.pathname);
const emptyInbox = () => jsonAnswer({ messages: [] });
const byRule = (rule: string) => (_status: number, e: Envelope) => e.rule === rule;
const byStatus = (status: number) => (s: number) => s === status;

/** Requests carrying `header` refused 401 before the relay sees them. */
const refusedWith = (match: (req: Request, url: URL) => boolean, header: string): Wire =>
  answer(
    (req, url) => match(req, url) && req.headers.has(header),
    () => jsonAnswer({ error: 'signature_invalid', detail: 'refused by the broken variant' }, 401),
  );

/** Matching requests answered `make` without the relay doing anything. */
const dropped = (match: (req: Request, url: URL) => boolean, make: (req: Request, next: Next) => Response | Promise<Response>) => answer(match, make);

export const RELAY_WIRE: Record<string, WireVariant> = {
  'fields-accepted': { rule: 'ra.messages.fields', what: 'a message missing a field is answered 202', wire: refusalAnswered(messages, byRule('ra.errors.invalid-request'), ok202) },
  'encryption-optional': {
    rule: 'ra.messages.encryption-required',
    what: 'a message without encryption is answered 202',
    wire: refusalAnswered(messages, byRule('ra.messages.encryption-required'), ok202),
  },
  'body-cap': { rule: 'ra.messages.body-cap', what: 'an oversized message is answered 202', wire: refusalAnswered(messages, byStatus(413), ok202) },
  'signature-accepted': { rule: 'ra.messages.signature', what: 'a badly signed message is answered 202', wire: refusalAnswered(messages, byRule('ra.errors.signature-invalid'), ok202) },
  'session-expired-accepted': {
    rule: 'ra.messages.session-expired',
    what: 'a message by an unknown session is answered 202',
    wire: refusalAnswered(messages, byRule('ra.messages.session-expired'), ok202),
  },
  'ack-state': { rule: 'ra.acks.state', what: 'an ack of another state is answered 202', wire: refusalAnswered(acks, byStatus(400), ok202) },
  'ack-dropped': { rule: 'ra.acks.accepted', what: 'acks are answered 202 and dropped', wire: dropped(acks, ok202) },
  'pickup-unauthenticated': { rule: 'ra.pickup.auth', what: 'a pickup without valid proof gets an empty inbox', wire: refusalAnswered(pickups, byStatus(401), emptyInbox) },
  'pickup-not-hosted': {
    rule: 'ra.pickup.not-hosted',
    what: 'a pickup for an identity homed elsewhere answers 401',
    wire: refusalAnswered(pickups, byStatus(404), () => jsonAnswer({ error: 'challenge_invalid', detail: 'refused by the broken variant' }, 401)),
  },
  'window-ignored': { rule: 'ra.auth.signed-request-window', what: 'a signed request outside the window is answered', wire: refusalAnswered(pickups, byRule('ra.errors.request-expired'), emptyInbox) },
  'replay-ignored': { rule: 'ra.auth.signed-request-replay', what: 'a replayed signed request is answered', wire: refusalAnswered(pickups, byRule('ra.errors.request-replayed'), emptyInbox) },
  'nonce-length-ignored': { rule: 'ra.auth.signed-request-nonce', what: 'a signed request with a nonce of any length is answered', wire: refusalAnswered(pickups, byStatus(400), emptyInbox) },
  'signed-request-refused': { rule: 'ra.signed-request', what: 'signed requests are refused', wire: refusedWith(pickups, ids.header_nonce) },
  'session-pickup-refused': { rule: 'ra.auth.session-key', what: 'pickups signed by a session key are refused', wire: refusedWith(pickups, ids.header_session_id) },
  'names-ignored': {
    rule: 'ra.names.valid',
    what: 'a challenge is issued for any identity string',
    wire: refusalAnswered(at('/auth/challenge', 'GET'), byStatus(400), () => jsonAnswer({ challenge: 'ch_any', expires_at: new Date(Date.now() + 60_000).toISOString() })),
  },
  'challenge-shape': {
    rule: 'ra.auth.challenge',
    what: 'the challenge expires in an hour',
    wire: editJson(at('/auth/challenge', 'GET'), (c) => void (c.expires_at = new Date(Date.now() + 3_600_000).toISOString()), [200]),
  },
  'session-ttl-ignored': {
    rule: 'ra.sessions.ttl',
    what: 'a session over 24 hours is answered 201',
    wire: refusalAnswered(at('/sessions', 'POST'), byStatus(400), () => jsonAnswer({ session_id: 'sess_dropped' }, 201)),
  },
  'session-signature-ignored': {
    rule: 'ra.sessions.register',
    what: 'a badly signed session registration is answered 201',
    wire: refusalAnswered(at('/sessions', 'POST'), byStatus(401), () => jsonAnswer({ session_id: 'sess_dropped' }, 201)),
  },
  'session-registration-string': { rule: 'ra.signing.session-registration', what: 'session registrations are refused 401', wire: refusedWith(at('/sessions', 'POST'), 'content-type') },
  'revoke-noop': {
    rule: 'ra.sessions.revoke',
    what: 'DELETE /sessions/:id answers 204 and revokes nothing',
    wire: dropped(
      (req, url) => req.method === 'DELETE' && url.pathname.startsWith('/sessions/'),
      () => new Response(null, { status: 204 }),
    ),
  },
  'revoke-string': {
    rule: 'ra.signing.session-revocation',
    what: 'session revocations are refused 401',
    wire: answer(
      (req, url) => req.method === 'DELETE' && url.pathname.startsWith('/sessions/'),
      () => jsonAnswer({ error: 'signature_invalid', detail: 'refused by the broken variant' }, 401),
    ),
  },
  'register-conflict': {
    rule: 'ra.identities.conflict',
    what: 'a second registration is answered 201',
    wire: refusalAnswered(at('/identities', 'POST'), byStatus(409), () => jsonAnswer({ identity: 'dropped' }, 201)),
  },
  'register-signature': {
    rule: 'ra.identities.signature',
    what: 'a badly signed registration is answered 201',
    wire: refusalAnswered(at('/identities', 'POST'), byStatus(401), () => jsonAnswer({ identity: 'dropped' }, 201)),
  },
  'register-invite': {
    rule: 'ra.identities.invite',
    what: 'a registration without invite is answered 201',
    wire: refusalAnswered(at('/identities', 'POST'), byRule('ra.errors.invite-required'), () => jsonAnswer({ identity: 'dropped' }, 201)),
  },
  'registration-string': { rule: 'ra.signing.identity-registration', what: 'registrations are refused 401', wire: refusedWith(at('/identities', 'POST'), 'content-type') },
  'identity-fields': { rule: 'ra.identities.hosted', what: 'the registration answer has no created_at', wire: editJson(at('/identities', 'POST'), (b) => void delete b.created_at, [201]) },
  'identity-get': {
    rule: 'ra.identities.get',
    what: 'GET /identities/:identity answers without public_key',
    wire: editJson(
      (req, url) => req.method === 'GET' && /^\/identities\/[^/]+$/.test(url.pathname),
      (b) => void delete b.public_key,
      [200],
    ),
  },
  'rotate-noop': {
    rule: 'ra.identities.rotate',
    what: 'a rotation is answered 200 and not applied',
    wire: dropped(
      (req, url) => req.method === 'POST' && url.pathname.endsWith('/rotate'),
      () => jsonAnswer({ rotated: true }),
    ),
  },
  'export-gone': {
    rule: 'ra.identities.export',
    what: 'export answers 404',
    wire: answer(
      (req, url) => req.method === 'POST' && url.pathname.endsWith('/export'),
      () => jsonAnswer({ error: 'not_found', detail: 'refused by the broken variant' }, 404),
    ),
  },
  'export-string': {
    rule: 'ra.signing.identity-export',
    what: 'exports are refused 401',
    wire: answer(
      (req, url) => req.method === 'POST' && url.pathname.endsWith('/export'),
      () => jsonAnswer({ error: 'signature_invalid', detail: 'refused by the broken variant' }, 401),
    ),
  },
  'well-known-gone': {
    rule: 'ra.identities.well-known',
    what: 'the identity document answers 404',
    wire: answer(at(ids.id_document_path), () => jsonAnswer({ error: 'not_found', detail: 'gone' }, 404)),
  },
  'no-indieauth-link': { rule: 'ra.identities.indieauth-link', what: 'no Link header on a hosted host', wire: editHeaders(at('/'), (h) => h.delete('link')) },
  banner: { rule: 'ra.banner', what: 'the banner has no relay_address', wire: editJson(at('/', 'GET'), (b) => void delete b.relay_address, [200]) },
  health: { rule: 'ra.health', what: '/health says status "fine"', wire: editJson(at('/health', 'GET'), (b) => void (b.status = 'fine'), [200]) },
  availability: {
    rule: 'ra.availability',
    what: 'availability answers available as a string',
    wire: editJson(at('/hosted/availability', 'GET'), (b) => void (b.available = String(b.available)), [200]),
  },
  // "Dotted handles: GET /hosted/availability?handle=a.b answers available though registration
  // refuses a.b.<domain> as not one label" (stop 43's note): the policy judged on the first label only.
  'availability-dotted': {
    rule: 'ra.availability',
    what: 'availability judges a handle of two labels by its first and answers it available',
    wire: editJson(
      at('/hosted/availability', 'GET'),
      (b, _res, req) =>
        void (
          (new URL(req.url).searchParams.get('handle') ?? '').includes('.') &&
          b.reason === 'charset' &&
          Object.assign(b, { available: true, reason: 'available', message: 'This name is available.' })
        ),
      [200],
    ),
  },
  'availability-reasons': {
    rule: 'ra.availability.reasons',
    what: 'availability gives a reason outside the list',
    wire: editJson(at('/hosted/availability', 'GET'), (b) => void (typeof b.reason === 'string' && b.reason !== 'available' && (b.reason = 'unavailable')), [200]),
  },
  'events-closed': {
    rule: 'ra.events.stream',
    what: 'the event stream ends at once',
    wire: async (req, next) => {
      const res = await next(req);
      if (!new URL(req.url).pathname.startsWith('/events/') || res.status !== 200) return res;
      await res.body?.cancel();
      return new Response('', { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
    },
  },
  'streams-unlimited': {
    rule: 'ra.events.max-streams',
    what: 'a stream over the cap is answered with an empty stream',
    wire: refusalAnswered(
      (req, url) => url.pathname.startsWith('/events/'),
      byStatus(429),
      () => new Response(': hello\n\n', { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    ),
  },
  envelope: {
    rule: 'ra.errors.envelope',
    what: 'errors answer {"message"}',
    wire: async (req, next) => {
      const res = await next(req);
      if (res.status < 400 || !(res.headers.get('content-type') ?? '').includes('json')) return res;
      const e = (await res.json().catch(() => ({}))) as Envelope;
      return withBody(res, JSON.stringify({ message: e.detail ?? 'error' }));
    },
  },
  'rate-limit-body': {
    rule: 'ra.messages.rate-limit-body',
    what: 'the 429 body carries only the error',
    wire: editJson(messages, (b) => ({ error: b.error }), [429]),
  },
  'session-proof-refused': {
    rule: 'ra.messages.session-proof',
    what: 'a message signed by a session key with its session_proof is refused 401',
    wire: answer(
      (req, url) => req.method === 'POST' && url.pathname === '/messages',
      async (req, next) => ((await req.clone().text()).includes('"session_proof"') ? jsonAnswer({ error: 'signature_invalid', detail: 'refused by the broken variant' }, 401) : next(req)),
    ),
  },
  'limited-after-signature': {
    rule: 'ra.relay.rate-before-signature',
    what: 'a sender over its bucket is told its signature is bad (the limit is never reached first)',
    wire: refusalAnswered(messages, byStatus(429), () => jsonAnswer({ error: 'signature_invalid', detail: 'refused by the broken variant' }, 401)),
  },
  'date-garbled': { rule: 'ra.auth.date-header', what: 'the Date header is not a date', wire: editHeaders(pickups, (h) => h.set('date', 'soon')) },
  'cursor-ignored': {
    rule: 'ra.pickup.cursor',
    what: 'since is ignored: every pickup is a drain',
    wire: async (req, next) => {
      const url = new URL(req.url);
      if (!pickups(req, url) || !url.searchParams.has('since')) return next(req);
      url.searchParams.delete('since');
      return next(new Request(url, { method: 'GET', headers: req.headers }));
    },
  },
  'no-drain': {
    rule: 'ra.pickup.drain',
    what: 'a drain hands out again what it handed out before (as if it deleted nothing)',
    wire: (() => {
      const given = new Map<string, unknown[]>();
      return async (req, next) => {
        const url = new URL(req.url);
        const res = await next(req);
        if (!pickups(req, url) || url.searchParams.has('since') || res.status !== 200) return res;
        const body = (await res.json()) as { messages?: unknown[] };
        const before = given.get(url.pathname) ?? [];
        const all = [...before, ...(body.messages ?? [])];
        given.set(url.pathname, all);
        return withBody(res, JSON.stringify({ ...body, messages: all }));
      };
    })() satisfies Wire,
  },
  ...forwarding(),
  ...keystore(),
  ...pairing(),
  ...systemFiles(),
};

/**
 * Forwarding seen from one relay: `outbound` is a message from an identity this relay hosts to one
 * it does not, `inbound` the reverse; the hosted domains come from the relay's own banner.
 */
function forwarding(): Record<string, WireVariant> {
  const kind = async (req: Request, next: Next): Promise<'outbound' | 'inbound' | 'local'> => {
    const banner = (await (await next(new Request(new URL('/', req.url), { headers: { accept: 'application/json' } }))).json()) as { hosted_domains?: string[] };
    const hosted = (name: unknown) => typeof name === 'string' && (banner.hosted_domains ?? []).some((d) => name.endsWith(`.${d}`));
    const e = (await req
      .clone()
      .json()
      .catch(() => ({}))) as { sender?: unknown; recipient?: unknown };
    return hosted(e.sender) && !hosted(e.recipient) ? 'outbound' : !hosted(e.sender) && hosted(e.recipient) ? 'inbound' : 'local';
  };
  const on =
    (which: 'outbound' | 'inbound', then: Wire): Wire =>
    async (req, next) =>
      req.method === 'POST' && new URL(req.url).pathname === '/messages' && (await kind(req, next)) === which ? then(req, next) : next(req);
  return {
    'forward-dropped': { rule: 'ra.relay.forward', what: 'a message for an identity homed elsewhere is answered 202 and never forwarded', wire: on('outbound', async () => ok202()) },
    'forward-altered': {
      rule: 'ra.relay.forward-as-signed',
      what: 'a forwarded message gains a field on the way',
      wire: on('outbound', async (req, next) => {
        const e = (await req.json()) as Record<string, unknown>;
        return next(new Request(req.url, { method: 'POST', headers: req.headers, body: JSON.stringify({ ...e, relayed_by: 'broken-relay' }) }));
      }),
    },
    'remote-dropped': { rule: 'ra.relay.local-delivery', what: 'a message from a sender homed elsewhere is answered 202 and never delivered', wire: on('inbound', async () => ok202()) },
  };
}

/**
 * The keystore broken on the wire: a signing string the relay builds otherwise (every correct
 * request refused 401), a refusal answered as a success, the list leaking the seed, a removal
 * that removes nothing, and fetches whose one failed check is waved through. A fetch's checks are
 * read from the request itself (the assertion is plain base64url), and the challenges the relay
 * issued and the credentials enrolled from the traffic the wrapper saw.
 */
function keystore(): Record<string, WireVariant> {
  const put = (req: Request, url: URL) => req.method === 'PUT' && /^\/identities\/[^/]+\/keystore$/.test(url.pathname);
  const list = (req: Request, url: URL) => req.method === 'POST' && /^\/identities\/[^/]+\/keystore\/list$/.test(url.pathname);
  const fetch = (req: Request, url: URL) => req.method === 'POST' && /^\/identities\/[^/]+\/keystore\/fetch$/.test(url.pathname);
  const remove = (req: Request, url: URL) => req.method === 'DELETE' && /^\/identities\/[^/]+\/keystore\/[^/]+$/.test(url.pathname);
  const identityOf = (url: URL) => decodeURIComponent(url.pathname.split('/')[2] ?? '');
  const fetched = (req: Request) => jsonAnswer({ identity: identityOf(new URL(req.url)), entries: [] });
  const removed = () => new Response(null, { status: 204 });
  /** The request with its body read once (a web request's body is read once): its text and a copy to pass on. */
  const buffered = async (req: Request): Promise<{ text: string; req: Request }> => {
    const text = await req.text();
    return { text, req: new Request(req.url, { method: req.method, headers: req.headers, body: text }) };
  };
  const parsed = (text: string): Record<string, unknown> => {
    try {
      const v = JSON.parse(text) as unknown;
      return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  };
  /** What a fetch's assertion says, read without any key. */
  const assertionOf = (url: URL, text: string) => {
    const b = parsed(text) as { assertion?: Record<string, string>; rp_id?: string };
    const a = b.assertion ?? {};
    const client = parsed(Buffer.from(a.client_data_json ?? '', 'base64url').toString()) as { type?: string; challenge?: string };
    const auth = Buffer.from(a.authenticator_data ?? '', 'base64url');
    const rpOk =
      auth.length >= 37 &&
      createHash('sha256')
        .update(b.rp_id ?? '')
        .digest()
        .equals(auth.subarray(0, 32)) &&
      b.rp_id === identityOf(url);
    // The challenge as issued, whichever of its two forms clientDataJSON carries.
    const challenge = typeof client.challenge === 'string' ? (challengeCandidates(client.challenge).find((c) => issued.has(c)) ?? client.challenge) : undefined;
    return { credential: a.credential_id, type: client.type, challenge, rpOk, flagsOk: auth.length >= 37 && (auth[32]! & 0x05) === 0x05 };
  };
  const issued = new Set<string>();
  const spent = new Set<string>();
  const enrolled = new Set<string>();
  /** Sees challenges issued, credentials enrolled and challenges answered; `waive` may turn a refused fetch into a success. */
  const watching =
    (waive: (a: ReturnType<typeof assertionOf>, fresh: boolean) => boolean, tell = false): Wire =>
    async (original, next) => {
      const url = new URL(original.url);
      if (put(original, url)) {
        const { text, req } = await buffered(original);
        const b = parsed(text);
        if (typeof b.credential_id === 'string') enrolled.add(b.credential_id);
        return next(req);
      }
      if (!fetch(original, url)) {
        const res = await next(original);
        if (original.method === 'GET' && url.pathname === '/auth/challenge' && res.status === 200) issued.add(String(((await res.clone().json()) as { challenge?: unknown }).challenge));
        return res;
      }
      const { text, req } = await buffered(original);
      const a = assertionOf(url, text);
      const fresh = a.challenge !== undefined && issued.has(a.challenge) && !spent.has(a.challenge);
      if (a.challenge !== undefined) spent.add(a.challenge);
      const res = await next(req);
      if (res.status !== 401) return res;
      if (tell) return jsonAnswer({ error: 'not_authorized', detail: known(a) ? 'the signature does not verify' : 'no such credential' }, 401);
      return waive(a, fresh) ? fetched(req) : res;
    };
  const known = (a: { credential?: string }) => a.credential !== undefined && enrolled.has(a.credential);
  return {
    'keystore-enroll-string': { rule: 'ra.signing.keystore-enroll', what: 'enrollments are refused 401', wire: refusedWith(put, 'content-type') },
    'keystore-list-string': { rule: 'ra.signing.keystore-list', what: 'keystore lists are refused 401', wire: refusedWith(list, 'content-type') },
    'keystore-remove-string': { rule: 'ra.signing.keystore-remove', what: 'keystore removals are refused 401', wire: refusedWith(remove, 'content-type') },
    'keystore-lone-credential': {
      rule: 'ra.keystore.enroll',
      what: 'an enrollment with credential_id but no public key is answered 200',
      wire: refusalAnswered(put, byRule('ra.keystore.enroll'), () => jsonAnswer({ enrollment_id: 'accepted', created_at: new Date().toISOString() })),
    },
    'keystore-list-leaks': {
      rule: 'ra.keystore.list',
      what: 'the list carries each wrapped seed copy',
      wire: editJson(list, (b) => void (b.enrollments as Record<string, unknown>[] | undefined)?.forEach((e) => (e.wrapped = { iv: 'AA', ciphertext: 'AA' })), [200]),
    },
    'keystore-fetch-empty': { rule: 'ra.keystore.fetch', what: 'a valid fetch answers no entries', wire: editJson(fetch, (b) => void (b.entries = []), [200]) },
    'keystore-remove-noop': { rule: 'ra.keystore.remove', what: 'a removal answers 204 and removes nothing', wire: answer(remove, removed) },
    'keystore-last-allowed': { rule: 'ra.keystore.last-enrollment', what: 'removing the last enrollment answers 204', wire: refusalAnswered(remove, byRule('ra.keystore.last-enrollment'), removed) },
    'keystore-master-ignored': { rule: 'ra.keystore.recovery-master', what: 'a removal wanting the recovery master answers 204', wire: refusalAnswered(remove, byStatus(403), removed) },
    'keystore-type-ignored': { rule: 'ra.keystore.assertion-type', what: 'an assertion of another type fetches', wire: watching((a) => known(a) && a.type !== 'webauthn.get') },
    'keystore-challenge-ignored': {
      rule: 'ra.keystore.assertion-challenge',
      what: 'an assertion over a challenge not issued, or used, fetches',
      wire: watching((a, fresh) => known(a) && a.type === 'webauthn.get' && !fresh),
    },
    'keystore-rp-id-ignored': { rule: 'ra.keystore.assertion-rp-id', what: 'an assertion for another RP id fetches', wire: watching((a) => known(a) && a.type === 'webauthn.get' && !a.rpOk) },
    'keystore-rp-hosted-only': rpHostedOnly(),
    'keystore-flags-ignored': {
      rule: 'ra.keystore.assertion-flags',
      what: 'an assertion without UP or UV fetches',
      wire: watching((a) => known(a) && a.type === 'webauthn.get' && a.rpOk && !a.flagsOk),
    },
    'keystore-signature-ignored': {
      rule: 'ra.keystore.assertion-signature',
      what: 'an assertion that passes every other check fetches whatever its signature',
      wire: watching((a, fresh) => known(a) && a.type === 'webauthn.get' && a.rpOk && a.flagsOk && fresh),
    },
    'keystore-401-telling': {
      rule: 'ra.keystore.fetch-indistinct',
      what: 'a refused fetch says whether the credential is enrolled',
      wire: watching(() => false, true),
    },
  };
}

/**
 * Issue 26: "the reference accepts the hosted domain, so a passkey scoped to `relay.test` is
 * refused for `x.a.relay.test`": the identity's registrable domain by the public suffix list is
 * refused when it is not the relay's hosted domain (the reference's earlier reading).
 */
function rpHostedOnly(): WireVariant {
  return {
    rule: 'ra.keystore.assertion-rp-id',
    what: "an assertion for the identity's registrable domain is refused unless that is the hosted domain",
    wire: async (original, next) => {
      const url = new URL(original.url);
      if (original.method !== 'POST' || !/^\/identities\/[^/]+\/keystore\/fetch$/.test(url.pathname)) return next(original);
      const text = await original.text();
      const identity = decodeURIComponent(url.pathname.split('/')[2] ?? '');
      let rpId: unknown;
      try {
        rpId = (JSON.parse(text) as { rp_id?: unknown }).rp_id;
      } catch {
        rpId = undefined;
      }
      const domain = registrableDomain(identity);
      const hosted = identity.slice(identity.indexOf('.') + 1);
      if (rpId === domain && domain !== identity && domain !== hosted)
        return jsonAnswer({ error: 'not_authorized', detail: 'the assertion is not accepted', rule: 'ra.errors.keystore-unauthorized' }, 401);
      return next(new Request(original.url, { method: original.method, headers: original.headers, body: text }));
    },
  };
}

/**
 * Pairing broken on the wire: a signing string built otherwise (every correct approver call
 * refused 401), a refusal answered as a success, a step answered without being taken, a code read
 * strictly, and the sealed seed handed out again.
 */
function pairing(): Record<string, WireVariant> {
  const route = (method: string, tail: RegExp) => (req: Request, url: URL) => req.method === method && tail.test(url.pathname);
  const offer = route('POST', /^\/identities\/[^/]+\/enroll\/offer$/);
  const fetch = route('POST', /^\/identities\/[^/]+\/enroll\/[^/]+\/fetch$/);
  const reveal = route('POST', /^\/identities\/[^/]+\/enroll\/[^/]+\/reveal$/);
  const deliver = route('POST', /^\/identities\/[^/]+\/enroll\/[^/]+\/deliver$/);
  const poll = route('GET', /^\/identities\/[^/]+\/enroll\/[^/]+$/);
  const abandon = route('DELETE', /^\/identities\/[^/]+\/enroll\/[^/]+$/);
  const state = (s: string) => () => jsonAnswer({ state: s });
  const fakeOffer = () => jsonAnswer({ rendezvous_id: '00000000', claim_token: 'accepted', expires_at: new Date(Date.now() + 600_000).toISOString() }, 201);
  const handedOut = new Map<string, string>();
  return {
    'pairing-fetch-string': { rule: 'ra.signing.enroll-fetch', what: 'approver fetches are refused 401', wire: refusedWith(fetch, 'content-type') },
    'pairing-deliver-string': { rule: 'ra.signing.enroll-deliver', what: 'deliveries are refused 401', wire: refusedWith(deliver, 'content-type') },
    'pairing-v1-accepted': { rule: 'ra.pairing.v1-refused', what: 'a v1 offer is answered 201', wire: refusalAnswered(offer, byRule('ra.pairing.v1-refused'), fakeOffer) },
    'pairing-offers-unlimited': { rule: 'ra.pairing.offers-max', what: 'a sixth offer is answered 201', wire: refusalAnswered(offer, byStatus(429), fakeOffer) },
    'pairing-offer-fields': { rule: 'ra.pairing.offer', what: 'the offer answer has no expires_at', wire: editJson(offer, (b) => void delete b.expires_at, [201]) },
    'pairing-fetch-fields': { rule: 'ra.pairing.fetch', what: 'the fetch answer has no commitment', wire: editJson(fetch, (b) => void delete b.commitment, [200]) },
    'pairing-second-approver': {
      rule: 'ra.pairing.already-approving',
      what: 'a second approver is answered 200',
      wire: refusalAnswered(fetch, byRule('ra.pairing.already-approving'), state('nonce')),
    },
    'pairing-any-order': {
      rule: 'ra.pairing.out-of-order',
      what: 'steps out of order are answered 200',
      wire: refusalAnswered((r, u) => reveal(r, u) || deliver(r, u), byRule('ra.pairing.out-of-order'), state('revealed')),
    },
    'pairing-commitment-unchecked': {
      rule: 'ra.pairing.commitment',
      what: 'a reveal that does not open the commitment is answered 200',
      wire: refusalAnswered(reveal, byRule('ra.pairing.commitment'), state('revealed')),
    },
    'pairing-reveal-dropped': { rule: 'ra.pairing.reveal', what: 'a reveal is answered 200 and not taken', wire: answer(reveal, state('revealed')) },
    'pairing-deliver-dropped': { rule: 'ra.pairing.deliver', what: 'a delivery is answered 200 and not taken', wire: answer(deliver, state('delivered')) },
    'pairing-code-strict': {
      rule: 'ra.pairing.short-code',
      what: 'a code not typed in its canonical form is not found',
      wire: answer(
        (req, url) => fetch(req, url) && !/^[0-9A-HJKMNP-TV-Z]{8}$/.test(decodeURIComponent(url.pathname.split('/')[4] ?? '')),
        () => jsonAnswer({ error: 'not_found', detail: 'refused by the broken variant' }, 404),
      ),
    },
    'pairing-bearer-ignored': {
      rule: 'ra.pairing.bearer',
      what: 'a poll or reveal with a wrong token is answered 200',
      wire: refusalAnswered((r, u) => poll(r, u) || reveal(r, u), byStatus(401), state('nonce')),
    },
    'pairing-abandon-noop': { rule: 'ra.pairing.abandon', what: 'an abandon is answered 204 and keeps the offer', wire: answer(abandon, () => new Response(null, { status: 204 })) },
    'pairing-sealed-twice': {
      rule: 'ra.pairing.poll',
      what: 'the sealed seed is handed out on every poll',
      wire: async (req, next) => {
        const url = new URL(req.url);
        const res = await next(req);
        if (!poll(req, url)) return res;
        if (res.status === 200) {
          const text = await res.clone().text();
          if (text.includes('"sealed"')) handedOut.set(url.pathname, text);
          return res;
        }
        const kept = handedOut.get(url.pathname);
        return kept !== undefined ? jsonAnswer(JSON.parse(kept)) : res;
      },
    },
  };
}

/** System files and the inbox policy broken on the wire: a refusal answered as a success. */
function systemFiles(): Record<string, WireVariant> {
  const system = (req: Request, url: URL) => /^\/identities\/[^/]+\/system\//.test(url.pathname) && req.method !== 'OPTIONS';
  const put = (req: Request, url: URL) => req.method === 'PUT' && system(req, url);
  const written = () => jsonAnswer({ path: 'accepted', etag: '"accepted"' });
  return {
    'system-open': { rule: 'ra.system.files', what: 'system documents answer 200 without the owner', wire: refusalAnswered(system, byStatus(401), () => jsonAnswer({ version: 1 })) },
    'system-unvalidated': { rule: 'ra.system.validated', what: 'an invalid system document is answered 200', wire: refusalAnswered(put, byRule('ra.system.validated'), written) },
    'system-etag-ignored': { rule: 'ra.system.etag', what: 'a write on a stale If-Match is answered 200', wire: refusalAnswered(put, byStatus(412), written) },
    'inbox-open': { rule: 'ra.inbox.policy', what: 'a message the inbox policy refuses is answered 202', wire: refusalAnswered(messages, byRule('ra.inbox.policy'), ok202) },
    'group-epoch-zero': {
      rule: 'ra.groups.epoch',
      what: "a group's epoch answered 0 whatever its roster says",
      wire: editJson(
        (req, url) => req.method === 'GET' && /^\/groups\/[^/]+\/epoch$/.test(url.pathname),
        (b) => void (b.epoch = 0),
        [200],
      ),
    },
    // Issue 26: the deployed client's group fan-out reads the roster at GET /groups/:group, which
    // the reference answered "no such endpoint".
    'group-roster-unread': {
      rule: 'ra.system.group-roster',
      what: 'GET /groups/:group answers 404',
      wire: answer(
        (req, url) => req.method === 'GET' && /^\/groups\/[^/]+$/.test(url.pathname),
        () => jsonAnswer({ error: 'not_found', detail: 'no such endpoint', rule: 'ra.errors.not-found' }, 404),
      ),
    },
    'prompt-expiry-ignored': {
      rule: 'ra.inbox.auth-request-expiry',
      what: 'an expired sys.auth.request is answered 202',
      wire: refusalAnswered(messages, byRule('ra.inbox.auth-request-expiry'), ok202),
    },
    // "a stored `sys.auth.request` is handed out at pickup after its `expires_at`, though the rule
    // text says it is never shown" (issue 26, item 4).
    'prompt-shown-lapsed': { rule: 'ra.inbox.auth-request-expiry', what: 'a stored sys.auth.request is picked up after its expires_at', wire: lapsedPromptsShown() },
  };
}

/** Remembers the sign-in prompts the relay accepted, and puts back into a pickup those past their expiry. */
function lapsedPromptsShown(): Wire {
  const kept = new Map<string, Array<{ id: unknown; until: number; envelope: unknown }>>();
  return async (req, next) => {
    const url = new URL(req.url);
    const envelope = messages(req, url)
      ? ((await req
          .clone()
          .json()
          .catch(() => undefined)) as Record<string, unknown> | undefined)
      : undefined;
    const res = await next(req);
    if (envelope?.type === vocabulary.message_types.auth_request && res.status === 202) {
      const who = String(envelope.recipient).toLowerCase();
      kept.set(who, [...(kept.get(who) ?? []), { id: envelope.id, until: Date.parse(String(envelope.expires_at)), envelope }]);
    }
    if (!pickups(req, url) || res.status !== 200) return res;
    const lapsed = (kept.get(decodeURIComponent(url.pathname.split('/')[2]!).toLowerCase()) ?? []).filter((p) => p.until <= Date.now());
    const body = (await res.json()) as { messages: Array<{ id?: unknown }> };
    for (const p of lapsed) if (!body.messages.some((m) => m.id === p.id)) body.messages.push(p.envelope as { id?: unknown });
    return withBody(res, JSON.stringify(body));
  };
}
