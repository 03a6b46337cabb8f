// An independent oracle for the keystore's WebAuthn verification: @simplewebauthn/server judges the
// same assertions as protocol/relay/webauthn.ts (what the reference relay runs). For every COSE
// algorithm document 3 names, a good assertion passes both, and each single fault of document 3's
// list (type, challenge, RP id, UP, UV, signature) fails both.
import { createPublicKey, randomBytes } from 'node:crypto';
import { verifyAuthenticationResponse } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { describe, expect, it } from 'vitest';
import { SoftwareAuthenticator, type AssertionOptions } from '../../harness/actors/relay/authenticator.ts';
import { checkAssertion, credentialKey, FLAG_UP, FLAG_UV, type Assertion, type CoseAlg } from '../../protocol/relay/webauthn.ts';

const RP = 'alice.example.com';

/** The credential's SPKI as the COSE_Key an authenticator would have registered (RFC 9053). */
function coseKey(spki: string, alg: CoseAlg): Uint8Array<ArrayBuffer> {
  const jwk = createPublicKey({ key: Buffer.from(spki, 'base64url'), format: 'der', type: 'spki' }).export({ format: 'jwk' });
  const b = (v: string | undefined) => new Uint8Array(Buffer.from(v!, 'base64url'));
  const entries: Array<[number, number | Uint8Array]> =
    alg === -7
      ? [
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, b(jwk.x)],
          [-3, b(jwk.y)],
        ]
      : alg === -8
        ? [
            [1, 1],
            [3, -8],
            [-1, 6],
            [-2, b(jwk.x)],
          ]
        : [
            [1, 3],
            [3, -257],
            [-1, b(jwk.n)],
            [-2, b(jwk.e)],
          ];
  return new Uint8Array(isoCBOR.encode(new Map<number, number | Uint8Array>(entries)));
}

async function oracle(a: Assertion, auth: SoftwareAuthenticator, challenge: string): Promise<boolean> {
  try {
    const { verified } = await verifyAuthenticationResponse({
      response: {
        id: a.credential_id,
        rawId: a.credential_id,
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: a.client_data_json, authenticatorData: a.authenticator_data, signature: a.signature },
      },
      expectedChallenge: challenge,
      expectedOrigin: `https://${RP}`,
      expectedRPID: RP,
      credential: { id: auth.credentialId, publicKey: coseKey(auth.publicKeySpki, auth.alg), counter: 0 },
      requireUserVerification: true,
    });
    return verified;
  } catch {
    return false;
  }
}

function ours(a: Assertion, auth: SoftwareAuthenticator, challenge: string): boolean {
  const key = credentialKey(auth.publicKeySpki, auth.alg)!;
  return checkAssertion(a, { rpIds: [RP], key, alg: auth.alg, challengeOk: (c) => c === challenge }).ok;
}

const FAULTS: Array<[string, Partial<AssertionOptions>]> = [
  ['none', {}],
  ['type webauthn.create', { type: 'webauthn.create' }],
  ['another challenge', { challenge: randomBytes(32).toString('base64url') }],
  ['another RP id', { rpId: 'elsewhere.example' }],
  ['UV without UP', { flags: FLAG_UV }],
  ['UP without UV', { flags: FLAG_UP }],
  ['a bad signature', { wrongKey: true }],
];

describe('WebAuthn assertions against @simplewebauthn/server', () => {
  it.each([-7, -8, -257] as const)('COSE %i: both accept the good assertion and refuse each single fault', async (alg) => {
    const auth = new SoftwareAuthenticator(alg);
    for (const [fault, change] of FAULTS) {
      const challenge = randomBytes(32).toString('base64url');
      // The relying party's origin the oracle expects; document 3 does not judge it, so it stays right.
      const a = auth.assert({ challenge, rpId: RP, counter: 5, ...change, origin: `https://${RP}` });
      const expected = fault === 'none';
      expect([fault, ours(a, auth, challenge)]).toEqual([fault, expected]);
      expect([fault, await oracle(a, auth, challenge)]).toEqual([fault, expected]);
    }
  });
});
