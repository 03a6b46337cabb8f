// The bridge as a native RP (document 2, The bridge as a native RP): its metadata, the delivery
// endpoint `/svc/callback` verified by the project's native verifier with the transaction bound
// before the nonce is spent, the request by reference `/r/{code}` and the context record.
import { limits } from '../../schemas/ts/limits.ts';
import { normalizeShortCode } from '../../protocol/signin/reference.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { encodeObject } from '../../protocol/common/codec.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { CORS_ANY, errorJson, html, json, prefersJson } from '../shared/http.ts';
import { readBody, RP_BODY } from '../shared/body.ts';
import { bindingOf, parseDelivery, refuseApprovalInUrl, rejectionError } from '../signin/index.ts';
import { approved } from './flow.ts';
import { messagePage } from './pages.ts';
import { PATHS, type BridgeContext } from './context.ts';
import type { BridgeTx } from './store.ts';

/** ob.native.rp-metadata */
export function metadataHandler(ctx: BridgeContext): Response {
  const i = ctx.config.issuer;
  return json(
    {
      [ctx.profile.ids.auth_field]: '1',
      origin: i,
      name: ctx.config.name,
      response_uris: [`${i}${ctx.profile.ids.callback_path}`],
      transports: ['redirect', 'qr', 'deeplink'],
      context_uri: `${i}${ctx.profile.ids.context_path}`,
      contact_uri: `${i}/abuse`,
    },
    200,
    { ...CORS_ANY, 'cache-control': 'public, max-age=300' },
  );
}

/** POST /svc/callback (ob.transaction.callback, ob.transaction.no-response-in-url, ob.transaction.failed). */
export async function callbackHandler(ctx: BridgeContext, req: Request): Promise<Response> {
  try {
    const u = req.url;
    const q = u.indexOf('?');
    const fromUrl = ctx.seams.approvalInUrl(q === -1 ? '' : u.slice(q));
    if (!fromUrl) refuseApprovalInUrl(ctx, q === -1 ? '' : u.slice(q));
    const { approval, match } = fromUrl ?? parseDelivery(await readBody(req, limits.rp_delivery_body_max_bytes, RP_BODY));
    let tx: BridgeTx | undefined;
    const verdict = await ctx.verify(approval, async (r) => {
      tx = typeof r.request_id === 'string' ? await ctx.store.txByRequestId(r.request_id) : undefined;
      if (!tx || tx.request === null) throw ruleError(409, 'ns.delivery.unknown-transaction', 'no sign-in waits for this request_id', CORS_ANY);
      if (tx.status !== 'awaiting_signature') throw ruleError(409, 'ns.transaction.one-approval', `this sign-in is ${tx.status}`, CORS_ANY);
      if (bindingOf(r) !== bindingOf(tx.request)) throw ruleError(400, 'ns.delivery.request-binding', 'the approval does not answer the request this bridge issued', CORS_ANY);
      if (match !== undefined && match !== tx.matchCode) {
        await ctx.store.move(tx.id, 'awaiting_signature', 'failed', { error: 'the match code did not match' });
        throw ruleError(403, 'ns.transaction.match-wrong', 'the match code does not match; this sign-in has ended', CORS_ANY);
      }
    });
    if (!verdict.ok) {
      // A bound transaction fails for good, shown to the user and never redirected.
      if (tx && ctx.seams.failsTransaction()) await ctx.store.move(tx.id, 'awaiting_signature', 'failed', { error: verdict.code });
      await ctx.store.audit('signin.failed', null, { code: verdict.code });
      throw rejectionError(verdict);
    }
    const result = await approved(ctx, tx!, verdict.identity, verdict.delegated, match !== undefined);
    if (!result.ok) throw ruleError(409, 'ns.transaction.one-approval', 'this sign-in was already approved or has ended', CORS_ANY);
    return json(result.resumeUri ? { status: 'ok', resume_uri: result.resumeUri } : { status: 'ok' }, 200, CORS_ANY);
  } catch (error) {
    if (error instanceof HttpError) return errorJson(error.withHeaders({ ...error.headers, ...CORS_ANY }));
    throw error;
  }
}

export function callbackPreflight(): Response {
  return new Response(null, { status: 204, headers: { ...CORS_ANY, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'Content-Type', 'access-control-max-age': '600' } });
}

/** GET /r/{code}: the request by reference (JSON for signers, a page otherwise); `decoded` is the path's code, percent-decoded. */
export async function referenceHandler(ctx: BridgeContext, req: Request, decoded: string): Promise<Response> {
  const code = decoded.length <= 64 ? normalizeShortCode(decoded) : undefined;
  const tx = code === undefined ? undefined : await ctx.store.txByRef(code);
  const headers = { ...CORS_ANY, vary: 'Accept' };
  if (!tx || tx.request === null) return errorJson(ruleError(404, 'ns.reference.gone', 'unknown reference').withHeaders(headers));
  if (tx.status !== 'awaiting_signature' || (tx.requestExpiresAt !== null && ctx.now() > tx.requestExpiresAt))
    return errorJson(ruleError(410, 'ns.reference.gone', 'this sign-in link is no longer valid').withHeaders(headers));
  const encoded = encodeObject(tx.request);
  if (prefersJson(req)) return json({ request: encoded }, 200, headers);
  const deepLink = `${ctx.profile.ids.deep_link}?request=${encoded}`;
  return html(messagePage(ctx, 'Approve in your signer', `Open ${deepLink} in your ${ctx.profile.name} app, or paste this link into your signer.`), 200, headers);
}

/** GET /svc/context?request_id=: browser, how long ago, the application's name and host; no location. */
export async function contextHandler(ctx: BridgeContext, req: Request): Promise<Response> {
  const ids = new URL(req.url).searchParams.getAll('request_id');
  const tx = ids.length === 1 && ids[0] ? await ctx.store.txByRequestId(ids[0]) : undefined;
  if (tx?.status !== 'awaiting_signature') return errorJson(ruleError(404, 'ns.delivery.unknown-transaction', 'no sign-in waits for this request_id').withHeaders(CORS_ANY));
  const client = ctx.clients.get(tx.clientId);
  return json(
    {
      request_id: tx.requestId,
      started_at: formatRfc3339(tx.createdAt),
      browser: tx.browser,
      client: client?.name ?? tx.clientId,
      client_host: new URL(tx.redirectUri).host,
    },
    200,
    CORS_ANY,
  );
}

export const referencePrefix = PATHS.reference;
