// npm run vectors: Requests by reference (document 1, Requests by reference): signin-reference.json.

import { encodeObject } from '../../protocol/common/codec.ts';
import { referenceFromInput } from '../../protocol/signin/reference.ts';
import { sameOrigin } from '../../protocol/common/url.ts';
import { same, ruleIds } from './check.ts';
import { profile, NAME, AUTH, ORIGIN } from './fixtures.ts';
import { emit } from './emit.ts';


export const LINK = `${ORIGIN}/r/K7QM4XP2`;
export const enc = encodeURIComponent;
export const referenceForms: Array<{ name: string; input: string; uri: string | null; rules?: string[] }> = [
  { name: 'link-with-white-space', input: `  ${LINK} `, uri: LINK },
  { name: 'link', input: LINK, uri: LINK },
  { name: 'http-development-link', input: 'http://rp.localhost:8090/r/K7QM4XP2', uri: 'http://rp.localhost:8090/r/K7QM4XP2', rules: ['ns.request.audience-http-dev'] },
  { name: 'deep-link-request-uri', input: `${NAME}://auth?request_uri=${enc(LINK)}`, uri: LINK, rules: ['ns.transport.deeplink'] },
  { name: 'web-signer-auth-link', input: `https://signer.example.net/app/?auth=${enc(LINK)}`, uri: LINK, rules: ['ns.transport.web-handoff'] },
  { name: 'inline-encoded-request', input: encodeObject({ [AUTH]: '1' }), uri: null, rules: ['ns.transport.paste'] },
  { name: 'inline-deep-link-request', input: `${NAME}://auth?request=${encodeObject({ x: 1 })}`, uri: null, rules: ['ns.transport.deeplink'] },
  { name: 'inline-web-signer-auth', input: `https://signer.example.net/app/?auth=${encodeObject({ x: 1 })}`, uri: null, rules: ['ns.transport.web-handoff'] },
  { name: 'ftp-link', input: 'ftp://rp.example.com/r/K7QM4XP2', uri: null },
  { name: 'javascript-link', input: 'javascript:alert(1)', uri: null },
  { name: 'deep-link-javascript-request-uri', input: `${NAME}://auth?request_uri=${enc('javascript:alert(1)')}`, uri: null, rules: ['ns.transport.deeplink'] },
  { name: 'deep-link-data-request-uri', input: `${NAME}://auth?request_uri=${enc('data:text/html,<script>alert(1)</script>')}`, uri: null, rules: ['ns.transport.deeplink'] },
  { name: 'web-signer-auth-javascript', input: `https://signer.example.net/app/?auth=${enc('javascript:alert(1)')}`, uri: null, rules: ['ns.transport.web-handoff'] },
  { name: 'foreign-scheme-deep-link', input: `other://auth?request_uri=${enc(LINK)}`, uri: null },
];
export const forms = referenceForms.map((f) => {
  same(`signin-reference form ${f.name} (core)`, referenceFromInput(profile, f.input) ?? null, f.uri);
  return { name: f.name, input: f.input, uri: f.uri ?? '', ok: f.uri !== null, rules: ruleIds('ns.reference.forms', ...(f.rules ?? [])) };
});
export const referenceOrigins: Array<{ name: string; uri: string; audience: string; ok: boolean; rules?: string[] }> = [
  { name: 'same-origin', uri: LINK, audience: ORIGIN, ok: true },
  { name: 'audience-not-normalized', uri: 'https://rp.example.com:443/r/K7QM4XP2', audience: 'https://RP.example.com/', ok: true, rules: ['ns.request.audience'] },
  { name: 'http-development', uri: 'http://rp.localhost:8090/r/K7QM4XP2', audience: 'http://rp.localhost:8090', ok: true, rules: ['ns.request.audience-http-dev'] },
  { name: 'off-origin', uri: 'https://evil.example/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'http-versus-https', uri: 'http://rp.example.com/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'suffix-trick', uri: 'https://rp.example.com.evil.example/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'userinfo-trick', uri: 'https://rp.example.com@evil.example/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'other-port', uri: 'https://rp.example.com:8443/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'subdomain', uri: 'https://login.rp.example.com/r/K7QM4XP2', audience: ORIGIN, ok: false },
  { name: 'javascript-uri', uri: 'javascript:alert(1)', audience: ORIGIN, ok: false },
];
export const origins = referenceOrigins.map((o) => {
  same(`signin-reference origin ${o.name} (core)`, sameOrigin(o.audience, o.uri), o.ok);
  return { name: o.name, uri: o.uri, audience: o.audience, ok: o.ok, rules: ruleIds('ns.reference.same-origin', ...(o.rules ?? [])) };
});
emit(
  'signin-reference',
  'signin-reference',
  `Requests by reference (document 1, Requests by reference; Transport bindings): \`forms\` maps what a signer is given (a link, \`${NAME}://auth?request_uri=<link>\`, \`?auth=<link>\`, or an inline request, which is not a reference) to the reference link (\`uri\`, empty when \`ok\` is false); only http(s) links count. \`origins\` says whether a reference link is same-origin with the request's audience (normalized scheme, host and port), including hostile links: another host, http for https, a suffix or userinfo trick, another port.`,
  { forms, origins },
  forms.length + origins.length,
);
