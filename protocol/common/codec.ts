// The encoded form (ns.encoding.compact, ns.encoding.decode): compact JSON in base64url without
// padding; decoders also accept raw JSON and padded (or standard) base64.
import { compactJson } from './json.ts';
import { decodeBase64Any, encodeBase64url, utf8 } from './base64.ts';

export function encodeObject(value: object): string {
  return encodeBase64url(utf8(compactJson(value)));
}

export type Decoded = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

export function decodeObject(text: string): Decoded {
  const trimmed = text.trim();
  let json = trimmed;
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) {
    const bytes = decodeBase64Any(trimmed);
    if (!bytes) return { ok: false, reason: 'neither JSON nor base64' };
    try {
      json = decoder.decode(bytes);
    } catch {
      return { ok: false, reason: 'decoded bytes are not UTF-8' };
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'not a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}
