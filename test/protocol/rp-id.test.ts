// The keystore's RP ids (the identity, or its registrable domain by the public suffix list when
// hosted) and the two forms of the issued challenge in clientDataJSON.
import { describe, expect, it } from 'vitest';
import { acceptableRpIds, registrableDomain } from '../../protocol/relay/rp-id.ts';
import { challengeCandidates, clientDataChallenge } from '../../protocol/relay/webauthn.ts';

describe('RP ids', () => {
  it('takes the registrable domain from the public suffix list, not the hosting relay', () => {
    expect(registrableDomain('x.a.relay.test')).toBe('relay.test');
    expect(registrableDomain('alice.example.co.uk')).toBe('example.co.uk');
    // A private suffix (github.io) leaves the name its own registrable domain, as browsers read it.
    expect(registrableDomain('alice.github.io')).toBe('alice.github.io');
    expect(acceptableRpIds('x.a.relay.test', true)).toEqual(['x.a.relay.test', 'relay.test']);
    expect(acceptableRpIds('alice.github.io', true)).toEqual(['alice.github.io']);
    expect(acceptableRpIds('x.a.relay.test', false)).toEqual(['x.a.relay.test']);
  });
});

describe('the challenge in clientDataJSON', () => {
  const issued = 'AnbyPoeXBEpI7S3cR9GMnytp3JmBWNM8s7iWQS_cFJ8';
  it('reads the issued string and base64url of its UTF-8 bytes as the same challenge', () => {
    expect(challengeCandidates(clientDataChallenge(issued, 'issued'))).toEqual([issued]);
    // The transcript's own value (keystore.json, the web app's form).
    expect(clientDataChallenge(issued, 'utf8')).toBe('QW5ieVBvZVhCRXBJN1MzY1I5R01ueXRwM0ptQldOTThzN2lXUVNfY0ZKOA');
    expect(challengeCandidates(clientDataChallenge(issued, 'utf8'))).toContain(issued);
  });
  it('reads no second string from a non-canonical encoding', () => {
    expect(challengeCandidates('QQ=')).toEqual(['QQ=']);
    expect(challengeCandidates('QR')).toEqual(['QR']);
  });
});
