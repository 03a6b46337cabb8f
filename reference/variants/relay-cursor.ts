// A consume broken on the wire (wire.ts) as an implementer ships it (issue 25: "After each
// lifecycle event, every use of what it ended"): the cursor log and the drain queue kept apart,
// and consume dropping from the log only.
import { jsonAnswer, type Next, type Wire, type WireVariant } from './kit.ts';

type Obj = Record<string, unknown>;
const inboxOf = (url: URL) => /^\/messages\/([^/]+)(\/consume)?$/.exec(url.pathname);

/**
 * Mail a cursor read returned is kept per inbox with the read's cursor; a consume through that
 * cursor drops it from cursor reads (the relay's own answer) but a later drain still hands it out.
 */
function consumeLeavesDrain(): Wire {
  const read = new Map<string, Map<string, Obj[]>>();
  const queued = new Map<string, Obj[]>();
  return async (req: Request, next: Next) => {
    const url = new URL(req.url);
    const m = inboxOf(url);
    if (!m) return next(req);
    const inbox = m[1]!.toLowerCase();
    if (m[2] && req.method === 'POST') {
      const through = String(
        (
          (await req
            .clone()
            .json()
            .catch(() => ({}))) as Obj
        ).through ?? '',
      );
      const res = await next(req);
      const kept = read.get(inbox)?.get(through);
      if (res.status < 300 && kept) queued.set(inbox, [...(queued.get(inbox) ?? []), ...kept]);
      return res;
    }
    const res = await next(req);
    if (req.method !== 'GET' || res.status !== 200) return res;
    const body = (await res.json()) as Obj;
    const messages = Array.isArray(body.messages) ? (body.messages as Obj[]) : [];
    if (url.searchParams.has('since')) {
      const byCursor = read.get(inbox) ?? new Map<string, Obj[]>();
      byCursor.set(String(body.cursor), messages);
      read.set(inbox, byCursor);
    } else if (queued.has(inbox)) {
      body.messages = [...(queued.get(inbox) ?? []), ...messages];
      queued.delete(inbox);
    }
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    return new Response(JSON.stringify(body), { status: 200, headers });
  };
}

export const RELAY_CURSOR_WIRE: Record<string, WireVariant> = {
  // "`POST /messages/:identity/consume` with `through` and `ack_through` (cursors) then drops them."
  'consume-leaves-drain': {
    rule: 'ra.pickup.cursor',
    what: 'a consume drops mail from cursor reads, but the next drain still hands it out',
    wire: consumeLeavesDrain(),
  },
  'cursor-lenient': {
    rule: 'ra.pickup.cursor-forms',
    what: 'a since that is no cursor reads as the start of nothing: 200 with empty lists',
    wire: async (req, next) => {
      const res = await next(req);
      const url = new URL(req.url);
      if (res.status !== 400 || req.method !== 'GET' || !url.searchParams.has('since') || !inboxOf(url)) return res;
      const since = url.searchParams.get('since') ?? '';
      return jsonAnswer({ messages: [], acks: [], cursor: since, ack_cursor: since });
    },
  },
};
