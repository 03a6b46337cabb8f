// The private_key_jwt client assertion judged across its matrix (spec/facets/bridge.yaml,
// ob.token.client-auth). Document 2 names the method; OpenID Connect Core 1.0 section 9 defines
// it: a JWT signed by the client's registered key, iss and sub the client_id, aud the
// authorization server, exp, and a jti ("These tokens MUST only be used once"). Each bound part
// is swapped alone for another valid one, the assertion is presented past its exp, replayed, and
// raced 20 ways over two codes; every code a refused assertion presented must redeem next. Codes
// live seconds (5 on the harness's reference), so each is fetched just before it is used. The
// same assertions then meet /introspect, where the client authenticates the same way.
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { assertionForm, clientAssertion, type AssertionEdit } from '../../../actors/oidc/client.ts';
import { together } from '../../../actors/oidc/race.ts';
import { bridgeCheck } from '../check.ts';
import { safeJson } from '../../../run/answers.ts';
import { matrixSignIn } from './matrix-pace.ts';
import { CheckFailure, CheckSkip, said, type BridgeSession, type BridgeTarget } from '../driver.ts';

const RACE = 20;
/** The codes the race spreads over: two, fetched back to back, well inside a code's seconds of life. */
const RACE_CODES = 2;

type Code = { code: string; verifier: string };
const refused = (r: HttpResponse) => r.status >= 400 && r.status < 500;

function clientAssertionCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/matrix/client-assertion',
    title:
      "a private_key_jwt client is refused at /token when its assertion is signed by another key (even one it embeds as jwk), names another client as iss or sub, another server as aud, has expired, lacks jti or exp, is replayed, or comes with another client's client_id or another assertion type; without client_id a valid one redeems; raced 20 ways over two codes it authenticates once; every code refused so stays redeemable; at /introspect none of those assertions is shown the client's live token active, a valid one is, once (raced 20 ways too), and one spent at /token is spent there",
    rules: ['ob.token.client-auth', 'ob.introspect.owner'],
    cells: [
      ...['token', 'introspect'].flatMap((operation) => [
        ...(['key', 'issuer', 'subject', 'audience'] as const).map((value) => ({ rule: 'ob.token.client-auth' as const, facet: 'binding', value, operation })),
        { rule: 'ob.token.client-auth' as const, facet: 'once', value: 'replay', operation },
        { rule: 'ob.token.client-auth' as const, facet: 'once', value: 'race', operation },
        { rule: 'ob.token.client-auth' as const, facet: 'window', value: 'inside', operation },
        { rule: 'ob.token.client-auth' as const, facet: 'window', value: 'outside', operation },
      ]),
    ],
    run: async (s, e) => {
      const c = s.credentials('jwt');
      if (!c.private_jwk) throw new CheckSkip('the target declares no private_key_jwt client');
      const oidc = await s.oidc();
      const endpoint = oidc.discovery.token_endpoint;
      // `form` edits the presented fields (client_id, client_assertion_type); undefined leaves one out.
      const redeem = (code: Code, assertion: string, form: Record<string, string | undefined> = {}) => {
        const fields = { grant_type: 'authorization_code', code: code.code, redirect_uri: c.redirect_uri, code_verifier: code.verifier, ...assertionForm(c, assertion), ...form };
        const body = new URLSearchParams(Object.entries(fields).filter((f): f is [string, string] => f[1] !== undefined));
        return oidc.http.post(endpoint, body.toString(), { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, noCookies: true });
      };
      const assertion = (edit?: AssertionEdit) => clientAssertion(c, endpoint, edit);
      // A refused presentation spends nothing: its code, fresh (codes live seconds), redeems next with a valid assertion.
      const refusedKeepsCode = async (what: string, code: Code, r: HttpResponse) => {
        e.that(refused(r), `an assertion ${what} redeemed a code: ${said(r)}`);
        if (!refused(r)) return;
        const next = await redeem(code, await assertion());
        e.that(next.status === 200, `the code an assertion ${what} presented no longer redeems with a valid one: ${said(next)}`);
      };

      // Raced: one assertion presented 20 ways at once across codes of its own authenticates once
      // (the window's inside: it expires in a minute). Each code alone redeems once, so two of them
      // tell an assertion spent once from one taken again.
      const raceCodes = await codesFor(s, RACE_CODES);
      const raced = await assertion();
      const answers = await together(RACE, (i) => redeem(raceCodes[i % RACE_CODES]!, raced));
      const won = answers.filter((r) => r.status === 200).length;
      e.that(won === 1, `one assertion presented ${RACE} ways at once over ${RACE_CODES} codes redeemed ${won} times: ${answers.map((r) => r.status).join(' ')}`);
      const left = raceCodes.find((_, k) => !answers.some((r, i) => i % RACE_CODES === k && r.status === 200));
      if (left) await refusedKeepsCode('replayed (the raced one)', left, await redeem(left, raced));

      // Each bound part swapped alone, the assertion past its exp, without a required claim, or presented wrongly.
      const other = await generateKeyPair(((c.private_jwk as JWK).alg as string | undefined) ?? 'RS256');
      const otherClient = Object.values(t.clients).find((x) => x !== undefined && x.client_id !== c.client_id)?.client_id ?? `${c.client_id}-other`;
      const cases: Array<[string, () => Promise<string>, Record<string, string | undefined>?]> = [
        ['signed by another key', () => assertion({ key: other.privateKey })],
        ['signed by another key it embeds as jwk', async () => assertion({ key: other.privateKey, jwk: await exportJWK(other.publicKey) })],
        [`with iss another client (${otherClient})`, () => assertion({ iss: otherClient })],
        [`with sub another client (${otherClient})`, () => assertion({ sub: otherClient })],
        ['with aud another server', () => assertion({ aud: 'https://elsewhere.example/token' })],
        ['whose exp passed 30 s ago', () => assertion({ expIn: -30 })],
        ['without jti', () => assertion({ omit: ['jti'] })],
        ['without exp', () => assertion({ omit: ['exp'] })],
        ['naming no client (no sub, no client_id)', () => assertion({ omit: ['sub'] }), { client_id: undefined }],
        // RFC 7521 section 4.2: "If present, the value of the client_id parameter MUST identify the same client".
        [`presented with client_id ${otherClient}`, () => assertion(), { client_id: otherClient }],
        // RFC 7523 section 2.2: client_assertion_type is urn:ietf:params:oauth:client-assertion-type:jwt-bearer.
        ['presented with another client_assertion_type', () => assertion(), { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }],
      ];
      for (const [what, make, form] of cases) {
        const [code] = await codesFor(s, 1);
        await refusedKeepsCode(what, code!, await redeem(code!, await make(), form));
      }
      // RFC 7521 section 4.2: client_id is optional beside an assertion, whose sub identifies the client.
      const [code] = await codesFor(s, 1);
      const bare = await redeem(code!, await assertion(), { client_id: undefined });
      e.that(bare.status === 200, `a valid assertion presented without client_id did not redeem: ${said(bare)}`);

      // The same authentication at /introspect, which serves only the owning client (RFC 7662
      // section 2.1 has it authenticate the client): no bad assertion learns that the client's
      // live token is active; a valid one does, once; one spent at /token is spent there too.
      const live = (safeJson(bare) as { access_token?: unknown } | undefined)?.access_token;
      if (typeof live !== 'string') return;
      const introspection = oidc.discovery.introspection_endpoint ?? `${t.issuer}/introspect`;
      const introspect = async (a: string, form: Record<string, string | undefined> = {}) => {
        const fields = { token: live, ...assertionForm(c, a), ...form };
        const body = new URLSearchParams(Object.entries(fields).filter((f): f is [string, string] => f[1] !== undefined));
        const r = await oidc.http.post(introspection, body.toString(), { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, noCookies: true });
        return { r, active: r.status === 200 && (safeJson(r) as { active?: unknown } | undefined)?.active === true };
      };
      for (const [what, make, form] of cases) {
        const { r, active } = await introspect(await make(), form);
        e.that(!active, `an assertion ${what} was shown the client's live token active at /introspect: ${said(r)}`);
      }
      const good = await assertion();
      const first = await introspect(good);
      e.that(first.active, `a valid assertion at /introspect was not shown the client's live token active: ${said(first.r)}`);
      const again = await introspect(good);
      e.that(!again.active, `an assertion replayed at /introspect was shown the live token active again: ${said(again.r)}`);
      const spent = await introspect(raced);
      e.that(!spent.active, `the assertion spent at /token was taken again at /introspect: ${said(spent.r)}`);
      const racing = await assertion();
      const shown = (await together(RACE, () => introspect(racing))).filter((x) => x.active).length;
      e.that(shown === 1, `one assertion presented ${RACE} ways at once at /introspect was shown the live token active ${shown} times`);
    },
  });
}

/** `n` codes of the private_key_jwt client, each with its verifier. */
async function codesFor(s: BridgeSession, n: number): Promise<Code[]> {
  const out: Code[] = [];
  for (let i = 0; i < n; i++) {
    const r = await matrixSignIn(() => s.signIn({ client: 'jwt' }));
    if (!r.response.code) throw new CheckFailure(`jwt: no code, the bridge answered ${r.response.location}`);
    out.push({ code: r.response.code, verifier: r.pkce.verifier });
  }
  return out;
}

export const clientAssertionChecks = (t: BridgeTarget): Check[] => [clientAssertionCheck(t)];
