// npm run vectors: The encoded request (document 1, Encoded form): requests.json.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { limits } from '../../schemas/ts/limits.ts';
import { encodeObject, decodeObject } from '../../protocol/common/codec.ts';
import { compactJson } from '../../protocol/common/json.ts';
import { makeAjv } from '../../protocol/common/schema.ts';
import { root } from '../lib/outputs.ts';
import { check, same, type Json, ruleIds, b64u, utf8, derived } from './check.ts';
import { NAME, AUTH, ORIGIN, at } from './fixtures.ts';
import { emit } from './emit.ts';
import { STATEMENT } from './signin.ts';


export const ajv = makeAjv();
export const requestSchema = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/json/objects/request.schema.json'), 'utf8')) as object);
export const baseRequest = (name: string): Json => ({
  [AUTH]: '1',
  request_id: `req-${name}`,
  audience: ORIGIN,
  nonce: b64u(derived(`${NAME}-conformance/request-nonce/${name}`, limits.nonce_entropy_min_bytes)),
  issued_at: at(0),
  expires_at: at(limits.window_max_seconds),
  action: 'signin',
});
export const requestCases: Array<{ name: string; request: Json }> = [
  { name: 'minimal', request: baseRequest('minimal') },
  { name: 'full', request: { ...baseRequest('full'), domain: 'rp.example.com', statement: STATEMENT, response_uri: `${ORIGIN}/${NAME}/response`, scopes: ['messages:send', 'profile:read'] } },
  { name: 'login-only-empty-scopes', request: { ...baseRequest('login-only'), action: 'signup', scopes: [] } },
  { name: 'unicode-statement', request: { ...baseRequest('unicode'), statement: 'Se connecter \u00e0 l\u2019exemple \u2014 \u4f8b \ud83d\udd11?>' } },
];
export const padded = (s: string) => s + '='.repeat((4 - (s.length % 4)) % 4);
export const requestVectors = requestCases.map((c) => {
  check(requestSchema(c.request), `requests ${c.name}: not a valid request object: ${ajv.errorsText(requestSchema.errors)}`);
  const json = compactJson(c.request);
  const encoded = Buffer.from(json, 'utf8').toString('base64url');
  same(`requests ${c.name} encoded (core)`, encodeObject(c.request), encoded);
  const forms = { raw_json: json, padded_base64url: padded(encoded), standard_base64: Buffer.from(json, 'utf8').toString('base64') };
  for (const [form, textForm] of Object.entries({ encoded, ...forms })) {
    const decoded = decodeObject(textForm);
    same(`requests ${c.name} decoded from ${form} (core)`, decoded.ok ? decoded.value : decoded.reason, c.request);
  }
  return { name: c.name, request: c.request, encoded, forms, rules: ruleIds('ns.encoding.compact', 'ns.encoding.decode') };
});
check(
  requestVectors.some((v) => /[+/]/.test(v.forms.standard_base64)),
  'requests: no vector where standard base64 differs from base64url',
);
check(
  requestVectors.some((v) => v.forms.padded_base64url !== v.encoded),
  'requests: no vector that needs padding',
);
export const DECODE_REASON: Record<string, string> = { 'neither JSON nor base64': 'not-base64', 'decoded bytes are not UTF-8': 'not-utf8', 'not valid JSON': 'not-json', 'not a JSON object': 'not-object' };
export const invalidRequests: Array<{ name: string; input: string; reason: string }> = [
  { name: 'not-base64', input: '%%% not base64 %%%', reason: 'not-base64' },
  { name: 'mixed-base64-alphabets', input: `${requestVectors[0]!.encoded.slice(0, 8)}-+${requestVectors[0]!.encoded.slice(10)}`, reason: 'not-base64' },
  { name: 'not-utf8', input: b64u(new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])), reason: 'not-utf8' },
  { name: 'not-json', input: b64u(utf8('hello, not json')), reason: 'not-json' },
  { name: 'raw-json-truncated', input: compactJson(requestCases[0]!.request).slice(0, 20), reason: 'not-json' },
  { name: 'json-array', input: b64u(utf8(JSON.stringify([AUTH, '1']))), reason: 'not-object' },
  { name: 'json-string', input: b64u(utf8(JSON.stringify('svc'))), reason: 'not-object' },
  { name: 'json-null', input: b64u(utf8('null')), reason: 'not-object' },
];
export const invalid = invalidRequests.map((c) => {
  const decoded = decodeObject(c.input);
  check(!decoded.ok, `requests invalid ${c.name}: the core decodes it`);
  same(`requests invalid ${c.name} reason (core: ${decoded.ok ? '' : decoded.reason})`, decoded.ok ? undefined : DECODE_REASON[decoded.reason], c.reason);
  return { name: c.name, input: c.input, reason: c.reason, rules: ruleIds('ns.encoding.decode') };
});
emit(
  'requests',
  'requests',
  'The encoded form of a request (document 1, Encoded form): `encoded` is the compact JSON of `request` (keys in the order given) in base64url without padding; a decoder also accepts each of `forms` (`raw_json`, `padded_base64url`, `standard_base64`) and must get back exactly `request`. `invalid` inputs must be refused; `reason` says why: not-base64 (neither JSON nor any single base64 variant), not-utf8, not-json, not-object (valid JSON that is not an object).',
  { vectors: requestVectors, invalid },
  requestVectors.length + invalid.length,
);
