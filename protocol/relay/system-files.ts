// The relay's validated system documents (document 3, System files: "validated on write", schemas
// not shown; the interop set decides): contacts.json, inbox-policy.json and the group roster.
import { limits } from '../../schemas/ts/limits.ts';
import { byteLength } from '../common/base64.ts';
import { parseKey } from '../common/keys.ts';
import { validServiceName } from '../common/names.ts';
import { parseRfc3339 } from '../common/time.ts';
import type { Profile } from '../common/profile.ts';
import { verifyDrive } from './drive/sign.ts';

export type DocumentCheck = { ok: true } | { ok: false; reason: string };

const INBOX_MODES = new Set(['open', 'contacts_only', 'contacts_and_requests']);
const CONTACT_STATES = new Set(['accepted', 'blocked']);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const bad = (reason: string): DocumentCheck => ({ ok: false, reason });

/** contacts.json (ra.system.contacts). */
export function checkContacts(doc: unknown): DocumentCheck {
  if (!isObject(doc) || doc.version !== 1) return bad('contacts.json is an object with version 1');
  if (!Array.isArray(doc.contacts) || doc.contacts.length > limits.contacts_max) return bad(`contacts is a list of at most ${limits.contacts_max}`);
  const seen = new Set<string>();
  for (const c of doc.contacts as unknown[]) {
    if (!isObject(c)) return bad('every contact is an object');
    const id = typeof c.identity === 'string' ? validServiceName(c.identity) : undefined;
    if (id === undefined) return bad(`${JSON.stringify(c.identity)} is not a service ID`);
    if (seen.has(id)) return bad(`${id} is listed twice`);
    seen.add(id);
    if (typeof c.state !== 'string' || !CONTACT_STATES.has(c.state)) return bad(`state is one of ${[...CONTACT_STATES].join(', ')}`);
    if (c.pinned_key !== undefined && (typeof c.pinned_key !== 'string' || !c.pinned_key.startsWith('ed25519:') || !parseKey(c.pinned_key, 'signing'))) return bad('pinned_key is an ed25519: key');
    if (c.petname !== undefined && (typeof c.petname !== 'string' || byteLength(c.petname) > limits.contact_petname_max_bytes))
      return bad(`petname is at most ${limits.contact_petname_max_bytes} bytes`);
    if (c.added_at !== undefined && parseRfc3339(c.added_at) === undefined) return bad('added_at is RFC 3339');
  }
  return { ok: true };
}

/** inbox-policy.json (ra.system.inbox-policy). */
export function checkInboxPolicy(doc: unknown): DocumentCheck {
  if (!isObject(doc) || doc.version !== 1) return bad('inbox-policy.json is an object with version 1');
  if (typeof doc.mode !== 'string' || !INBOX_MODES.has(doc.mode)) return bad(`mode is one of ${[...INBOX_MODES].join(', ')}`);
  if (doc.anonymous !== undefined) {
    const a = doc.anonymous;
    if (!isObject(a) || typeof a.allow !== 'boolean') return bad('anonymous is an object with allow (boolean)');
    if (a.challenge !== undefined && a.challenge !== 'pow') return bad('anonymous.challenge is pow');
    if (a.pow_bits !== undefined && (typeof a.pow_bits !== 'number' || !Number.isInteger(a.pow_bits) || a.pow_bits < 1 || a.pow_bits > limits.pow_bits_max))
      return bad(`anonymous.pow_bits is 1 to ${limits.pow_bits_max}`);
  }
  if (doc.trusted_auth_services !== undefined) {
    const t = doc.trusted_auth_services;
    if (!Array.isArray(t) || t.length > limits.trusted_auth_services_max) return bad(`trusted_auth_services is a list of at most ${limits.trusted_auth_services_max}`);
    for (const s of t as unknown[]) if (typeof s !== 'string' || validServiceName(s) === undefined) return bad(`${JSON.stringify(s)} is not a service ID`);
  }
  return { ok: true };
}

const MEMBERS_MAX = 1000;
const names = (v: unknown): v is string[] => Array.isArray(v) && v.length <= MEMBERS_MAX && v.every((m) => typeof m === 'string' && m.trim() !== '');

/**
 * The identity's signed group roster (ra.system.group-roster): its own roster, so `owner` is the
 * identity and the signature verifies with its key (ra.drive.group-roster); for a group identity
 * (with admins and an epoch) `group` is the identity too, and the epoch never goes back.
 */
export function checkGroupRoster(profile: Profile, identity: string, publicKey: Uint8Array, storedEpoch?: number): (doc: unknown) => DocumentCheck {
  return (doc) => {
    if (!isObject(doc)) return bad('the roster is an object');
    if (typeof doc.group !== 'string' || doc.group.trim() === '') return bad('group is a non-empty string');
    if (typeof doc.owner !== 'string' || doc.owner.trim().toLowerCase() !== identity) return bad(`owner is ${identity}, whose roster this is`);
    if (doc.members !== null && !names(doc.members)) return bad(`members is null or a list of at most ${MEMBERS_MAX} IDs`);
    if (parseRfc3339(doc.updated_at) === undefined) return bad('updated_at is RFC 3339');
    const groupIdentity = doc.admins !== undefined || doc.epoch !== undefined;
    if (groupIdentity) {
      if (!names(doc.admins)) return bad(`admins is a list of at most ${MEMBERS_MAX} IDs`);
      if (typeof doc.epoch !== 'number' || !Number.isSafeInteger(doc.epoch) || doc.epoch < 1) return bad('epoch is a positive integer');
      if (doc.group.trim().toLowerCase() !== identity) return bad(`a group identity's roster names itself: group is ${identity}`);
      if (storedEpoch !== undefined && doc.epoch < storedEpoch) return bad(`epoch ${doc.epoch} is below the stored ${storedEpoch}`);
    }
    if (!verifyDrive(profile, 'group-roster', doc, publicKey)) return bad(`the signature does not verify with ${identity}'s key`);
    return { ok: true };
  };
}
