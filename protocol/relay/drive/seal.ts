// Drive seals (ra.drive.seal): the message seal construction (protocol/relay/seal.ts) under the
// domains of spec/drive.yaml `seals`, the context bound into the AAD. Drive domains require a
// context; the message domain takes none. Payloads travel as strict base64url strings.
import { driveSpec } from '../../../schemas/ts/drive.ts';
import type { IdentifierName } from '../../../schemas/ts/profile.ts';
import { fillTemplate, type Profile } from '../../common/profile.ts';
import { decodeBase64Any, encodeBase64url } from '../../common/base64.ts';
import { openWith, sealWith, type FixedSeal } from '../seal.ts';

export type SealDomain = keyof typeof driveSpec.seals.domains;
export interface SealedPayload {
  ciphertext: string;
  ephemeral_public_key: string;
  nonce: string;
}

/** The domain string of a seal kind under this profile. */
export function sealDomain(profile: Profile, kind: SealDomain): string {
  const spec = driveSpec.seals.domains[kind] as { domain?: string; identifier?: IdentifierName };
  return spec.domain !== undefined ? fillTemplate(spec.domain, profile.name) : profile.ids[spec.identifier!];
}

/** The seal kind whose domain is `domain` under this profile, if any. */
export function sealKindOf(profile: Profile, domain: string): SealDomain | undefined {
  return (Object.keys(driveSpec.seals.domains) as SealDomain[]).find((kind) => sealDomain(profile, kind) === domain);
}

function checkedDomain(profile: Profile, kind: SealDomain, context: Uint8Array): string {
  const required = driveSpec.seals.domains[kind].context === 'required';
  if (required !== context.length > 0) throw new TypeError(`the ${kind} seal ${required ? 'requires' : 'takes no'} context`);
  return sealDomain(profile, kind);
}

export function sealTo(profile: Profile, kind: SealDomain, recipient: Uint8Array, plaintext: Uint8Array, context: Uint8Array, fixed?: FixedSeal): SealedPayload {
  const sealed = sealWith(checkedDomain(profile, kind, context), recipient, plaintext, context, fixed);
  return { ciphertext: encodeBase64url(sealed.ciphertext), ephemeral_public_key: encodeBase64url(sealed.ephemeralPublicKey), nonce: encodeBase64url(sealed.nonce) };
}

/** The plaintext, or undefined when the payload does not open under this key, kind and context. */
export function openSeal(profile: Profile, kind: SealDomain, recipientPrivate: Uint8Array, payload: SealedPayload, context: Uint8Array): Uint8Array | undefined {
  if ((driveSpec.seals.domains[kind].context === 'required') !== context.length > 0) return undefined;
  const ephemeralPublicKey = decodeBase64Any(String(payload.ephemeral_public_key));
  const nonce = decodeBase64Any(String(payload.nonce));
  const ciphertext = decodeBase64Any(String(payload.ciphertext));
  if (!ephemeralPublicKey || !nonce || !ciphertext) return undefined;
  return openWith(sealDomain(profile, kind), recipientPrivate, { ephemeralPublicKey, nonce, ciphertext }, context);
}
