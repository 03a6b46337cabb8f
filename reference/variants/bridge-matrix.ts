// The reference bridge broken on the wire across the matrix of document 2's rules (issue 25):
// each variant is one realistic bug an implementer ships (a spent flag never set, a check-then-set
// race, a loose redirect comparison, a revocation that forgets the owner or a cache), each the
// document's sentence beside it. See wire.ts for how a variant wraps the server.
import { profileFor } from '../../protocol/common/profile.ts';
import { PATHS } from '../bridge/context.ts';
import { verifierMatches } from '../../protocol/bridge/pkce.ts';
import type { BridgeSeams } from '../bridge/seams.ts';
import { at, untouched, withBody, type Next, type Wire, type WireVariant } from './kit.ts';

const ids = profileFor().ids;

/** A whole answer kept to be given again (its body read once). */
interface Kept {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array<ArrayBuffer>;
}

async function keep(res: Response): Promise<Kept> {
  const headers: Array<[string, string]> = [];
  res.headers.forEach((v, k) => void (k !== 'set-cookie' && headers.push([k, v])));
  for (const c of res.headers.getSetCookie()) headers.push(['set-cookie', c]);
  return { status: res.status, headers, body: new Uint8Array(await res.arrayBuffer()) };
}

const replayOf = (k: Kept): Response => {
  const h = new Headers();
  for (const [n, v] of k.headers) h.append(n, v);
  return new Response(k.status === 204 || k.status === 304 || (k.status >= 300 && k.status < 400 && k.body.byteLength === 0) ? null : k.body, { status: k.status, headers: h });
};

/**
 * Concurrent requests with the same key share the first one's answer when `wins` says it won: the
 * check-then-set race of a store without an atomic spend. The window stays open `holdMs` after the
 * first answer (the time a slow store takes to record the spend).
 */
function raceOn(match: (req: Request, url: URL) => boolean, key: (req: Request) => Promise<string | undefined>, wins: (k: Kept) => boolean, holdMs = 300): Wire {
  const open = new Map<string, Promise<Kept>>();
  return async (req, next) => {
    if (!match(req, new URL(req.url))) return next(req);
    const k = await key(req);
    if (k === undefined) return next(req);
    const first = open.get(k);
    if (first) {
      const kept = await first;
      if (wins(kept)) return replayOf(kept);
      return next(req);
    }
    const p = next(req).then(keep);
    open.set(k, p);
    const kept = await p.finally(() => setTimeout(() => open.delete(k), holdMs));
    return replayOf(kept);
  };
}

const formField = (name: string) => async (req: Request) => new URLSearchParams(await req.clone().text()).get(name) ?? undefined;
const isResume = (req: Request, url: URL) => req.method === 'GET' && url.pathname === ids.resume_path;
const resumeCode = async (req: Request) => new URL(req.url).searchParams.get('code') ?? undefined;
const continuedBrowser = (k: Kept) => k.status < 400 && k.headers.some(([n]) => n === 'set-cookie');

/** The transaction state behind a transaction page URL, read with the browser's own cookies. */
async function txState(location: string, req: Request, next: Next): Promise<unknown> {
  const url = new URL(location, req.url);
  if (!url.pathname.startsWith(PATHS.transaction)) return undefined;
  const res = await next(new Request(url.href, { headers: { cookie: req.headers.get('cookie') ?? '', accept: 'application/json' } }));
  if (!(res.headers.get('content-type') ?? '').includes('json')) return undefined;
  return ((await res.json()) as { state?: unknown }).state;
}

const FINISHED = new Set(['code_issued', 'redeemed', 'access_denied', 'expired', 'failed']);

