// GET /r/{code}: a request by reference (ns.reference.*). JSON for signers ({request}, CORS *,
// never a redirect, never the match code); a page offering signers for browsers. 404 for a code
// never issued (or forgotten), 410 for one still known but expired or used.
import { normalizeShortCode } from '../../protocol/signin/reference.ts';
import { HttpError, ruleError } from '../shared/errors.ts';
import { CORS_ANY, errorFor, html, json, prefersJson } from '../shared/http.ts';
import { decodePathParam, RP_PATH } from '../shared/params.ts';
import { url, type RpContext } from './config.ts';
import { webSignerLink } from './login.ts';
import { referencePage } from './pages/reference-page.ts';

const VARY = { vary: 'Accept' };

export async function referenceHandler(ctx: RpContext, req: Request, rawCode: string): Promise<Response> {
  try {
    return await reference(ctx, req, rawCode);
  } catch (error) {
    if (error instanceof HttpError) return errorFor(req, error, ctx.site, { ...CORS_ANY, ...VARY });
    throw error;
  }
}

async function reference(ctx: RpContext, req: Request, rawCode: string): Promise<Response> {
  const decoded = decodePathParam(rawCode, RP_PATH);
  const code = decoded.length <= 64 ? normalizeShortCode(decoded) : undefined;
  const tx = code === undefined ? undefined : await ctx.transactions.byReference(code);
  if (!tx) throw ruleError(404, 'ns.reference.gone', 'unknown reference');
  if (tx.state === 'expired') throw ruleError(410, 'ns.reference.gone', 'this sign-in link has expired');
  if (tx.state !== 'pending') throw ruleError(410, 'ns.reference.gone', 'this sign-in link was already used');
  if (prefersJson(req)) return json({ request: tx.encoded }, 200, { ...CORS_ANY, ...VARY });
  const link = url(ctx, ctx.paths.reference + tx.refCode);
  return html(
    referencePage({
      rpName: ctx.config.name,
      serviceName: ctx.profile.name,
      deepLink: `${ctx.profile.ids.deep_link}?request_uri=${encodeURIComponent(link)}`,
      webSignerLink: webSignerLink(ctx, link),
      requestUri: link,
    }),
    200,
    { ...CORS_ANY, ...VARY },
  );
}
