// A service ID's syntax broken on the wire (wire.ts) as an implementer ships it (issue 25: "Each
// normalization in its variant forms, and near-misses").
import { domainToASCII } from 'node:url';
import { editRequest, type WireVariant } from './kit.ts';

export const RELAY_NAMES_WIRE: Record<string, WireVariant> = {
  // An internationalized label is taken "only in xn-- form": this relay converts a Unicode name to
  // its punycode instead of refusing it.
  'names-punycoded': {
    rule: 'ra.names.valid',
    what: 'a challenge for a name with a Unicode label is issued for its xn-- form instead of refused',
    wire: editRequest(
      (req, url) => req.method === 'GET' && url.pathname === '/auth/challenge' && /[^\x00-\x7f]/.test(url.searchParams.get('identity') ?? ''),
      (req, url) => {
        const moved = new URL(url);
        moved.searchParams.set('identity', domainToASCII(url.searchParams.get('identity')!) || url.searchParams.get('identity')!);
        return new Request(moved, { method: 'GET', headers: req.headers });
      },
    ),
  },
};