export const BRIDGE_MATRIX_WIRE: Record<string, WireVariant> = {
  // "The resume code is still reusable in the same browser." (issue 25) Document 2, States and
  // transitions: "the resume code is 256-bit random, single-use, valid 60 seconds, bound to the
  // transaction". The bug: the code is never marked spent; only a finished transaction stops it.
  'resume-reusable': {
    rule: 'ob.transaction.resume-binding',
    what: 'a used resume code signs the same browser in again while its transaction is not finished',
    wire: (() => {
      const used = new Map<string, Kept>();
      return async (req, next) => {
        if (!isResume(req, new URL(req.url))) return next(req);
        const code = (await resumeCode(req)) ?? '';
        const first = used.get(code);
        const location = first?.headers.find(([n]) => n === 'location')?.[1];
        if (first && location !== undefined) {
          const state = await txState(location, req, next);
          if (typeof state === 'string' && !FINISHED.has(state)) return replayOf(first);
        }
        const kept = await keep(await next(req));
        if (continuedBrowser(kept)) used.set(code, kept);
        return replayOf(kept);
      };
    })(),
  },
  // Document 2: "the resume code is ... single-use". The bug: opened twice at once, both win.
  'resume-race': {
    rule: 'ob.transaction.resume-binding',
    what: 'a resume code opened several ways at once continues the browser every time',
    wire: raceOn(isResume, resumeCode, continuedBrowser),
  },
  // Document 2, Authorization code: "256-bit random, stored hashed, single-use, 60 seconds". The
  // bug: redemptions of one code at once all win (no atomic spend).
  'code-race': {
    rule: 'ob.code.replay-revokes',
    what: 'a code redeemed several ways at once gives tokens every time',
    wire: raceOn(at(PATHS.token, 'POST'), formField('code'), (k) => k.status === 200),
  },
  // Document 2, Endpoints: "POST /revoke: RFC 7009 access-token revocation" (RFC 7009 section
  // 2.1: the server "verifies whether the token was issued to the client making the revocation
  // request"). The bug: the client's credentials are checked, the token's owner is not.
  'revoke-any-client': {
    rule: 'ob.revoke',
    what: "a client revokes another client's access token",
    wire: async (req, next) => {
      const url = new URL(req.url);
      if (req.method !== 'POST' || url.pathname !== PATHS.revoke) return next(req);
      const form = new URLSearchParams(await req.clone().text());
      const authenticated = req.headers.has('authorization') || form.has('client_secret') || form.has('client_assertion');
      if (!authenticated) return next(req);
      // Authenticated: checked first, then the token revoked whoever owns it.
      const checked = await next(req);
      if (checked.status !== 200) return checked;
      for (const k of ['client_id', 'client_secret', 'client_assertion', 'client_assertion_type']) form.delete(k);
      return next(new Request(req.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }));
    },
  },
  // Document 2, Endpoints: "POST /revoke: RFC 7009 access-token revocation"; rule ob.revoke: "a
  // revoked token no longer reads /userinfo" and is no longer active (RFC 7662). The bug:
  // introspection answers from a cache that revocation does not clear.
  'introspect-cached': {
    rule: 'ob.revoke',
    what: 'a revoked access token still introspects active (an introspection cache revocation does not clear)',
    wire: (() => {
      const cache = new Map<string, Kept>();
      return async (req, next) => {
        const url = new URL(req.url);
        if (req.method !== 'POST' || url.pathname !== PATHS.introspect) return next(req);
        const token = await formField('token')(req);
        const cached = token === undefined ? undefined : cache.get(token);
        if (cached) return replayOf(cached);
        const kept = await keep(await next(req));
        if (token !== undefined && kept.status === 200 && (JSON.parse(new TextDecoder().decode(kept.body)) as { active?: unknown }).active === true) cache.set(token, kept);
        return replayOf(kept);
      };
    })(),
  },
  // Document 2, Authorization code: "single-use, 60 seconds". The bug: the expiry compared with a
  // second of slack (a clock-skew allowance, or whole seconds rounded up).
  'code-expiry-grace': {
    rule: 'ob.code.format',
    what: 'a code still redeems up to one second after it expired',
    wire: untouched,
    seams: { codeExpired: (now, expiresAt) => now > expiresAt + 1000 } satisfies Partial<BridgeSeams>,
  },
  // Document 2, OIDC profile rule 1: "PKCE `S256` is required for every client"; Errors: "wrong
  // PKCE verifier: redemption refused". The bug: the verifier is checked in the confidential
  // clients' branch only, so a public client's code redeems with any verifier.
  'verifier-public-only': {
    rule: 'ob.code.wrong-verifier',
    what: "a public client's code redeems with any verifier (confidential clients' verifiers are checked)",
    wire: untouched,
    seams: { pkceMatches: (client, verifier, challenge) => client.authMethod === 'none' || verifierMatches(verifier, challenge) } satisfies Partial<BridgeSeams>,
  },
  // Document 2, States and transitions: "| `identify` | user enters an ID | ID normalizes and
  // resolves | `awaiting_signature` |". The bug: the ID form is taken in any state, so another ID
  // entered after the proof sends a transaction at consent back to waiting for a signature.
  'identify-any-state': {
    rule: 'ob.transaction.identify',
    what: 'an ID entered after the proof moves the transaction back to awaiting_signature',
    wire: untouched,
    seams: { identifies: () => true } satisfies Partial<BridgeSeams>,
  },
  // Document 2, Finding a signer: "The bridge never embeds or frames a signer". The bug: the
  // waiting page shows the identity's signer in a frame, so the user approves without leaving it.
  'signer-framed': {
    rule: 'ob.native.never-frame',
    what: "the waiting page frames the identity's signer",
    wire: async (req, next) => {
      const res = await next(req);
      if (!at(PATHS.transaction)(req, new URL(req.url)) || !(res.headers.get('content-type') ?? '').startsWith('text/html')) return res;
      const page = await res.text();
      const signer = /href="(https:[^"?]*\/app\/)\?auth=/.exec(page)?.[1];
      return withBody(res, signer ? page.replace('<ul data-testid="signers">', `<iframe src="${signer}" title="signer"></iframe><ul data-testid="signers">`) : page);
    },
  },
  // Document 2, Transaction: "Created by a valid `/authorize` call; lives at most 10 minutes". The
  // bug: the life restarts on activity (each visit to the transaction's pages extends it, as
  // /t/{id}/creating may).
  'tx-sliding-life': {
    rule: 'ob.transaction.expiry',
    what: "every visit to a transaction's pages restarts its life",
    wire: async (req, next) => {
      const url = new URL(req.url);
      const id = url.pathname.startsWith(PATHS.transaction) ? url.pathname.slice(PATHS.transaction.length).split('/')[0] : undefined;
      if (id && !url.pathname.endsWith('/creating')) {
        await next(new Request(`${url.origin}${PATHS.transaction}${id}/creating`, { method: 'POST', headers: { cookie: req.headers.get('cookie') ?? '', accept: 'application/json' } }));
      }
      return next(req);
    },
  },
  // Document 2, Operator commands: "`svc-oauth clients suspend <id>` (stops an application at
  // once)". The bug: introspection reads the token's record and never asks whether its client
  // still stands (here: it answers what it answered before the suspension).
  'suspended-introspect-active': {
    rule: 'ob.clients.suspend',
    what: "a suspended client's access token still introspects active",
    wire: (() => {
      const suspended = new Set<string>();
      const seen = new Map<string, Kept>();
      return async (req, next) => {
        const url = new URL(req.url);
        if (req.method === 'POST' && url.pathname === PATHS.suspend) {
          const res = await next(req.clone());
          const id = new URLSearchParams(await req.text()).get('client_id');
          if (res.status < 300 && id) suspended.add(id);
          return res;
        }
        if (req.method !== 'POST' || url.pathname !== PATHS.introspect) return next(req);
        const token = (await formField('token')(req)) ?? '';
        const before = seen.get(token);
        const owner = before && (JSON.parse(new TextDecoder().decode(before.body)) as { client_id?: string }).client_id;
        if (before && owner !== undefined && suspended.has(owner)) return replayOf(before);
        const kept = await keep(await next(req));
        if (kept.status === 200 && (JSON.parse(new TextDecoder().decode(kept.body)) as { active?: unknown }).active === true) seen.set(token, kept);
        return replayOf(kept);
      };
    })(),
  },
  // Document 2, OIDC profile rule 1: "PKCE `S256` is required for every client; `plain` is
  // refused." The bug: the operator's own (first-party) applications are trusted without it.
  'pkce-first-party-optional': {
    rule: 'ob.authorize.pkce-required',
    what: 'a first-party client may leave PKCE out (its codes then redeem without a verifier)',
    wire: untouched,
    seams: {
      pkceRequired: (client) => !client.firstParty,
      pkceMatches: (client, verifier, challenge) => (client.firstParty && challenge === '') || verifierMatches(verifier, challenge),
    } satisfies Partial<BridgeSeams>,
  },
  // Document 2, Transaction: "Holds the client, redirect URI, ... and a browser-binding cookie";
  // Endpoints: "a transaction's pages and a status poll bound to the browser". The bug: the consent
  // step reads the transaction by its id alone (the binding is checked on the pages before it).
  'consent-any-browser': {
    rule: 'ob.transaction.create',
    what: "a transaction's consent is taken from any browser that knows its URL",
    wire: (() => {
      const binding = new Map<string, string>();
      return async (req, next) => {
        const url = new URL(req.url);
        const m = new RegExp(`^${PATHS.transaction}([A-Za-z0-9_-]+)(/.*)?$`).exec(url.pathname);
        if (!m) return next(req);
        const [, id, rest] = m as unknown as [string, string, string | undefined];
        const cookie = req.headers.get('cookie') ?? '';
        if (rest !== '/consent') {
          // The owner's cookie, as the first browser to read the transaction's page sent it.
          if (!binding.has(id) && cookie !== '') binding.set(id, cookie);
          return next(req);
        }
        const owner = binding.get(id);
        if (owner === undefined || owner === cookie) return next(req);
        const headers = new Headers(req.headers);
        headers.set('cookie', owner);
        return next(new Request(req.url, { method: req.method, headers, body: await req.text() }));
      };
    })(),
  },
  'redirect-suffix': looseRedirect('a redirect_uri that extends a registered one is accepted (startsWith)', (asked, reg) => asked.startsWith(reg)),
  'redirect-trailing-slash': looseRedirect('a redirect_uri differing by a trailing slash is accepted', (asked, reg) => asked.replace(/\/$/, '') === reg.replace(/\/$/, '')),
  'redirect-case': looseRedirect('a redirect_uri in another case is accepted', (asked, reg) => asked.toLowerCase() === reg.toLowerCase()),
  'redirect-port': looseRedirect('a redirect_uri on another port is accepted', (asked, reg) => withoutPort(asked) === withoutPort(reg)),
};

