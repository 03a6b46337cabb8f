// Group keyrings (ra.drive.group-keys): the epoch key sealed to each member under the group domain
// with a `member` context, earlier epoch keys sealed to the current key with a `previous` context;
// every opened key must match the public key the keyring signs.
import { driveSpec } from '../../../schemas/ts/drive.ts';
import type { Profile } from '../../common/profile.ts';
import { encodeBase64url } from '../../common/base64.ts';
import { x25519PublicKey } from '../seal.ts';
import { openSeal, type SealedPayload } from './seal.ts';

type Obj = Record<string, unknown>;
export interface EpochKey {
  epoch: number;
  private: Uint8Array;
}

/** Group epoch-key seal contexts (spec/drive.yaml seals.group_contexts). */
export function groupContext(kind: 'member' | 'previous', values: { group: string; epoch: number; recipient?: string; current?: number }): Uint8Array {
  const filled = driveSpec.seals.group_contexts[kind]
    .replace('{group}', values.group.toLowerCase())
    .replace('{epoch}', String(values.epoch))
    .replace('{recipient}', (values.recipient ?? '').toLowerCase())
    .replace('{current}', String(values.current ?? ''));
  return new Uint8Array(Buffer.from(filled, 'utf8'));
}

const matches = (priv: Uint8Array, pub: unknown): boolean => encodeBase64url(x25519PublicKey(priv)) === pub;

/** A member's epoch keys, newest first, or the reason they cannot be opened. */
export function openKeyring(profile: Profile, ring: Obj, member: string, memberPrivate: Uint8Array): { ok: true; keys: EpochKey[] } | { ok: false; reason: string } {
  const group = String(ring.group);
  const epoch = Number(ring.epoch);
  const sealed = (ring.sealed as Record<string, SealedPayload> | undefined)?.[member.toLowerCase()];
  if (!sealed) return { ok: false, reason: `no key sealed to ${member}` };
  const current = openSeal(profile, 'group', memberPrivate, sealed, groupContext('member', { group, epoch, recipient: member }));
  if (!current || !matches(current, ring.public)) return { ok: false, reason: 'the current epoch key does not open or does not match the public key' };
  const keys: EpochKey[] = [{ epoch, private: current }];
  for (const prev of (ring.previous as Obj[] | undefined) ?? []) {
    const key = openSeal(profile, 'group', current, prev.sealed as SealedPayload, groupContext('previous', { group, epoch: Number(prev.epoch), current: epoch }));
    if (!key || !matches(key, prev.public)) return { ok: false, reason: `epoch ${String(prev.epoch)} does not open or does not match its public key` };
    keys.push({ epoch: Number(prev.epoch), private: key });
  }
  return { ok: true, keys };
}
