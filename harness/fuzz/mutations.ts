// Single mutations of a request that already gets past its front door: what a hostile client that
// holds a valid key or cookie can send. Each changes one thing; the front door signs what it is
// given, so a mutated body still reaches the operation's own code.
export const MUTATIONS = [
  'valid',
  'drop-field',
  'extra-field',
  'mistyped-field',
  'deep-json',
  'huge-string',
  'lone-surrogate',
  'nul-char',
  'out-of-range-number',
  'invalid-utf8',
  'bad-escape',
  'wrong-content-type',
  'not-json',
  'empty-body',
  'just-over-cap',
  'just-under-cap',
  'malformed-credentials',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** A request before its front door: path parameters, query, a JSON body (or raw bytes) and its type. */
export interface Draft {
  params: Record<string, string>;
  query: Record<string, string>;
  body?: Record<string, unknown>;
  raw?: Uint8Array;
  contentType?: string;
}

/** The depth of the deep-json mutation: far past any sane limit, as attackers send. */
export const DEEP = 5000;
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** Applies `m` to `draft` (a copy); `pick` chooses among the body's keys, `cap` is the body cap when known. */
export function mutate(draft: Draft, m: Mutation, pick: number, cap?: number): Draft {
  const d: Draft = { ...draft, params: { ...draft.params }, query: { ...draft.query }, ...(draft.body ? { body: { ...draft.body } } : {}) };
  const keys = Object.keys(d.body ?? {});
  const key = keys.length > 0 ? keys[pick % keys.length]! : 'x';
  const json = (): string => JSON.stringify(d.body ?? {});
  const splice = (extra: string): Uint8Array => Buffer.from(`${json().slice(0, -1)}${keys.length > 0 ? ',' : ''}"fuzz":${extra}}`);
  switch (m) {
    case 'valid':
      return d;
    case 'drop-field':
      if (d.body) delete d.body[key];
      return d;
    case 'extra-field':
      if (d.body) d.body.fuzz_extra = { nested: [1, 'two', null] };
      return d;
    case 'mistyped-field':
      if (d.body) d.body[key] = [[{ not: 'a string' }], -0.5e-7];
      return d;
    case 'deep-json':
      return { ...d, raw: splice(nested(DEEP)) };
    case 'huge-string':
      return { ...d, raw: splice(JSON.stringify('x'.repeat(Math.min(cap ?? 1 << 20, 1 << 20) - json().length - 20))) };
    case 'lone-surrogate':
      return { ...d, raw: splice('"\\ud800\\udfff\\ud800"') };
    case 'nul-char': {
      // A NUL inside a string and a path parameter: text some databases refuse to store.
      const name = Object.keys(d.params)[pick % Math.max(1, Object.keys(d.params).length)];
      if (name !== undefined) d.params[name] = `${d.params[name]}%00`;
      if (d.body) d.body[key] = `${typeof d.body[key] === 'string' ? (d.body[key] as string) : 'x'}\u0000`;
      return d;
    }
    case 'out-of-range-number':
      // Past any 64-bit integer column.
      if (d.body) d.body[key] = 1e21;
      return d;
    case 'invalid-utf8':
      return { ...d, raw: Buffer.concat([splice('"AAAA"').subarray(0, -6), Buffer.from([0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d])]) };
    case 'bad-escape': {
      const name = Object.keys(d.params)[pick % Math.max(1, Object.keys(d.params).length)];
      if (name !== undefined) d.params[name] = `${d.params[name]}%E0%A4%A`;
      else d.query.fuzz = '%zz';
      return d;
    }
    case 'wrong-content-type':
      return { ...d, contentType: 'text/plain; charset=utf-8' };
    case 'malformed-credentials':
      // The body stays valid: the front door's headers are mangled after it opens (mangleCredentials).
      return d;
    case 'not-json':
      return { ...d, raw: Buffer.from(`${json().slice(0, -1)},`) };
    case 'empty-body':
      return { ...d, raw: new Uint8Array(0) };
    case 'just-over-cap':
    case 'just-under-cap': {
      if (cap === undefined || cap > 4 << 20) return d;
      const size = m === 'just-over-cap' ? cap + 1 : cap - 1;
      const pad = size - json().length - 10;
      return pad > 0 ? { ...d, raw: splice(JSON.stringify('p'.repeat(pad)).padEnd(pad + 2, ' ')) } : d;
    }
  }
}

const b64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');

/** What a credential header may be mangled into: truncated, not base64, no colon, bad escapes, huge, other schemes. */
const MANGLED = [
  '',
  'Basic',
  'Basic !!!not-base64!!!',
  `Basic ${b64('no colon at all')}`,
  `Basic ${b64('%zz:%E0%A4%A')}`,
  `Basic ${b64(':')}`,
  `Basic ${b64('\u00ff\u00fe:\u0000')}`,
  'Bearer',
  `Bearer ${'A'.repeat(4096)}`,
  `Basic ${'A'.repeat(4096)}`,
  'Digest username="x"',
  'x'.repeat(4096),
  '\u00ff\u00fe%00',
];

/**
 * `headers` with one credential header (`authorization`, or one of the `x-svc-` headers a front
 * door signs with, chosen by `pick`) replaced by a malformed value: the holder of valid credentials
 * sending them broken. Headers without credentials come back unchanged.
 */
export function mangleCredentials(headers: Record<string, string>, pick: number): Record<string, string> {
  const names = Object.keys(headers).filter((h) => /^(authorization|x-svc-)/i.test(h));
  if (names.length === 0) return headers;
  return { ...headers, [names[pick % names.length]!]: MANGLED[(pick * 7) % MANGLED.length]! };
}

/** The final path with its (raw, possibly malformed) parameters and query. */
export function pathOf(template: string, d: Draft): string {
  const path = template.replace(/\{([^}]+)\}/g, (_m, name: string) => d.params[name] ?? 'x');
  const q = Object.entries(d.query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${v}`)
    .join('&');
  return q === '' ? path : `${path}?${q}`;
}

/** The body's bytes: raw when a mutation wrote them, else the body as JSON or as a form. */
export function bytesOf(d: Draft, type = 'application/json'): Uint8Array | undefined {
  if (d.raw !== undefined) return d.raw;
  if (d.body === undefined) return undefined;
  if (!type.startsWith('application/x-www-form-urlencoded')) return Buffer.from(JSON.stringify(d.body));
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(d.body)) form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  return Buffer.from(form.toString());
}