function withoutPort(uri: string): string {
  try {
    const u = new URL(uri);
    return `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  } catch {
    return uri;
  }
}

/**
 * Document 2, OIDC profile rule 4: "`redirect_uri` is an exact string match, except loopback
 * redirects ... for public clients". The bug: a looser comparison. The variant learns each client's
 * registered URI from the requests the bridge accepts, and lets `same` decide the rest.
 */
function looseRedirect(what: string, same: (asked: string, registered: string) => boolean): WireVariant {
  const registered = new Map<string, Set<string>>();
  const wire: Wire = async (req, next) => {
    const url = new URL(req.url);
    if (req.method !== 'GET' || url.pathname !== PATHS.authorize) return next(req);
    const client = url.searchParams.get('client_id') ?? '';
    const asked = url.searchParams.get('redirect_uri') ?? '';
    const res = await next(req);
    const known = registered.get(client) ?? new Set<string>();
    if (res.status >= 300 && res.status < 400) {
      // Accepted: the asked URI is registered (or a loopback form the document allows).
      registered.set(client, known.add(asked));
      return res;
    }
    const match = [...known].find((r) => r !== asked && same(asked, r));
    if (match === undefined || res.status < 400) return res;
    const q = new URLSearchParams(url.search);
    q.set('redirect_uri', match);
    return next(new Request(`${url.origin}${url.pathname}?${q.toString()}`, { method: 'GET', headers: req.headers }));
  };
  return { rule: 'ob.authorize.redirect-exact', what, wire };
}
