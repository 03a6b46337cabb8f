// JSON forms: compact (the encoded request) and canonical (signed documents: keys sorted by code
// point at every depth, no white space, and `<`, `>`, `&`, U+2028, U+2029 escaped as the deployed
// system's encoder does, so signatures match byte for byte).
/**
 * Orders two strings by Unicode code point, the order of their UTF-8 bytes (the deployed
 * system's Go code sorts keys by bytes). JavaScript's `<` compares UTF-16 code units, which puts
 * a key outside the BMP (a surrogate pair, 0xD800..0xDFFF) before one at U+E000..U+FFFF; moving
 * the surrogates above that range at the first difference restores code-point order.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

function rank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

export function compactJson(value: unknown): string {
  return JSON.stringify(value);
}

const ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

function canonicalString(text: string): string {
  return JSON.stringify(text).replace(/[<>&\u2028\u2029]/g, (c) => ESCAPES[c] ?? c);
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'string') return canonicalString(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => compareCodePoints(a, b));
    return `{${entries.map(([k, v]) => `${canonicalString(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new TypeError(`canonicalJson: unsupported value of type ${typeof value}`);
}
