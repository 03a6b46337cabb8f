// npm run vectors: ID input (document 2, Identifier forms): id-input.json.

import { normalizeIdInput } from '../../protocol/bridge/id-input.ts';
import { same, type Json, ruleIds } from './check.ts';
import { ALICE } from './fixtures.ts';
import { emit } from './emit.ts';


export const idCases: Array<{ name: string; input: string; allowHttp?: boolean; id: string | null; rules: string[] }> = [
  { name: 'uppercase', input: 'Alice.Example.COM', id: ALICE, rules: ['ob.id-input.case.uppercase', 'ob.id-input.lowercase'] },
  { name: 'trailing-dot', input: 'alice.example.com.', id: ALICE, rules: ['ob.id-input.case.trailing-dot', 'ob.id-input.lowercase'] },
  { name: 'leading-at', input: '@alice.example.com', id: ALICE, rules: ['ob.id-input.case.leading-at', 'ob.id-input.trim'] },
  { name: 'white-space', input: ' \talice.example.com  ', id: ALICE, rules: ['ob.id-input.trim'] },
  { name: 'https-url', input: 'https://alice.example.com', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.url'] },
  { name: 'https-url-trailing-slash', input: 'https://alice.example.com/', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.url'] },
  { name: 'https-url-upper-case', input: 'HTTPS://Alice.Example.com/', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.case.uppercase'] },
  { name: 'https-url-trailing-dot', input: 'https://alice.example.com./', id: ALICE, rules: ['ob.id-input.case.https-url', 'ob.id-input.case.trailing-dot'] },
  { name: 'url-with-path', input: 'https://alice.example.com/blog', id: null, rules: ['ob.id-input.case.url-path', 'ob.id-input.url'] },
  { name: 'url-with-port', input: 'https://alice.example.com:8443/', id: null, rules: ['ob.id-input.case.url-port', 'ob.id-input.url'] },
  { name: 'url-with-default-port', input: 'https://alice.example.com:443/', id: null, rules: ['ob.id-input.case.url-port', 'ob.id-input.url'] },
  { name: 'url-with-query', input: 'https://alice.example.com/?x=1', id: null, rules: ['ob.id-input.url'] },
  { name: 'url-with-empty-query', input: 'https://alice.example.com/?', id: null, rules: ['ob.id-input.url'] },
  { name: 'url-with-fragment', input: 'https://alice.example.com/#me', id: null, rules: ['ob.id-input.url'] },
  { name: 'url-with-userinfo', input: 'https://bob@alice.example.com/', id: null, rules: ['ob.id-input.url'] },
  { name: 'http-url', input: 'http://alice.example.com/', id: null, rules: ['ob.id-input.case.http-url', 'ob.id-input.url'] },
  { name: 'http-url-development-flag', input: 'http://alice.example.com/', allowHttp: true, id: ALICE, rules: ['ob.id-input.case.http-url', 'ob.id-input.url'] },
  { name: 'ftp-url-development-flag', input: 'ftp://alice.example.com/', allowHttp: true, id: null, rules: ['ob.id-input.url'] },
  { name: 'single-label', input: 'alice', id: null, rules: ['ob.id-input.case.single-label', 'ob.id-input.valid-name'] },
  { name: 'empty', input: '', id: null, rules: ['ob.id-input.trim'] },
  { name: 'only-at', input: '@', id: null, rules: ['ob.id-input.trim'] },
  { name: 'two-leading-ats', input: '@@alice.example.com', id: null, rules: ['ob.id-input.trim', 'ob.id-input.valid-name'] },
  { name: 'two-trailing-dots', input: 'alice.example.com..', id: null, rules: ['ob.id-input.lowercase', 'ob.id-input.valid-name'] },
  { name: 'name-with-path', input: 'alice.example.com/blog', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'at-inside', input: 'alice@example.com', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'non-ascii-letter', input: '\u0430lice.example.com', id: null, rules: ['ob.id-input.case.non-ascii', 'ob.id-input.valid-name'] },
  { name: 'xn-label', input: 'xn--80ak6aa92e.example', id: 'xn--80ak6aa92e.example', rules: ['ob.id-input.case.xn-label', 'ob.id-input.valid-name'] },
  { name: 'ip-address', input: '192.168.0.1', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'ip-address-url', input: 'https://192.168.0.1/', id: null, rules: ['ob.id-input.valid-name'] },
  { name: 'www-name', input: 'www.example.com', id: null, rules: ['ob.id-input.no-alias'] },
  { name: 'www-url', input: 'https://www.example.com/', id: null, rules: ['ob.id-input.no-alias'] },
  { name: 'reserved-label-is-still-an-id', input: 'support.example.com', id: 'support.example.com', rules: ['ob.id-input.valid-name'] },
];
export const idVectors = idCases.map((c) => {
  const r = normalizeIdInput(c.input, c.allowHttp ? { allowHttp: true } : {});
  same(`id-input ${c.name} (core)`, r.ok ? r.id : null, c.id);
  const v: Json = { name: c.name, input: c.input };
  if (c.allowHttp) v.allow_http = true;
  if (c.id !== null) {
    const projections = { id: c.id, profile_url: `https://${c.id}/`, did: `did:web:${c.id}` };
    same(`id-input ${c.name} projections (core)`, r.ok ? { id: r.id, profile_url: r.profileUrl, did: r.did } : null, projections);
    Object.assign(v, projections);
  }
  v.valid = c.id !== null;
  v.rules = ruleIds('ob.id-input.order', ...c.rules, ...(c.id !== null ? ['ob.id-input.projections'] : []));
  return v;
});
emit(
  'id-input',
  'id-input',
  'Normalization of a typed service ID (document 2, Identifier forms, steps 1 to 5 and every listed case): a valid input yields the canonical ID and its projections `https://<id>/` and `did:web:<id>`; `allow_http` sets the development flag. ID input does not apply the reserved-label list (that is a hosting rule, names.json).',
  { vectors: idVectors },
  idVectors.length,
);
