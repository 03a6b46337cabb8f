// The relay's single-use things raced, broken on the wire (wire.ts) as an implementer ships them:
// a check then a write with nothing between, or a write that lands late (issue 25: "Each
// single-use secret replayed, and raced 20 ways"). Requests well apart behave; only those in
// flight together, or close behind one another, see the bug.
import { jsonAnswer, type Next, type Wire, type WireVariant } from './kit.ts';

/**
 * Registrations checked for a prior one, then stored with no unique constraint: a registration
 * that overlapped another of the same identity also answers 201 (the one stored last wins).
 */
function registerCheckThenInsert(): Wire {
  const inFlight = new Map<string, number>();
  return async (req: Request, next: Next) => {
    if (req.method !== 'POST' || new URL(req.url).pathname !== '/identities') return next(req);
    const body = (await req
      .clone()
      .json()
      .catch(() => ({}))) as Record<string, unknown>;
    const identity = String(body.identity ?? '').toLowerCase();
    const others = inFlight.get(identity) ?? 0;
    inFlight.set(identity, others + 1);
    try {
      const res = await next(req);
      if (res.status !== 409 || others + (inFlight.get(identity) ?? 0) <= 1) return res;
      const { identity: id, public_key, encryption_public_key } = body;
      return jsonAnswer({ identity: id, public_key, encryption_public_key, relay: 'here', created_at: new Date().toISOString() }, 201);
    } finally {
      const left = (inFlight.get(identity) ?? 1) - 1;
      if (left === 0) inFlight.delete(identity);
      else inFlight.set(identity, left);
    }
  };
}

/**
 * A pairing step's state written to a store whose writes land a moment after the answer (a
 * replica read before the primary's write reaches it): a reveal (or delivery) of the same
 * rendezvous arriving within LAG_MS of the one taken is taken too, answered as that one was.
 */
const LAG_MS = 150;
function pairingStepLagging(): Wire {
  const taken = new Map<string, { at: number; text: string; headers: Headers; status: number }>();
  return async (req: Request, next: Next) => {
    const path = new URL(req.url).pathname;
    if (req.method !== 'POST' || !/^\/identities\/[^/]+\/enroll\/[^/]+\/(reveal|deliver)$/.test(path)) return next(req);
    const arrived = Date.now();
    const res = await next(req);
    if (res.status >= 200 && res.status < 300) {
      const text = await res.text();
      taken.set(path, { at: Date.now(), text, headers: new Headers(res.headers), status: res.status });
      return new Response(text, { status: res.status, headers: res.headers });
    }
    const won = taken.get(path);
    if (res.status === 409 && won && arrived - won.at < LAG_MS) return new Response(won.text, { status: won.status, headers: won.headers });
    return res;
  };
}

const hasMessages = (text: string): boolean => {
  try {
    const b = JSON.parse(text) as { messages?: unknown };
    return Array.isArray(b.messages) && b.messages.length > 0;
  } catch {
    return false;
  }
};

/**
 * A pickup reads the inbox, answers, and deletes what it read, with no lock: a pickup of the same
 * inbox that overlapped one returning mail returns that mail too.
 */
function drainReadThenDelete(): Wire {
  const inFlight = new Map<string, Promise<string>>();
  return async (req: Request, next: Next) => {
    const url = new URL(req.url);
    if (req.method !== 'GET' || !/^\/messages\/[^/]+$/.test(url.pathname) || url.searchParams.has('since')) return next(req);
    const inbox = url.pathname.toLowerCase();
    const earlier = inFlight.get(inbox);
    const mine = next(req).then(async (res) => ({ res, text: res.status === 200 ? await res.text() : '' }));
    const text = mine.then((m) => m.text);
    if (!earlier) inFlight.set(inbox, text);
    const { res, text: own } = await mine;
    if (inFlight.get(inbox) === text) setTimeout(() => inFlight.get(inbox) === text && inFlight.delete(inbox), 50);
    if (res.status !== 200) return res;
    const shared = earlier ? await earlier : '';
    const body = !hasMessages(own) && hasMessages(shared) ? shared : own;
    return new Response(body, { status: 200, headers: res.headers });
  };
}

export const RELAY_ONCE_WIRE: Record<string, WireVariant> = {
  // "409 (already registered here)", raced: two registrations of one name both win.
  'register-race': {
    rule: 'ra.identities.conflict',
    what: 'registrations of one identity in flight together each answer 201',
    wire: registerCheckThenInsert(),
  },
  // "`409` `out_of_order`; once", raced: two reveals (or deliveries) of one rendezvous both taken.
  'pairing-race': {
    rule: 'ra.pairing.out-of-order',
    what: `a reveal, or a delivery, arriving within ${LAG_MS} ms of the one taken for its rendezvous is taken too`,
    wire: pairingStepLagging(),
  },
  // "both drained on read", raced: pickups in flight together each return the same mail.
  'drain-race': {
    rule: 'ra.pickup.drain',
    what: 'pickups of one inbox in flight together each return the mail one of them drained',
    wire: drainReadThenDelete(),
  },
};
