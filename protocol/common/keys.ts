// Key text forms: `ed25519:<b64>` / `x25519:<b64>` or bare base64 of any variant, 32 bytes.
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { decodeBase64Any, encodeBase64url } from './base64.ts';

export type KeyKind = 'signing' | 'encryption';

const PREFIX: Record<KeyKind, string> = {
  signing: vocabulary.key_prefixes.signing,
  encryption: vocabulary.key_prefixes.encryption,
};

export function parseKey(text: unknown, kind: KeyKind = 'signing'): Uint8Array | undefined {
  if (typeof text !== 'string') return undefined;
  let body = text.trim();
  if (body.startsWith(PREFIX[kind])) body = body.slice(PREFIX[kind].length);
  const bytes = decodeBase64Any(body);
  return bytes?.length === 32 ? bytes : undefined;
}

export function formatKey(bytes: Uint8Array, kind: KeyKind = 'signing'): string {
  return PREFIX[kind] + encodeBase64url(bytes);
}
