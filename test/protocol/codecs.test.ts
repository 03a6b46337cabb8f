// Edge cases of the codecs that the vectors pin less directly.
import { describe, expect, it } from 'vitest';
import { normalizeOrigin, sameOrigin } from '../../protocol/common/url.ts';
import { decodeObject } from '../../protocol/common/codec.ts';
import { decodeBase64Any } from '../../protocol/common/base64.ts';
import { parseRfc3339 } from '../../protocol/common/time.ts';
import { checkProfileDocument } from '../../protocol/bridge/profile-document.ts';
import { profileFor, ProfileError } from '../../protocol/common/profile.ts';

describe('origins (ns.request.audience)', () => {
  it.each([
    ['HTTPS://RP.Example.com:443/', 'https://rp.example.com'],
    ['https://rp.example.com:0443', 'https://rp.example.com'],
    ['http://rp.example.com:80', 'http://rp.example.com'],
    ['https://rp.example.com:8443', 'https://rp.example.com:8443'],
    ['https://rp.example.com:65536', undefined],
    ['https://rp..example.com', undefined],
    ['https://-rp.example.com', undefined],
    ['https://user@rp.example.com', undefined],
    ['https://rp.example.com/path', undefined],
    ['https://rp.example.com/?', undefined],
    ['ftp://rp.example.com', undefined],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeOrigin(input)).toBe(expected);
  });
  it('refuses suffix tricks', () => expect(sameOrigin('https://rp.example.com', 'https://rp.example.com.evil.example/x')).toBe(false));
});

describe('codecs', () => {
  it('refuses a JSON array as an encoded object', () => expect(decodeObject('["svc_auth","1"]')).toEqual({ ok: false, reason: 'not a JSON object' }));
  it('refuses mixed base64 alphabets and bad padding', () => {
    expect(decodeBase64Any('ab-/')).toBeUndefined();
    expect(decodeBase64Any('abc=d')).toBeUndefined();
    expect(decodeBase64Any('a')).toBeUndefined();
  });
  it('parses strict RFC 3339 only', () => {
    expect(parseRfc3339('2026-01-15T09:30:00+01:00')).toBe(Date.parse('2026-01-15T08:30:00Z'));
    for (const bad of ['2026-02-30T00:00:00Z', '2026-01-15T24:00:00Z', '2026-01-15T09:30:60Z', '2026-01-15 09:30:00Z', '2026-01-15T09:30Z']) expect(parseRfc3339(bad)).toBeUndefined();
  });
  it('profile documents: version 1 or absent', () => {
    expect(checkProfileDocument({}).ok).toBe(true);
    expect(checkProfileDocument({ version: 0 }).ok).toBe(false);
  });
  it('derives every identifier from the service name, and refuses a bad name', () => {
    const p = profileFor('poweur');
    expect(p.ids).toMatchObject({ auth_field: 'poweur_auth', header_identity: 'X-Poweur-Identity', dns_txt_label: '_poweur', deep_link: 'poweur://auth', session_cookie: '__Host-poweur_session' });
    expect(() => profileFor('Bad-Name')).toThrow(ProfileError);
  });
});
