// POST <poll_uri> {poll_secret}: the starting page learns the state (ns.transport.poll-shape).
// Only the poll secret names the transaction (never request_id, ns.auth.6.poll-secret). An
// approved cross-device transaction is completed by this poll, and only that reply sets the RP
// session cookie; a same-device approval answers `approved` and hands out nothing
// (ns.transaction.poll-before-resume).
import { HttpError, ruleError } from '../shared/errors.ts';
import { json } from '../shared/http.ts';
import { asObject, parseJson } from '../shared/json.ts';
import type { RpContext } from './config.ts';
import { hashSecret, wellFormedSecret } from '../shared/secrets.ts';
import type { TxState } from './transactions.ts';
import { sessionCookie } from './resume.ts';

const STATUS: Record<TxState, string> = {
  pending: 'pending',
  approved_same_device: 'approved',
  approved_cross_device: 'approved', // completed by this poll below
  completed: 'completed',
  unfinished: 'ended',
  ended: 'ended',
  expired: 'expired',
};

const missing = (detail: string) => new HttpError(400, 'missing_field', detail, 'ns.transport.poll-shape');

function pollSecretFrom(bytes: Uint8Array): string {
  const parsed = parseJson(bytes);
  if (!parsed.ok) throw missing(parsed.why === 'utf8' ? 'the poll body is not UTF-8' : 'the poll body must be JSON {"poll_secret": "..."}');
  const secret = asObject(parsed.value)?.poll_secret;
  if (typeof secret !== 'string' || secret === '') throw missing('poll_secret is required');
  return secret;
}

/** POST <poll path>; `bytes` is the body the route layer read under limits.rp_poll_body_max_bytes. */
export async function pollHandler(ctx: RpContext, bytes: Uint8Array): Promise<Response> {
  const secret = pollSecretFrom(bytes);
  const unknown = () => ruleError(404, 'ns.delivery.unknown-transaction', 'no live transaction has this poll secret');
  if (!wellFormedSecret(secret)) throw unknown();
  let tx = await ctx.transactions.byPollHash(hashSecret(secret));
  if (!tx) throw unknown();
  if (tx.state === 'approved_cross_device' && tx.identity !== null) {
    if (await ctx.transactions.move(tx.requestId, 'approved_cross_device', 'completed')) {
      const session = await ctx.sessions.create(tx.identity);
      ctx.log(`signed in ${tx.identity} (${tx.requestId}, poll)`);
      return json({ status: 'completed', identity: tx.identity }, 200, { 'set-cookie': sessionCookie(ctx, session) });
    }
    tx = await ctx.transactions.byPollHash(hashSecret(secret));
    if (!tx) throw unknown();
  }
  const status = STATUS[tx.state];
  return json(status === 'completed' && tx.identity !== null ? { status, identity: tx.identity } : { status });
}
