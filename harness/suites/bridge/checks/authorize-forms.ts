// The forms of an /authorize request that document 2 lists without shaping (both rules the
// project's, from the RFCs it builds on). A parameter sent twice (ob.authorize.repeated-parameter;
// RFC 6749 section 3.1: "MUST NOT be included more than once", answered invalid_request by section
// 4.1.2.1): before the client is known a repeat is an error page, since two client_id or
// redirect_uri values name no one client and no one return address; after it, any other parameter
// sent twice, with the same value or another, is redirected as invalid_request and issues nothing.
// A value out of its form (ob.authorize.parameter-forms): state and nonce outside RFC 6749's
// VSCHAR, a code_challenge that is no base64url SHA-256, a prompt outside OpenID Connect's four
// values or none with another, a max_age that is no non-negative integer; each of their edges
// that is in form goes on.
import type { Check } from '../../../run/model.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { bridgeCheck } from '../check.ts';
import { CLIENT_ROLES, said, type BridgeSession, type BridgeTarget } from '../driver.ts';
import type { HttpResponse } from '../../../actors/http.ts';

/** The authorization URL of `params` with `extra` appended after them (repeats included). */
async function withRepeats(s: BridgeSession, params: Record<string, string>, extra: readonly (readonly [string, string])[]): Promise<string> {
  const url = new URL((await s.oidc()).authorizeUrl(params));
  for (const [k, v] of extra) url.searchParams.append(k, v);
  return url.href;
}

function authorizeRepeatedCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/authorize-repeated',
    title:
      'at /authorize two client_id or two redirect_uri values are an error page, never a redirect; any other parameter sent twice (the same value or another) is redirected as invalid_request with iss and no code',
    rules: ['ob.authorize.repeated-parameter'],
    run: async (s, e) => {
      const c = s.credentials('basic');
      // Another declared client's id, or one no bridge knows: either way two values name no one client.
      const other = CLIENT_ROLES.map((r) => t.clients[r]?.client_id).find((id) => id !== undefined && id !== c.client_id) ?? `unknown-${Date.now()}`;
      const base = () => s.params('basic', newPkce(), `st-${Math.random().toString(36).slice(2)}`, 'n', `openid ${t.profile.ids.id_scope}`);
      const user = await s.newUser();
      const open = (url: string) => user.browser.http.get(url, { headers: { accept: 'text/html' } });

      // The client is not known: a page, whichever value comes first.
      const ambiguous: [string, string, string][] = [
        ['client_id', c.client_id, other],
        ['client_id', c.client_id, c.client_id],
        ['redirect_uri', c.redirect_uri, 'https://attacker.example/cb'],
        ['redirect_uri', 'https://attacker.example/cb', c.redirect_uri],
      ];
      for (const [name, first, second] of ambiguous) {
        const params = { ...base(), [name]: first };
        const res = await open(await withRepeats(s, params, [[name, second]]));
        const what = `${name}=${first}&${name}=${second}`;
        e.that(res.location === undefined && res.status >= 400 && res.status < 500, `/authorize with ${what} answered ${said(res)}, not an error page`);
      }

      // The client is known: the client hears invalid_request.
      const repeats: [string, string | undefined, string][] = [
        ['response_type', undefined, 'code'],
        ['state', undefined, 'another'],
        ['nonce', undefined, 'n'],
        ['scope', undefined, 'openid'],
        ['code_challenge', undefined, newPkce().challenge],
        ['code_challenge_method', undefined, 'S256'],
        ['prompt', 'login', 'login'],
        ['max_age', '60', '60'],
        ['login_hint', user.key.identity, user.key.identity],
      ];
      for (const [name, given, again] of repeats) {
        const params = base();
        if (given !== undefined) params[name] = given;
        const res = await open(await withRepeats(s, params, [[name, again]]));
        const response = s.authorizationResponse(res.location, c.redirect_uri);
        e.that(
          response?.error === 'invalid_request' && response.code === undefined && response.iss === t.issuer,
          `/authorize with ${name} sent twice answered ${said(res)}, not a redirect with error invalid_request and iss`,
        );
      }
    },
  });
}

