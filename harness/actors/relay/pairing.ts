// Pairing v2 (document 3, Pairing) as the two devices do it: the new device commits to a fresh
// X25519 key, offers, reveals once the approver's nonce is in, and opens what the approver sealed
// to that key (message-seal-v1); both derive the same six digits (pairingSas) for the user to
// compare. The relay only carries the opaque `sealed` string. Shared by the relay suite and the CLI.
import { randomBytes } from 'node:crypto';
import type { Profile } from '../../../protocol/common/profile.ts';
import { pairingCommitment, pairingSas } from '../../../protocol/common/canonical.ts';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import { openMessage, sealMessage, x25519PublicKey } from '../../../protocol/relay/seal.ts';
import type { HttpResponse } from '../http.ts';
import type { RelayClient } from './index.ts';

const b64 = (n = 32) => randomBytes(n).toString('base64url');

/** The new device's secret side of an offer: the key it committed to, and the key's private half. */
export interface DeviceKey {
  key: { ephemeral_public_key: string; commit_nonce: string };
  commitment: string;
  secret: Uint8Array;
}

export function newDeviceKey(profile: Profile): DeviceKey {
  const secret = new Uint8Array(randomBytes(32));
  const key = { ephemeral_public_key: encodeBase64url(x25519PublicKey(secret)), commit_nonce: b64() };
  return { key, commitment: pairingCommitment(profile, key), secret };
}

/** An offer as the relay answered it: the code and bearer claim token when it was 201. */
export interface Offer extends DeviceKey {
  answer: HttpResponse;
  code?: string;
  token?: string;
}

export async function offer(client: RelayClient, identity: string, label: string): Promise<Offer> {
  const device = newDeviceKey(client.profile);
  const answer = await client.enrollOffer(identity, { commitment: device.commitment, label });
  let b: { rendezvous_id?: unknown; claim_token?: unknown } = {};
  try {
    b = answer.json() as typeof b;
  } catch {
    // no JSON: the caller judges the answer
  }
  return {
    ...device,
    answer,
    ...(answer.status === 201 && typeof b.rendezvous_id === 'string' ? { code: b.rendezvous_id } : {}),
    ...(answer.status === 201 && typeof b.claim_token === 'string' ? { token: b.claim_token } : {}),
  };
}

export const approverNonce = (): string => b64();

/** The six digits both sides show (document 3: the relay computes none). */
export const sixDigits = (profile: Profile, device: Pick<DeviceKey, 'key' | 'commitment'>, approver: string): string =>
  pairingSas(profile, { commitment: device.commitment, ...device.key, approver_nonce: approver });

/** `plaintext` sealed to the revealed key with message-seal-v1, as the opaque `sealed` string (base64url JSON). */
export function sealFor(profile: Profile, devicePublic: string, plaintext: Uint8Array): string {
  const x = sealMessage(profile, new Uint8Array(Buffer.from(devicePublic, 'base64url')), plaintext);
  const fields = { ephemeral_public_key: encodeBase64url(x.ephemeralPublicKey), nonce: encodeBase64url(x.nonce), ciphertext: encodeBase64url(x.ciphertext) };
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

export function openSealed(profile: Profile, secret: Uint8Array, sealed: string): Uint8Array | undefined {
  try {
    const f = JSON.parse(Buffer.from(sealed, 'base64url').toString('utf8')) as Record<string, string>;
    const raw = (k: string) => new Uint8Array(Buffer.from(f[k] ?? '', 'base64url'));
    return openMessage(profile, secret, { ephemeralPublicKey: raw('ephemeral_public_key'), nonce: raw('nonce'), ciphertext: raw('ciphertext') });
  } catch {
    return undefined;
  }
}
