// The issuer's ID-token signing keys (ob.keys.jwks, ob.keys.rotation): RSA 2048 for RS256, made
// with jose and kept in the store. The newest key signs; every key retired less than the
// retention ago (twice the ID-token lifetime plus the longest RP key-cache time) stays published.
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import { limits } from '../../schemas/ts/limits.ts';
import type { BridgeStore, KeyRecord } from './store.ts';
import { REFERENCE_SEAMS, type BridgeSeams } from './seams.ts';

export const ALG = 'RS256';

export class SigningKeys {
  readonly #store: BridgeStore;
  readonly #now: () => number;
  #cache: { at: number; current: KeyRecord; key: CryptoKey | Uint8Array; published: JWK[] } | undefined;

  readonly #seams: Pick<BridgeSeams, 'retiredKeptMs'>;

  constructor(store: BridgeStore, now: () => number = Date.now, seams: Pick<BridgeSeams, 'retiredKeptMs'> = REFERENCE_SEAMS) {
    this.#store = store;
    this.#now = now;
    this.#seams = seams;
  }

  /** Makes a first key when the store has none. */
  async ensure(): Promise<void> {
    if ((await this.#store.keys()).length === 0) await this.rotate();
  }

  /** A new current key; the previous one is retired and stays in the key set. */
  async rotate(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(ALG, { modulusLength: 2048, extractable: true });
    const kid = randomBytes(12).toString('base64url');
    const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
    const priv = { ...(await exportJWK(privateKey)), kid, alg: ALG };
    await this.#store.addKey({ kid, privateJwk: JSON.stringify(priv), publicJwk: JSON.stringify(pub), createdAt: this.#now() });
    this.#cache = undefined;
    await this.#store.audit('keys.rotated', null, { kid });
    return kid;
  }

  /**
   * Re-read from the store at most once a second: another instance may have rotated (until then
   * this one signs with the previous key, which stays published: ob.keys.rotation).
   */
  async #load(fresh = false) {
    if (!fresh && this.#cache && this.#now() - this.#cache.at < 1000) return this.#cache;
    const all = await this.#store.keys();
    const current = all.find((k) => k.retiredAt === null) ?? all[0];
    if (!current) throw new Error('no signing key is loaded');
    const keep = this.#seams.retiredKeptMs(limits.retired_key_retention_min_seconds * 1000);
    const published = all.filter((k) => k.retiredAt === null || this.#now() - k.retiredAt < keep).map((k) => JSON.parse(k.publicJwk) as JWK);
    const key = this.#cache?.current.kid === current.kid ? this.#cache.key : await importJWK(JSON.parse(current.privateJwk) as JWK, ALG);
    this.#cache = { at: this.#now(), current, key, published };
    return this.#cache;
  }

  /** Always from the store: a key another instance just made is published at once (it signs with it only later). */
  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: (await this.#load(true)).published };
  }

  async sign(claims: Record<string, unknown>): Promise<string> {
    const { current, key } = await this.#load();
    return new SignJWT(claims).setProtectedHeader({ alg: ALG, kid: current.kid, typ: 'JWT' }).sign(key);
  }

  async loaded(): Promise<boolean> {
    try {
      await this.#load();
      return true;
    } catch {
      return false;
    }
  }
}
