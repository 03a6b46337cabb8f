// The identity-registration and identity-export strings across their bound parts (issue 25;
// spec/facets/relay-core.yaml): each signed line swapped alone for another valid value, the
// rest signed as sent, is refused 401 and registers or exports nothing.
import type { Check } from '../../../run/model.ts';
import { adminEnvelope, newNonce, newRelayIdentity, registration, signingKey, type RelayIdentity } from '../../../actors/relay/index.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { formatRfc3339 } from '../../../../protocol/common/time.ts';
import { relayCheck } from '../check.ts';
import { said, inviteOf, type RelayTarget, type Session } from '../driver.ts';

const REGISTRATION_PARTS = ['identity', 'public-key', 'encryption-public-key', 'relay-address', 'issued-at', 'nonce'] as const;
type RegistrationPart = (typeof REGISTRATION_PARTS)[number];

/** The hosted registration of `id`, its identity_signature covering `part` otherwise than the body sends. */
function registrationSwapped(s: Session, id: RelayIdentity, relayAddress: string, invite: Record<string, unknown>, part: RegistrationPart): Record<string, unknown> {
  const body = registration(s.profile, id, relayAddress, invite);
  const issued = Date.parse(String(body.issued_at));
  const signed: Record<string, unknown> = { identity: id.identity, public_key: body.public_key, encryption_public_key: body.encryption_public_key, relay_address: relayAddress };
  if (part === 'identity') signed.identity = `x${id.identity}`;
  const another = newRelayIdentity(id.identity);
  if (part === 'public-key') signed.public_key = signingKey(another);
  if (part === 'encryption-public-key') signed.encryption_public_key = encodeBase64url(another.encryption.publicKey);
  if (part === 'relay-address') signed.relay_address = `other.${relayAddress}`;
  const envelope = adminEnvelope(s.profile, 'identity-registration', signed, id.seed, formatRfc3339(part === 'issued-at' ? issued - 5000 : issued));
  return { ...body, ...envelope, issued_at: body.issued_at, ...(part === 'nonce' ? { nonce: newNonce() } : {}) };
}

function identityRegistrationBindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/binding-identity-registration',
    title:
      'POST /identities whose identity_signature covers another identity, public key, encryption key, relay address, issued_at or nonce than the body sends is refused 401; the same registration signed as sent is then 201 (nothing was registered before)',
    rules: ['ra.signing.identity-registration', 'ra.identities.signature'],
    cells: REGISTRATION_PARTS.map((value) => ({ rule: 'ra.signing.identity-registration' as const, facet: 'binding', value, operation: 'register' })),
    run: async (s, e) => {
      const id = await s.identity('relay', { register: false });
      const { relayAddress } = (await s.facts()).relay!;
      const invite = inviteOf(t);
      for (const part of REGISTRATION_PARTS) {
        const r = await s.relay.post('/identities', registrationSwapped(s, id, relayAddress, invite, part));
        e.that(r.status === 401, `a registration whose signature covers another ${part}: ${said(r)}, not 401`);
      }
      const r = await s.relay.register(id, relayAddress, invite);
      e.that(r.status === 201, `the registration signed as sent, after the refused ones: ${said(r)}, not 201`);
    },
  });
}

const EXPORT_PARTS = ['identity', 'issued-at', 'nonce'] as const;

function identityExportBindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/binding-identity-export',
    title: 'POST /identities/:identity/export whose identity_signature covers another identity, issued_at or nonce than the body sends is refused 401; signed as sent it exports',
    rules: ['ra.signing.identity-export', 'ra.identities.export'],
    cells: EXPORT_PARTS.map((value) => ({ rule: 'ra.signing.identity-export' as const, facet: 'binding', value, operation: 'export' })),
    run: async (s, e) => {
      const [a, other] = await Promise.all([s.identity(), s.identity()]);
      const path = `/identities/${encodeURIComponent(a.identity)}/export`;
      for (const part of EXPORT_PARTS) {
        const issued = Date.now();
        const envelope = adminEnvelope(
          s.profile,
          'identity-export',
          { identity: part === 'identity' ? other.identity : a.identity },
          a.seed,
          formatRfc3339(part === 'issued-at' ? issued - 5000 : issued),
        );
        const r = await s.relay.post(path, { identity: a.identity, ...envelope, issued_at: formatRfc3339(issued), ...(part === 'nonce' ? { nonce: newNonce() } : {}) });
        e.that(r.status === 401, `an export whose signature covers another ${part}: ${said(r)}, not 401`);
      }
      const r = await s.relay.post(path, { identity: a.identity, ...adminEnvelope(s.profile, 'identity-export', { identity: a.identity }, a.seed) });
      e.that(r.status === 200, `the export signed as sent: ${said(r)}, not 200`);
    },
  });
}

export function signingMatrixChecks(t: RelayTarget): Check[] {
  return [identityRegistrationBindingCheck(t), identityExportBindingCheck(t)];
}
