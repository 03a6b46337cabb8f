// GET <context_uri>?request_id=...: the context record while the request can still be approved
// (ns.transport.context). Five fields and nothing else: never a location (ns.context.no-location).
import { formatRfc3339 } from '../../protocol/common/time.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { CORS_ANY, json } from '../shared/http.ts';
import type { RpContext } from './config.ts';

export async function contextHandler(ctx: RpContext, req: Request): Promise<Response> {
  const ids = new URL(req.url).searchParams.getAll('request_id');
  const requestId = ids[0];
  if (ids.length !== 1 || !requestId) throw new HttpError(400, 'missing_field', 'request_id is required (once)', 'ns.transport.context', CORS_ANY);
  const tx = await ctx.transactions.byRequestId(requestId);
  if (tx?.state !== 'pending') throw ruleError(404, 'ns.delivery.unknown-transaction', 'no transaction with this request_id can still be approved', CORS_ANY);
  return json(
    {
      request_id: tx.requestId,
      started_at: formatRfc3339(tx.startedAt),
      browser: tx.browser,
      client: ctx.config.name,
      client_host: new URL(ctx.config.origin).host,
    },
    200,
    CORS_ANY,
  );
}
