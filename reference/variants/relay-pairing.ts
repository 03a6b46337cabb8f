// Pairing broken on the wire (issue 25's whole-area run of reference/relay/pairing.ts), each the
// way a relay that read one field loosely would answer.
import { editJson, editRequest, jsonAnswer, type WireVariant } from './kit.ts';

const pairing = (suffix: RegExp) => (req: Request, url: URL) => /^\/identities\/[^/]+\/enroll\//.test(url.pathname) && suffix.test(url.pathname);

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
  'replies-bare': {
    rule: 'ra.pairing.replies',
    what: 'reveal and deliver answer 200 {} (no state)',
    wire: editJson(pairing(/\/(reveal|deliver)$/), () => ({}), [200]),
  },
};
