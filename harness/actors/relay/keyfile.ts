// The relay client's key file (`svc-conformance relay keygen`; also the push key a bridge's
// OAUTH_PUSH_HOME holds): the service ID, its Ed25519 signing seed and its X25519 private key,
// base64url, as JSON written 0600.
import { readFile, writeFile } from 'node:fs/promises';
import { x25519PublicKeyOf } from '../../impl/noble.ts';
import { newRelayIdentity, type RelayIdentity } from './envelope.ts';

export interface RelayKeyFile {
  identity: string;
  seed: string;
  encryption_private_key: string;
}

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

export async function writeRelayKey(file: string, id: RelayIdentity): Promise<void> {
  const content: RelayKeyFile = { identity: id.identity, seed: b64u(id.seed), encryption_private_key: b64u(id.encryption.privateKey) };
  await writeFile(file, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
}

export async function readRelayKey(file: string): Promise<RelayIdentity> {
  const k = JSON.parse(await readFile(file, 'utf8')) as RelayKeyFile;
  const id = newRelayIdentity(k.identity, new Uint8Array(Buffer.from(k.seed, 'base64url')));
  const privateKey = new Uint8Array(Buffer.from(k.encryption_private_key, 'base64url'));
  return { ...id, encryption: { privateKey, publicKey: x25519PublicKeyOf(privateKey) } };
}
