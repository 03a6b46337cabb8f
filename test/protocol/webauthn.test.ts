// protocol/relay/webauthn.ts against assertions of the harness's software authenticator: each
// COSE algorithm verifies, and each check of document 3's list refuses by its own rule.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { checkAssertion, credentialKey, FLAG_UP, FLAG_UV, readAssertion, type CoseAlg } from '../../protocol/relay/webauthn.ts';
import { SoftwareAuthenticator } from '../../harness/actors/relay/authenticator.ts';

const RP = 'alice.example.com';

function setup(alg: CoseAlg) {
  const auth = new SoftwareAuthenticator(alg);
  const key = credentialKey(auth.publicKeySpki, alg)!;
  const challenge = randomBytes(32).toString('base64url');
  const live = new Set([challenge]);
  const expected = { rpIds: [RP], key, alg, challengeOk: (c: string) => live.delete(c) };
  return { auth, challenge, expected };
}

describe('WebAuthn assertions (document 3, keystore fetch)', () => {
  it.each([-7, -8, -257] as const)('verifies COSE %i, once per challenge', (alg) => {
    const { auth, challenge, expected } = setup(alg);
    const a = auth.assert({ challenge, rpId: RP, counter: 7 });
    expect(readAssertion(a)).toEqual(a);
    expect(checkAssertion(a, expected)).toEqual({ ok: true, counter: 7, challenge });
    expect(checkAssertion(a, expected)).toMatchObject({ ok: false, rule: 'ra.keystore.assertion-challenge' });
  });

  it('refuses each broken part by its rule', () => {
    const cases: Array<[Partial<Parameters<SoftwareAuthenticator['assert']>[0]>, string]> = [
      [{ type: 'webauthn.create' }, 'ra.keystore.assertion-type'],
      [{ rpId: 'elsewhere.example' }, 'ra.keystore.assertion-rp-id'],
      [{ flags: FLAG_UP }, 'ra.keystore.assertion-flags'],
      [{ flags: FLAG_UV }, 'ra.keystore.assertion-flags'],
      [{ challenge: 'never-issued' }, 'ra.keystore.assertion-challenge'],
      [{ wrongKey: true }, 'ra.keystore.assertion-signature'],
    ];
    for (const [change, rule] of cases) {
      const { auth, challenge, expected } = setup(-7);
      expect(checkAssertion(auth.assert({ challenge, rpId: RP, ...change }), expected), JSON.stringify(change)).toMatchObject({ ok: false, rule });
    }
  });

  it('takes only SPKI keys of the named algorithm', () => {
    const es = new SoftwareAuthenticator(-7);
    expect(credentialKey(es.publicKeySpki, -7)).toBeDefined();
    expect(credentialKey(es.publicKeySpki, -8)).toBeUndefined();
    expect(credentialKey(es.publicKeySpki, -257)).toBeUndefined();
    expect(credentialKey('not-a-key', -7)).toBeUndefined();
    expect(readAssertion({ credential_id: 'x', client_data_json: 'x', authenticator_data: 'x' })).toBeUndefined();
  });
});
