// npm run vectors: Audience normalization (document 1, Request object `audience`): audience.json.

import { normalizeOrigin } from '../../protocol/common/url.ts';
import { same, ruleIds } from './check.ts';
import { ORIGIN } from './fixtures.ts';
import { emit } from './emit.ts';


export const audienceCases: Array<{ name: string; input: string; origin: string | null; rules?: string[] }> = [
  { name: 'normalized', input: ORIGIN, origin: ORIGIN },
  { name: 'upper-case-host', input: 'https://RP.Example.COM', origin: ORIGIN },
  { name: 'upper-case-scheme', input: 'HTTPS://rp.example.com', origin: ORIGIN },
  { name: 'default-port', input: 'https://rp.example.com:443', origin: ORIGIN },
  { name: 'http-default-port', input: 'http://rp.example.com:80', origin: 'http://rp.example.com', rules: ['ns.request.audience-http-dev'] },
  { name: 'explicit-non-default-port', input: 'https://rp.example.com:8443', origin: 'https://rp.example.com:8443' },
  { name: 'https-on-port-80', input: 'https://rp.example.com:80', origin: 'https://rp.example.com:80' },
  { name: 'trailing-slash', input: 'https://rp.example.com/', origin: ORIGIN },
  { name: 'path', input: 'https://rp.example.com/login', origin: null },
  { name: 'query', input: 'https://rp.example.com?next=/', origin: null },
  { name: 'empty-query', input: 'https://rp.example.com/?', origin: null },
  { name: 'fragment', input: 'https://rp.example.com#top', origin: null },
  { name: 'userinfo', input: 'https://user@rp.example.com', origin: null },
  { name: 'userinfo-with-password', input: 'https://user:secret@rp.example.com', origin: null },
  { name: 'http', input: 'http://localhost:3000', origin: 'http://localhost:3000', rules: ['ns.request.audience-http-dev'] },
  { name: 'ftp', input: 'ftp://rp.example.com', origin: null },
  { name: 'no-scheme', input: 'rp.example.com', origin: null },
  { name: 'no-host', input: 'https://', origin: null },
  { name: 'unicode-host', input: 'https://b\u00fccher.example', origin: null },
  { name: 'empty', input: '', origin: null },
];
export const audienceVectors = audienceCases.map((c) => {
  same(`audience ${c.name} (core)`, normalizeOrigin(c.input) ?? null, c.origin);
  return { name: c.name, input: c.input, origin: c.origin, rules: ruleIds('ns.request.audience', ...(c.rules ?? [])) };
});
emit(
  'audience',
  'audience',
  "Audience normalization (document 1, Request object `audience`; verification rule 2 compares the normalized audience with the verifier's origin): lower-case scheme and host, default port dropped (443 for https, 80 for http), a lone trailing `/` dropped; anything with a path, query (even an empty `?`), fragment or userinfo, a scheme other than http(s), no host or a non-ASCII host has no origin (`origin` null). `http` normalizes here; that it is for development only is a separate policy (ns.request.audience-http-dev).",
  { vectors: audienceVectors },
  audienceVectors.length,
);
