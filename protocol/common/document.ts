// The signed identity document (ns.identity-document.format, ns.identity-document.previous-keys):
// canonical form, signature check and which key is valid at a given time.
import { signingSpec } from '../../schemas/ts/signing.ts';
import { canonicalJson } from './json.ts';
import { decodeBase64Any, encodeBase64url } from './base64.ts';
import { parseKey } from './keys.ts';
import { parseRfc3339 } from './time.ts';
import { signEd25519, verifyEd25519 } from './ed25519.ts';

const spec = signingSpec.strings['identity-document'];
const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

/** The signed bytes: known fields only, empty optional values left out, keys sorted. */
export function documentCanonical(doc: Readonly<Record<string, unknown>>): string {
  const out: Record<string, unknown> = {};
  for (const field of spec.fields) {
    let value = doc[field];
    if (field === 'previous_keys' && Array.isArray(value)) {
      value = value.map((k: Record<string, unknown>) => (empty(k?.valid_until) ? { public_key: k?.public_key } : { public_key: k?.public_key, valid_until: k.valid_until }));
    }
    if ((spec.required_fields as readonly string[]).includes(field) || !empty(value)) out[field] = value;
  }
  return canonicalJson(out);
}

/**
 * The document with its `signature`: the Ed25519 signature by `seed` (the document's current
 * key) over documentCanonical, base64url without padding. Any `signature` in `fields` is replaced.
 */
export function signDocument<T extends Readonly<Record<string, unknown>>>(fields: T, seed: Uint8Array): Omit<T, 'signature'> & { signature: string } {
  const { signature: _old, ...rest } = fields as Record<string, unknown>;
  void _old;
  return { ...(rest as Omit<T, 'signature'>), signature: encodeBase64url(signEd25519(seed, documentCanonical(rest))) };
}

export type DocumentCheck = { ok: true } | { ok: false; reason: string };

/** Version 1, required fields present, and a valid signature by the document's own key. */
export function verifyDocument(doc: Readonly<Record<string, unknown>>): DocumentCheck {
  if (doc.version !== 1) return { ok: false, reason: 'version must be 1' };
  for (const f of [...spec.required_fields, 'signature']) {
    if (f !== 'version' && (typeof doc[f] !== 'string' || doc[f] === '')) return { ok: false, reason: `${f} is required` };
  }
  const key = parseKey(doc.public_key, 'signing');
  if (!key) return { ok: false, reason: 'public_key does not parse' };
  const signature = decodeBase64Any(doc.signature as string);
  if (!signature) return { ok: false, reason: 'signature is not base64' };
  return verifyEd25519(key, documentCanonical(doc), signature) ? { ok: true } : { ok: false, reason: 'signature does not verify' };
}

export interface PreviousKey {
  publicKey: Uint8Array;
  validUntil?: number;
}

/** The current key, or a previous key whose valid_until is not before `at` (inclusive). */
export function keyValidAt(current: Uint8Array, previous: readonly PreviousKey[], key: Uint8Array, at: number): boolean {
  if (current === key || Buffer.compare(current, key) === 0) return true;
  const entry = previous.find((p) => Buffer.compare(p.publicKey, key) === 0);
  return entry?.validUntil !== undefined && at <= entry.validUntil;
}

export function previousKeys(doc: Readonly<Record<string, unknown>>): PreviousKey[] {
  const list = Array.isArray(doc.previous_keys) ? doc.previous_keys : [];
  return list.flatMap((k: Record<string, unknown>) => {
    const publicKey = parseKey(k?.public_key, 'signing');
    if (!publicKey) return [];
    const validUntil = parseRfc3339(k.valid_until);
    return [validUntil === undefined ? { publicKey } : { publicKey, validUntil }];
  });
}
