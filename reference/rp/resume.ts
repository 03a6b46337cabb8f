// GET <resume_uri>?code=...: completes a same-device login only for the browser holding the
// binding cookie (ns.transaction.resume, ns.auth.6). A missing or wrong cookie leaves the login
// unfinished and spends the code (ns.transaction.resume-refused); a used, unknown or expired code
// answers 410 (ns.limits.resume-code).
import { HttpError, ruleError } from '../shared/errors.ts';
import { errorFor } from '../shared/http.ts';
import { cookieName, readCookies, serializeCookie } from '../shared/cookies.ts';
import type { RpContext } from './config.ts';
import { hashSecret, sameHash, wellFormedSecret } from '../shared/secrets.ts';
import { SESSION_TTL_SECONDS } from './sessions.ts';

export function sessionCookie(ctx: RpContext, value: string): string {
  return serializeCookie(cookieName(ctx.profile.ids.rp_session_cookie, ctx.secure), value, { secure: ctx.secure, maxAge: SESSION_TTL_SECONDS });
}

export async function resumeHandler(ctx: RpContext, req: Request): Promise<Response> {
  try {
    return await resume(ctx, req);
  } catch (error) {
    if (error instanceof HttpError) return errorFor(req, error, ctx.site);
    throw error;
  }
}

async function resume(ctx: RpContext, req: Request): Promise<Response> {
  const codes = new URL(req.url).searchParams.getAll('code');
  const code = codes[0];
  if (codes.length !== 1 || !wellFormedSecret(code)) throw ruleError(400, 'ns.transaction.resume-refused', 'the resume link has no valid code');
  const gone = () => ruleError(410, 'ns.limits.resume-code', 'this sign-in link was already used or has expired');
  const tx = await ctx.transactions.byResumeHash(hashSecret(code));
  if (tx?.state !== 'approved_same_device' || tx.resumeExpiresAt === null || ctx.now() > tx.resumeExpiresAt || tx.identity === null) throw gone();

  const cookie = readCookies(req).get(cookieName(ctx.profile.ids.binding_cookie, ctx.secure));
  if (!wellFormedSecret(cookie) || !sameHash(hashSecret(cookie), tx.bindingHash)) {
    // The code is spent either way: the transaction is left unfinished.
    await ctx.transactions.move(tx.requestId, 'approved_same_device', 'unfinished');
    throw ruleError(403, 'ns.transaction.resume-refused', cookie === undefined ? 'this sign-in was started in another browser (no binding cookie)' : 'this sign-in was started in another browser');
  }
  if (!(await ctx.transactions.move(tx.requestId, 'approved_same_device', 'completed'))) throw gone();
  const session = await ctx.sessions.create(tx.identity);
  ctx.log(`signed in ${tx.identity} (${tx.requestId}, resume)`);
  return new Response(null, { status: 303, headers: { location: ctx.paths.home, 'set-cookie': sessionCookie(ctx, session), 'cache-control': 'no-store' } });
}
