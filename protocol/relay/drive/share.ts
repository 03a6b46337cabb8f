// Share shape beyond its schema (ra.drive.share, ra.drive.link-kdf, ra.drive.pow): member or link,
// key-bearing roles, password parameters on links only, difficulty within the maximum.
import { driveSpec } from '../../../schemas/ts/drive.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { decodeBase64Any } from '../../common/base64.ts';

type Obj = Record<string, unknown>;
const has = (o: Obj, k: string) => o[k] !== undefined && o[k] !== null && o[k] !== '';
/** Roles that receive the node's private key; append and create only add, so they get its public key. */
const KEY_BEARING = new Set(['read', 'write', 'admin']);

export function shareProblems(s: Obj): string[] {
  const problems: string[] = [];
  if (has(s, 'member') === has(s, 'link')) problems.push('a share names a member or a link, exclusively');
  if (has(s, 'link') && s.role === 'admin') problems.push('links cannot administer');
  if (KEY_BEARING.has(String(s.role)) !== has(s, 'node_key')) problems.push('read, write and admin shares carry the node key; append and create do not');
  const password = has(s, 'kdf') || has(s, 'salt') || has(s, 'verifier_hash');
  if (password && (!has(s, 'link') || s.kdf !== driveSpec.link_kdf.name || decodeBase64Any(String(s.salt))?.length !== limits.drive_link_salt_bytes || !has(s, 'verifier_hash'))) {
    problems.push('invalid link password parameters');
  }
  if (Number(s.pow ?? 0) > limits.drive_pow_max_bits) problems.push('proof-of-work difficulty above the maximum');
  return problems;
}
