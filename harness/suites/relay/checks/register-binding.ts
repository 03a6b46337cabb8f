// What a registration's admin envelope is bound to (spec/facets/relay-owner.yaml,
// ra.identities.signature, binding): "always with an identity-signed envelope so a DNS-token
// holder cannot register a key it does not control". Each part swapped alone for another valid
// one: the key that signs (another identity's), the identity the lines name, the public key they
// name. Each is refused 401 and registers nothing; the envelope as made then registers.
import type { Check } from '../../../run/model.ts';
import { adminEnvelope, registration, signingKey, type RelayIdentity } from '../../../actors/relay/index.ts';
import { relayCheck } from '../check.ts';
import { said, inviteOf, type RelayTarget } from '../driver.ts';

const PARTS = ['key', 'identity', 'public-key'] as const;

export function registerBinding(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/register-binding',
    title:
      'a registration whose envelope is signed by another key, or names another identity or another public key in its signed lines, is refused 401 and registers nothing; the right one then registers',
    rules: ['ra.identities.signature'],
    context: ['ra.identities.hosted', 'ra.signing.identity-registration'],
    cells: PARTS.map((value) => ({ rule: 'ra.identities.signature' as const, facet: 'binding', value, operation: 'register' })),
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      const [id, other] = await Promise.all([s.identity('relay', { register: false }), s.identity('relay', { register: false })]);
      const invite = inviteOf(t);
      const right = registration(s.profile, id, facts.relayAddress, invite);
      const lines = (who: RelayIdentity, key: string) => ({ identity: who.identity, public_key: key, encryption_public_key: right.encryption_public_key, relay_address: facts.relayAddress });
      const swapped: Record<(typeof PARTS)[number], Record<string, string>> = {
        key: adminEnvelope(s.profile, 'identity-registration', lines(id, signingKey(id)), other.seed),
        identity: adminEnvelope(s.profile, 'identity-registration', lines(other, signingKey(id)), id.seed),
        'public-key': adminEnvelope(s.profile, 'identity-registration', lines(id, signingKey(other)), id.seed),
      };
      for (const part of PARTS) {
        const r = await s.relay.post('/identities', { ...right, ...swapped[part] });
        e.that(r.status === 401, `a registration with its envelope's ${part} swapped answered ${said(r)}, not 401`);
      }
      const looked = await s.relay.get(`/identities/${encodeURIComponent(id.identity)}`);
      e.that(looked.status === 404, `after the refused registrations the identity answers ${said(looked)}, not 404`);
      const ok = await s.relay.post('/identities', right);
      e.that(ok.status === 201, `the registration as made answered ${said(ok)}, not 201`);
    },
  });
}
