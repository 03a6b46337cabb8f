// The token side: /token (authorization_code only; ob.code.*, ob.token.*), /userinfo, /revoke
// (RFC 7009), /introspect (RFC 7662, owning client only), and the claims of a grant.
import { limits } from '../../schemas/ts/limits.ts';
import { pairwiseSubject } from '../../protocol/common/canonical.ts';
import { hashSecret, newSecret } from '../shared/secrets.ts';
import { json, jsonReply, utf8Text, type Reply } from '../shared/http.ts';
import type { Call } from '../shared/routes.ts';
import { authenticateClient, ClientAuthError, presentedAuth, type Client } from './clients.ts';
import { PATHS, type BridgeContext } from './context.ts';
import { OAuthError } from './responses.ts';
import type { ProfileClaims } from './store.ts';

/** The token side's body: a form under its cap; a refused body (too large, unreadable, not a form) reaches the handler, which answers OAuth's 400. */
export const TOKEN_FORM = { max: limits.bridge_form_body_max_bytes, lenient: true, types: ['application/x-www-form-urlencoded'] } as const;

/** The form of a token-side call (its body read by the route layer under TOKEN_FORM). */
function tokenForm(call: Call): URLSearchParams {
  if (call.refused) throw new OAuthError(400, 'invalid_request', call.refused.message, 'ob.errors.oauth-body');
  const text = utf8Text(call.body);
  if (text === undefined) throw new OAuthError(400, 'invalid_request', 'the body is not UTF-8', 'ob.errors.oauth-body');
  const form = new URLSearchParams(text);
  for (const k of new Set(form.keys())) if (form.getAll(k).length > 1) throw new OAuthError(400, 'invalid_request', `parameter ${k} is repeated`, 'ob.errors.oauth-body');
  return form;
}

async function client(ctx: BridgeContext, req: { headers: Headers }, form: URLSearchParams): Promise<Client> {
  try {
    return await authenticateClient(ctx.clients, presentedAuth(req.headers, form), [ctx.config.issuer, `${ctx.config.issuer}${PATHS.token}`], ctx.nonces, ctx.seams);
  } catch (error) {
    if (error instanceof ClientAuthError) throw new OAuthError(401, 'invalid_client', error.message, 'ob.token.client-auth', { 'www-authenticate': 'Basic realm="token"' });
    throw error;
  }
}

/** `sub` for a client's sector (ob.subject.pairwise) or the ID itself (public). */
export function subjectFor(ctx: BridgeContext, c: Client, identity: string): string {
  if (ctx.seams.subjectPublic(ctx.config.subjectType === 'public')) return identity;
  return pairwiseSubject(ctx.profile, ctx.pairwiseSecret, c.sector, identity);
}

/** The claims a grant releases beyond `openid` (ob.token.claims). */
function releasedClaims(ctx: BridgeContext, identity: string, claims: readonly string[], fingerprint: string | null, profile: ProfileClaims | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (claims.includes(ctx.profile.ids.id_scope)) {
    out[ctx.profile.ids.id_claim] = identity;
    if (fingerprint) out[ctx.profile.ids.key_fingerprint_claim] = fingerprint;
    out[ctx.profile.ids.id_url_claim] = ctx.seams.profileUrl(identity);
    Object.assign(out, ctx.seams.extraClaims(identity));
  }
  if (claims.includes('profile')) {
    if (profile?.name !== undefined) out.name = profile.name;
    if (profile?.picture !== undefined) out.picture = profile.picture;
    out.profile = ctx.seams.profileUrl(identity);
  }
  return out;
}

