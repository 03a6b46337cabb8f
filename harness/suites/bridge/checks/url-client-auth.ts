// URL clients beyond the fetch: what the declared mode grants a URL client (`openid` under `on`,
// not under indieauth: the project's reading), a URL client authenticating with private_key_jwt
// through its document's jwks_uri, the error page of a refused URL client naming its rule, and a
// URL client the operator suspends (ob.clients.suspend names no kind of client: each one stops).
import { randomBytes } from 'node:crypto';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import type { Check } from '../../../run/model.ts';
import { assertionForm, clientAssertion } from '../../../actors/oidc/client.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { CheckFailure, said, suspensionHook, type BridgeTarget } from '../driver.ts';
import { authorize, documentFor, host, proceeded, refusedPage, TIMEOUT_MS, urlClientCheck, type Hosted } from '../url-client-hosting.ts';

function urlClientModeCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/profile/url-client-openid',
    title: `a URL client asking "openid profile" is granted openid under OAUTH_URL_CLIENTS=on (an ID token for its client_id) and not under indieauth (no ID token)`,
    rules: ['ob.contract.url-client-modes'],
    run: async (s, e) => {
      const c = await host(t);
      const { body } = await s.tokens({ credentials: c.credentials, scope: 'openid profile' });
      const granted = typeof body.scope === 'string' ? body.scope.split(' ') : [];
      if (t.urlClients === 'on') {
        const aud = typeof body.id_token === 'string' ? decodeJwt(body.id_token).aud : undefined;
        e.that(
          (Array.isArray(aud) ? aud.includes(c.clientId) : aud === c.clientId) && granted.includes('openid'),
          `under on, the URL client's code for "openid profile" redeemed to ${typeof body.id_token === 'string' ? `an ID token for ${JSON.stringify(aud)}` : 'no ID token'} and scope ${JSON.stringify(body.scope)}, not an ID token for ${c.clientId} with openid granted`,
        );
      } else
        e.that(
          body.id_token === undefined && !granted.includes('openid'),
          `under indieauth, the URL client's code for "openid profile" redeemed to ${Object.keys(body).join(', ')} with scope ${JSON.stringify(body.scope)}: openid granted`,
        );
    },
  });
}

function urlClientPrivateKeyJwtCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/private-key-jwt',
    title:
      'a URL client whose document names private_key_jwt with a same-origin jwks_uri redeems its code with an assertion signed by a key of that set, and not with one signed by another key; one whose jwks_uri publishes no key set is refused',
    rules: ['ob.clients.url-client-secret-refused', 'ob.token.client-auth'],
    run: async (s, e) => {
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
      const [privateJwk, publicJwk] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
      const kid = randomBytes(6).toString('hex');
      const jwksOf = (clientId: string) => clientId.replace(/\/client\.json$/, '/jwks.json');
      const c = await host(t, { body: (id, h) => documentFor(id, `Harness key app ${h.slice(4, 9)}`, [`https://${h}/cb`], { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwksOf(id) }) });
      await t.authority.serveFile({ url: jwksOf(c.clientId), body: { keys: [{ ...publicJwk, kid, alg: 'ES256', use: 'sig' }] } });
      const credentials = { ...c.credentials, private_jwk: { ...privateJwk, kid, alg: 'ES256' } };
      const oidc = await s.oidc();
      const signIn = await s.signIn({ credentials, scope: 'openid' });
      if (!signIn.response.code) throw new CheckFailure(`no code for the URL client: the bridge answered ${signIn.response.location}`);
      const redeem = async (key?: CryptoKey) => {
        const assertion = await clientAssertion(credentials, oidc.discovery.token_endpoint, key ? { key } : {});
        const body = new URLSearchParams({
          grant_type: 'authorization_code',
          code: signIn.response.code!,
          redirect_uri: c.credentials.redirect_uri,
          code_verifier: signIn.pkce.verifier,
          ...assertionForm(credentials, assertion),
        });
        return oidc.http.post(oidc.discovery.token_endpoint, body.toString(), { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, noCookies: true });
      };
      const other = await generateKeyPair('ES256');
      const wrong = await redeem(other.privateKey);
      e.that(wrong.status >= 400 && wrong.status < 500, `an assertion signed by a key outside the URL client's jwks_uri redeemed its code: ${said(wrong)}`);
      const right = await redeem();
      e.that(right.status === 200, `an assertion signed by a key of the URL client's jwks_uri did not redeem its code: ${said(right)}`);
      // A jwks_uri that publishes nothing leaves the client no way to authenticate: refused.
      const bare = await host(t, { body: (id, h) => documentFor(id, 'No keys', [`https://${h}/cb`], { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwksOf(id) }) });
      const keyless = await authorize(s, bare.credentials);
      e.that(refusedPage(keyless), `a URL client whose jwks_uri answers 404 was taken: ${said(keyless)}`);
    },
  });
}

function urlClientRefusalPagesCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/profile/url-client-refusals',
    lane: 'bridge/url-client/timeout',
    title:
      "a refused URL client's error page names the rule that refused it (an http client_id, a redirect, a private address, a document over 16 KiB, a slow one, one naming another client_id or client_secret_basic, an answer that is not JSON or a 500), and an unknown client_id that is no URL is the bad-client page; a 410 is nothing published, as a 404",
    rules: ['ob.contract.url-client-refusals'],
    timeoutMs: 60_000,
    run: async (s, e) => {
      const named = async (what: string, rule: string, c: Hosted) => {
        const r = await authorize(s, c.credentials, c.foreign);
        e.that(refusedPage(r) && r.text().includes(rule), `${what}: ${said(r)}, not a 4xx page naming ${rule}`);
      };
      await named('an http client_id', 'ob.clients.url-fetch-https', await host(t, { scheme: 'http' }));
      const target = await host(t);
      await named('a document answering a redirect', 'ob.clients.url-fetch-no-redirect', await host(t, { file: { redirect: target.clientId } }));
      await named('a host resolving to a private address', 'ob.clients.url-fetch-private', await host(t, { file: { otherAddress: true } }));
      await named('a document over 16 KiB', 'ob.clients.url-fetch-size', await host(t, { file: { padTo: limits.url_client_doc_max_bytes + 1 } }));
      await named('a document naming another client_id', 'ob.clients.url-document', await host(t, { body: (id, h) => documentFor(`${id}.other`, 'Other', [`https://${h}/cb`]) }));
      await named(
        'a document naming client_secret_basic',
        'ob.clients.url-client-secret-refused',
        await host(t, { body: (id, h) => documentFor(id, 'Secret', [`https://${h}/cb`], { token_endpoint_auth_method: 'client_secret_basic' }) }),
      );
      await named('an answer that is not JSON', 'ob.clients.url-document', await host(t, { body: () => 'not json' }));
      await named('a 500 answer', 'ob.clients.url-document', await host(t, { body: () => ({ error: 'down' }), file: { status: 500 } }));
      await named(`a document answering after ${TIMEOUT_MS / 1000 + 1.5} s`, 'ob.clients.url-fetch-timeout', await host(t, { file: { delayMs: TIMEOUT_MS + 1500 } }));
      // A client_id that is no URL is never fetched: an unknown one is the bad-client page.
      const plain = await authorize(s, { client_id: `unknown-${randomBytes(4).toString('hex')}`, redirect_uri: target.credentials.redirect_uri });
      e.that(
        refusedPage(plain) && plain.text().includes('ob.authorize.bad-client-no-redirect'),
        `an unknown client_id that is no URL: ${said(plain)}, not a 4xx page naming ob.authorize.bad-client-no-redirect`,
      );
      // 410 Gone: nothing published, so the client may return to its own origin.
      const gone = await host(t, { body: () => ({ error: 'gone' }), file: { status: 410 } });
      const own = await authorize(s, gone.credentials);
      e.that(proceeded(t, own), `a client_id answering 410, returning to its own origin: ${said(own)}, not taken as a client with no document`);
    },
  });
}

function urlClientSuspensionCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/matrix/suspension-url-client',
    title: 'after the operator suspends a URL client, it starts no sign-in and a code issued to it before no longer redeems',
    rules: ['ob.clients.suspend'],
    context: ['ob.contract.suspend'],
    cells: ['authorize', 'token'].map((operation) => ({ rule: 'ob.clients.suspend' as const, facet: 'who', value: 'suspended-url-client', operation })),
    run: async (s, e) => {
      suspensionHook(t);
      const c = await host(t);
      const oidc = await s.oidc();
      const pending = await s.signIn({ credentials: c.credentials, scope: 'openid' });
      if (!pending.response.code) throw new CheckFailure(`no code for the URL client before its suspension: the bridge answered ${pending.response.location}`);
      await s.suspend(c.clientId);
      const started = await authorize(s, c.credentials);
      const back = s.authorizationResponse(started.location, c.credentials.redirect_uri);
      e.that(refusedPage(started) || back?.error !== undefined, `the suspended URL client still starts a sign-in: ${said(started)}`);
      const redeemed = await oidc.token(c.credentials, 'none', pending.response.code, pending.pkce.verifier);
      e.that(redeemed.status >= 400 && redeemed.status < 500, `the suspended URL client redeemed a code issued before: ${said(redeemed)}`);
    },
  });
}

export function urlClientAuthChecks(t: BridgeTarget): Check[] {
  return [urlClientModeCheck(t), urlClientPrivateKeyJwtCheck(t), urlClientRefusalPagesCheck(t), urlClientSuspensionCheck(t)];
}
