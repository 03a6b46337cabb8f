// Node names (ra.drive.name-hash): NFC, case-sensitive, bounded, not `.` or `..`, no `/` or NUL;
// the lookup token is HMAC-SHA256 of the NFC name under HKDF-SHA256(folder private key, salt its
// public key, info the name-index domain), so only holders of the folder key can index names.
import { createHmac, hkdfSync } from 'node:crypto';
import { driveSpec } from '../../../schemas/ts/drive.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { fillTemplate, type Profile } from '../../common/profile.ts';
import { x25519PublicKey } from '../seal.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The NFC form of a name, or undefined when it is not a valid node name. */
export function normalizeName(name: string): string | undefined {
  if (typeof name !== 'string' || LONE_SURROGATE.test(name)) return undefined;
  const nfc = name.normalize(driveSpec.names.normalization);
  const bytes = Buffer.byteLength(nfc, 'utf8');
  if (bytes === 0 || bytes > limits.drive_name_max_bytes) return undefined;
  if ((driveSpec.names.reserved as readonly string[]).includes(nfc)) return undefined;
  if (driveSpec.names.forbidden.some((c) => nfc.includes(c))) return undefined;
  return nfc;
}

/** The folder-private lookup token of a name (hex), or undefined for an invalid name or key. */
export function nameHash(profile: Profile, folderPrivate: Uint8Array, name: string): string | undefined {
  const normalized = normalizeName(name);
  if (normalized === undefined || folderPrivate.length !== 32) return undefined;
  const info = fillTemplate(driveSpec.names.index_domain, profile.name);
  const key = Buffer.from(hkdfSync('sha256', folderPrivate, x25519PublicKey(folderPrivate), info, 32));
  return createHmac('sha256', key).update(normalized, 'utf8').digest('hex');
}
