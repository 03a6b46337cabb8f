// URL client IDs (document 2, Clients 3) and IndieAuth redemption (Rules for the OIDC profile 6).
// The harness hosts each client's metadata document on its test authority, at a fresh host per
// check, and watches how often the bridge fetches it. The bridge under test resolves through the
// authority and exempts exactly the authority's address from the private-address rule
// (ob.contract.url-clients); the authority's other address stays private.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { newPkce, type ClientCredentials } from '../../../actors/oidc/client.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { CheckFailure, CheckSkip, said, type BridgeTarget } from '../driver.ts';
import { reportOwnFault } from '../../../run/environment.ts';
import { authorize, CAP, documentFor, fetches, host, proceeded, refusedPage, TIMEOUT_MS, urlClientCheck, type Hosted } from '../url-client-hosting.ts';

function urlClientIndieauthLoginCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/indieauth-login',
    title: "a URL client's login-only code (no scope) redeems at the token endpoint to me alone, the identity's profile URL; consent names the document's client_name",
    rules: ['ob.clients.url-document', 'ob.indieauth.me'],
    run: async (s, e) => {
      const c = await host(t);
      const { signIn, body } = await s.tokens({ credentials: c.credentials, scope: '' });
      e.that(signIn.consent?.client_name === `Harness URL app ${c.host.slice(4, 9)}`, `consent names the client ${JSON.stringify(signIn.consent?.client_name)}, not the document's client_name`);
      e.that(body.me === `https://${signIn.user.key.identity}/`, `the redemption's me is ${JSON.stringify(body.me)}, not https://${signIn.user.key.identity}/`);
      // To me alone: a login grants no token (IndieAuth: no access token for a code issued without scope).
      e.that(body.access_token === undefined && body.id_token === undefined, `the login-only redemption also answered ${Object.keys(body).join(', ')}, not me alone`);
    },
  });
}

function urlClientIndieauthTokenCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/indieauth-token',
    title:
      'a URL client\'s code for scopes "profile" and "svc_id" redeems to an access token of both that reads /userinfo and is revoked at /revoke without client authentication (a token one character off revokes nothing)',
    rules: ['ob.indieauth.access-token'],
    cells: [
      { rule: 'ob.indieauth.access-token', facet: 'who', value: 'unauthenticated', operation: 'revoke' },
      { rule: 'ob.indieauth.access-token', facet: 'who', value: 'unknown-token', operation: 'revoke' },
    ],
    run: async (s, e) => {
      const c = await host(t);
      const scope = `profile ${t.profile.ids.id_scope}`;
      const { body } = await s.tokens({ credentials: c.credentials, scope });
      if (typeof body.access_token !== 'string') throw new CheckFailure(`no access token for scope ${scope}: ${JSON.stringify(body).slice(0, 300)}`);
      const granted = typeof body.scope === 'string' ? body.scope.split(' ').sort().join(' ') : undefined;
      e.that(
        typeof body.token_type === 'string' && body.token_type.toLowerCase() === 'bearer' && granted === scope.split(' ').sort().join(' '),
        `the redemption's token_type is ${JSON.stringify(body.token_type)} and scope ${JSON.stringify(body.scope)}, not Bearer and ${scope}, space-separated`,
      );
      const oidc = await s.oidc();
      const before = await oidc.userinfo(body.access_token);
      e.that(before.status === 200, `/userinfo with the access token: ${said(before)}`);
      // A token the bridge never issued, one character off the live one, revokes nothing.
      const last = body.access_token.slice(-1);
      const nearMiss = `${body.access_token.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`;
      const missed = await oidc.revoke(undefined, 'none', nearMiss);
      e.that(missed.status < 500, `/revoke of an unknown token: ${said(missed)}`);
      const still = await oidc.userinfo(body.access_token);
      e.that(still.status === 200, `after /revoke of a token one character off it, the access token no longer reads /userinfo: ${said(still)}`);
      const revoked = await oidc.revoke(undefined, 'none', body.access_token);
      e.that(revoked.status === 200, `/revoke without client authentication: ${said(revoked)}`);
      const after = await oidc.userinfo(body.access_token);
      // Document 2 names no status for a dead token: any refusal.
      e.that(after.status >= 400 && after.status < 500, `/userinfo after the revocation: ${said(after)}`);
    },
  });
}

function urlClientSectorCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/sector',
    title: "URL clients on one host see one pairwise sub (their sector is the client_id's host); a URL client on another host sees another",
    rules: ['ob.subject.url-client-sector'],
    cells: [{ rule: 'ob.subject.url-client-sector', facet: 'binding', value: 'client-id-host', operation: 'token' }],
    run: async (s, e) => {
      const oidc = await s.oidc();
      if (!((oidc.discovery as { subject_types_supported?: string[] }).subject_types_supported ?? []).includes('pairwise')) throw new CheckSkip('the bridge publishes no pairwise subject type');
      const a = await host(t);
      const sibling = `${a.clientId.replace(/\/client\.json$/, '')}/other.json`;
      await t.authority.serveFile({ url: sibling, body: documentFor(sibling, 'Sibling', [`https://${a.host}/cb`]) });
      const b = await host(t);
      const user = await s.newUser();
      const subOf = async (c: ClientCredentials): Promise<unknown> => {
        const { body } = await s.tokens({ credentials: c, scope: 'profile', user: { key: user.key, browser: (await s.newUser()).browser } });
        const info = await oidc.userinfo(String(body.access_token));
        if (info.status !== 200) throw new CheckFailure(`/userinfo for ${c.client_id}: ${said(info)}`);
        return (info.json() as Record<string, unknown>).sub;
      };
      const first = await subOf(a.credentials);
      const second = await subOf({ ...a.credentials, client_id: sibling });
      const other = await subOf(b.credentials);
      e.that(typeof first === 'string' && first === second, `two URL clients on ${a.host} see ${JSON.stringify(first)} and ${JSON.stringify(second)}`);
      e.that(other !== first, `URL clients on ${a.host} and ${b.host} see the same sub`);
      e.that(first !== user.key.identity, 'sub is the service ID');
    },
  });
}

function urlClientClientIdMismatchCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/client-id-mismatch',
    title: 'a document whose client_id is not the URL it was fetched from is refused with an error page, never a redirect',
    rules: ['ob.clients.url-document'],
    run: async (s, e) => {
      const c = await host(t, { body: (id, h) => documentFor(`${id}.other`, 'Mismatch', [`https://${h.split('.')[0]}.elsewhere.example/cb`]) });
      const res = await authorize(s, c.credentials, c.foreign);
      e.that(refusedPage(res), `the bridge accepted a document naming another client_id: ${said(res)}`);
    },
  });
}

function urlClientRedirectListedCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/redirect-listed',
    title: 'a URL client returns only to a redirect its document lists (another origin allowed); its own origin unlisted is refused',
    rules: ['ob.clients.url-redirect'],
    cells: [
      { rule: 'ob.clients.url-redirect', facet: 'normalization', value: 'listed', operation: 'authorize' },
      { rule: 'ob.clients.url-redirect', facet: 'normalization', value: 'near-miss', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const foreign = `https://elsewhere-${randomBytes(4).toString('hex')}.example/cb`;
      const c = await host(t, { body: (id) => documentFor(id, 'Listed', [foreign]) });
      const listed = await authorize(s, c.credentials, foreign);
      e.that(proceeded(t, listed), `a listed redirect on another origin was refused: ${said(listed)}`);
      const unlisted = await authorize(s, c.credentials, `https://${c.host}/cb`);
      e.that(refusedPage(unlisted), `a redirect the document does not list was accepted: ${said(unlisted)}`);
    },
  });
}

function urlClientNoDocumentCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/no-document',
    title: 'with no document published (404), a URL client may return to its own origin only',
    rules: ['ob.clients.url-redirect'],
    cells: [
      { rule: 'ob.clients.url-redirect', facet: 'normalization', value: 'own-origin', operation: 'authorize' },
      { rule: 'ob.clients.url-redirect', facet: 'normalization', value: 'near-miss', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const c = await host(t, { body: () => undefined });
      const own = await authorize(s, c.credentials, `https://${c.host}/callback`);
      e.that(proceeded(t, own), `a redirect on the client_id's own origin was refused: ${said(own)}`);
      const other = await authorize(s, c.credentials, `https://other-${c.host}/cb`);
      e.that(refusedPage(other), `a redirect on another origin was accepted without a document: ${said(other)}`);
    },
  });
}

function urlClientConsentHostCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/consent-host',
    title: "consent marks the return host verified when it is the client's own host, unverified when it is a foreign host",
    rules: ['ob.clients.url-consent'],
    context: ['ob.contract.transaction'],
    run: async (s, e) => {
      const foreign = `https://elsewhere-${randomBytes(4).toString('hex')}.example/cb`;
      const c = await host(t, { body: (id, h) => documentFor(id, 'Two hosts', [`https://${h}/cb`, foreign]) });
      const own = await s.signIn({ credentials: c.credentials, scope: '' });
      e.that(own.consent?.verified === true, `consent for the own host shows verified ${JSON.stringify(own.consent?.verified)} (host ${JSON.stringify(own.consent?.host)})`);
      const away = await s.signIn({ credentials: c.credentials, scope: '', redirectUri: foreign });
      e.that(away.consent?.verified === false, `consent for a foreign host shows verified ${JSON.stringify(away.consent?.verified)} (host ${JSON.stringify(away.consent?.host)})`);
    },
  });
}

function urlClientHttpsOnlyCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/https-only',
    title: 'an http client_id is never fetched, though its document is served, at /authorize or at /token (a 4xx there)',
    rules: ['ob.clients.url-fetch-https'],
    run: async (s, e) => {
      const c = await host(t, { scheme: 'http' });
      const res = await authorize(s, c.credentials, c.foreign);
      e.that(refusedPage(res), `an http client_id was accepted: ${said(res)}`);
      const oidc = await s.oidc();
      const token = await oidc.token(c.credentials, 'none', 'A'.repeat(43), 'B'.repeat(43));
      e.that(token.status >= 400 && token.status < 500, `/token with the http client_id answered ${said(token)}, not a 4xx`);
      const n = await fetches(t, c.clientId);
      e.that(n === 0, `the bridge fetched the http document ${n} time(s)`);
    },
  });
}

function urlClientNoRedirectCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/no-redirect',
    title: 'a redirect answering the document fetch is not followed: the client is refused',
    rules: ['ob.clients.url-fetch-no-redirect'],
    run: async (s, e) => {
      const target = await host(t);
      const moved = `${target.clientId.replace(/\/client\.json$/, '')}/moved.json`;
      // The redirect leads to a document naming the URL the bridge asked for: following it would work.
      await t.authority.serveFile({ url: target.clientId, body: documentFor(moved, 'Moved', [`https://${target.host}/cb`, target.foreign]) });
      await t.authority.serveFile({ url: moved, redirect: target.clientId });
      const res = await authorize(s, { ...target.credentials, client_id: moved }, target.foreign);
      e.that(refusedPage(res), `the bridge followed a redirect to the document: ${said(res)}`);
    },
  });
}

function urlClientPrivateAddressCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/private-address',
    title: 'a client_id whose host resolves to a private address (not the exempt authority address) is refused without a request',
    rules: ['ob.clients.url-fetch-private'],
    run: async (s, e) => {
      const c = await host(t, { file: { otherAddress: true } });
      const res = await authorize(s, c.credentials, c.foreign);
      e.that(refusedPage(res), `the bridge used a document served from a private address: ${said(res)}`);
      const n = await fetches(t, c.clientId);
      e.that(n === 0, `the bridge sent ${n} request(s) to the private address`);
    },
  });
}

function urlClientSizeCapCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/size-cap',
    title: `a document of ${CAP} bytes is used; one of ${CAP + 1} bytes is refused`,
    rules: ['ob.clients.url-fetch-size'],
    cells: [
      { rule: 'ob.clients.url-fetch-size', facet: 'limit', value: 'at', operation: 'authorize' },
      { rule: 'ob.clients.url-fetch-size', facet: 'limit', value: 'past', operation: 'authorize' },
    ],
    run: async (s, e) => {
      const at = await host(t, { file: { padTo: CAP } });
      const ok = await authorize(s, at.credentials, at.foreign);
      e.that(proceeded(t, ok), `a document of exactly ${CAP} bytes was refused: ${said(ok)}`);
      const over = await host(t, { file: { padTo: CAP + 1 } });
      const big = await authorize(s, over.credentials, over.foreign);
      e.that(refusedPage(big), `a document of ${CAP + 1} bytes was accepted: ${said(big)}`);
    },
  });
}

function urlClientTimeoutCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/timeout',
    lane: 'bridge/url-client/timeout',
    title: `a document answering after ${TIMEOUT_MS / 1000 + 1.5} s is refused; one answering after ${TIMEOUT_MS / 2000} s (less on a slow machine) is used`,
    rules: ['ob.clients.url-fetch-timeout'],
    cells: [
      { rule: 'ob.clients.url-fetch-timeout', facet: 'window', value: 'inside', operation: 'authorize' },
      { rule: 'ob.clients.url-fetch-timeout', facet: 'window', value: 'outside', operation: 'authorize' },
    ],
    timeoutMs: 60_000,
    run: async (s, e) => {
      const slow = await host(t, { file: { delayMs: TIMEOUT_MS + 1500 } });
      const late = await authorize(s, slow.credentials, slow.foreign);
      e.that(refusedPage(late), `a document answering after ${TIMEOUT_MS + 1500} ms was accepted: ${said(late)}`);
      // Inside, as late as this machine allows: an undelayed document's authorize measures what the
      // fetch costs here besides the wait (DNS, TLS, the harness's own turn), and the inside wait
      // leaves half as much again and half a second before the timeout (a fifth to a half of it).
      const [base, user] = await Promise.all([host(t), s.newUser()]);
      const t0 = Date.now();
      const first = await s.openAuthorize(user.browser, s.params({ ...base.credentials, redirect_uri: base.foreign }, newPkce(), 'st', 'n', ''));
      const cost = Date.now() - t0;
      e.that(proceeded(t, first), `a document answering at once was refused: ${said(first)}`);
      const delayMs = Math.round(Math.min(TIMEOUT_MS / 2, Math.max(TIMEOUT_MS / 5, TIMEOUT_MS - 1.5 * cost - 500)));
      const [inTime, again] = await Promise.all([host(t, { file: { delayMs } }), s.newUser()]);
      const sent = Date.now();
      const ok = await s.openAuthorize(again.browser, s.params({ ...inTime.credentials, redirect_uri: inTime.foreign }, newPkce(), 'st', 'n', ''));
      const took = Date.now() - sent;
      // A refusal only after the whole timeout may be the machine's: the document, sent in time, reached the bridge late.
      if (!proceeded(t, ok) && took >= TIMEOUT_MS - 250)
        reportOwnFault(
          'outlived-window',
          `the bridge refused a document sent after ${delayMs} ms only ${took} ms after the request (an undelayed one took ${cost} ms here): it reached the bridge late`,
        );
      e.that(proceeded(t, ok), `a document answering after ${delayMs} ms (the timeout is ${TIMEOUT_MS} ms; one answering at once took ${cost} ms here) was refused after ${took} ms: ${said(ok)}`);
    },
  });
}

function urlClientCacheMinimumCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/cache-minimum',
    title: `a no-store document is fetched once for three requests (the cache is clamped to at least ${limits.url_client_cache_min_seconds / 60} minutes)`,
    rules: ['ob.clients.url-fetch-cache'],
    cells: [{ rule: 'ob.clients.url-fetch-cache', facet: 'window', value: 'inside', operation: 'authorize' }],
    run: async (s, e) => {
      const c = await host(t, { file: { headers: { 'cache-control': 'no-store' } } });
      for (let i = 0; i < 3; i++) {
        const res = await authorize(s, c.credentials);
        if (!proceeded(t, res)) throw new CheckFailure(`request ${i + 1} was refused: ${said(res)}`);
      }
      const n = await fetches(t, c.clientId);
      e.that(n === 1, `the bridge fetched the document ${n} times for 3 requests (a bridge of several instances caching apart may fetch once per instance)`);
    },
  });
}

function urlClientSecretRefusedCheck(t: BridgeTarget): Check {
  return urlClientCheck(t, {
    id: 'bridge/url-client/secret-refused',
    title: 'a URL client never redeems with a client secret: one whose document names client_secret_post, or one presenting a secret at /token, gets no tokens',
    rules: ['ob.clients.url-client-secret-refused'],
    cells: [
      { rule: 'ob.clients.url-client-secret-refused', facet: 'who', value: 'document-client-secret', operation: 'token' },
      { rule: 'ob.clients.url-client-secret-refused', facet: 'who', value: 'presented-secret', operation: 'token' },
    ],
    run: async (s, e) => {
      const oidc = await s.oidc();
      /** Signs in with `c` and redeems presenting a client secret: what /token answered, or the refusal at /authorize. */
      const withSecret = async (c: Hosted): Promise<string | undefined> => {
        const res = await authorize(s, c.credentials);
        // Refusing the document itself is one way to refuse the method (an error page, never a redirect).
        if (refusedPage(res)) return undefined;
        const signIn = await s.signIn({ credentials: c.credentials, scope: '' });
        if (!signIn.response.code) throw new CheckFailure(`no code: ${signIn.response.location}`);
        const redeemed = await oidc.token({ ...c.credentials, client_secret: randomBytes(16).toString('base64url') }, 'post', signIn.response.code, signIn.pkce.verifier);
        const body = (() => {
          try {
            return redeemed.json() as Record<string, unknown>;
          } catch {
            return {};
          }
        })();
        return redeemed.status >= 400 && redeemed.status < 500 && body.me === undefined && body.access_token === undefined ? undefined : said(redeemed);
      };
      const named = await withSecret(await host(t, { body: (id, h) => documentFor(id, 'Secret', [`https://${h}/cb`], { token_endpoint_auth_method: 'client_secret_post' }) }));
      e.that(named === undefined, `a client whose document names client_secret_post redeemed with a secret: ${named}`);
      const plain = await withSecret(await host(t));
      e.that(plain === undefined, `a public URL client redeemed presenting a secret: ${plain}`);
    },
  });
}

export function urlClientChecks(t: BridgeTarget): Check[] {
  return [
    urlClientIndieauthLoginCheck(t),
    urlClientIndieauthTokenCheck(t),
    urlClientSectorCheck(t),
    urlClientClientIdMismatchCheck(t),
    urlClientRedirectListedCheck(t),
    urlClientNoDocumentCheck(t),
    urlClientConsentHostCheck(t),
    urlClientHttpsOnlyCheck(t),
    urlClientNoRedirectCheck(t),
    urlClientPrivateAddressCheck(t),
    urlClientSizeCapCheck(t),
    urlClientTimeoutCheck(t),
    urlClientCacheMinimumCheck(t),
    urlClientSecretRefusedCheck(t),
  ];
}
