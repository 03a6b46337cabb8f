// Pairing broken on the wire (issue 25's whole-area run of reference/relay/pairing.ts), each the
// way a relay that read one field loosely would answer.
import { editJson, editRequest, jsonAnswer, withBody, type Wire, type WireVariant } from './kit.ts';

const pairing = (suffix: RegExp) => (req: Request, url: URL) => /^\/identities\/[^/]+\/enroll\//.test(url.pathname) && suffix.test(url.pathname);

/**
 * A blind broken server (owner-02, written without the suites): "the approver-nonce check only
 * applies while the offer is in state `nonce`". Once an offer is revealed, a fetch refused 409 is
 * answered 200 with the offer as its last fetch showed it.
 */
function nonceCheckedBeforeRevealOnly(): Wire {
  const seen = new Map<string, { revealed: boolean; body?: string }>();
  return async (req, next) => {
    const url = new URL(req.url);
    const m = /^\/identities\/[^/]+\/enroll\/([^/]+)\/(fetch|reveal)$/.exec(url.pathname);
    if (!m || req.method !== 'POST') return next(req);
    const res = await next(req);
    const offer = seen.get(m[1]!) ?? { revealed: false };
    seen.set(m[1]!, offer);
    if (m[2] === 'reveal') offer.revealed ||= res.status >= 200 && res.status < 300;
    else if (res.status === 200) offer.body = await res.clone().text();
    else if (res.status === 409 && offer.revealed && offer.body) return withBody(res, offer.body, 200);
    return res;
  };
}

export const RELAY_PAIRING_WIRE: Record<string, WireVariant> = {
  'bearer-unanchored': {
    // Issue 25: "Each normalization in its variant forms, and near-misses (a suffix, a prefix, another case)."
    rule: 'ra.pairing.bearer',
    what: 'the claim token is found anywhere in Authorization: "xBearer <token> junk" opens the offer',
    wire: editRequest(pairing(/./), (req) => {
      const m = /Bearer\s*([A-Za-z0-9_-]{20,})/i.exec(req.headers.get('authorization') ?? '');
      if (!m) return req;
      const headers = new Headers(req.headers);
      headers.set('authorization', `Bearer ${m[1]}`);
      return new Request(req, { headers });
    }),
  },
  'mode-unchecked': {
    rule: 'ra.pairing.limits',
    what: 'a fetch with a mode other than scan or compare is answered as if it were one',
    wire: async (req, next) => {
      const res = await next(req);
      if (res.status !== 400 || !pairing(/\/fetch$/)(req, new URL(req.url))) return res;
      const e = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { detail?: string };
      return /mode/.test(e.detail ?? '') ? jsonAnswer({ state: 'nonce' }) : res;
    },
  },
  'fetch-other-after-reveal': {
    rule: 'ra.pairing.already-approving',
    what: 'after the reveal, a fetch with another approver_nonce is answered 200 with the offer',
    wire: nonceCheckedBeforeRevealOnly(),
  },
  // A blind broken server (round 2, owner-01, written without the suites): "an 8-character input is only upper-cased. The Crockford substitution (O→0, I/L→1) is skipped for it".
  'code-full-length-unnormalized': {
    rule: 'ra.pairing.short-code',
    what: 'a code typed at its full length with O for 0 names no offer (404)',
    wire: async (req, next) => {
      const m = /^\/identities\/[^/]+\/enroll\/([^/]+)(\/(fetch|reveal|deliver))?$/.exec(new URL(req.url).pathname);
      const typed = m ? decodeURIComponent(m[1]!) : '';
      if (typed.length !== 8 || !/[Oo]/.test(typed)) return next(req);
      return jsonAnswer({ error: 'not_found', detail: 'no live pairing offer with this code', rule: 'ra.errors.not-found' }, 404);
    },
  },
  'replies-bare': {
    rule: 'ra.pairing.replies',
    what: 'reveal and deliver answer 200 {} (no state)',
    wire: editJson(pairing(/\/(reveal|deliver)$/), () => ({}), [200]),
  },
};
