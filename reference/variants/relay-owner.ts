// The reference relay's owner surface (keystore, pairing, system files) broken on the wire the way
// implementations ship it (issue 25: "a relay that lets another identity's session read private
// system files, accepts a claim token twice, accepts a pairing past expiry, takes `U` for a code
// character, removes a keystore entry without the recovery assertion"). Each wrapper watches the
// traffic it needs (sessions, keys, offers, enrollments registered through it) and lets through,
// or answers as the broken relay would, exactly the requests its bug lets through.
import { createHash } from 'node:crypto';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { verifyEd25519 } from '../../protocol/common/ed25519.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { normalizeShortCode } from '../../protocol/signin/reference.ts';
import { verifyDrive } from '../../protocol/relay/drive/sign.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { buffered, jsonAnswer, type Next, type Wire, type WireVariant } from './kit.ts';

const profile = profileFor();
const ids = profile.ids;

const jsonOf = async (res: Response): Promise<Record<string, unknown>> =>
  (await res
    .clone()
    .json()
    .catch(() => ({}))) as Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Whether `signature` (any base64) verifies with any of `keys` (base64url Ed25519) over `message`. */
function verifiesWith(keys: Iterable<string>, message: string, signature: unknown): boolean {
  const sig = decodeBase64Any(str(signature));
  if (!sig || sig.length !== 64) return false;
  for (const k of keys) {
    const key = decodeBase64Any(k);
    if (key && key.length === 32 && verifyEd25519(key, message, sig)) return true;
  }
  return false;
}

/** An admin string, or '' when its lines cannot be built. */
function lines(name: Parameters<typeof canonicalString>[1], fields: Record<string, unknown>): string {
  try {
    return canonicalString(profile, name, fields);
  } catch {
    return '';
  }
}

const segments = (url: URL) => url.pathname.split('/').map((s) => decodeURIComponent(s));
/** `/identities/:identity/enroll/:code[/step]`: the identity, the code as typed, and the step ('' for poll and abandon). */
function enrollPath(url: URL): { identity: string; typed: string; step: string } | undefined {
  const p = segments(url);
  if (p[1] !== 'identities' || p[3] !== 'enroll' || p[4] === undefined || p[4] === 'offer') return undefined;
  return { identity: p[2]!.toLowerCase(), typed: p[4], step: p[5] ?? '' };
}
const isOffer = (req: Request, url: URL) => req.method === 'POST' && /^\/identities\/[^/]+\/enroll\/offer$/.test(url.pathname);
const keystorePath = (url: URL) => /^\/identities\/[^/]+\/keystore(\/|$)/.test(url.pathname);
const identityOf = (url: URL) => (segments(url)[2] ?? '').toLowerCase();

/**
 * What the wrappers learn from the traffic: identity keys registered, session keys registered,
 * offers made (code, claim token, commitment, label, expiry) and enrollments (credential, role).
 */
class Watched {
  keys = new Map<string, string>();
  sessions = new Map<string, { identity: string; key: string }>();
  offers = new Map<string, { identity: string; token: string; commitment: string; label: string; expiresAt: number }>();
  enrollments = new Map<string, { identity: string; credential: string; role: string }>();

  async see(req: Request, next: Next): Promise<Response> {
    const url = new URL(req.url);
    const watched = (req.method === 'POST' && (url.pathname === '/identities' || url.pathname === '/sessions' || isOffer(req, url))) || (req.method === 'PUT' && keystorePath(url));
    if (!watched) return next(req);
    const { req: copy, body } = await buffered(req);
    const res = await next(copy);
    if (res.status >= 300) return res;
    const answer = await jsonOf(res);
    if (url.pathname === '/identities') this.keys.set(str(body.identity).toLowerCase(), str(body.public_key));
    else if (url.pathname === '/sessions') this.sessions.set(str(answer.session_id), { identity: str(body.identity).toLowerCase(), key: str(body.session_public_key) });
    else if (isOffer(req, url))
      this.offers.set(str(answer.rendezvous_id), {
        identity: identityOf(url),
        token: str(answer.claim_token),
        commitment: str(body.commitment),
        label: str(body.label),
        expiresAt: Date.parse(str(answer.expires_at)),
      });
    else this.enrollments.set(str(body.enrollment_id), { identity: identityOf(url), credential: str(body.credential_id), role: str(body.role) || 'device' });
    return res;
  }

