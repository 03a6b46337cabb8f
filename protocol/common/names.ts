// Service names (document 3 Identity; document 2 Identifier forms): validity, the reserved list,
// the hosted-handle policy and the storage directory name.
import { vocabulary } from '../../schemas/ts/vocabulary.ts';
import { fillTemplate, type Profile } from './profile.ts';

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const IPV4ISH = /^\d+\.\d+\.\d+\.\d+$/;

/** ra.names.valid: lower-cased and trimmed, then an ASCII DNS name of two or more labels. */
export function validServiceName(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const name = raw.trim().toLowerCase();
  if (name === '' || name.length > 253 || !/^[\x21-\x7e]+$/.test(name)) return undefined;
  if (name.startsWith('[') || IPV4ISH.test(name) || name.includes(':')) return undefined;
  const labels = name.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return undefined;
  return name;
}

const reservedByProfile = new Map<string, ReadonlySet<string>>();

/** The reserved labels, `{name}` filled in with the service's own name (built once per name). */
export function reservedLabels(profile: Profile): ReadonlySet<string> {
  let set = reservedByProfile.get(profile.name);
  if (!set) {
    set = new Set(vocabulary.reserved_labels.values.map((v) => fillTemplate(v, profile.name)));
    reservedByProfile.set(profile.name, set);
  }
  return set;
}

/** ra.names.reserved: valid, and the leftmost label is not reserved. */
export function claimable(raw: unknown, profile: Profile): boolean {
  const name = validServiceName(raw);
  return name !== undefined && !reservedLabels(profile).has(name.split('.')[0]!);
}

export type HostedReason = 'available' | 'invalid' | 'too_short' | 'too_long' | 'charset' | 'punycode' | 'hyphen' | 'reserved' | 'blocked';

export interface HostedPolicy {
  minLen: number;
  maxLen: number;
  blocked: readonly string[];
}

export const defaultHostedPolicy: HostedPolicy = {
  minLen: vocabulary.hosted_policy.min_len,
  maxLen: vocabulary.hosted_policy.max_len,
  blocked: [],
};

/** ra.names.hosted: the first failing check of the hosted-handle policy, in the spec's order. */
export function hostedReason(raw: unknown, profile: Profile, policy: HostedPolicy = defaultHostedPolicy): HostedReason {
  if (typeof raw !== 'string') return 'invalid';
  const name = raw.trim().toLowerCase();
  if (name === '' || !name.includes('.')) return 'invalid';
  const handle = name.split('.')[0]!;
  if (handle === '') return 'too_short';
  if (!/^[a-z0-9-]+$/.test(handle)) return 'charset';
  if (handle.startsWith('xn--')) return 'punycode';
  if (handle.startsWith('-') || handle.endsWith('-') || handle.includes('--')) return 'hyphen';
  if (reservedLabels(profile).has(handle)) return 'reserved';
  if (handle.length < policy.minLen) return 'too_short';
  if (handle.length > policy.maxLen) return 'too_long';
  if (policy.blocked.some((term) => handle.includes(term))) return 'blocked';
  return validServiceName(name) === undefined ? 'invalid' : 'available';
}

/** ra.names.dir-name: the directory an identity is stored under. */
export function dirName(raw: unknown): string | undefined {
  const name = validServiceName(raw);
  return name === undefined ? undefined : name.replaceAll('.', '__');
}
