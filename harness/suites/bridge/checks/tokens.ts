// The token side: the ID token and its claims, client authentication methods, code replay and
// the wrong verifier, userinfo, revocation, introspection ownership, pairwise subjects and a
// signing-key rotation.
import type { Check } from '../../../run/model.ts';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { basicCredentials } from '../../../actors/oidc/client.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { bridgeCheck } from '../check.ts';
import { foreignSources, launcherOffered, originOf } from '../pages.ts';
import { CheckSkip, errorOf, said, type BridgeTarget, type ClientRole } from '../driver.ts';

function tokenIdTokenCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/token/id-token',
    title: 'the ID token verifies with RS256 against /jwks.json and carries iss, sub, aud, exp (5 minutes), iat, auth_time, nonce and amr [svc]',
    rules: ['ob.token.id-token', 'ob.keys.jwks'],
    run: async (s, e) => {
      const { body, signIn } = await s.tokens();
      const oidc = await s.oidc();
      const { payload } = await oidc.verifyIdToken(String(body.id_token), s.credentials('basic').client_id);
      e.that(decodeProtectedHeader(String(body.id_token)).alg === 'RS256', 'the ID token is not RS256');
      e.that(typeof payload.sub === 'string' && payload.sub !== '', 'no sub');
      e.that(payload.nonce === signIn.nonce, `nonce is ${JSON.stringify(payload.nonce)}, sent ${signIn.nonce}`);
      // "ID token: ... lifetime 5 minutes": not longer, and not some other lifetime (an access token's) either.
      const lifetime = (payload.exp ?? 0) - (payload.iat ?? 0);
      e.that(
        typeof payload.exp === 'number' && typeof payload.iat === 'number' && lifetime <= limits.id_token_ttl_seconds && lifetime >= limits.id_token_ttl_seconds - 10,
        `exp - iat is ${lifetime} s, not the ${limits.id_token_ttl_seconds} s the document gives an ID token`,
      );
      e.that(typeof payload.auth_time === 'number' && Math.abs(payload.auth_time - Date.now() / 1000) < 120, `auth_time is ${JSON.stringify(payload.auth_time)}`);
      e.that(Array.isArray(payload.amr) && (payload.amr as string[]).includes(t.profile.ids.amr_value), `amr is ${JSON.stringify(payload.amr)}`);
      e.that(payload[t.profile.ids.reserved_proof_claim] === undefined, 'the reserved proof claim is used');
    },
  });
}

function tokenAmrCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/token/amr',
    title: `the ID token's amr is [${t.profile.ids.amr_value}] when the identity key signed, and has "session" appended when a delegated session key signed, also in a grant the bridge's session gives on that proof`,
    rules: ['ob.token.id-token'],
    run: async (s, e) => {
      const svc = t.profile.ids.amr_value;
      const oidc = await s.oidc();
      for (const session of [false, true]) {
        const first = await s.tokens({ session });
        // The same proof again, from the bridge's session: a grant the session gives at once carries the proof's amr.
        const again = await s.tokens({ user: first.signIn.user });
        const signer = session ? 'a delegated session key' : 'the identity key';
        const want = session ? [svc, 'session'] : [svc];
        for (const [how, body] of [
          ['', first.body],
          [' and the grant from the session it opened (no new proof)', again.body],
        ] as const) {
          if (body === again.body && again.signIn.signed) continue;
          const { payload } = await oidc.verifyIdToken(String(body.id_token), s.credentials('basic').client_id);
          const amr = Array.isArray(payload.amr) ? (payload.amr as unknown[]) : undefined;
          e.that(
            amr !== undefined && JSON.stringify(amr.filter((v) => v === svc || v === 'session')) === JSON.stringify(want),
            `${signer} signed${how}, and amr is ${JSON.stringify(payload.amr)}: the list containing "${svc}"${session ? ', with "session" appended' : ' (no "session")'}`,
          );
        }
      }
    },
  });
}

function tokenResponseCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/token/response',
    title: 'a redemption answers a Bearer access token, `scope` listing the granted scopes space-separated, and an ID token issued now; a sign-in that sent no nonce gets an ID token without one',
    rules: ['ob.token.grant-type', 'ob.token.access-token', 'ob.token.id-token'],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const scope = `openid ${t.profile.ids.id_scope}`;
      const { body } = await s.tokens({ scope, extra: { nonce: undefined } });
      const granted = typeof body.scope === 'string' ? body.scope.split(' ') : [];
      e.that(typeof body.token_type === 'string' && body.token_type.toLowerCase() === 'bearer', `token_type is ${JSON.stringify(body.token_type)}, not Bearer`);
      e.that(granted.includes('openid') && granted.includes(t.profile.ids.id_scope), `scope is ${JSON.stringify(body.scope)}, not the granted ${scope}, space-separated`);
      const { payload } = await oidc.verifyIdToken(String(body.id_token), s.credentials('basic').client_id);
      const now = Date.now() / 1000;
      e.that(typeof payload.iat === 'number' && Math.abs(payload.iat - now) < 120, `iat is ${JSON.stringify(payload.iat)}, not now (${Math.floor(now)})`);
      e.that(typeof payload.exp === 'number' && payload.exp > now, `exp is ${JSON.stringify(payload.exp)}, already past`);
      e.that(!('nonce' in payload), `the sign-in sent no nonce, and the ID token carries nonce ${JSON.stringify(payload.nonce)}`);
    },
  });
}

function part1Checks(t: BridgeTarget): Check[] {
  const methods: Array<[ClientRole, string]> = [
    ['basic', 'client_secret_basic'],
    ['post', 'client_secret_post'],
    ['jwt', 'private_key_jwt'],
    ['public', 'none'],
  ];
  return methods.map(([role, method]) =>
    bridgeCheck(t, {
      id: `bridge/token/auth-${method.replace(/_/g, '-')}`,
      title: `a ${method} client redeems its code; a wrong credential is refused${method === 'client_secret_basic' ? ', as is a redemption naming no client; the scheme is read in any case, with any number of spaces' : ''}`,
      rules: ['ob.token.client-auth'],
      cells: [
        ...(method.startsWith('client_secret') ? [{ rule: 'ob.token.client-auth' as const, facet: 'who', value: 'wrong-secret', operation: 'token' }] : []),
        ...(method === 'client_secret_basic' ? [{ rule: 'ob.token.client-auth' as const, facet: 'who', value: 'unauthenticated-confidential', operation: 'token' }] : []),
      ],
      run: async (s, e) => {
        const creds = s.credentials(role);
        const { signIn } = { signIn: await s.signIn({ client: role }) };
        const oidc = await s.oidc();
        if (!signIn.response.code) return e.fail(`no code: ${signIn.response.location}`);
        if (method.startsWith('client_secret')) {
          const bad = await oidc.token({ ...creds, client_secret: `${creds.client_secret}x` }, s.style(role), signIn.response.code, signIn.pkce.verifier);
          e.that(bad.status >= 400 && bad.status < 500, `a wrong secret was accepted: ${said(bad)}`);
        }
        if (method === 'client_secret_basic') {
          const none = await oidc.token(creds, 'none', signIn.response.code, signIn.pkce.verifier);
          e.that(none.status >= 400 && none.status < 500, `a confidential client without authentication was accepted: ${said(none)}`);
          const fields = { grant_type: 'authorization_code', code: signIn.response.code, redirect_uri: creds.redirect_uri, code_verifier: signIn.pkce.verifier };
          const anonymous = await oidc.postForm(oidc.discovery.token_endpoint, undefined, 'none', fields);
          e.that(anonymous.status >= 400 && anonymous.status < 500, `a redemption naming no client at all answered ${said(anonymous)}, not a 4xx`);
          // RFC 7235 section 2.1: the scheme is case-insensitive, and one or more spaces follow it.
          const other = await s.signIn({ client: role });
          const loose = await s.http.post(oidc.discovery.token_endpoint, new URLSearchParams({ ...fields, code: other.response.code!, code_verifier: other.pkce.verifier }).toString(), {
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `basic  ${basicCredentials(creds)}` },
            noCookies: true,
          });
          e.that(loose.status === 200, `Basic credentials sent as "basic  <credentials>" (lower case, two spaces) were refused: ${said(loose)}`);
        }
        const good = await oidc.token(creds, s.style(role), signIn.response.code, signIn.pkce.verifier);
        e.that(good.status === 200, `${method}: ${said(good)}`);
      },
    }),
  );
}

function codeWrongVerifierCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/code/wrong-verifier',
    title: 'a wrong PKCE verifier is refused and leaves the code unspent for the right one',
    rules: ['ob.code.wrong-verifier'],
    run: async (s, e) => {
      const r = await s.signIn();
      const oidc = await s.oidc();
      // Another last character (a fixed 'A' would equal the right verifier one time in 64).
      const wrong = `${r.pkce.verifier.slice(0, -1)}${r.pkce.verifier.endsWith('A') ? 'B' : 'A'}`;
      const bad = await oidc.token(s.credentials('basic'), 'basic', r.response.code!, wrong);
      e.that(bad.status >= 400 && bad.status < 500, `a wrong verifier was accepted: ${said(bad)}`);
      const missing = await oidc.token(s.credentials('basic'), 'basic', r.response.code!, undefined);
      e.that(missing.status >= 400 && missing.status < 500, `no verifier was accepted: ${said(missing)}`);
      const good = await oidc.token(s.credentials('basic'), 'basic', r.response.code!, r.pkce.verifier);
      e.that(good.status === 200, `the right verifier no longer redeems: ${said(good)}`);
    },
  });
}

function codeBindingCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/code/binding',
    title: 'a code redeems only for its client and its redirect_uri',
    rules: ['ob.code.binding'],
    run: async (s, e) => {
      const r = await s.signIn();
      const oidc = await s.oidc();
      const c = s.credentials('basic');
      const wrongUri = await oidc.token(c, 'basic', r.response.code!, r.pkce.verifier, `${c.redirect_uri}/other`);
      e.that(wrongUri.status >= 400 && wrongUri.status < 500, `another redirect_uri was accepted: ${said(wrongUri)}`);
      const otherRole = (['post', 'other_sector', 'same_sector'] as const).find((x) => t.clients[x]);
      if (otherRole) {
        const other = await oidc.token(s.credentials(otherRole), s.style(otherRole), r.response.code!, r.pkce.verifier, c.redirect_uri);
        e.that(other.status >= 400 && other.status < 500, `another client redeemed the code: ${said(other)}`);
      }
    },
  });
}

function codeReplayRevokesCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/code/replay-revokes',
    title: 'a second redemption of a code is refused and revokes the access token of the first',
    rules: ['ob.code.replay-revokes', 'ob.code.format'],
    run: async (s, e) => {
      const { body, signIn } = await s.tokens();
      const oidc = await s.oidc();
      const before = await oidc.userinfo(String(body.access_token));
      e.that(before.status === 200, `the fresh access token does not read userinfo: ${said(before)}`);
      const again = await oidc.token(s.credentials('basic'), 'basic', signIn.response.code!, signIn.pkce.verifier);
      e.that(again.status >= 400 && again.status < 500, `the code redeemed twice: ${said(again)}`);
      const after = await oidc.userinfo(String(body.access_token));
      e.that(after.status === 401 || after.status === 403 || (after.status >= 400 && after.status < 500), `the first access token still works after the replay: ${said(after)}`);
      e.that(signIn.response.code!.length >= 43, `the code is ${signIn.response.code!.length} characters: under 256 bits`);
    },
  });
}

function userinfoBearerCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/userinfo/bearer',
    title: '/userinfo answers the subject for the access token and refuses an unknown one',
    rules: ['ob.userinfo', 'ob.token.access-token'],
    cells: [{ rule: 'ob.userinfo', facet: 'who', value: 'unknown-token', operation: 'userinfo' }],
    run: async (s, e) => {
      const { body } = await s.tokens();
      const oidc = await s.oidc();
      const ok = await oidc.userinfo(String(body.access_token));
      const { payload } = await oidc.verifyIdToken(String(body.id_token), s.credentials('basic').client_id);
      e.that(ok.status === 200 && (ok.json() as Record<string, unknown>).sub === payload.sub, `userinfo: ${said(ok)}`);
      const bad = await oidc.userinfo('not-a-token');
      e.that(bad.status >= 400 && bad.status < 500, `an unknown token read userinfo: ${said(bad)}`);
      e.that(Number(body.expires_in ?? 600) <= 600, `expires_in is ${String(body.expires_in)}`);
    },
  });
}

function revokeAccessTokenCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/revoke/access-token',
    title: '/revoke revokes an access token (RFC 7009): it no longer reads userinfo',
    rules: ['ob.revoke'],
    run: async (s, e) => {
      const { body } = await s.tokens();
      const oidc = await s.oidc();
      const res = await oidc.revoke(s.credentials('basic'), 'basic', String(body.access_token));
      e.that(res.status === 200, `revoke: ${said(res)}`);
      const after = await oidc.userinfo(String(body.access_token));
      e.that(after.status >= 400 && after.status < 500, `the revoked token still reads userinfo: ${said(after)}`);
    },
  });
}

function introspectOwnerOnlyCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/introspect/owner-only',
    title: '/introspect tells the owning client the token is active and another client nothing',
    rules: ['ob.introspect.owner'],
    run: async (s, e) => {
      const otherRole = (['other_sector', 'same_sector', 'post'] as const).find((x) => t.clients[x]);
      if (!otherRole) throw new CheckSkip('the target declares no second confidential client');
      const { body } = await s.tokens();
      const oidc = await s.oidc();
      const mine = await oidc.introspect(s.credentials('basic'), 'basic', String(body.access_token));
      e.that(mine.status === 200 && (mine.json() as Record<string, unknown>).active === true, `the owner: ${said(mine)}`);
      const theirs = await oidc.introspect(s.credentials(otherRole), s.style(otherRole), String(body.access_token));
      const tb = theirs.status === 200 ? (theirs.json() as Record<string, unknown>) : {};
      e.that(theirs.status >= 400 || (tb.active === false && tb.sub === undefined && tb.scope === undefined), `another client learned about the token: ${said(theirs)}`);
    },
  });
}

function subjectPairwiseCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/subject/pairwise',
    title: 'sub is stable for one identity and sector, differs across sectors, and is not the service ID',
    rules: ['ob.subject.sector'],
    cells: [{ rule: 'ob.subject.sector', facet: 'binding', value: 'sector', operation: 'token' }],
    run: async (s, e) => {
      if (!t.clients.other_sector) throw new CheckSkip('the target declares no other_sector client');
      const oidc = await s.oidc();
      const subOf = async (role: ClientRole, user?: Awaited<ReturnType<typeof s.newUser>>) => {
        const { body, signIn } = await s.tokens({ client: role, ...(user ? { user } : {}) });
        return { sub: decodeJwt(String(body.id_token)).sub, user: signIn.user, verified: await oidc.verifyIdToken(String(body.id_token), s.credentials(role).client_id) };
      };
      const a1 = await subOf('basic');
      const a2 = await subOf('basic', a1.user);
      e.that(a1.sub === a2.sub, 'sub changed between two sign-ins of the same identity at the same client');
      const b = await subOf('other_sector', a1.user);
      e.that(b.sub !== a1.sub, 'two sectors see the same sub');
      e.that(a1.sub !== a1.user.key.identity && !String(a1.sub).includes(a1.user.key.identity), 'sub reveals the service ID');
      if (t.clients.same_sector) {
        const c = await subOf('same_sector', a1.user);
        e.that(c.sub === a1.sub, 'two clients of one sector see different subs');
      }
    },
  });
}

function keysRotationCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/keys/rotation',
    title: 'after a key rotation the key set lists the new key beside the retired one, and tokens from before and after verify',
    rules: ['ob.keys.rotation', 'ob.keys.jwks'],
    cells: [{ rule: 'ob.keys.rotation', facet: 'window', value: 'inside', operation: 'jwks' }],
    context: ['ob.contract.rotate'],
    run: async (s, e) => {
      if (!t.rotate) throw new CheckSkip('the target declares no rotation hook (bridge.rotate_url)');
      const oidc = await s.oidc();
      const before = await s.tokens();
      const oldKid = decodeProtectedHeader(String(before.body.id_token)).kid;
      const rot = await s.http.post(t.rotate.url, '', { headers: t.rotate.token ? { authorization: `Bearer ${t.rotate.token}` } : {}, noCookies: true });
      if (rot.status >= 300) return e.fail(`the rotation hook answered ${said(rot)}`);
      try {
        await oidc.verifyIdToken(String(before.body.id_token), s.credentials('basic').client_id);
      } catch (error) {
        e.fail(`the token signed before the rotation no longer verifies: ${(error as Error).message}`);
      }
      // The new key appears in the key set beside the old one (an instance may still sign with
      // the previous key for a moment; it stays published, so that is not a failure).
      let kids: (string | undefined)[] = [];
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
        kids = ((await oidc.jwks()).jwks?.keys ?? []).map((k) => k.kid);
        if (kids.length >= 2) break;
      }
      const after = await s.tokens({ user: before.signIn.user });
      try {
        await oidc.verifyIdToken(String(after.body.id_token), s.credentials('basic').client_id);
      } catch (error) {
        e.fail(`a token signed after the rotation does not verify: ${(error as Error).message}`);
      }
      e.that(kids.length >= 2, `after the rotation the key set lists ${JSON.stringify(kids)}: the new key is missing`);
      e.that(kids.includes(oldKid), `the key set lists ${JSON.stringify(kids)}: the retired key ${oldKid} is gone`);
    },
  });
}

function errorsOauthBodiesCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/errors/oauth-bodies',
    title: "token errors use the project's RFC 6749 bodies: invalid_grant, invalid_client (401), unsupported_grant_type; userinfo answers WWW-Authenticate",
    rules: ['ob.errors.oauth-body'],
    run: async (s, e) => {
      const oidc = await s.oidc();
      const c = s.credentials('basic');
      const grant = await oidc.token(c, 'basic', 'no-such-code', 'x'.repeat(43));
      e.that(grant.status === 400 && errorOf(grant) === 'invalid_grant', `unknown code: ${said(grant)}`);
      const client = await oidc.token({ ...c, client_secret: 'wrong' }, 'basic', 'no-such-code', 'x'.repeat(43));
      e.that(client.status === 401 && errorOf(client) === 'invalid_client', `wrong secret: ${said(client)}`);
      const gt = await oidc.postForm(oidc.discovery.token_endpoint, c, 'basic', { grant_type: 'refresh_token', refresh_token: 'x' });
      e.that(gt.status === 400 && errorOf(gt) === 'unsupported_grant_type', `refresh_token grant: ${said(gt)}`);
      const ui = await oidc.userinfo('nope');
      e.that(ui.status === 401 && /invalid_token/.test(ui.headers['www-authenticate'] ?? ''), `userinfo: ${said(ui)}`);
    },
  });
}

function pagesHeadersCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/pages/headers',
    title:
      "auth pages send Referrer-Policy no-referrer and a content policy without third-party sources (the sign-in page's connect and form policy reach only the launcher it offers); cookies are __Host- over https",
    rules: ['ob.pages.security-headers', 'ob.cookies.host-prefix'],
    run: async (s, e) => {
      const user = await s.newUser();
      const res = await s.openAuthorize(user.browser, s.params('basic', { verifier: '', challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' }, 'st', 'n'));
      const cookies = res.setCookies;
      e.that(cookies.length > 0, `/authorize set no transaction cookie: ${said(res)}`);
      const secure = t.issuer.startsWith('https:');
      for (const c of cookies) {
        if (secure) e.that(c.startsWith('__Host-') && /;\s*Secure/i.test(c), `cookie ${c.split('=')[0]} is not __Host- and Secure`);
        e.that(/;\s*HttpOnly/i.test(c) && /;\s*SameSite=(Lax|Strict)/i.test(c), `cookie ${c.split('=')[0]} is not HttpOnly with SameSite`);
      }
      if (!res.location) return;
      const page = await user.browser.http.get(new URL(res.location, t.issuer).href, { headers: { accept: 'text/html' } });
      e.that(page.headers['referrer-policy'] === 'no-referrer', `the sign-in page sends Referrer-Policy ${JSON.stringify(page.headers['referrer-policy'])}`);
      const csp = page.headers['content-security-policy'] ?? '';
      e.that(csp !== '' && !/https?:\/\//.test(csp.replace(/(connect-src|form-action)[^;]*/g, '')), `the content policy is ${JSON.stringify(csp)}`);
      // "The launcher is the only other origin allowed in the page's connect policy": and only
      // when the page offers it (its form opens {launcher_url}/app/).
      const launcher = launcherOffered(page.text());
      const others = foreignSources(csp, ['connect-src', 'form-action']);
      e.that(
        others.every((src) => launcher !== undefined && originOf(src) === launcher),
        `the sign-in page's policy lets it reach ${others.join(' ')} beside itself, ${launcher ? `where only the launcher ${launcher} it offers may be` : 'though it offers no launcher'}: ${JSON.stringify(csp)}`,
      );
    },
  });
}

const cookieName = (header: string): string => header.split('=')[0]!.trim();
const attribute = (header: string, name: string): string | undefined =>
  header
    .split(';')
    .slice(1)
    .map((p) => p.trim())
    .find((p) => p.toLowerCase().startsWith(`${name.toLowerCase()}=`) || p.toLowerCase() === name.toLowerCase())
    ?.split('=')
    .slice(1)
    .join('=');
/** A cookie's life in seconds as its header states it (Max-Age wins over Expires, as in RFC 6265), from the answer's Date. */
function lifeOf(header: string, date: string | undefined): number | undefined {
  const maxAge = attribute(header, 'Max-Age');
  if (maxAge !== undefined && /^-?\d+$/.test(maxAge)) return Number(maxAge);
  const expires = attribute(header, 'Expires');
  if (expires === undefined) return undefined;
  const at = Date.parse(expires);
  const now = date === undefined ? Date.now() : Date.parse(date);
  return Number.isNaN(at) || Number.isNaN(now) ? undefined : Math.round((at - now) / 1000);
}

function cookiesEveryCheck(t: BridgeTarget): Check {
  const life = limits.session_cookie_ttl_seconds;
  return bridgeCheck(t, {
    id: 'bridge/cookies/every-cookie',
    title: `every cookie a whole sign-in sets (the transaction cookie, the session cookie) is __Host- with Path=/ and no Domain over https, Secure, HttpOnly and SameSite; the session cookie is SameSite=Lax and lives ${life / 3600} hours`,
    rules: ['ob.cookies.host-prefix'],
    run: async (s, e) => {
      await s.signIn();
      const issuer = new URL(t.issuer).origin;
      const set = s.exchanges
        .filter((x) => x.url.startsWith(issuer))
        .flatMap((x) => {
          const v = x.headers['set-cookie'];
          const date = x.headers.date;
          return (v === undefined ? [] : Array.isArray(v) ? v : [v]).map((header) => ({ header, date: typeof date === 'string' ? date : undefined, at: `${x.method} ${new URL(x.url).pathname}` }));
        });
      const secure = t.issuer.startsWith('https:');
      const session = secure ? t.profile.ids.session_cookie : t.profile.ids.session_cookie.replace(/^__Host-/, '');
      const sessions = set.filter((c) => cookieName(c.header) === session);
      e.that(sessions.length > 0, `a whole sign-in set no ${session} cookie: the bridge set ${set.map((c) => `${cookieName(c.header)} (${c.at})`).join(', ') || 'none'}`);
      for (const { header, date, at } of set) {
        const name = cookieName(header);
        const where = `the cookie ${name} set at ${at} (${JSON.stringify(header.replace(/=[^;]*/, '=…'))})`;
        if (secure) {
          e.that(name.startsWith('__Host-'), `${where} has no __Host- prefix`);
          e.that(attribute(header, 'Secure') !== undefined, `${where} is not Secure`);
          e.that(attribute(header, 'Path') === '/' && attribute(header, 'Domain') === undefined, `${where} is not Path=/ without Domain, as a __Host- cookie must be`);
        }
        e.that(attribute(header, 'HttpOnly') !== undefined, `${where} is not HttpOnly`);
        const sameSite = attribute(header, 'SameSite')?.toLowerCase();
        if (name !== session) e.that(sameSite === 'lax' || sameSite === 'strict', `${where} has no SameSite Lax or Strict`);
        else {
          e.that(sameSite === 'lax', `${where} is not SameSite=Lax`);
          // A deletion (a life of 0 or less: an earlier session ended) states no life to judge.
          const lives = lifeOf(header, date);
          if (lives !== undefined && lives <= 0) continue;
          e.that(
            lives !== undefined && Math.abs(lives - life) <= 120,
            `${where} lives ${lives === undefined ? 'as long as the browser runs (no Max-Age or Expires)' : `${lives} s`}, not ${life} s (${life / 3600} hours)`,
          );
        }
      }
    },
  });
}

export function tokenChecks(t: BridgeTarget): Check[] {
  return [
    tokenIdTokenCheck(t),
    tokenAmrCheck(t),
    tokenResponseCheck(t),
    ...part1Checks(t),
    codeWrongVerifierCheck(t),
    codeBindingCheck(t),
    codeReplayRevokesCheck(t),
    userinfoBearerCheck(t),
    revokeAccessTokenCheck(t),
    introspectOwnerOnlyCheck(t),
    subjectPairwiseCheck(t),
    keysRotationCheck(t),
    errorsOauthBodiesCheck(t),
    pagesHeadersCheck(t),
    cookiesEveryCheck(t),
  ];
}