  sessionKeysOf(identity: string): string[] {
    return [...this.sessions.values()].filter((s) => s.identity === identity).map((s) => s.key);
  }

  codesOf(identity: string): string[] {
    return [...this.offers.entries()].filter(([, o]) => o.identity === identity).map(([code]) => code);
  }
}

/** A wrapper that first lets `w` watch the traffic, then applies `bug`. */
function watching(bug: (w: Watched) => Wire): Wire {
  const w = new Watched();
  const inner = bug(w);
  return (req, next) => inner(req, (r) => w.see(r, next));
}

/** Answers of `match` refused with `status` that `lets` lets through, answered `as` instead. */
function letThrough(match: (req: Request, url: URL) => boolean, status: number, lets: (url: URL, body: Record<string, unknown>, req: Request) => boolean, as: (url: URL) => Response): Wire {
  return async (original, next) => {
    const url = new URL(original.url);
    if (!match(original, url)) return next(original);
    const { req, body } = await buffered(original);
    const res = await next(req);
    return res.status === status && lets(url, body, req) ? as(url) : res;
  };
}

/**
 * A once-only step checked, then taken, in two steps (no compare-and-set) on a store `latencyMs`
 * away: every request that started before the first winner finished sees the state it saw, and
 * wins too.
 */
function racy(match: (req: Request, url: URL) => boolean, won: (res: Response) => boolean, keyOf: (url: URL, body: Record<string, unknown>) => string, latencyMs = 150): Wire {
  const winners = new Map<string, { doneAt: number; status: number; text: Promise<string> }>();
  const inFlight = new Map<string, Set<Promise<Response>>>();
  return async (original, next) => {
    const url = new URL(original.url);
    if (!match(original, url)) return next(original);
    const { req, body } = await buffered(original);
    const key = keyOf(url, body);
    const startedAt = performance.now();
    const flying = inFlight.get(key) ?? inFlight.set(key, new Set()).get(key)!;
    const answer = next(req).then(async (r) => (await new Promise((done) => setTimeout(done, latencyMs)), r));
    flying.add(answer);
    const res = await answer;
    if (won(res)) {
      flying.delete(answer);
      if (!winners.has(key)) winners.set(key, { doneAt: performance.now(), status: res.status, text: res.clone().text() });
      return res;
    }
    // The winner may still be answering: let every request in flight with this one finish first.
    await Promise.allSettled([...flying].filter((x) => x !== answer));
    flying.delete(answer);
    const w = winners.get(key);
    return w !== undefined && startedAt < w.doneAt && res.status < 500
      ? new Response(w.status === 204 ? null : await w.text, { status: w.status, headers: { 'content-type': 'application/json' } })
      : res;
  };
}

const systemPath = (url: URL) => /^\/identities\/[^/]+\/system\//.test(url.pathname);
const fetched = (w: Watched, code: string) => {
  const o = w.offers.get(code);
  return jsonAnswer({ state: 'nonce', commitment: o?.commitment, label: o?.label, expires_at: new Date(o?.expiresAt ?? Date.now()).toISOString() });
};
const enrollStep = (step: string) => (req: Request, url: URL) => req.method === (step === 'poll' ? 'GET' : 'POST') && enrollPath(url)?.step === (step === 'poll' ? '' : step);

