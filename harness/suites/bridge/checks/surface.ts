// What a bridge publishes: discovery at both paths, the key set, its RP metadata, health, and
// the headers of its pages.
import type { Check } from '../../../run/model.ts';
import { bridgeCheck } from '../check.ts';
import { said, type BridgeTarget } from '../driver.ts';
import { OidcClient } from '../../../actors/oidc/client.ts';

export function surfaceChecks(t: BridgeTarget): Check[] {
  return [
    bridgeCheck(t, {
      id: 'bridge/discovery/both-paths',
      title: 'the discovery document is served at openid-configuration and, the same, at oauth-authorization-server',
      rules: ['ob.discovery.paths'],
      run: async (s, e) => {
        const a = await OidcClient.discover(s.http, t.issuer);
        const b = await OidcClient.discover(s.http, t.issuer, '/.well-known/oauth-authorization-server');
        e.that(a.discovery !== undefined, `openid-configuration: ${said(a.res)}`);
        e.that(b.discovery !== undefined, `oauth-authorization-server: ${said(b.res)}`);
        if (a.discovery && b.discovery) e.that(JSON.stringify(a.discovery) === JSON.stringify(b.discovery), 'the two discovery documents differ');
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/discovery/issuer',
      title: 'discovery names the issuer exactly: scheme and dotted host, no path, no trailing slash',
      rules: ['ob.issuer.exact-url', 'ob.issuer.dotted-host'],
      run: async (s, e) => {
        const d = (await s.oidc()).discovery;
        e.that(d.issuer === t.issuer, `issuer is ${JSON.stringify(d.issuer)}, the target is ${t.issuer}`);
        const u = new URL(d.issuer);
        e.that(`${u.protocol}//${u.host}` === d.issuer, `issuer ${d.issuer} is not scheme://host`);
        e.that(u.hostname.includes('.') && u.hostname !== 'localhost', `issuer host ${u.hostname} is not dotted`);
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/discovery/rs256-only',
      title: 'RS256 is the only published ID-token algorithm; only response_type code and PKCE S256',
      rules: ['ob.discovery.rs256', 'ob.authorize.response-type'],
      run: async (s, e) => {
        const d = (await s.oidc()).discovery;
        e.that(JSON.stringify(d.id_token_signing_alg_values_supported) === '["RS256"]', `id_token_signing_alg_values_supported is ${JSON.stringify(d.id_token_signing_alg_values_supported)}`);
        if (d.response_types_supported !== undefined) e.that(JSON.stringify(d.response_types_supported) === '["code"]', `response_types_supported is ${JSON.stringify(d.response_types_supported)}`);
        if (d.code_challenge_methods_supported !== undefined) e.that(!(d.code_challenge_methods_supported as string[]).includes('plain'), 'code_challenge_methods_supported lists plain');
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/discovery/project-fields',
      title: "discovery carries the project's fields (endpoints, S256, auth methods, iss parameter support)",
      rules: ['ob.discovery.fields'],
      run: async (s, e) => {
        const d = (await s.oidc()).discovery;
        for (const f of [
          'userinfo_endpoint',
          'revocation_endpoint',
          'introspection_endpoint',
          'subject_types_supported',
          'token_endpoint_auth_methods_supported',
          'scopes_supported',
          'claims_supported',
        ]) {
          e.that(d[f] !== undefined, `${f} is missing`);
        }
        e.that(JSON.stringify(d.code_challenge_methods_supported) === '["S256"]', `code_challenge_methods_supported is ${JSON.stringify(d.code_challenge_methods_supported)}`);
        e.that(d.authorization_response_iss_parameter_supported === true, 'authorization_response_iss_parameter_supported is not true');
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/keys/jwks',
      title: '/jwks.json publishes RSA signing keys with key ids',
      rules: ['ob.keys.jwks'],
      run: async (s, e) => {
        const { res, jwks } = await (await s.oidc()).jwks();
        if (!jwks) return e.fail(`no key set: ${said(res)}`);
        e.that(jwks.keys.length > 0, 'the key set is empty');
        for (const k of jwks.keys) {
          e.that(k.kty === 'RSA', `key ${k.kid} is ${k.kty}, not RSA`);
          e.that(typeof k.kid === 'string', 'a key has no kid');
          e.that(k.d === undefined, `key ${k.kid} publishes its private part`);
        }
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/native/metadata',
      title: 'the bridge publishes RP metadata: origin the issuer, one response URI /svc/callback, context and contact URIs',
      rules: ['ob.native.rp-metadata'],
      run: async (s, e) => {
        const { metadata, origin } = await s.signer.fetchMetadata(t.issuer);
        const p = t.profile.ids;
        e.that(origin === t.issuer, `metadata origin is ${origin}`);
        e.that(JSON.stringify(metadata.response_uris) === JSON.stringify([`${t.issuer}${p.callback_path}`]), `response_uris is ${JSON.stringify(metadata.response_uris)}`);
        e.that(metadata.context_uri === `${t.issuer}${p.context_path}`, `context_uri is ${JSON.stringify(metadata.context_uri)}`);
        e.that(metadata.contact_uri === `${t.issuer}/abuse`, `contact_uri is ${JSON.stringify(metadata.contact_uri)}`);
        const transports = (metadata as Record<string, unknown>).transports;
        e.that(Array.isArray(transports) && ['redirect', 'qr', 'deeplink'].every((x) => (transports as string[]).includes(x)), `transports is ${JSON.stringify(transports)}`);
      },
    }),
    bridgeCheck(t, {
      id: 'bridge/health',
      title: '/health answers 200 while the database reads and a key is loaded',
      rules: ['ob.health'],
      run: async (s, e) => {
        const res = await s.http.get(`${t.issuer}/health`, { noCookies: true });
        e.that(res.status === 200, `/health: ${said(res)}`);
      },
    }),
  ];
}
