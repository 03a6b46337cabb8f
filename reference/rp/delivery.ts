// POST <response_uri>: the signer delivers the approval (ns.transport.delivery). The body is
// capped before parsing, decoded in either form, verified by the protocol verifier with the
// transaction bound in `beforeNonce` (unknown transaction, one approval, request binding, match
// code), and the transaction moves to approved by compare-and-set. Reading the body, refusing
// approvals in URLs and the rejection statuses are shared with the bridge (reference/signin/).
import { ruleError } from '../shared/errors.ts';
import type { components } from '../../schemas/ts/http/rp.ts';
import { CORS_ANY, jsonReply, type Reply } from '../shared/http.ts';
import { url, type RpContext } from './config.ts';
import { hashSecret, newSecret } from '../shared/secrets.ts';
import { bindingOf, COPIED, type DeliveryView } from './transactions.ts';
import { parseDelivery, refuseApprovalInUrl, rejectionError } from '../signin/delivery.ts';

export { parseDelivery, refuseApprovalInUrl, rejectionError, type DeliveryBody } from '../signin/delivery.ts';

type Receipt = components['schemas']['Receipt'];

/** Verbatim equality of a copied field: absent equals only absent (a signer copies, never invents). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * POST <response path> (the RP's hot route: its route is `fast`, served from node's request): the
 * approval in the URL refused, then the body the route layer read under
 * limits.rp_delivery_body_max_bytes parsed, verified and the transaction moved.
 */
export async function deliveryReply(ctx: RpContext, target: string, bytes: Uint8Array): Promise<Reply> {
  const q = target.indexOf('?');
  refuseApprovalInUrl(ctx, q === -1 ? '' : target.slice(q));
  return deliver(ctx, bytes);
}

/** Parse, verify with the transaction bound, and move the transaction: the receipt or an HttpError. */
async function deliver(ctx: RpContext, bytes: Uint8Array): Promise<Reply> {
  const { approval, match } = parseDelivery(bytes);

  let tx: DeliveryView | undefined;
  const verdict = await ctx.verify(approval, async (r) => {
    tx = await ctx.transactions.forDelivery(r.request_id as string);
    if (!tx) throw ruleError(409, 'ns.delivery.unknown-transaction', 'no live transaction has this request_id', CORS_ANY);
    if (tx.state === 'expired') throw ruleError(400, 'ns.transaction.expiry', 'this sign-in has expired', CORS_ANY);
    if (tx.state !== 'pending') throw ruleError(409, 'ns.transaction.one-approval', 'this sign-in was already approved or has ended', CORS_ANY);
    // One string compare; the request is read and compared field by field only to name the
    // field that differs (or on a row stored before the binding column).
    if (tx.binding === null || bindingOf(r) !== tx.binding) {
      const request = (await ctx.transactions.byRequestId(tx.requestId))?.request ?? {};
      for (const f of COPIED) {
        if (!sameValue(r[f], request[f])) throw ruleError(400, 'ns.delivery.request-binding', `${f} differs from the request this RP issued`, CORS_ANY);
      }
    }
    if (match !== undefined && match !== tx.matchCode) {
      // One attempt (ns.transaction.match-wrong): a wrong code ends the transaction for good.
      if (!(await ctx.transactions.move(tx.requestId, 'pending', 'ended'))) throw ruleError(409, 'ns.transaction.one-approval', 'this sign-in was already approved or has ended', CORS_ANY);
      throw ruleError(403, 'ns.transaction.match-wrong', 'the match code does not match; this sign-in has ended', CORS_ANY);
    }
  });
  if (!verdict.ok) throw rejectionError(verdict);
  if (!tx) throw new Error('verifier accepted without binding the transaction');

  if (match !== undefined) {
    if (!(await ctx.transactions.approve(tx.requestId, 'approved_cross_device', verdict.identity))) {
      throw ruleError(409, 'ns.transaction.one-approval', 'this sign-in was already approved or has ended', CORS_ANY);
    }
    ctx.log(`approved ${tx.requestId} for ${verdict.identity} (cross device)`);
    const receipt: Receipt = { status: 'ok' };
    return jsonReply(receipt, 200, CORS_ANY);
  }
  const code = newSecret();
  const resume = { hash: hashSecret(code), expiresAt: ctx.now() + ctx.config.resumeTtlSeconds * 1000 };
  if (!(await ctx.transactions.approve(tx.requestId, 'approved_same_device', verdict.identity, resume))) {
    throw ruleError(409, 'ns.transaction.one-approval', 'this sign-in was already approved or has ended', CORS_ANY);
  }
  ctx.log(`approved ${tx.requestId} for ${verdict.identity} (same device)`);
  const receipt: Receipt = { status: 'ok', resume_uri: `${url(ctx, ctx.paths.resume)}?code=${code}` };
  return jsonReply(receipt, 200, CORS_ANY);
}

export function deliveryPreflight(): Response {
  return new Response(null, {
    status: 204,
    headers: { ...CORS_ANY, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'Content-Type', 'access-control-max-age': '600' },
  });
}
