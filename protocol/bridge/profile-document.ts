// The public profile document (ob.profile.document; document 2 says "not shown", the interop set
// decides): validated by spec/objects/profile-document.schema.json plus the byte limits below.
import { limits } from '../../schemas/ts/limits.ts';
import { byteLength } from '../common/base64.ts';

export type ProfileCheck = { ok: true } | { ok: false; reason: string };

const AVATAR = /^[a-z0-9_-]+\.(png|jpg|jpeg|webp|gif)$/;
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function checkProfileDocument(doc: unknown): ProfileCheck {
  if (!isObject(doc)) return { ok: false, reason: 'the profile must be an object' };
  const { version, display_name, bio, avatar, links, identity_page } = doc;
  if (version !== undefined && version !== 1) return { ok: false, reason: 'version must be 1 (or absent)' };
  for (const [field, value, max] of [
    ['display_name', display_name, limits.profile_display_name_max_bytes],
    ['bio', bio, limits.profile_bio_max_bytes],
  ] as const) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return { ok: false, reason: `${field} must be a string` };
    if (byteLength(value) > max) return { ok: false, reason: `${field} is longer than ${max} bytes` };
  }
  if (avatar !== undefined && avatar !== null && avatar !== '') {
    if (typeof avatar !== 'string' || byteLength(avatar) > limits.profile_avatar_max_bytes || !AVATAR.test(avatar)) return { ok: false, reason: 'avatar must be a bare image file name' };
  }
  if (links !== undefined && links !== null) {
    if (!Array.isArray(links) || links.length > limits.profile_links_max) return { ok: false, reason: `links must be a list of at most ${limits.profile_links_max}` };
    for (const link of links) {
      if (!isObject(link) || typeof link.url !== 'string' || link.url.trim() === '') return { ok: false, reason: 'every link needs a url' };
      if (link.label !== undefined && typeof link.label !== 'string') return { ok: false, reason: 'a link label must be a string' };
    }
  }
  if ('identity_page' in doc) {
    if (!isObject(identity_page)) return { ok: false, reason: 'identity_page must be an object' };
    for (const flag of ['enabled', 'indexable', 'advertise_anonymous_messages']) {
      if (identity_page[flag] !== undefined && typeof identity_page[flag] !== 'boolean') return { ok: false, reason: `identity_page.${flag} must be a boolean` };
    }
  }
  return { ok: true };
}
