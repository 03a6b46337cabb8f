// ID input normalization (document 2, Identifier forms, steps 1-5) and the two projections.
import { splitUrl } from '../common/url.ts';
import { validServiceName } from '../common/names.ts';

export type IdInputResult = { ok: true; id: string; profileUrl: string; did: string } | { ok: false; rule: string; reason: string };

const fail = (rule: string, reason: string): IdInputResult => ({ ok: false, rule, reason });

export function normalizeIdInput(input: string, options: { allowHttp?: boolean } = {}): IdInputResult {
  // Step 1: trim, strip one leading `@`.
  let value = input.trim();
  if (value.startsWith('@')) value = value.slice(1);
  if (value === '') return fail('ob.id-input.trim', 'empty input');
  // Step 2: a URL yields its host, under strict conditions.
  if (value.includes('://')) {
    const url = splitUrl(value);
    if (!url) return fail('ob.id-input.url', 'not a URL');
    if (url.scheme !== 'https' && !(url.scheme === 'http' && options.allowHttp)) return fail('ob.id-input.url', `scheme ${url.scheme} not allowed`);
    if (url.userinfo !== undefined) return fail('ob.id-input.url', 'userinfo not allowed');
    if (url.port !== undefined) return fail('ob.id-input.url', 'port not allowed');
    if (url.query !== undefined) return fail('ob.id-input.url', 'query not allowed');
    if (url.fragment !== undefined) return fail('ob.id-input.url', 'fragment not allowed');
    if (url.path !== '' && url.path !== '/') return fail('ob.id-input.url', 'path not allowed');
    value = url.host;
  } else if (/[/?#:@\s]/.test(value)) {
    return fail('ob.id-input.url', 'not a name or URL');
  }
  // Step 3: lower case, one trailing dot removed.
  value = value.toLowerCase();
  if (value.endsWith('.')) value = value.slice(0, -1);
  // Step 4: a valid service name (ASCII; IDNs only as xn--; no conversion is done).
  const id = validServiceName(value);
  if (id === undefined || id !== value) return fail('ob.id-input.valid-name', 'not a valid service name');
  // Step 5: no alias is inferred; a www. name is a website address.
  if (id.startsWith('www.')) return fail('ob.id-input.no-alias', 'a www. name is a website, not an ID');
  return { ok: true, id, profileUrl: `https://${id}/`, did: `did:web:${id}` };
}
