// A WebAuthn assertion as document 3's keystore checks it (Keystore: POST .../keystore/fetch):
// clientDataJSON type `webauthn.get` and a relay-issued challenge; rpIdHash of an acceptable RP
// id; user present and verified; the signature over authenticatorData || SHA-256(clientDataJSON)
// by the enrolled SPKI key under its COSE algorithm, verified by node:crypto. Only the fixed
// 37-byte head of authenticatorData is read (W3C WebAuthn §6.1: rpIdHash, flags, signCount).
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { decodeBase64Any } from '../common/base64.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';

/** COSE algorithm ids the keystore accepts (document 3: -7 ES256, -8 EdDSA, -257 RS256). */
export const COSE_ALGS = [-7, -8, -257] as const;
export type CoseAlg = (typeof COSE_ALGS)[number];

export interface Assertion {
  credential_id: string;
  client_data_json: string;
  authenticator_data: string;
  signature: string;
}

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
const AUTH_DATA_HEAD = 37;

export type AssertionCheck = { ok: true; counter: number; challenge: string } | { ok: false; rule: RuleId; detail: string };

const fail = (rule: RuleId, detail: string): AssertionCheck => ({ ok: false, rule, detail });

/** How a client writes the issued challenge into clientDataJSON: as issued, or base64url of its UTF-8 bytes. */
export type ChallengeForm = 'issued' | 'utf8';

/** clientDataJSON.challenge for the issued string in `form` (what a browser writes for each). */
export const clientDataChallenge = (issued: string, form: ChallengeForm): string => (form === 'utf8' ? Buffer.from(issued, 'utf8').toString('base64url') : issued);

/**
 * The relay-issued challenge strings `clientChallenge` (clientDataJSON.challenge) may stand for.
 * Document 3 does not say how the issued string is encoded as the WebAuthn challenge, and two
 * forms are in use: the issued string itself (a client that hands the browser its base64url
 * bytes, which the browser encodes back to the same string), and base64url of its UTF-8 bytes (a
 * client that hands the browser TextEncoder's bytes of the string). Both are accepted.
 */
export function challengeCandidates(clientChallenge: string): string[] {
  const out = [clientChallenge];
  if (!/^[A-Za-z0-9_-]+$/.test(clientChallenge)) return out;
  const bytes = Buffer.from(clientChallenge, 'base64url');
  // Only a canonical encoding of valid UTF-8 names a string (no two spellings of one challenge).
  if (bytes.toString('base64url') !== clientChallenge) return out;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    if (text !== clientChallenge && text.length > 0) out.push(text);
  } catch {
    // not UTF-8: the string itself is the only candidate
  }
  return out;
}

/** The assertion's four fields when all are base64url strings; undefined otherwise. */
export function readAssertion(value: unknown): Assertion | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const a = value as Record<string, unknown>;
  const fields = ['credential_id', 'client_data_json', 'authenticator_data', 'signature'] as const;
  return fields.every((f) => typeof a[f] === 'string' && decodeBase64Any(a[f] as string) !== undefined) ? (a as unknown as Assertion) : undefined;
}

/** The SPKI key of an enrollment, checked against its COSE algorithm; undefined when they do not fit. */
export function credentialKey(spkiB64url: string, alg: number): KeyObject | undefined {
  const der = decodeBase64Any(spkiB64url);
  if (!der) return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
  const d = key.asymmetricKeyDetails ?? {};
  if (alg === -7) return key.asymmetricKeyType === 'ec' && d.namedCurve === 'prime256v1' ? key : undefined;
  if (alg === -8) return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  if (alg === -257) return key.asymmetricKeyType === 'rsa' && (d.modulusLength ?? 0) >= 2048 && (d.modulusLength ?? 0) <= 4096 ? key : undefined;
  return undefined;
}

/**
 * Checks `a` for a fetch: `challengeOk` says whether the challenge is a live relay-issued one and
 * claims it (it runs before the signature check, so concurrent answers spend it once).
 */
export function checkAssertion(a: Assertion, expected: { rpIds: readonly string[]; key: KeyObject; alg: number; challengeOk: (challenge: string) => boolean }): AssertionCheck {
  const clientData = decodeBase64Any(a.client_data_json)!;
  const authData = decodeBase64Any(a.authenticator_data)!;
  const signature = decodeBase64Any(a.signature)!;
  let client: { type?: unknown; challenge?: unknown };
  try {
    client = JSON.parse(Buffer.from(clientData).toString('utf8')) as typeof client;
  } catch {
    return fail('ra.keystore.assertion-type', 'clientDataJSON is not JSON');
  }
  if (client === null || typeof client !== 'object' || client.type !== 'webauthn.get') return fail('ra.keystore.assertion-type', 'clientDataJSON type is not webauthn.get');
  if (authData.length < AUTH_DATA_HEAD) return fail('ra.keystore.assertion-rp-id', 'authenticatorData is shorter than its 37-byte head');
  const rpIdHash = Buffer.from(authData.subarray(0, 32));
  if (!expected.rpIds.some((id) => createHash('sha256').update(id).digest().equals(rpIdHash))) return fail('ra.keystore.assertion-rp-id', 'rpIdHash names no acceptable RP id');
  const flags = authData[32]!;
  if ((flags & FLAG_UP) === 0 || (flags & FLAG_UV) === 0) return fail('ra.keystore.assertion-flags', 'user present and user verified must both be set');
  if (typeof client.challenge !== 'string' || !expected.challengeOk(client.challenge)) return fail('ra.keystore.assertion-challenge', 'the challenge is not a live one this relay issued');
  const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()]);
  let valid = false;
  try {
    if (expected.alg === -7) valid = verify('sha256', signed, { key: expected.key, dsaEncoding: 'der' }, signature);
    else if (expected.alg === -8) valid = verify(null, signed, expected.key, signature);
    else if (expected.alg === -257) valid = verify('sha256', signed, expected.key, signature);
  } catch {
    valid = false;
  }
  if (!valid) return fail('ra.keystore.assertion-signature', 'the signature does not verify');
  return { ok: true, counter: Buffer.from(authData).readUInt32BE(33), challenge: client.challenge };
}
