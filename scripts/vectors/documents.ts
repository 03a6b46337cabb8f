// npm run vectors: Identity documents (project-defined, spec/signing.yaml identity-document): documents.json.

import * as ed from '@noble/ed25519';
import { signingSpec } from '../../schemas/ts/signing.ts';
import { signEd25519 } from '../../protocol/common/ed25519.ts';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { documentCanonical, verifyDocument, keyValidAt, previousKeys } from '../../protocol/common/document.ts';
import { parseKey } from '../../protocol/common/keys.ts';
import { parseRfc3339, formatRfc3339 } from '../../protocol/common/time.ts';
import { check, same, type Json, ruleIds, b64u, utf8 } from './check.ts';
import { type EdKey, identity, NOW_TEXT, ALICE, BOB, alice, aliceKey, bobKey, carolKey, alicePrevious, GRACE_END } from './fixtures.ts';
import { emit } from './emit.ts';


export const ESC: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
/** Canonical JSON written independently of protocol/common/json.ts: known fields, empty optionals dropped, keys sorted, escapes. */
export function independentCanonical(doc: Json): string {
  const spec = signingSpec.strings['identity-document'];
  const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
  const sortDeep = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sortDeep)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sortDeep((v as Json)[k])]),
          )
        : v;
  const known: Json = {};
  for (const f of spec.fields) if ((spec.required_fields as readonly string[]).includes(f) || !empty(doc[f])) known[f] = doc[f];
  return JSON.stringify(sortDeep(known)).replace(/[<>&\u2028\u2029]/g, (c) => ESC[c]!);
}
export function signDocument(fields: Json, key: EdKey): Json {
  return { ...fields, signature: b64u(signEd25519(key.seed, documentCanonical(fields))) };
}
export const aliceDoc: Json = {
  version: 1,
  identity: ALICE,
  public_key: alice.public_key,
  encryption_public_key: alice.encryption_public_key,
  relay: alice.relay,
  capabilities: alice.capabilities,
  updated_at: alice.updated_at,
};
export const bobFixture = identity(BOB);
export const previousEntries = (alice.previous_keys ?? []).map((p) => ({ public_key: p.public_key, valid_until: p.valid_until }));
export const documentCases: Array<{ name: string; document: Json; at: string; valid: boolean; rules?: string[] }> = [
  { name: 'full', document: signDocument(aliceDoc, aliceKey), at: NOW_TEXT, valid: true },
  {
    name: 'minimal',
    document: signDocument({ version: 1, identity: BOB, public_key: bobFixture.public_key, relay: bobFixture.relay, updated_at: bobFixture.updated_at }, bobKey),
    at: NOW_TEXT,
    valid: true,
  },
  { name: 'rotated-previous-key-in-grace', document: signDocument({ ...aliceDoc, previous_keys: previousEntries }, aliceKey), at: formatRfc3339(GRACE_END - 30_000), valid: true },
  { name: 'rotated-previous-key-at-valid-until', document: signDocument({ ...aliceDoc, previous_keys: previousEntries }, aliceKey), at: alicePrevious.valid_until, valid: true },
  { name: 'rotated-previous-key-past-valid-until', document: signDocument({ ...aliceDoc, previous_keys: previousEntries }, aliceKey), at: NOW_TEXT, valid: true },
  { name: 'moved', document: signDocument({ ...aliceDoc, moved_to: 'alice.example.net' }, aliceKey), at: NOW_TEXT, valid: true },
  { name: 'empty-optional-values-left-out', document: signDocument({ ...aliceDoc, encryption_public_key: '', capabilities: [], moved_to: '' }, aliceKey), at: NOW_TEXT, valid: true },
  { name: 'unknown-field-not-signed', document: { ...signDocument(aliceDoc, aliceKey), display_hint: 'added after signing; not a known field' }, at: NOW_TEXT, valid: true },
  { name: 'tampered-relay', document: { ...signDocument(aliceDoc, aliceKey), relay: 'relay.evil.example' }, at: NOW_TEXT, valid: false },
  { name: 'signed-by-another-key', document: signDocument(aliceDoc, bobKey), at: NOW_TEXT, valid: false },
  { name: 'escaped-characters', document: signDocument({ ...aliceDoc, capabilities: ['messaging', 'x-<b>&amp;</b>', 'line\u2028separator'] }, aliceKey), at: NOW_TEXT, valid: true },
];
export const documentVectors = documentCases.map((c) => {
  const doc = c.document;
  const canonical = independentCanonical(doc);
  same(`documents ${c.name} canonical (core)`, documentCanonical(doc), canonical);
  check(!/[<>&\u2028\u2029]/.test(canonical), `documents ${c.name}: unescaped character in the canonical form`);
  check(!canonical.includes('"signature"') && !canonical.includes('display_hint'), `documents ${c.name}: signature or an unknown field is signed`);
  same(`documents ${c.name} verifies (core)`, verifyDocument(doc).ok, c.valid);
  const key = parseKey(doc.public_key)!;
  const signature = decodeBase64Any(String(doc.signature))!;
  same(`documents ${c.name} signature (noble, strict)`, ed.verify(signature, utf8(canonical), key, { zip215: false }), c.valid);
  const atMs = parseRfc3339(c.at)!;
  const keyValid: Record<string, boolean> = { [String(doc.public_key)]: true };
  for (const p of (doc.previous_keys as Array<{ public_key: string; valid_until: string }> | undefined) ?? []) keyValid[p.public_key] = atMs <= parseRfc3339(p.valid_until)!;
  keyValid[carolKey.text] = false;
  for (const [k, expected] of Object.entries(keyValid)) same(`documents ${c.name} key ${k} valid at ${c.at} (core)`, keyValidAt(key, previousKeys(doc), parseKey(k)!, atMs), expected);
  return {
    name: c.name,
    document: doc,
    canonical,
    signature: doc.signature,
    key_valid: keyValid,
    at: c.at,
    valid: c.valid,
    rules: ruleIds('ns.identity-document.format', ...('previous_keys' in doc ? ['ns.identity-document.previous-keys'] : [])),
  };
});
emit(
  'documents',
  'documents',
  'Signed identity documents (project-defined; spec/signing.yaml identity-document): `canonical` is what the signature covers (known fields only, empty optional values left out, `signature` and unknown fields never, keys sorted by code point at every depth, no white space, `<`, `>`, `&`, U+2028 and U+2029 escaped as \\u00XX). `valid` says whether `document.signature` verifies under `document.public_key` over the canonical form of the document as given (false when a field was changed after signing). `key_valid` says, for each key, whether it may verify for this identity at the instant `at`: the current key always, a `previous_keys` entry while `at` is not after its `valid_until`, any other key never.',
  { vectors: documentVectors },
  documentVectors.length,
);
