// GET /login (the sign-in page) and POST /login (the test start contract, ns.start.contract).
// Both start a transaction and set the binding cookie on the caller.
import { limits } from '../../schemas/ts/limits.ts';
import { HttpError } from '../shared/errors.ts';
import { html, json, utf8Text } from '../shared/http.ts';
import { parseJson } from '../shared/json.ts';
import { cookieName, serializeCookie } from '../shared/cookies.ts';
import { url, type RpContext } from './config.ts';
import { defaultStartOptions, parseStartOptions, startTransaction, type Started } from './start.ts';
import { loginPage } from './pages/login-page.ts';
import { formatRfc3339 } from '../../protocol/common/time.ts';

/** The binding cookie outlives the request window by the resume code's lifetime. */
const bindingMaxAge = (ctx: RpContext): number => ctx.config.requestWindowSeconds + ctx.config.resumeTtlSeconds;
/** A start body is a few options; the delivery cap is more than generous. */
export const START_BODY_MAX = limits.rp_delivery_body_max_bytes;

function bindingCookie(ctx: RpContext, started: Started): string {
  return serializeCookie(cookieName(ctx.profile.ids.binding_cookie, ctx.secure), started.bindingCookie, { secure: ctx.secure, maxAge: bindingMaxAge(ctx) });
}

export function deepLink(ctx: RpContext, encoded: string): string {
  return `${ctx.profile.ids.deep_link}?request=${encodeURIComponent(encoded)}`;
}

export function webSignerLink(ctx: RpContext, auth: string): string {
  return `${ctx.config.signerUrl.replace(/\/+$/, '')}/app/?auth=${encodeURIComponent(auth)}`;
}

export async function loginPageHandler(ctx: RpContext, req: Request): Promise<Response> {
  const started = await startTransaction(ctx, defaultStartOptions(ctx), req.headers.get('user-agent'));
  const page = await loginPage({
    rpName: ctx.config.name,
    serviceName: ctx.profile.name,
    matchCode: started.matchCode,
    requestUri: started.requestUri,
    encoded: started.encoded,
    deepLink: deepLink(ctx, started.encoded),
    webSignerLink: webSignerLink(ctx, started.encoded),
    pollUri: url(ctx, ctx.paths.poll),
    pollSecret: started.pollSecret,
    responseUri: url(ctx, ctx.paths.response),
    home: ctx.paths.home,
    expiresAt: formatRfc3339(started.expiresAt),
  });
  return html(page, 200, { 'set-cookie': bindingCookie(ctx, started) });
}

/** POST <start path>; `bytes` is the body the route layer read under START_BODY_MAX. */
export async function startHandler(ctx: RpContext, req: Request, bytes: Uint8Array): Promise<Response> {
  let body: unknown;
  if (bytes.length > 0) {
    const text = utf8Text(bytes);
    if (text === undefined) throw new HttpError(400, 'missing_field', 'the start body is not UTF-8', 'ns.start.contract');
    if (text.trim() !== '') {
      const parsed = parseJson(text);
      if (!parsed.ok) throw new HttpError(400, 'missing_field', 'the start body is not JSON', 'ns.start.contract');
      body = parsed.value;
    }
  }
  const options = parseStartOptions(ctx, body);
  const started = await startTransaction(ctx, options, req.headers.get('user-agent'));
  return json({ request: started.encoded, request_uri: started.requestUri, poll_secret: started.pollSecret, match_code: started.matchCode }, 201, { 'set-cookie': bindingCookie(ctx, started) });
}
