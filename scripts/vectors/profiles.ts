// npm run vectors: Public profile documents: profiles.json.

import { checkProfileDocument } from '../../protocol/bridge/profile-document.ts';
import { same, ruleIds } from './check.ts';
import { emit } from './emit.ts';


export const link = (i: number) => ({ label: `link ${i}`, url: `https://example.org/${i}` });
export const profileCases: Array<{ name: string; raw: unknown; valid: boolean }> = [
  { name: 'full', raw: { version: 1, display_name: 'Alice', avatar: 'avatar.png', bio: 'builder', links: [{ label: 'site', url: 'https://example.org' }], locale: 'en' }, valid: true },
  { name: 'empty', raw: { version: 1 }, valid: true },
  { name: 'no-version', raw: { display_name: 'Alice' }, valid: true },
  { name: 'display-name-256-bytes', raw: { version: 1, display_name: '\u00e9'.repeat(128) }, valid: true },
  { name: 'display-name-257-bytes', raw: { version: 1, display_name: `${'\u00e9'.repeat(128)}x` }, valid: false },
  { name: 'bio-4096-bytes', raw: { version: 1, bio: 'b'.repeat(4096) }, valid: true },
  { name: 'bio-4097-bytes', raw: { version: 1, bio: 'b'.repeat(4097) }, valid: false },
  { name: 'links-32', raw: { version: 1, links: Array.from({ length: 32 }, (_, i) => link(i)) }, valid: true },
  { name: 'links-33', raw: { version: 1, links: Array.from({ length: 33 }, (_, i) => link(i)) }, valid: false },
  { name: 'link-without-url', raw: { version: 1, links: [{ label: 'site' }] }, valid: false },
  { name: 'link-with-blank-url', raw: { version: 1, links: [{ label: 'site', url: '  ' }] }, valid: false },
  { name: 'avatar-webp', raw: { version: 1, avatar: 'me_2026-01.webp' }, valid: true },
  { name: 'avatar-off-tree', raw: { version: 1, avatar: 'https://cdn.example.org/a.png' }, valid: false },
  { name: 'avatar-path', raw: { version: 1, avatar: 'public/avatar.png' }, valid: false },
  { name: 'avatar-parent-path', raw: { version: 1, avatar: '../avatar.png' }, valid: false },
  { name: 'avatar-not-an-image', raw: { version: 1, avatar: 'avatar.svg' }, valid: false },
  { name: 'identity-page-defaults', raw: { version: 1, identity_page: {} }, valid: true },
  { name: 'identity-page-opt-outs', raw: { version: 1, identity_page: { enabled: false, indexable: false, advertise_anonymous_messages: true } }, valid: true },
  { name: 'identity-page-bad-boolean', raw: { version: 1, identity_page: { enabled: 'no' } }, valid: false },
  { name: 'identity-page-null', raw: { version: 1, identity_page: null }, valid: false },
  { name: 'bad-version', raw: { version: 2 }, valid: false },
  { name: 'not-an-object', raw: ['display_name', 'Alice'], valid: false },
];
export const profileVectors = profileCases.map((c) => {
  same(`profiles ${c.name} (core)`, checkProfileDocument(c.raw).ok, c.valid);
  return { name: c.name, raw: c.raw, valid: c.valid, rules: ruleIds('ob.profile.document') };
});
emit(
  'profiles',
  'profiles',
  'Public profile documents (rule ob.profile.document): version 1 or none; display_name at most 256 bytes; bio at most 4096 bytes; at most 32 links, each with a non-blank url; avatar a bare image file name (png, jpg, jpeg, webp, gif); identity_page an object of booleans. Unknown fields (such as `locale`) are allowed.',
  { vectors: profileVectors },
  profileVectors.length,
);
