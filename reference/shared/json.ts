// The one JSON parser of the reference servers for what a client sends: strict UTF-8 (a broken
// sequence is refused, never replaced), nesting past json_depth_max refused before anything
// parses it (one linear scan, ./body.ts), then JSON.parse. It never throws: the caller names the
// refusal in its own rule.
import { limits } from '../../schemas/ts/limits.ts';
import { jsonTooDeep } from './body.ts';
import { utf8Text } from './http.ts';

export type ParsedJson = { ok: true; value: unknown } | { ok: false; why: 'utf8' | 'depth' | 'syntax' };

/** `input` (bytes, or text already decoded) as JSON. */
export function parseJson(input: Uint8Array | string): ParsedJson {
  const text = typeof input === 'string' ? input : utf8Text(input);
  if (text === undefined) return { ok: false, why: 'utf8' };
  if (jsonTooDeep(text, limits.json_depth_max)) return { ok: false, why: 'depth' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, why: 'syntax' };
  }
}

/** The value when it is a JSON object (not null, not an array). */
export const asObject = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
