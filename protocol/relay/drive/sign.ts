// Signed drive objects (manifest, record, share, group roster and keys) and content-addressed
// pages: signatures over their spec/drive.yaml strings and the hashes `hashes` names. Ed25519 goes
// through protocol/common (node:crypto, the strict rules of spec/signing.yaml).
import { createHash } from 'node:crypto';
import { driveSpec, type DriveHashName, type DriveStringName } from '../../../schemas/ts/drive.ts';
import type { Profile } from '../../common/profile.ts';
import { decodeBase64Any, encodeBase64url } from '../../common/base64.ts';
import { signEd25519, verifyEd25519 } from '../../common/ed25519.ts';
import { domainLine, driveString } from './framing.ts';

export type SignedName = Exclude<DriveStringName, 'page'>;
type Obj = Record<string, unknown>;

const STRICT_B64URL = /^[A-Za-z0-9_-]*$/;
/** Group documents come from Go's lenient decoder; the drive's own objects are strict. */
const LENIENT = new Set<SignedName>(['group-roster', 'group-keys', 'group-key']);

/** A strict unpadded base64url signature of 64 bytes, or undefined. */
export function signatureBytes(signature: unknown): Uint8Array | undefined {
  if (typeof signature !== 'string' || !STRICT_B64URL.test(signature)) return undefined;
  const raw = decodeBase64Any(signature);
  return raw?.length === 64 && encodeBase64url(raw) === signature ? raw : undefined;
}

export function signDrive(profile: Profile, name: SignedName, object: Obj, seed: Uint8Array): string {
  return encodeBase64url(signEd25519(seed, driveString(profile, name, object)));
}

/** True when `object.signature` is the key's Ed25519 signature over its string. */
export function verifyDrive(profile: Profile, name: SignedName, object: Obj, publicKey: Uint8Array): boolean {
  const sig = LENIENT.has(name) ? decodeBase64Any(String(object.signature ?? '')) : signatureBytes(object.signature);
  if (sig?.length !== 64) return false;
  try {
    return verifyEd25519(publicKey, driveString(profile, name, object), sig);
  } catch {
    return false;
  }
}

/** The hex hash spec/drive.yaml `hashes` names for an object (a page, or a signed object). */
export function driveHash(profile: Profile, name: Exclude<DriveHashName, 'chunk'>, object: Obj): string {
  const spec = driveSpec.hashes[name] as { string: DriveStringName; input: string; domain?: string };
  const canonical = driveString(profile, spec.string, object);
  if (spec.input === 'canonical') return createHash('sha256').update(canonical).digest('hex');
  const sig = signatureBytes(object.signature);
  if (!sig) throw new TypeError(`${name} signature is not 64 bytes of strict base64url`);
  return createHash('sha256').update(domainLine(profile, spec.domain!)).update(canonical).update(sig).digest('hex');
}
