// Bad input at every endpoint of a bridge: malformed forms, bodies, headers and identifiers get
// an answer below 500 (ob.robustness.never-500, a project decision: a profile check).
import type { Check } from '../../../run/model.ts';
import { bridgeCheck } from '../check.ts';
import { said, type BridgeTarget } from '../driver.ts';

export function robustnessChecks(t: BridgeTarget): Check[] {
  return [
    bridgeCheck(t, {
      id: 'bridge/robustness/never-500',
      title: 'malformed requests to every endpoint are answered below 500',
      rules: ['ob.robustness.never-500'],
      run: async (s, e) => {
        const oidc = await s.oidc();
        const d = oidc.discovery;
        const form = { 'content-type': 'application/x-www-form-urlencoded' };
        const cases: Array<[string, string, string | undefined, Record<string, string>]> = [
          ['POST', d.token_endpoint, '%%%=&&==%ZZ', form],
          ['POST', d.token_endpoint, 'grant_type=authorization_code&code=' + 'A'.repeat(20000), form],
          ['POST', d.token_endpoint, '{"grant_type":"authorization_code"}', { 'content-type': 'application/json' }],
          ['POST', d.token_endpoint, 'grant_type=authorization_code&code=x', { ...form, authorization: 'Basic !!!notbase64' }],
          ['POST', d.token_endpoint, 'grant_type=authorization_code&code=x', { ...form, authorization: `Basic ${Buffer.from('%zz:%zz').toString('base64')}` }],
          ['POST', d.token_endpoint, 'grant_type=authorization_code&client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer&client_assertion=a.b.c', form],
          ['POST', d.token_endpoint, '\u00ff\u00fe', form],
          ['GET', d.token_endpoint, undefined, {}],
          ['GET', d.userinfo_endpoint ?? `${t.issuer}/userinfo`, undefined, { authorization: 'Bearer' }],
          ['GET', d.userinfo_endpoint ?? `${t.issuer}/userinfo`, undefined, { authorization: `Bearer ${'x'.repeat(5000)}` }],
          ['POST', d.revocation_endpoint ?? `${t.issuer}/revoke`, 'token=', form],
          ['POST', d.introspection_endpoint ?? `${t.issuer}/introspect`, 'token=x', form],
          ['GET', `${d.authorization_endpoint}?%%%`, undefined, {}],
          [
            'GET',
            `${d.authorization_endpoint}?${new URLSearchParams({ ...s.params('basic', { verifier: '', challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' }, 'st\u0000ate', 'n\u0001') }).toString()}`,
            undefined,
            {},
          ],
          ['GET', `${d.authorization_endpoint}?client_id=${encodeURIComponent(s.credentials('basic').client_id)}&redirect_uri=%FF`, undefined, {}],
          ['POST', `${t.issuer}${t.profile.ids.callback_path}`, 'not an approval', { 'content-type': 'text/plain' }],
          ['POST', `${t.issuer}${t.profile.ids.callback_path}`, '{"response": 5, "match": []}', { 'content-type': 'application/json' }],
          ['GET', `${t.issuer}${t.profile.ids.resume_path}?code=${'A'.repeat(43)}`, undefined, { cookie: '=; ;;=x' }],
          ['GET', `${t.issuer}${t.profile.ids.context_path}?request_id=%00`, undefined, {}],
          ['GET', `${t.issuer}/r/%E0%A4%A`, undefined, { accept: 'application/json' }],
          ['GET', `${t.issuer}/t/${'x'.repeat(300)}`, undefined, { accept: 'application/json' }],
          ['POST', `${t.issuer}/t/AAAAAAAAAAAAAAAAAAAAAA/identify`, '{"id": ["x"]}', { 'content-type': 'application/json', accept: 'application/json' }],
          ['POST', `${t.issuer}/t/AAAAAAAAAAAAAAAAAAAAAA/consent`, 'decision=approve', { ...form, cookie: 'svc_tx=x; __Host-svc_tx=y' }],
        ];
        for (const [method, url, body, headers] of cases) {
          const res = await s.http.request(url, { method, headers, ...(body !== undefined ? { body } : {}), noCookies: true });
          e.that(res.status < 500, `${method} ${url.slice(0, 100)} answered ${said(res)}`);
        }
      },
    }),
  ];
}