/** POST /token: the bridge's hot route (its route is `fast`, served from node's request). */
export async function tokenRoute(ctx: BridgeContext, call: Call): Promise<Reply> {
  const req = { headers: call.headers };
  try {
    const form = tokenForm(call);
    const c = await client(ctx, req, form);
    if (form.get('grant_type') !== 'authorization_code') throw new OAuthError(400, 'unsupported_grant_type', 'only authorization_code', 'ob.token.grant-type');
    const code = form.get('code');
    if (!code) throw new OAuthError(400, 'invalid_request', 'code is required', 'ob.errors.oauth-body');
    const codeHash = hashSecret(code);
    const record = await ctx.store.code(codeHash);
    const invalid = (why: string, rule: 'ob.code.format' | 'ob.code.binding' | 'ob.code.wrong-verifier' | 'ob.code.replay-revokes') => new OAuthError(400, 'invalid_grant', why, rule);
    if (!record || ctx.seams.codeExpired(ctx.now(), record.expiresAt)) throw invalid('the code is unknown or expired', 'ob.code.format');
    if (record.clientId !== c.clientId) throw invalid('the code was issued to another client', 'ob.code.binding');
    if (form.get('redirect_uri') !== record.redirectUri && ctx.seams.redirectBinds(form)) throw invalid('redirect_uri differs from the authorization request', 'ob.code.binding');
    const pkceOff = !ctx.seams.pkceChecked() && record.challenge === '';
    // A wrong verifier leaves the code unspent (ob.code.wrong-verifier): checked before spending.
    if (!pkceOff && !ctx.seams.pkceMatches(c, form.get('code_verifier'), record.challenge)) throw invalid('code_verifier does not match the code_challenge', 'ob.code.wrong-verifier');
    const reuse = !ctx.seams.replayRevokes();
    const now = ctx.now();
    const ttl = ctx.config.accessTokenTtlSeconds ?? limits.access_token_ttl_seconds;
    const iat = Math.floor(now / 1000);
    const accessToken = newSecret();
    const token = {
      hash: hashSecret(accessToken),
      clientId: c.clientId,
      identity: record.identity,
      scopes: record.scopes,
      claims: record.claims,
      keyFingerprint: record.keyFingerprint,
      profile: record.profile,
      issuedAt: now,
      expiresAt: now + ttl * 1000,
    };
    // Spending the code and storing its token commit together (one write per redemption).
    const redeemed = await ctx.store.redeem(codeHash, token);
    if (!redeemed && reuse) await ctx.store.saveToken(token, codeHash);
    if (!redeemed && !reuse) {
      // ob.code.replay-revokes: a second redemption revokes what the first one issued.
      await ctx.store.revokeTokensOfCode(codeHash);
      await ctx.store.audit('token.revoked', record.identity, { client_id: c.clientId, reason: 'code replay' });
      throw invalid('the code was already redeemed; its tokens are revoked', 'ob.code.replay-revokes');
    }
    // IndieAuth (ob.indieauth.me, ob.indieauth.access-token): `me` is the identity's profile URL. A code issued without
    // `openid` is an IndieAuth grant: login-only it redeems to `me` alone (RFC 6749 has no empty
    // scope, so no access token); with scopes such as `profile`, to an access token and `me`.
    const me = `https://${record.identity}/`;
    if (!record.scopes.includes('openid')) {
      if (record.claims.length === 0) return jsonReply({ me }, 200, { pragma: 'no-cache' });
      return jsonReply({ access_token: accessToken, token_type: 'Bearer', expires_in: ttl, scope: record.scopes.join(' '), me }, 200, { pragma: 'no-cache' });
    }
    const claims: Record<string, unknown> = {
      iss: ctx.config.issuer,
      sub: subjectFor(ctx, c, record.identity),
      aud: c.clientId,
      exp: iat + limits.id_token_ttl_seconds,
      iat,
      auth_time: Math.floor(record.authTime / 1000),
      amr: record.delegated ? [ctx.profile.ids.amr_value, 'session'] : [ctx.profile.ids.amr_value],
      ...(ctx.seams.idTokenNonce(c, record.nonce) !== null ? { nonce: ctx.seams.idTokenNonce(c, record.nonce) } : {}),
      ...releasedClaims(ctx, record.identity, record.claims, record.keyFingerprint, record.profile),
    };
    const idToken = await ctx.keys.sign(claims);
    const body: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, id_token: idToken, scope: record.scopes.join(' '), me };
    return jsonReply(body, 200, { pragma: 'no-cache' });
  } catch (error) {
    if (error instanceof OAuthError) return error.reply(ctx.config.documentOnly);
    throw error;
  }
}