export const RELAY_OWNER_WIRE: Record<string, WireVariant> = {
  // "a relay that lets another identity's session read private system files": the session is
  // looked up and its key checked, never whose it is; the owner's documents are what it last wrote.
  'owner-system-any-session': {
    rule: 'ra.system.files',
    what: "a system document answers any live session's signed challenge, whoever's session it is",
    wire: watching((w) => {
      const written = new Map<string, string>();
      return async (original, next) => {
        const url = new URL(original.url);
        if (!systemPath(url)) return next(original);
        const { req, text } = await buffered(original);
        const res = await next(req);
        if (res.status < 300 && req.method === 'PUT') written.set(url.pathname, text);
        if (res.status < 300 && req.method === 'DELETE') written.delete(url.pathname);
        const session = w.sessions.get(req.headers.get(ids.header_session_id) ?? '');
        const challenge = req.headers.get(ids.header_challenge) ?? '';
        if (res.status !== 401 || !session || !verifiesWith([session.key], lines('challenge', { challenge }), req.headers.get(ids.header_signature))) return res;
        if (req.method === 'GET') return written.has(url.pathname) ? new Response(written.get(url.pathname), { headers: { 'content-type': 'application/json' } }) : res;
        if (req.method === 'PUT') written.set(url.pathname, text);
        else written.delete(url.pathname);
        return req.method === 'PUT' ? jsonAnswer({ path: url.pathname, etag: '"any-session"' }) : new Response(null, { status: 204 });
      };
    }),
  },
  // The list is "only a read", so the relay takes a session key's signature for it too.
  'owner-keystore-list-session': {
    rule: 'ra.keystore.list',
    what: "the keystore list signed by one of the identity's session keys answers 200",
    wire: watching((w) =>
      letThrough(
        (req, url) => req.method === 'POST' && /^\/identities\/[^/]+\/keystore\/list$/.test(url.pathname),
        401,
        (url, b) => verifiesWith(w.sessionKeysOf(identityOf(url)), lines('keystore-list', { identity: identityOf(url), issued_at: b.issued_at, nonce: b.nonce }), b.identity_signature),
        () => jsonAnswer({ enrollments: [] }),
      ),
    ),
  },
  // The approver's key is looked up by the signature's key, among every identity of the relay.
  'owner-approver-any-key': {
    rule: 'ra.pairing.fetch',
    what: "an approver's fetch signed by any identity registered here answers 200",
    wire: watching((w) =>
      letThrough(
        enrollStep('fetch'),
        401,
        (url, b) => {
          const p = enrollPath(url)!;
          return verifiesWith(
            w.keys.values(),
            lines('enroll-fetch', { identity: p.identity, rendezvous_id: normalizeShortCode(p.typed), issued_at: b.issued_at, nonce: b.nonce }),
            b.identity_signature,
          );
        },
        (url) => fetched(w, normalizeShortCode(enrollPath(url)!.typed) ?? ''),
      ),
    ),
  },
  // The fetch's signature is checked against any live code of the identity, not the one in the path.
  'owner-fetch-code-unbound': {
    rule: 'ra.signing.enroll-fetch',
    what: "an approver's fetch signed over another code of the identity answers 200",
    wire: watching((w) =>
      letThrough(
        enrollStep('fetch'),
        401,
        (url, b) => {
          const p = enrollPath(url)!;
          return w
            .codesOf(p.identity)
            .some((code) =>
              verifiesWith([w.keys.get(p.identity) ?? ''], lines('enroll-fetch', { identity: p.identity, rendezvous_id: code, issued_at: b.issued_at, nonce: b.nonce }), b.identity_signature),
            );
        },
        (url) => fetched(w, normalizeShortCode(enrollPath(url)!.typed) ?? ''),
      ),
    ),
  },
  // The removal's signature is checked against the identity's enrollments, any of them.
  'owner-remove-enrollment-unbound': {
    rule: 'ra.signing.keystore-remove',
    what: 'a removal signed over another enrollment of the identity answers 204',
    wire: watching((w) =>
      letThrough(
        (req, url) => req.method === 'DELETE' && /^\/identities\/[^/]+\/keystore\/[^/]+$/.test(url.pathname),
        401,
        (url, b) =>
          [...w.enrollments.entries()]
            .filter(([, e]) => e.identity === identityOf(url))
            .some(([id]) =>
              verifiesWith(
                [w.keys.get(identityOf(url)) ?? ''],
                lines('keystore-remove', { identity: identityOf(url), enrollment_id: id, issued_at: b.issued_at, nonce: b.nonce }),
                b.identity_signature,
              ),
            ),
        () => new Response(null, { status: 204 }),
      ),
    ),
  },
  // The challenge is read, checked and spent in three steps: concurrent fetches all pass.
  'owner-fetch-challenge-race': {
    rule: 'ra.keystore.assertion-challenge',
    what: 'concurrent keystore fetches answering one challenge all fetch',
    wire: racy(
      (req, url) => req.method === 'POST' && /^\/identities\/[^/]+\/keystore\/fetch$/.test(url.pathname),
      (res) => res.status === 200,
      (_url, b) => {
        const a = (b.assertion ?? {}) as Record<string, unknown>;
        return str((JSON.parse(Buffer.from(str(a.client_data_json), 'base64url').toString() || '{}') as Record<string, unknown>).challenge);
      },
    ),
  },
  // The WebAuthn path reads the challenge store without the expiry the challenge headers apply.
  'owner-fetch-challenge-no-expiry': {
    rule: 'ra.keystore.assertion-challenge',
    what: 'a keystore fetch answering an expired (never used) challenge fetches',
    wire: (() => {
      const issued = new Set<string>();
      const answered = new Set<string>();
      return async (original, next) => {
        const url = new URL(original.url);
        if (original.method === 'GET' && url.pathname === '/auth/challenge') {
          const res = await next(original);
          if (res.status === 200) issued.add(str((await jsonOf(res)).challenge));
          return res;
        }
        if (original.method !== 'POST' || !/^\/identities\/[^/]+\/keystore\/fetch$/.test(url.pathname)) return next(original);
        const { req, body } = await buffered(original);
        const a = (body.assertion ?? {}) as Record<string, unknown>;
        const challenge = str((JSON.parse(Buffer.from(str(a.client_data_json), 'base64url').toString() || '{}') as Record<string, unknown>).challenge);
        const res = await next(req);
        const fresh = issued.has(challenge) && !answered.has(challenge);
        answered.add(challenge);
        return res.status === 401 && fresh ? jsonAnswer({ identity: identityOf(url), entries: [] }) : res;
      };
    })(),
  },
  // The RP id is accepted when the identity ends with it: any parent domain, not the registrable one alone.
  'owner-rp-id-any-parent': {
    rule: 'ra.keystore.assertion-rp-id',
    what: 'an assertion for any parent domain of the identity fetches',
    wire: letThrough(
      (req, url) => req.method === 'POST' && /^\/identities\/[^/]+\/keystore\/fetch$/.test(url.pathname),
      401,
      (url, b) => {
        const rpId = str(b.rp_id);
        const auth = Buffer.from(str(((b.assertion ?? {}) as Record<string, unknown>).authenticator_data), 'base64url');
        return rpId.includes('.') && identityOf(url).endsWith(`.${rpId}`) && auth.length >= 37 && createHash('sha256').update(rpId).digest().equals(auth.subarray(0, 32));
      },
      (url) => jsonAnswer({ identity: identityOf(url), entries: [] }),
    ),
  },
  // "removes a keystore entry without the recovery assertion": the actor assertion's credential
  // is looked up among every recovery master of the relay, not this identity's.
  'owner-master-any-identity': {
    rule: 'ra.keystore.recovery-master',
    what: "a removal with another identity's recovery-master assertion answers 204",
    wire: watching((w) =>
      letThrough(
        (req, url) => req.method === 'DELETE' && /^\/identities\/[^/]+\/keystore\/[^/]+$/.test(url.pathname),
        403,
        (_url, b) => {
          const credential = str(((b.actor_assertion ?? {}) as Record<string, unknown>).credential_id);
          return [...w.enrollments.values()].some((e) => e.role === 'recovery-master' && e.credential === credential);
        },
        () => new Response(null, { status: 204 }),
      ),
    ),
  },
  // The actor assertion is verified, and its challenge left unspent: it authorizes removal after removal.
  'owner-actor-assertion-replay': {
    rule: 'ra.keystore.recovery-master',
    what: "a recovery master's actor_assertion that authorized one removal authorizes another",
    wire: (() => {
      const used = new Set<string>();
      return async (original, next) => {
        const url = new URL(original.url);
        if (original.method !== 'DELETE' || !/^\/identities\/[^/]+\/keystore\/[^/]+$/.test(url.pathname)) return next(original);
        const { req, body } = await buffered(original);
        const signature = str(((body.actor_assertion ?? {}) as Record<string, unknown>).signature);
        const res = await next(req);
        if (res.status < 300 && signature !== '') used.add(signature);
        return res.status === 403 && used.has(signature) ? new Response(null, { status: 204 }) : res;
      };
    })(),
  },
  // The actor assertion's challenge is read, checked and spent in three steps: racing removals all pass.
  'owner-actor-assertion-race': {
    rule: 'ra.keystore.recovery-master',
    what: 'concurrent removals with one recovery-master actor_assertion all succeed',
    wire: racy(
      (req, url) => req.method === 'DELETE' && /^\/identities\/[^/]+\/keystore\/[^/]+$/.test(url.pathname),
      (res) => res.status >= 200 && res.status < 300,
      (_url, b) => str(((b.actor_assertion ?? {}) as Record<string, unknown>).signature),
    ),
  },
  // The cap counts a replacement (a PUT of an enrollment_id already held) as one more enrollment.
  'owner-keystore-cap-counts-replacements': {
    rule: 'ra.keystore.enrollment-shape',
    what: 'at the cap, replacing an enrollment is refused 400',
    wire: (() => {
      const held = new Map<string, Set<string>>();
      return async (original, next) => {
        const url = new URL(original.url);
        if (original.method !== 'PUT' || !/^\/identities\/[^/]+\/keystore$/.test(url.pathname)) return next(original);
        const { req, body } = await buffered(original);
        const mine = held.get(identityOf(url)) ?? held.set(identityOf(url), new Set()).get(identityOf(url))!;
        const id = str(body.enrollment_id);
        if (mine.has(id) && mine.size >= limits.keystore_enrollments_max) return jsonAnswer({ error: 'invalid_request', detail: 'refused by the broken variant' }, 400);
        const res = await next(req);
        if (res.status === 200) mine.add(id);
        return res;
      };
    })(),
  },
  // Removals are soft (a tombstone row): removing a removed enrollment answers 204 again.
  'owner-remove-tombstone': {
    rule: 'ra.keystore.remove',
    what: 'removing an enrollment already removed answers 204, not 404',
    wire: (() => {
      const removed = new Set<string>();
      return async (req, next) => {
        const url = new URL(req.url);
        const res = await next(req);
        if (req.method !== 'DELETE' || !/^\/identities\/[^/]+\/keystore\/[^/]+$/.test(url.pathname)) return res;
        if (res.status === 204 || res.status === 200) removed.add(url.pathname);
        return res.status === 404 && removed.has(url.pathname) ? new Response(null, { status: 204 }) : res;
      };
    })(),
  },
  // "accepts a pairing past expiry": the expiry is checked on the approver's calls only; the new
  // device still reveals, and still takes a sealed seed delivered in time.
  'owner-pairing-expiry-device': {
    rule: 'ra.pairing.expiry',
    what: "an expired offer still takes the new device's reveal and hands out its sealed seed",
    wire: (() => {
      const state = new Map<string, { step: string; sealed?: string }>();
      return async (original, next) => {
        const url = new URL(original.url);
        const p = enrollPath(url);
        if (!p) return next(original);
        const base = `${p.identity}/${normalizeShortCode(p.typed)}`;
        const { req, body } = await buffered(original);
        const res = await next(req);
        const was = state.get(base);
        if (res.status < 300) {
          if (p.step === 'fetch') state.set(base, { step: 'nonce' });
          else if (p.step === 'reveal') state.set(base, { step: 'revealed' });
          else if (p.step === 'deliver') state.set(base, { step: 'delivered', sealed: str(body.sealed) });
          else if (req.method === 'DELETE' || (await jsonOf(res)).sealed !== undefined) state.set(base, { step: 'gone' });
          return res;
        }
        if (res.status !== 404) return res;
        if (p.step === 'reveal' && was?.step === 'nonce') return (state.set(base, { step: 'revealed' }), jsonAnswer({ state: 'revealed' }));
        if (p.step === '' && req.method === 'GET' && was?.step === 'delivered') return (state.set(base, { step: 'gone' }), jsonAnswer({ state: 'delivered', sealed: was.sealed, ready: true }));
        return res;
      };
    })(),
  },
  // The bearer token is looked up among the identity's live offers, not bound to the one in the path.
  'owner-claim-token-any-offer': {
    rule: 'ra.pairing.bearer',
    what: "another live offer's claim token of the same identity is taken for this offer",
    wire: watching((w) => async (req, next) => {
      const url = new URL(req.url);
      const p = enrollPath(url);
      const token = /^Bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];
      const mine = w.offers.get(normalizeShortCode(p?.typed ?? '') ?? '');
      if (!p || p.step === 'fetch' || p.step === 'deliver' || !token || !mine || mine.token === token) return next(req);
      const sibling = [...w.offers.values()].some((o) => o.identity === p.identity && o.token === token);
      if (!sibling) return next(req);
      const headers = new Headers(req.headers);
      headers.set('authorization', `Bearer ${mine.token}`);
      const { text } = await buffered(req);
      return next(new Request(req.url, { method: req.method, headers, ...(text === '' ? {} : { body: text }) }));
    }),
  },
  // "accepts a claim token twice": the reveal reads the state and writes it in two steps.
  'owner-reveal-race': {
    rule: 'ra.pairing.reveal',
    what: 'concurrent reveals of one offer all answer 200',
    wire: racy(
      enrollStep('reveal'),
      (res) => res.status >= 200 && res.status < 300,
      (url) => url.pathname,
    ),
  },
  // Offers are counted by creation within their life: an abandoned one keeps its slot until it expires.
  'owner-abandon-keeps-slot': {
    rule: 'ra.pairing.abandon',
    what: 'an abandoned offer keeps its slot until it would have expired',
    wire: watching((w) => (req, next) => {
      const url = new URL(req.url);
      if (!isOffer(req, url)) return next(req);
      const live = [...w.offers.values()].filter((o) => o.identity === identityOf(url) && o.expiresAt > Date.now()).length;
      return live >= limits.pairing_offers_max ? Promise.resolve(jsonAnswer({ error: 'too_many_offers', detail: 'refused by the broken variant' }, 429)) : next(req);
    }),
  },
  // The revocation marks the device's row, but sessions are looked up without their device: they go on.
  'owner-device-revoke-keeps-sessions': {
    rule: 'ra.devices.list',
    what: "a device's revocation answers 200 and its sessions go on",
    wire: async (original, next) => {
      const url = new URL(original.url);
      if (original.method !== 'POST' || !/^\/devices\/[^/]+\/revoke$/.test(url.pathname)) return next(original);
      const { req, body } = await buffered(original);
      // Authenticated and judged by the relay on a device id that names none: then answered as done.
      const res = await next(new Request(req.url, { method: 'POST', headers: req.headers, body: JSON.stringify({ ...body, device_id: 'dev_none' }) }));
      return res.status === 404 ? jsonAnswer({ device_id: body.device_id, sessions_revoked: 1 }) : res;
    },
  },
  // The group identity's roster is verified with its epoch line left to what the relay stores.
  'owner-roster-epoch-unbound': {
    rule: 'ra.system.group-roster',
    what: "a group identity's roster whose epoch was altered after signing is taken",
    wire: watching((w) =>
      letThrough(
        (req, url) => req.method === 'PUT' && /^\/identities\/[^/]+\/system\/.*group-roster\.json$/.test(url.pathname),
        400,
        (url, b) => {
          const key = decodeBase64Any(w.keys.get(identityOf(url)) ?? '');
          return key !== undefined && key.length === 32 && Array.from({ length: 64 }, (_, e) => e + 1).some((epoch) => verifyDrive(profile, 'group-roster', { ...b, epoch }, key));
        },
        (url) => jsonAnswer({ path: url.pathname, etag: '"epoch-unbound"' }),
      ),
    ),
  },
  // "At most 64 KiB" read as "less than 64 KiB".
  'owner-system-size-off-by-one': {
    rule: 'ra.system.paths',
    what: 'a system document of exactly 64 KiB is refused 413',
    wire: async (original, next) => {
      const url = new URL(original.url);
      if (original.method !== 'PUT' || !systemPath(url)) return next(original);
      const { req, text } = await buffered(original);
      return Buffer.byteLength(text) >= limits.system_file_max_bytes ? jsonAnswer({ error: 'payload_too_large', detail: 'refused by the broken variant' }, 413) : next(req);
    },
  },
  // Contacts compared as written: a contact listed in another case than the sender's ID is unknown.
  'owner-contacts-case-sensitive': {
    rule: 'ra.inbox.policy',
    what: 'under contacts_only a contact listed in upper case is refused 403',
    wire: (() => {
      type Contact = { identity?: unknown; state?: unknown };
      const policy = new Map<string, { contacts: Contact[]; mode: string }>();
      const of = (identity: string) => policy.get(identity) ?? policy.set(identity, { contacts: [], mode: 'open' }).get(identity)!;
      return async (original, next) => {
        const url = new URL(original.url);
        const isMessage = original.method === 'POST' && url.pathname === '/messages';
        if (!isMessage && !(original.method === 'PUT' && systemPath(url))) return next(original);
        const { req, body } = await buffered(original);
        const res = await next(req);
        if (!isMessage) {
          if (res.status < 300 && url.pathname.endsWith('relay/contacts.json')) of(identityOf(url)).contacts = Array.isArray(body.contacts) ? (body.contacts as Contact[]) : [];
          if (res.status < 300 && url.pathname.endsWith('relay/inbox-policy.json')) of(identityOf(url)).mode = str(body.mode);
          return res;
        }
        const p = policy.get(str(body.recipient).toLowerCase());
        const sender = str(body.sender);
        const listed = p?.contacts.find((c) => c.state === 'accepted' && str(c.identity).toLowerCase() === sender.toLowerCase());
        return res.status === 202 && p?.mode === 'contacts_only' && listed !== undefined && listed.identity !== sender
          ? jsonAnswer({ error: 'not_authorized', detail: 'refused by the broken variant' }, 403)
          : res;
      };
    })(),
  },
  // The code's separators are the ASCII ones: an en dash, as phones type it, names no offer.
  'owner-code-en-dash': {
    rule: 'ra.pairing.short-code',
    what: 'a code typed with an en dash is not found',
    wire: (req, next) => {
      const p = enrollPath(new URL(req.url));
      return p && p.typed.includes('\u2013') ? Promise.resolve(jsonAnswer({ error: 'not_found', detail: 'refused by the broken variant' }, 404)) : next(req);
    },
  },
  // "takes `U` for a code character": Crockford decoding that reads U as V.
  'owner-code-u': {
    rule: 'ra.pairing.short-code',
    what: 'a U in a code is read as V',
    wire: async (req, next) => {
      const url = new URL(req.url);
      const p = enrollPath(url);
      if (!p || !/[Uu]/.test(p.typed)) return next(req);
      const parts = url.pathname.split('/');
      parts[4] = encodeURIComponent(p.typed.replace(/[Uu]/g, 'V'));
      url.pathname = parts.join('/');
      const { text } = await buffered(req);
      return next(new Request(url, { method: req.method, headers: req.headers, ...(text === '' ? {} : { body: text }) }));
    },
  },
};
