// A link as a guest holds it: one string carrying the drive's relay, the drive, the link id and
// (after `#`, so it never reaches a server) the secret its share's node key is sealed to (mixed
// with the password's KDF key for a password link). Opening it asks the relay's public link
// answer what else it wants: the password's verifier (argon2id with the answer's salt) and a
// proof of work on the answer's token.
import { linkPrivateKey, linkSecrets, powValid } from '../../impl/noble-drive.ts';
import type { DriveActor, DriveClient } from './client.ts';

export interface LinkRef {
  /** The relay's base URL. */
  relay: string;
  drive: string;
  link: string;
  key: Uint8Array;
}

export function formatLink(r: LinkRef): string {
  return `${r.relay.replace(/\/$/, '')}/drive/${encodeURIComponent(r.drive)}/links/${r.link}#${Buffer.from(r.key).toString('base64url')}`;
}

/** The parts of a link string; undefined when it is not one. */
export function parseLink(text: string): LinkRef | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return undefined;
  }
  const m = /^(.*)\/drive\/([^/]+)\/links\/([0-9a-f]{32})$/.exec(u.pathname);
  const key = Buffer.from(u.hash.slice(1), 'base64url');
  if (!m || key.length !== 32) return undefined;
  return { relay: `${u.origin}${m[1]}`, drive: decodeURIComponent(m[2]!), link: m[3]!, key: new Uint8Array(key) };
}

/** A solution to the link answer's proof-of-work token: `<token>.<counter>`. */
export function solvePow(token: string, bits: number, tries = 1 << 26): string | undefined {
  for (let i = 0; i < tries; i++) if (powValid(token, String(i), bits)) return `${token}.${i}`;
  return undefined;
}

export class LinkRefused extends Error {}

/**
 * The link headers for `ref` (fetches the link answer, derives the verifier, does the work asked)
 * and the link key its share's node key opens with (ra.drive.link-kdf).
 */
export async function openLink(client: DriveClient, ref: LinkRef, password?: string): Promise<{ actor: DriveActor; linkKey: Uint8Array }> {
  const r = await client.link(ref.drive, ref.link);
  if (r.status !== 200) throw new LinkRefused(`the link answered ${r.status} ${r.text().slice(0, 300)}`);
  const info = r.json() as { kdf?: string; salt?: string; pow?: { bits: number; token: string } | null };
  let secrets: { key: Uint8Array; verifier: Uint8Array } | undefined;
  if (info.kdf) {
    if (password === undefined) throw new Error('this link has a password: give it with --password');
    secrets = await linkSecrets(password, new Uint8Array(Buffer.from(String(info.salt), 'base64url')));
  }
  const pow = info.pow ? solvePow(info.pow.token, info.pow.bits) : undefined;
  if (info.pow && !pow) throw new Error(`no proof of work found for ${info.pow.bits} bits`);
  return {
    actor: { link: ref.link, ...(secrets ? { verifier: secrets.verifier } : {}), ...(pow ? { pow } : {}) },
    linkKey: linkPrivateKey(client.profile, ref.key, secrets?.key),
  };
}