function bearer(req: Request): string | undefined {
  const h = req.headers.get('authorization');
  const m = h === null ? null : /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(h.trim());
  return m?.[1];
}

/** GET|POST /userinfo: the released claims for a live bearer access token (ob.userinfo). */
export async function userinfoHandler(ctx: BridgeContext, req: Request): Promise<Response> {
  const token = bearer(req);
  const t = token === undefined ? undefined : await ctx.store.token(hashSecret(token));
  // A token of a client that is gone (deleted, suspended, its URL document refused) is dead too:
  // without the client there is no sector, and `sub` must never fall back to the ID.
  const c = t ? await ctx.clients.resolve(t.clientId).catch(() => undefined) : undefined;
  if (!t || !c || t.revoked || ctx.seams.tokenExpired(ctx.now(), t.expiresAt)) {
    return new OAuthError(401, 'invalid_token', token === undefined ? 'a bearer access token is required' : 'the access token is not valid', 'ob.userinfo', {
      'www-authenticate': `Bearer error="invalid_token"`,
    }).response(ctx.config.documentOnly);
  }
  return json({ sub: subjectFor(ctx, c, t.identity), ...releasedClaims(ctx, t.identity, t.claims, t.keyFingerprint, t.profile) });
}

/** POST /revoke (RFC 7009): always 200; a token of another client is left alone (ob.revoke). */
export async function revokeHandler(ctx: BridgeContext, req: Call): Promise<Response> {
  try {
    const form = tokenForm(req);
    // IndieAuth: revocation without client authentication; with it, only the owner's tokens.
    const presented = presentedAuth(req.headers, form);
    const c = presented ? await client(ctx, req, form) : undefined;
    const token = form.get('token');
    if (!token) throw new OAuthError(400, 'invalid_request', 'token is required', 'ob.errors.oauth-body');
    const hash = hashSecret(token);
    const t = await ctx.store.token(hash);
    if (t && (!c || t.clientId === c.clientId)) {
      await ctx.store.revokeToken(hash);
      await ctx.store.audit('token.revoked', t.identity, { client_id: t.clientId });
    }
    return new Response(null, { status: 200, headers: { 'cache-control': 'no-store' } });
  } catch (error) {
    if (error instanceof OAuthError) return error.response(ctx.config.documentOnly);
    if (error instanceof ClientAuthError) return new OAuthError(401, 'invalid_client', error.message, 'ob.token.client-auth').response(ctx.config.documentOnly);
    throw error;
  }
}

/** POST /introspect (RFC 7662): only the owning client learns anything (ob.introspect.owner). */
export async function introspectHandler(ctx: BridgeContext, req: Call): Promise<Response> {
  try {
    const form = tokenForm(req);
    const c = await client(ctx, req, form);
    const token = form.get('token');
    if (!token) throw new OAuthError(400, 'invalid_request', 'token is required', 'ob.errors.oauth-body');
    const t = await ctx.store.token(hashSecret(token));
    if (!t || t.revoked || ctx.seams.tokenExpired(ctx.now(), t.expiresAt) || !ctx.seams.introspects(t.clientId, c.clientId)) return json({ active: false });
    return json({
      active: true,
      client_id: t.clientId,
      sub: subjectFor(ctx, c, t.identity),
      scope: t.scopes.join(' '),
      token_type: 'Bearer',
      iat: Math.floor(t.issuedAt / 1000),
      exp: Math.floor(t.expiresAt / 1000),
      iss: ctx.config.issuer,
    });
  } catch (error) {
    if (error instanceof OAuthError) return error.response(ctx.config.documentOnly);
    throw error;
  }
}