/** An answer that goes on with the sign-in: a redirect into the bridge, not back to the client. */
export const wentOn = (res: HttpResponse, issuer: string) => res.status >= 300 && res.status < 400 && res.location !== undefined && new URL(res.location, issuer).origin === new URL(issuer).origin;

function authorizeFormsCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/profile/authorize-forms',
    title:
      'at /authorize a state or nonce with a control or non-ASCII character, a code_challenge that is not 43 base64url characters, an unknown prompt or none with another, and a max_age that is not a non-negative integer of at most nine digits are each redirected as invalid_request; the edges in form (a space and a tilde, prompt login consent, max_age 0 and 999999999) go on',
    rules: ['ob.authorize.parameter-forms'],
    cells: ['vschar-edges', 'prompt-combination', 'max-age-zero', 'near-miss'].map((value) => ({
      rule: 'ob.authorize.parameter-forms' as const,
      facet: 'normalization' as const,
      value,
      operation: 'authorize',
    })),
    run: async (s, e) => {
      const c = s.credentials('basic');
      const user = await s.newUser();
      const base = () => s.params('basic', newPkce(), 'st-forms', 'n', `openid ${t.profile.ids.id_scope}`);
      const challenge = newPkce().challenge;
      const refused: [string, Record<string, string>][] = [
        ['a state with a control character', { state: 'st\x01' }],
        ['a state with DEL', { state: 'st\x7f' }],
        ['a state with a non-ASCII letter', { state: 'st\u00e9' }],
        ['a nonce with a control character', { nonce: 'n\x00' }],
        ['a nonce with a non-ASCII letter', { nonce: 'n\u00e9' }],
        ['a code_challenge of 42 characters', { code_challenge: challenge.slice(0, 42) }],
        ['a code_challenge of 44 characters', { code_challenge: `${challenge}A` }],
        ['a padded code_challenge', { code_challenge: `${challenge.slice(0, 42)}=` }],
        ['a code_challenge in base64, not base64url', { code_challenge: `${challenge.slice(0, 42)}+` }],
        ['prompt bogus', { prompt: 'bogus' }],
        ['prompt none login', { prompt: 'none login' }],
        ['prompt login Login', { prompt: 'login Login' }],
        ['max_age -1', { max_age: '-1' }],
        ['max_age 1.5', { max_age: '1.5' }],
        ['max_age abc', { max_age: 'abc' }],
        ['an empty max_age', { max_age: '' }],
        ['a max_age of ten digits', { max_age: '1000000000' }],
      ];
      for (const [what, change] of refused) {
        const res = await s.openAuthorize(user.browser, { ...base(), ...change });
        const response = s.authorizationResponse(res.location, c.redirect_uri);
        e.that(response?.error === 'invalid_request' && response.code === undefined, `/authorize with ${what} answered ${said(res)}, not a redirect with error invalid_request`);
      }
      const taken: [string, Record<string, string>][] = [
        ['a state with a space and a tilde', { state: 'st ~' }],
        ['a nonce with a space and a tilde', { nonce: 'n ~' }],
        ['prompt login consent', { prompt: 'login consent' }],
        ['prompt select_account', { prompt: 'select_account' }],
        ['max_age 0', { max_age: '0' }],
        ['max_age 999999999', { max_age: '999999999' }],
      ];
      for (const [what, change] of taken) {
        const res = await s.openAuthorize(user.browser, { ...base(), ...change });
        e.that(wentOn(res, t.issuer), `/authorize with ${what} answered ${said(res)}, not the sign-in`);
      }
    },
  });
}

export const authorizeFormChecks = (t: BridgeTarget): Check[] => [authorizeRepeatedCheck(t), authorizeFormsCheck(t)];
