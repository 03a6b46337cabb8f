// Deliberately broken behaviours for the suite's own sensitivity tests (hidden --break flags,
// only with SVC_REFERENCE_ALLOW_BREAKAGE=1). Each breaks exactly one MUST of document 2; the
// correct code stays in the request path and calls these only to ask "is this break on?".
import type { BridgeContext } from '../context.ts';
import type { BridgeTx } from '../store.ts';
import type { Client } from '../clients.ts';
import { matchRedirect } from '../../../protocol/bridge/redirect.ts';
import { parseDelivery, type DeliveryBody } from '../../signin/delivery.ts';

type Ctx = Pick<BridgeContext, 'config'> & { now(): number };

/** token-redirect-omitted breaks ob.code.binding: a redemption without redirect_uri is let through. */
export function brokenRedirectOmitted(ctx: Pick<BridgeContext, 'config'>, form: URLSearchParams): boolean {
  return ctx.config.breakage.has('token-redirect-omitted') && !form.has('redirect_uri');
}

/** session-auth-time breaks ob.token.id-token: a code issued from the session gets auth_time "now", not the proof's time. */
export function brokenSessionAuthTime<T extends { authTime: number }>(ctx: Ctx, session: T): T {
  return ctx.config.breakage.has('session-auth-time') ? { ...session, authTime: ctx.now() } : session;
}

/** prompt-none-iss breaks ob.authorize.iss: the prompt=none login_required error leaves iss out. */
export function brokenPromptNoneIss(ctx: Pick<BridgeContext, 'config'>, params: Record<string, string | undefined>): boolean {
  return ctx.config.breakage.has('prompt-none-iss') && params.error === 'login_required';
}

/** resume-reuse breaks ob.transaction.resume-binding: a used resume code still signs the browser in again. */
export function brokenResumeReplay(ctx: Pick<BridgeContext, 'config'>, tx: BridgeTx | undefined): tx is BridgeTx {
  return ctx.config.breakage.has('resume-reuse') && tx !== undefined && tx.status !== 'authenticated' && tx.identity !== null;
}

/** The columns a resume clears: under resume-reuse the code is kept, so it can be replayed. */
export function clearedResume(ctx: Pick<BridgeContext, 'config'>): Record<string, null> {
  return ctx.config.breakage.has('resume-reuse') ? {} : { resume_hash: null };
}

/** Whether this resume is the resume-reuse variant's replay (it skips the single-use move). */
export const replayingResume = (ctx: Pick<BridgeContext, 'config'>, tx: BridgeTx): boolean => ctx.config.breakage.has('resume-reuse') && tx.status !== 'authenticated';

/** loopback-confidential breaks ob.authorize.loopback: any-port loopback matching extended to confidential clients. */
export function brokenLoopback(ctx: Pick<BridgeContext, 'config'>, client: Client, asked: string): boolean {
  return ctx.config.breakage.has('loopback-confidential') && matchRedirect(asked, client.redirectUris, true) !== undefined;
}

/** approval-in-url breaks ob.transaction.no-response-in-url: an approval in the callback's `response` query parameter is verified. */
export function brokenApprovalInUrl(ctx: Pick<BridgeContext, 'config'>, search: string): DeliveryBody | undefined {
  const inUrl = new URLSearchParams(search).get('response');
  return ctx.config.breakage.has('approval-in-url') && inUrl !== null ? parseDelivery(new TextEncoder().encode(inUrl)) : undefined;
}

/** code-expiry breaks ob.code.format: an authorization code still redeems after its lifetime. */
export const brokenCodeExpiry = (ctx: Pick<BridgeContext, 'config'>): boolean => ctx.config.breakage.has('code-expiry');

/** The configured transaction life; tx-expiry breaks ob.transaction.expiry by giving transactions a day. */
export function transactionTtlSeconds(ctx: Pick<BridgeContext, 'config'>): number | undefined {
  return ctx.config.breakage.has('tx-expiry') ? 86_400 : ctx.config.txTtlSeconds;
}

/** creating-ignored breaks ob.transaction.creating: POST /t/{id}/creating answers 204 and extends nothing. */
export const brokenCreating = (ctx: Pick<BridgeContext, 'config'>): boolean => ctx.config.breakage.has('creating-ignored');

/** verifier-ignored breaks ob.code.wrong-verifier: any code_verifier (or none) redeems the code. */
export const brokenVerifier = (ctx: Pick<BridgeContext, 'config'>): boolean => ctx.config.breakage.has('verifier-ignored');

/** introspect-any breaks ob.introspect.owner: any authenticated client learns about any token. */
export const brokenIntrospectOwner = (ctx: Pick<BridgeContext, 'config'>): boolean => ctx.config.breakage.has('introspect-any');

/** The issuer when none is configured: the bound address; issuer-localhost breaks ob.issuer.dotted-host by naming it localhost. */
export const boundIssuer = (config: Pick<BridgeContext['config'], 'breakage'>, bound: string): string =>
  config.breakage.has('issuer-localhost') ? bound.replace('//127.0.0.1:', '//localhost:') : bound;

/** cookies-unprefixed breaks ob.cookies.host-prefix: over https the cookies lose `__Host-` (still Secure, HttpOnly, Lax). */
export const brokenCookieName = (ctx: Pick<BridgeContext, 'config'>, name: string): string => (ctx.config.breakage.has('cookies-unprefixed') ? name.replace(/^__Host-/, '') : name);
