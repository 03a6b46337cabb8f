// The private_key_jwt client assertion judged across its matrix (spec/facets/bridge.yaml,
// ob.token.client-auth). Document 2 names the method; OpenID Connect Core 1.0 section 9 defines
// it: a JWT signed by the client's registered key, iss and sub the client_id, aud the
// authorization server, exp, and a jti ("These tokens MUST only be used once"). Each bound part
// is swapped alone for another valid one, the assertion is presented past its exp, replayed and
// raced 20 ways, each time with a code of its own; every refused code must redeem afterwards.
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { assertionForm, clientAssertion, type AssertionEdit } from '../../../actors/oidc/client.ts';
import { together } from '../../../actors/oidc/race.ts';
import { bridgeCheck } from '../check.ts';
import { matrixSignIn } from './matrix-pace.ts';
import { CheckFailure, CheckSkip, said, type BridgeSession, type BridgeTarget } from '../driver.ts';

const RACE = 20;
const refused = (r: HttpResponse) => r.status >= 400 && r.status < 500;

function clientAssertionCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/client-assertion',
    title:
      'a private_key_jwt client is refused at /token when its assertion is signed by another key, names another client as iss or sub, another server as aud, or has expired, and when it is replayed; raced 20 ways with 20 codes it authenticates once; every code refused so stays redeemable',
    rules: ['ob.token.client-auth'],
    cells: [
      ...(['key', 'issuer', 'subject', 'audience'] as const).map((value) => ({ rule: 'ob.token.client-auth' as const, facet: 'binding', value, operation: 'token' })),
      { rule: 'ob.token.client-auth', facet: 'once', value: 'replay', operation: 'token' },
      { rule: 'ob.token.client-auth', facet: 'once', value: 'race', operation: 'token' },
      { rule: 'ob.token.client-auth', facet: 'window', value: 'inside', operation: 'token' },
      { rule: 'ob.token.client-auth', facet: 'window', value: 'outside', operation: 'token' },
    ],
    run: async (s, e) => {
      const c = s.credentials('jwt');
      if (!c.private_jwk) throw new CheckSkip('the target declares no private_key_jwt client');
      const oidc = await s.oidc();
      const endpoint = oidc.discovery.token_endpoint;
      const codes = await codesFor(s, RACE);
      const redeem = (code: { code: string; verifier: string }, assertion: string) =>
        oidc.http.post(
          endpoint,
          new URLSearchParams({ grant_type: 'authorization_code', code: code.code, redirect_uri: c.redirect_uri, code_verifier: code.verifier, ...assertionForm(c, assertion) }).toString(),
          { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, noCookies: true },
        );
      const assertion = (edit?: AssertionEdit) => clientAssertion(c, endpoint, edit);

      // Raced: one assertion with 20 codes at once authenticates once (the window's inside: it expires in a minute).
      const raced = await assertion();
      const answers = await together(RACE, (i) => redeem(codes[i]!, raced));
      const won = answers.filter((r) => r.status === 200).length;
      e.that(won === 1, `one assertion presented ${RACE} ways at once, each with its own code, redeemed ${won} of them: ${answers.map((r) => r.status).join(' ')}`);
      const unspent = codes.filter((_, i) => answers[i]!.status !== 200);
      if (unspent.length < 7) throw new CheckFailure(`only ${unspent.length} codes are left to judge the other cells with`);

      // Each bound part swapped alone, the assertion past its exp, and the raced one replayed: each refused.
      const other = await generateKeyPair(((c.private_jwk as JWK).alg as string | undefined) ?? 'RS256');
      const otherClient = Object.values(t.clients).find((x) => x !== undefined && x.client_id !== c.client_id)?.client_id ?? `${c.client_id}-other`;
      const cases: Array<[string, Promise<string>]> = [
        ['signed by another key', assertion({ key: other.privateKey })],
        ['signed by another key it embeds as jwk', assertion({ key: other.privateKey, jwk: await exportJWK(other.publicKey) })],
        [`iss another client (${otherClient})`, assertion({ iss: otherClient })],
        [`sub another client (${otherClient})`, assertion({ sub: otherClient })],
        ['aud another server', assertion({ aud: 'https://elsewhere.example/token' })],
        ['exp 30 s ago', assertion({ expIn: -30 })],
        ['the raced assertion replayed', Promise.resolve(raced)],
      ];
      for (const [i, [what, made]] of cases.entries()) {
        const r = await redeem(unspent[i]!, await made);
        e.that(refused(r), `an assertion ${what} redeemed a code: ${said(r)}`);
      }
      // Nothing refused spent its code: each redeems with a fresh assertion.
      const after = await Promise.all(unspent.map(async (code) => redeem(code, await assertion())));
      const lost = after.filter((r) => r.status !== 200);
      e.that(lost.length === 0, `${lost.length} of the ${unspent.length} codes a refused assertion presented no longer redeem with a valid one: ${lost.map((r) => said(r)).join('; ')}`);
    },
  });
}

/** `n` codes of the private_key_jwt client, each with its verifier. */
async function codesFor(s: BridgeSession, n: number): Promise<Array<{ code: string; verifier: string }>> {
  const out: Array<{ code: string; verifier: string }> = [];
  for (let i = 0; i < n; i++) {
    const r = await matrixSignIn(() => s.signIn({ client: 'jwt' }));
    if (!r.response.code) throw new CheckFailure(`jwt: no code, the bridge answered ${r.response.location}`);
    out.push({ code: r.response.code, verifier: r.pkce.verifier });
  }
  return out;
}

export const clientAssertionChecks = (t: BridgeTarget): Check[] => [clientAssertionCheck(t)];
