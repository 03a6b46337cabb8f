// Password links (ra.drive.link-kdf): argon2id over the password and the share's salt (node has no
// argon2, so @noble/hashes); the first part enters the link key, the second is the verifier, and a
// share stores only the verifier's SHA-256.
import { createHash } from 'node:crypto';
import { argon2idAsync } from '@noble/hashes/argon2.js';
import { driveSpec } from '../../../schemas/ts/drive.ts';
import { limits } from '../../../schemas/ts/limits.ts';

const kdf = driveSpec.link_kdf;

export interface LinkSecrets {
  /** Mixed into the link's decryption key; never leaves the viewer. */
  key: Uint8Array;
  /** Sent as the link-verifier header. */
  verifier: Uint8Array;
}

export async function deriveLink(password: string, salt: Uint8Array, name: string = kdf.name): Promise<LinkSecrets> {
  if (name !== kdf.name) throw new TypeError(`unknown link KDF ${name}`);
  if (salt.length !== limits.drive_link_salt_bytes) throw new TypeError(`the salt must be ${limits.drive_link_salt_bytes} bytes`);
  const out = await argon2idAsync(Buffer.from(password, 'utf8'), salt, { m: kdf.memory_kib, t: kdf.passes, p: kdf.lanes, dkLen: kdf.output_bytes });
  return { key: out.slice(...kdf.key_bytes), verifier: out.slice(...kdf.verifier_bytes) };
}

/** What a share stores: the hex SHA-256 of the verifier. */
export const verifierHash = (verifier: Uint8Array): string => createHash('sha256').update(verifier).digest('hex');
