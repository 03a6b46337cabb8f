// A software WebAuthn authenticator for the keystore (document 3, Keystore): one credential of
// COSE algorithm -7 (ES256, P-256, DER signature), -8 (EdDSA, Ed25519) or -257 (RS256, RSA 2048),
// made with node:crypto, answering assertions with chosen flags, RP id, type, challenge and
// counter, so a suite can send both what a real authenticator sends and each single thing wrong.
import { createHash, createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { encodeBase64url } from '../../../protocol/common/base64.ts';
import { clientDataChallenge, FLAG_UP, FLAG_UV, type Assertion, type ChallengeForm, type CoseAlg } from '../../../protocol/relay/webauthn.ts';

export interface AssertionOptions {
  /** The relay-issued challenge string. */
  challenge: string;
  /**
   * How clientDataJSON carries it (default `issued`): `utf8` as a web app that hands the browser
   * TextEncoder's bytes of the string, `issued` as one that hands it the string's base64url bytes.
   */
  challengeForm?: ChallengeForm;
  rpId: string;
  /** Flags byte (default UP | UV). */
  flags?: number;
  /** clientDataJSON type (default webauthn.get). */
  type?: string;
  counter?: number;
  /** Sign with another key than the credential's (a bad signature). */
  wrongKey?: boolean;
  /** The origin clientDataJSON names (default https://<rpId>). */
  origin?: string;
}

/** What `svc-conformance relay passkey new` writes: the credential and its secrets (keep it private). */
export interface SavedAuthenticator {
  alg: CoseAlg;
  credential_id: string;
  /** PKCS#8 DER, base64url. */
  private_key: string;
  /** The secret behind the PRF extension (CTAP2 hmac-secret), base64url. */
  prf_secret: string;
  counter: number;
}

export class SoftwareAuthenticator {
  readonly credentialId: string;
  readonly #privateKey: KeyObject;
  readonly publicKeySpki: string;
  readonly #prfSecret: Buffer;
  #counter = 0;

  constructor(
    readonly alg: CoseAlg = -7,
    saved?: SavedAuthenticator,
  ) {
    this.#privateKey = saved
      ? createPrivateKey({ key: Buffer.from(saved.private_key, 'base64url'), format: 'der', type: 'pkcs8' })
      : (alg === -7 ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : alg === -8 ? generateKeyPairSync('ed25519') : generateKeyPairSync('rsa', { modulusLength: 2048 })).privateKey;
    this.publicKeySpki = encodeBase64url(createPublicKey(this.#privateKey).export({ format: 'der', type: 'spki' }));
    this.credentialId = saved?.credential_id ?? encodeBase64url(randomBytes(16));
    this.#prfSecret = saved ? Buffer.from(saved.prf_secret, 'base64url') : randomBytes(32);
    this.#counter = saved?.counter ?? 0;
  }

  static load(saved: SavedAuthenticator): SoftwareAuthenticator {
    return new SoftwareAuthenticator(saved.alg, saved);
  }

  save(): SavedAuthenticator {
    return {
      alg: this.alg,
      credential_id: this.credentialId,
      private_key: encodeBase64url(this.#privateKey.export({ format: 'der', type: 'pkcs8' })),
      prf_secret: encodeBase64url(this.#prfSecret),
      counter: this.#counter,
    };
  }

  /** The PRF extension's output for `salt`, as a platform authenticator derives it (HMAC-SHA-256 under a per-credential secret). */
  prf(salt: Uint8Array): Uint8Array {
    return new Uint8Array(createHmac('sha256', this.#prfSecret).update(salt).digest());
  }

  /** The enrollment fields naming this credential. */
  credential(): { credential_id: string; credential_public_key: string; credential_alg: CoseAlg } {
    return { credential_id: this.credentialId, credential_public_key: this.publicKeySpki, credential_alg: this.alg };
  }

  assert(o: AssertionOptions): Assertion {
    const clientData = Buffer.from(
      JSON.stringify({ type: o.type ?? 'webauthn.get', challenge: clientDataChallenge(o.challenge, o.challengeForm ?? 'issued'), origin: o.origin ?? `https://${o.rpId}`, crossOrigin: false }),
    );
    const counter = o.counter ?? ++this.#counter;
    this.#counter = Math.max(this.#counter, counter);
    const authData = Buffer.alloc(37);
    createHash('sha256').update(o.rpId).digest().copy(authData, 0);
    authData[32] = o.flags ?? FLAG_UP | FLAG_UV;
    authData.writeUInt32BE(counter, 33);
    const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()]);
    const key = o.wrongKey ? new SoftwareAuthenticator(this.alg).#privateKey : this.#privateKey;
    const signature = this.alg === -8 ? sign(null, signed, key) : sign('sha256', signed, this.alg === -7 ? { key, dsaEncoding: 'der' } : key);
    return { credential_id: this.credentialId, client_data_json: encodeBase64url(clientData), authenticator_data: encodeBase64url(authData), signature: encodeBase64url(signature) };
  }
}
