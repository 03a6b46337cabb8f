// Which strings are service IDs (spec/facets/relay-core.yaml, ra.names.valid, normalization): "an
// ASCII DNS name of at least two labels, each 1 to 63 bytes of letters, digits and hyphens with no
// hyphen at either end, at most 253 bytes, not an IP address; internationalized labels only in
// xn-- form". Every form at its edge is taken where the relay reads a service ID before anything
// else (GET /auth/challenge), and every near miss, one rule broken by one character, is refused 400.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { relayCheck } from '../check.ts';
import { said, type RelayTarget } from '../driver.ts';

const label = (n: number) => `t${randomBytes(40).toString('hex')}`.slice(0, n);
/** A name of exactly `bytes` bytes: labels of 63 and a shorter last one before `.org`. */
function nameOf(bytes: number): string {
  const parts: string[] = [];
  let left = bytes - '.org'.length;
  while (left > 64) {
    parts.push(label(63));
    left -= 64;
  }
  parts.push(label(left));
  return `${parts.join('.')}.org`;
}

export const NAME_FORMS = {
  ascii: () => `${label(10)}.example.org`,
  'xn-label': () => `xn--80ak6aa92e.${label(8)}.example.org`,
  'label-63': () => `${label(63)}.example.org`,
  'name-253': () => nameOf(253),
} as const;

const NEAR_MISSES: Record<string, () => string> = {
  'one label': () => label(12),
  'a leading hyphen': () => `-${label(10)}.example.org`,
  'a trailing hyphen': () => `${label(10)}-.example.org`,
  'a label of 64 bytes': () => `${label(64)}.example.org`,
  'a name of 254 bytes': () => nameOf(254),
  'an IPv4 address': () => '192.168.0.1',
  'a Unicode label': () => `${label(6)}é.example.org`,
  'an underscore': () => `${label(6)}_x.example.org`,
  'an empty label': () => `${label(6)}..example.org`,
};

export function namesMatrix(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/names',
    title:
      'GET /auth/challenge takes a service ID in every form at its edge (an xn-- label, a 63-byte label, a 253-byte name) and refuses 400 each near miss (one label, a hyphen at an end, 64 bytes, 254 bytes, an IP, Unicode, an underscore, an empty label)',
    rules: ['ra.names.valid'],
    context: ['ra.auth.challenge'],
    cells: [...Object.keys(NAME_FORMS), 'near-miss'].map((value) => ({ rule: 'ra.names.valid' as const, facet: 'normalization', value, operation: 'challenge' })),
    run: async (s, e) => {
      const ask = (name: string) => s.relay.get(`/auth/challenge?identity=${encodeURIComponent(name)}`);
      for (const [form, make] of Object.entries(NAME_FORMS)) {
        const name = make();
        const r = await ask(name);
        e.that(r.status === 200, `a service ID (${form}, ${name.length} bytes) answered ${said(r)}, not 200`);
      }
      for (const [miss, make] of Object.entries(NEAR_MISSES)) {
        const r = await ask(make());
        e.that(r.status === 400, `a name with ${miss} answered ${said(r)}, not 400`);
      }
    },
  });
}
