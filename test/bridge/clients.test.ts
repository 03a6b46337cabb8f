// Real OIDC client libraries against the reference bridge, unmodified: openid-client 6 and
// oauth4webapi 3 as the relying party, the harness's signer approving the sign-in in the
// harness's browser. Discovery, PKCE, every client authentication method, the ID token checked
// by the library and again with jose against /jwks.json, userinfo, introspection, revocation,
// and a key rotation during which earlier tokens still validate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { createRemoteJWKSet, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import { BridgeSession, type ClientRole } from '../../harness/suites/bridge/driver.ts';
import type { BridgeReferenceRun } from '../../harness/suites/bridge/launch.ts';
import { bridge } from './helpers.ts';

let run: BridgeReferenceRun;
let s: BridgeSession;
beforeAll(async () => {
  run = await bridge();
  s = new BridgeSession(run.target);
}, 60_000);
afterAll(async () => {
  await s?.close();
  await run?.stop();
});

async function clientAuth(role: ClientRole): Promise<client.ClientAuth> {
  const c = run.target.clients[role]!;
  if (role === 'post') return client.ClientSecretPost(c.client_secret);
  if (role === 'jwt') return client.PrivateKeyJwt({ key: (await importJWK(c.private_jwk as JWK, 'RS256')) as CryptoKey, kid: String(c.private_jwk!.kid) });
  if (role === 'public') return client.None();
  return client.ClientSecretBasic(c.client_secret);
}

async function openidClientFlow(role: ClientRole, scope = 'openid') {
  const c = run.target.clients[role]!;
  const config = await client.discovery(new URL(run.target.issuer), c.client_id, undefined, await clientAuth(role), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: c.redirect_uri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const user = await s.newUser();
  const { response } = await s.completeAuthorization(user, url.href, c.redirect_uri);
  const tokens = await client.authorizationCodeGrant(config, new URL(response.location), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  return { config, tokens, user };
}

describe('openid-client 6 against the reference bridge', () => {
  for (const role of ['basic', 'post', 'jwt', 'public'] as const) {
    it(`completes a code flow with ${role === 'basic' ? 'client_secret_basic' : role === 'post' ? 'client_secret_post' : role === 'jwt' ? 'private_key_jwt' : 'none'}`, async () => {
      const { config, tokens, user } = await openidClientFlow(role, 'openid svc_id');
      const claims = tokens.claims()!;
      expect(claims.iss).toBe(run.target.issuer);
      expect(claims.aud).toBe(run.target.clients[role]!.client_id);
      expect(claims.amr).toEqual(['svc']);
      expect(claims.svc_id).toBe(user.key.identity);
      expect(tokens.scope).toBe('openid svc_id');
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      expect(info.svc_id).toBe(user.key.identity);
    }, 60_000);
  }

  it('introspects and revokes: the token is active for its client, then revoked', async () => {
    const { config, tokens } = await openidClientFlow('basic');
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
    await client.tokenRevocation(config, tokens.access_token);
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    await expect(client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck)).rejects.toThrow();
  }, 60_000);

  it('keeps tokens issued before a key rotation valid against /jwks.json, and signs new ones with the new key', async () => {
    const jwks = createRemoteJWKSet(new URL(`${run.target.issuer}/jwks.json`), { cacheMaxAge: 0, cooldownDuration: 0 });
    const before = await openidClientFlow('basic');
    const oldToken = before.tokens.id_token!;
    const rotated = await fetch(run.target.rotate!.url, { method: 'POST', headers: { authorization: `Bearer ${run.target.rotate!.token}` } });
    expect(rotated.status).toBe(200);
    const after = await openidClientFlow('basic');
    expect(decodeProtectedHeader(after.tokens.id_token!).kid).not.toBe(decodeProtectedHeader(oldToken).kid);
    for (const token of [oldToken, after.tokens.id_token!]) {
      const { payload } = await jwtVerify(token, jwks, { issuer: run.target.issuer, audience: run.target.clients.basic.client_id, algorithms: ['RS256'] });
      expect(typeof payload.sub).toBe('string');
    }
  }, 60_000);
});

describe('oauth4webapi 3 against the reference bridge', () => {
  it('discovers, redeems with PKCE and client_secret_post, validates iss and the ID token, reads userinfo, introspects and revokes', async () => {
    const issuer = new URL(run.target.issuer);
    const insecure = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const c = run.target.clients.post!;
    const cl: oauth.Client = { client_id: c.client_id };
    const auth = oauth.ClientSecretPost(c.client_secret!);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      client_id: c.client_id,
      redirect_uri: c.redirect_uri,
      response_type: 'code',
      scope: 'openid svc_id',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })) {
      url.searchParams.set(k, v);
    }
    const { response } = await s.completeAuthorization(await s.newUser(), url.href, c.redirect_uri);
    const params = oauth.validateAuthResponse(as, cl, new URL(response.location), state);
    const tokenResponse = await oauth.authorizationCodeGrantRequest(as, cl, auth, params, c.redirect_uri, verifier, insecure);
    const result = await oauth.processAuthorizationCodeResponse(as, cl, tokenResponse, { expectedNonce: nonce, requireIdToken: true });
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    expect(claims.iss).toBe(run.target.issuer);
    // The library does not check the signature of an ID token from the token endpoint: jose does.
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
    await jwtVerify(result.id_token!, jwks, { issuer: run.target.issuer, audience: c.client_id });
    const info = await oauth.processUserInfoResponse(as, cl, claims.sub, await oauth.userInfoRequest(as, cl, result.access_token, insecure));
    expect(info.sub).toBe(claims.sub);
    const intro = await oauth.processIntrospectionResponse(as, cl, await oauth.introspectionRequest(as, cl, auth, result.access_token, insecure));
    expect(intro.active).toBe(true);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, cl, auth, result.access_token, insecure));
    const gone = await oauth.processIntrospectionResponse(as, cl, await oauth.introspectionRequest(as, cl, auth, result.access_token, insecure));
    expect(gone.active).toBe(false);
  }, 60_000);
});
