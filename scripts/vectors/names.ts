// npm run vectors: Service names (document 3, Identity; GET /hosted/availability): names.json.

import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { validServiceName, claimable, hostedReason, dirName, type HostedReason } from '../../protocol/common/names.ts';
import { same, type Json, ruleIds } from './check.ts';
import { profile, NAME, ALICE } from './fixtures.ts';
import { emit } from './emit.ts';


export const label63 = 'a'.repeat(63);
export const nameCases: Array<{ identity: string; valid: boolean; claimable: boolean; hosted: HostedReason | null }> = [
  { identity: ALICE, valid: true, claimable: true, hosted: 'available' },
  { identity: 'a-b.example.org', valid: true, claimable: true, hosted: 'available' },
  { identity: 'bob.co.uk', valid: true, claimable: true, hosted: 'available' },
  { identity: 'UPPER.Example.ORG', valid: true, claimable: true, hosted: 'available' },
  { identity: 'ab.example.com', valid: true, claimable: true, hosted: 'too_short' },
  { identity: 'a--b.example.org', valid: true, claimable: true, hosted: 'hyphen' },
  { identity: `${label63}.example.org`, valid: true, claimable: true, hosted: 'available' },
  { identity: `${NAME}.example.org`, valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'poweur.example.org', valid: true, claimable: true, hosted: 'available' },
  { identity: 'www.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'dav.example.org', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'support.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'verify.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'id.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'oauth.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'indieauth.example.com', valid: true, claimable: false, hosted: 'reserved' },
  { identity: 'xn--80ak6aa92e.example.org', valid: true, claimable: true, hosted: 'punycode' },
  { identity: `${'a'.repeat(64)}.example.org`, valid: false, claimable: false, hosted: null },
  { identity: 'nodots', valid: false, claimable: false, hosted: null },
  { identity: '192.168.0.1', valid: false, claimable: false, hosted: null },
  { identity: '-bad.example.org', valid: false, claimable: false, hosted: null },
  { identity: 'bad-.example.org', valid: false, claimable: false, hosted: null },
  { identity: 'under_score.example.org', valid: false, claimable: false, hosted: null },
  { identity: '', valid: false, claimable: false, hosted: null },
  { identity: '\u0430dmin.example.com', valid: false, claimable: false, hosted: null },
  { identity: '\u0430lice.example.com', valid: false, claimable: false, hosted: null },
];
export const nameVectors = nameCases.map((c) => {
  const label = `names ${JSON.stringify(c.identity)}`;
  same(`${label} valid (core)`, validServiceName(c.identity) !== undefined, c.valid);
  same(`${label} claimable (core)`, claimable(c.identity, profile), c.claimable);
  const reason = hostedReason(c.identity, profile);
  if (c.hosted !== null) same(`${label} hosted reason (core)`, reason, c.hosted);
  const hostedValid = c.hosted === 'available';
  same(`${label} hosted_valid (core)`, reason === 'available', hostedValid);
  const v: Json = { identity: c.identity, valid: c.valid, claimable: c.claimable, hosted_valid: hostedValid };
  if (c.valid) {
    const dir = c.identity.toLowerCase().split('.').join('__');
    same(`${label} dir_name (core)`, dirName(c.identity), dir);
    v.dir_name = dir;
    v.hosted_reason = c.hosted;
  }
  v.rules = ruleIds('ra.names.valid', ...(c.valid ? ['ra.names.reserved', 'ra.names.hosted', 'ra.names.dir-name'] : []));
  return v;
});
emit(
  'names',
  'names',
  `Service names (document 3, Identity; GET /hosted/availability): \`valid\` (an ASCII DNS name of two or more labels), \`claimable\` (its leftmost label is not reserved; the service's own name \`${NAME}\` is reserved), \`hosted_valid\` (acceptable as a handle hosted under a relay's domain, policy min ${vocabulary.hosted_policy.min_len} and max ${vocabulary.hosted_policy.max_len} characters, no block list) and, for valid names, \`dir_name\` (the storage directory, dots as \`__\`) and \`hosted_reason\` (the first failing hosted-handle check, or \`available\`).`,
  { vectors: nameVectors },
  nameVectors.length,
);
