// Requests by reference (ns.reference.*): which inputs carry a reference link, and the codes.
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import type { Profile } from '../common/profile.ts';
import { splitUrl, queryParams } from '../common/url.ts';

function httpLink(value: string): string | undefined {
  const v = value.trim();
  const p = splitUrl(v);
  if (!p || (p.scheme !== 'https' && p.scheme !== 'http') || p.host === '') return undefined;
  return p.scheme + v.slice(p.scheme.length);
}

/**
 * The reference link an input carries (ns.reference.forms): the link itself,
 * `svc://auth?request_uri=<link>`, or a web-signer handoff `?auth=<link>`. An inline request
 * (`?request=`, `svc://auth?request=`, a bare encoded request) is not a reference.
 */
export function referenceFromInput(profile: Profile, input: string): string | undefined {
  const trimmed = input.trim();
  const p = splitUrl(trimmed);
  if (!p) return undefined;
  const q = queryParams(p.query);
  if (p.scheme === profile.ids.url_scheme) {
    const uri = q.get('request_uri');
    return uri ? httpLink(uri) : undefined;
  }
  if (p.scheme !== 'https' && p.scheme !== 'http') return undefined;
  if (q.get('request')) return undefined;
  const auth = q.get('auth');
  if (auth) return httpLink(auth);
  const uri = q.get('request_uri');
  if (uri) return httpLink(uri);
  return httpLink(trimmed);
}

const { alphabet, length, substitutions, ignored } = vocabulary.short_code;
const IGNORED = new Set(ignored);
const ALPHABET = new Set(alphabet);
const SUBSTITUTE: Readonly<Record<string, string>> = substitutions;

/** ra.pairing.short-code, ns.reference.code: an 8-character Crockford base32 code typed loosely. */
export function normalizeShortCode(input: string): string | undefined {
  let out = '';
  for (const ch of input) {
    if (IGNORED.has(ch)) continue;
    const upper = ch >= 'a' && ch <= 'z' ? ch.toUpperCase() : ch;
    const mapped = SUBSTITUTE[upper] ?? upper;
    if (!ALPHABET.has(mapped)) return undefined;
    out += mapped;
  }
  return out.length === length ? out : undefined;
}

/** A fresh code from `random` bytes (one byte per character; 256 is a multiple of 32, no bias). */
export function shortCodeFrom(random: Uint8Array): string {
  if (random.length < length) throw new RangeError(`need ${length} random bytes`);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[random[i]! % 32];
  return out;
}
