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
      "a private_key_jwt client is refused at /token when its assertion is signed by another key (even one it embeds as jwk), names another client as iss or sub, another server as aud, has expired, lacks jti or exp, is replayed, or comes with another client's client_id or another assertion type; without client_id a valid one redeems; raced 20 ways with 20 codes it authenticates once; every code refused so stays redeemable",
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
      // `form` edits the presented fields (client_id, client_assertion_type); undefined leaves one out.
      const redeem = (code: { code: string; verifier: string }, assertion: string, form: Record<string, string | undefined> = {}) => {
        const fields = { grant_type: 'authorization_code', code: code.code, redirect_uri: c.redirect_uri, code_verifier: code.verifier, ...assertionForm(c, assertion), ...form };
        const body = new URLSearchParams(Object.entries(fields).filter((f): f is [string, string] => f[1] !== undefined));
        return oidc.http.post(endpoint, body.toString(), { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, noCookies: true });
      };
      const assertion = (edit?: AssertionEdit) => clientAssertion(c, endpoint, edit);

      // Raced: one assertion with 20 codes at once authenticates once (the window's inside: it expires in a minute).
      const raced = await assertion();
      const answers = await together(RACE, (i) => redeem(codes[i]!, raced));
      const won = answers.filter((r) => r.status === 200).length;
      e.that(won === 1, `one assertion presented ${RACE} ways at once, each with its own code, redeemed ${won} of them: ${answers.map((r) => r.status).join(' ')}`);
      const unspent = codes.filter((_, i) => answers[i]!.status !== 200);

      // Each bound part swapped alone, the assertion past its exp, and the raced one replayed: each refused.
      const other = await generateKeyPair(((c.private_jwk as JWK).alg as string | undefined) ?? 'RS256');
      const otherClient = Object.values(t.clients).find((x) => x !== undefined && x.client_id !== c.client_id)?.client_id ?? `${c.client_id}-other`;
      const cases: Array<[string, Promise<string>, Record<string, string | undefined>?]> = [
        ['signed by another key', assertion({ key: other.privateKey })],
        ['signed by another key it embeds as jwk', assertion({ key: other.privateKey, jwk: await exportJWK(other.publicKey) })],
        [`with iss another client (${otherClient})`, assertion({ iss: otherClient })],
        [`with sub another client (${otherClient})`, assertion({ sub: otherClient })],
        ['with aud another server', assertion({ aud: 'https://elsewhere.example/token' })],
        ['whose exp passed 30 s ago', assertion({ expIn: -30 })],
        ['without jti', assertion({ omit: ['jti'] })],
        ['without exp', assertion({ omit: ['exp'] })],
        ['replayed (the raced one)', Promise.resolve(raced)],
        ['naming no client (no sub, no client_id)', assertion({ omit: ['sub'] }), { client_id: undefined }],
        // RFC 7521 section 4.2: "If present, the value of the client_id parameter MUST identify the same client".
        [`presented with client_id ${otherClient}`, assertion(), { client_id: otherClient }],
        // RFC 7523 section 2.2: client_assertion_type is urn:ietf:params:oauth:client-assertion-type:jwt-bearer.
        ['presented with another client_assertion_type', assertion(), { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }],
      ];
      if (unspent.length < cases.length + 1) throw new CheckFailure(`only ${unspent.length} codes are left to judge the other cells with`);
      for (const [i, [what, made, form]] of cases.entries()) {
        const r = await redeem(unspent[i]!, await made, form);
        e.that(refused(r), `an assertion ${what} redeemed a code: ${said(r)}`);
      }
      // RFC 7521 section 4.2: client_id is optional beside an assertion, whose sub identifies the client.
      const bare = await redeem(unspent[cases.length]!, await assertion(), { client_id: undefined });
      e.that(bare.status === 200, `a valid assertion presented without client_id did not redeem: ${said(bare)}`);
      unspent.splice(cases.length, 1);
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
