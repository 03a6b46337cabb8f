// The project's earlier wire forms, kept as a dialect of the reference relay (tests only:
// SVC_REFERENCE_ALLOW_BREAKAGE=1 SVC_REFERENCE_WIRE=dialect/earlier-forms). Where document 3 shows
// no body, the reference speaks the deployed client's forms and the project's earlier ones; this
// wire speaks only the earlier ones, so a suite can show its document checks pass against both
// (issue 26: "Prove it by running the relay and drive suites' document checks against the
// reference in each dialect"). It is not a broken variant: it breaks no rule of the document.
import { jsonAnswer, withBody, type Wire } from './kit.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The fields of a node view only the deployed client's form carries. */
const DEPLOYED_NODE_FIELDS = ['id', 'head', 'generation', 'kind', 'folder', 'mode'];

const notFound = (detail: string) => jsonAnswer({ error: 'not_found', detail, rule: 'ra.errors.not-found' }, 404);
const notOneOperation = (detail: string) => jsonAnswer({ error: 'invalid_request', detail: `the commit is not one operation of ra.drive.commit: ${detail}`, rule: 'ra.drive.commit' }, 400);

const parsed = (text: string): Obj | undefined => {
  try {
    const v = JSON.parse(text) as unknown;
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
};

/** Whether clientDataJSON's challenge is base64url of a base64url string (the deployed web app's form). */
function utf8Form(assertion: unknown): boolean {
  if (!isObj(assertion) || typeof assertion.client_data_json !== 'string') return false;
  const client = parsed(Buffer.from(assertion.client_data_json, 'base64url').toString('utf8'));
  const challenge = typeof client?.challenge === 'string' ? client.challenge : '';
  return /^[A-Za-z0-9_-]{16,}$/.test(Buffer.from(challenge, 'base64url').toString('utf8'));
}

/** What the earlier relay refused among the requests the reference now takes, answered as it did; or the request to pass on. */
async function earlierRequest(req: Request, url: URL): Promise<Request | Response> {
  const p = url.pathname;
  // System paths without the service's directory, and the roster at public/group-roster.json only.
  if (/^\/identities\/[^/]+\/system\/(\.|relay\/group\.json$)/.test(p)) return notFound(`no system document ${p.split('/system/')[1] ?? ''}`);
  if (req.method === 'GET' && /^\/groups\/[^/]+$/.test(p)) return notFound('no such endpoint');
  const keystore = /^\/identities\/[^/]+\/keystore\/(fetch|[^/]+)$/.exec(p);
  const commit = req.method === 'POST' && /^\/drive\/[^/]+\/commit$/.test(p);
  if (!commit && !(keystore && ((req.method === 'POST' && keystore[1] === 'fetch') || req.method === 'DELETE'))) return req;
  const text = await req.text();
  const b = parsed(text);
  const again = (body: string) => new Request(req.url, { method: req.method, headers: req.headers, body });
  if (!b) return again(text);
  if (commit) {
    if (isObj(b.unshare) && b.unshare.share === undefined) return notOneOperation("/unshare must have required property 'share'");
    if (b.manifest !== undefined && b.pages === undefined) return notOneOperation("/ must have required property 'pages'");
    return again(text);
  }
  // The assertion counted only with rp_id named and the challenge as issued: otherwise it is not there.
  const field = req.method === 'DELETE' ? 'actor_assertion' : 'assertion';
  if (b[field] !== undefined && (typeof b.rp_id !== 'string' || utf8Form(b[field]))) {
    b[field] = req.method === 'DELETE' ? undefined : {};
    return again(JSON.stringify(b));
  }
  return again(text);
}

/** The reference's answer in the earlier forms: the fields only the deployed forms carry dropped, upload URLs absolute. */
function earlierAnswer(req: Request, url: URL, b: Obj): Obj {
  const p = url.pathname;
  const drop = (o: Obj, names: readonly string[]) => {
    for (const n of names) delete o[n];
    return o;
  };
  if (/^\/drive\/[^/]+\/chunks\/missing$/.test(p))
    for (const m of Array.isArray(b.missing) ? (b.missing as Obj[]) : []) {
      const up = m.upload as Obj | undefined;
      if (up && typeof up.url === 'string' && up.url.startsWith('/')) up.url = `${url.origin}${up.url}`;
    }
  if (/^\/drive\/[^/]+\/nodes\/[^/]+$/.test(p)) drop(b, DEPLOYED_NODE_FIELDS);
  if (/^\/drive\/[^/]+\/nodes\/[^/]+\/children$/.test(p)) {
    for (const c of Array.isArray(b.children) ? (b.children as Obj[]) : []) drop(c, DEPLOYED_NODE_FIELDS);
    drop(b, ['cursor']);
  }
  if (/^\/drive\/[^/]+\/commit$/.test(p)) drop(b, ['head', 'positions']);
  if (/\/keystore\/list$/.test(p)) drop(b, ['identity']);
  if (/\/keystore\/fetch$/.test(p) && Array.isArray(b.entries)) b.entries = (b.entries as Obj[]).map((e) => ({ enrollment_id: e.enrollment_id, wrap: e.wrap, wrapped: e.wrapped }));
  if (req.method === 'GET' && /^\/identities\/[^/]+$/.test(p)) drop(b, ['relay', 'encryption_public_key']);
  if (/^\/messages\/[^/]+\/consume$/.test(p)) drop(b, ['pending']);
  if (req.method === 'GET' && /^\/devices\/[^/]+$/.test(p)) drop(b, ['identity']);
  if (/^\/devices\/[^/]+\/revoke$/.test(p)) drop(b, ['dav_tokens_revoked', 'app_passwords_revoked']);
  if (/\/enroll\/[^/]+\/fetch$/.test(p)) drop(b, ['rendezvous_id']);
  return b;
}

const earlierForms: Wire = async (original, next) => {
  const url = new URL(original.url);
  const req = await earlierRequest(original, url);
  if (req instanceof Response) return req;
  const res = await next(req);
  if (res.status >= 300 || !(res.headers.get('content-type') ?? '').includes('json')) return res;
  const b = parsed(await res.clone().text());
  return b ? withBody(res, JSON.stringify(earlierAnswer(req, url, b))) : res;
};

/** The dialects, keyed `dialect/<name>` beside the wire variants (SVC_REFERENCE_WIRE). */
export const DIALECTS: Record<string, Wire> = { 'dialect/earlier-forms': earlierForms };
