// How the bridge answers: OAuth error bodies (ob.errors.oauth-body), authorization responses
// with `iss` (ob.authorize.iss), pages and their errors.
import type { ErrorCode, RuleId } from '../../schemas/ts/rules.ts';
import { HttpError } from '../shared/errors.ts';
import { errorHtml, html, json, jsonReply, toResponse, type Reply } from '../shared/http.ts';
import type { BridgeContext } from './context.ts';

/** A JSON error body of the bridge; its code is one a rule of the catalogue names (spec/rules `code`, `codes`). */
export interface OAuthBody {
  error: ErrorCode;
  error_description?: string;
  rule?: RuleId;
}

export const oauthReply = (body: OAuthBody, status: number, headers: Readonly<Record<string, string>> = {}): Reply => jsonReply(body, status, headers);
export const oauthJson = (body: OAuthBody, status: number, headers: Readonly<Record<string, string>> = {}): Response => json(body, status, headers);

/** An RFC 6749 error at /token, /revoke, /introspect, /userinfo: `{error, error_description, rule}`. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: ErrorCode,
    detail: string,
    readonly rule: RuleId,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  reply(documentOnly = false): Reply {
    // The document-only variant: one code, 400 (403 at userinfo), no rule and no WWW-Authenticate.
    if (documentOnly) return oauthReply({ error: 'invalid_request' }, this.error === 'invalid_token' ? 403 : 400, { pragma: 'no-cache' });
    return oauthReply({ error: this.error, error_description: this.message, rule: this.rule }, this.status, { pragma: 'no-cache', ...this.headers });
  }

  response(documentOnly = false): Response {
    return toResponse(this.reply(documentOnly));
  }
}

/** An error page: never a redirect (ob.authorize.bad-client-no-redirect, ob.transaction.failed). */
export function pageError(ctx: BridgeContext, status: number, detail: string, rule: RuleId): Response {
  return errorHtml(new HttpError(ctx.config.documentOnly && status === 400 ? 422 : status, 'invalid_request', detail, rule), ctx.site);
}

/** The authorization response: `code` or `error`, with `state` and `iss` (RFC 9207) on the redirect URI. */
export function authorizationRedirect(ctx: BridgeContext, redirectUri: string, params: { error?: ErrorCode; [name: string]: string | undefined }): string {
  const u = new URL(redirectUri);
  const documentCodes: readonly string[] = ['access_denied', 'login_required', 'consent_required'] satisfies ErrorCode[];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    // The document-only variant: every error the document does not name is server_error.
    u.searchParams.set(k, ctx.config.documentOnly && k === 'error' && !documentCodes.includes(v) ? ('server_error' satisfies ErrorCode) : v);
  }
  if (ctx.seams.issSent(params)) u.searchParams.set('iss', ctx.config.issuer);
  return u.href;
}

export const redirect = (location: string, headers: Record<string, string> = {}): Response =>
  new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...headers } });

export { html };
