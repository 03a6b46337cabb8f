// The drive's second implementation (ra.drive.*), on @noble, written from spec/drive.yaml and the
// limits without protocol/relay/drive: its own reading of the string table (fields gathered as a
// flat list, then framed), its own chunk padding, seals, name index, link KDF, proof of work and
// base32. The vectors suite checks every drive vector with both and fails when they disagree.
// The link KDF is hash-wasm's argon2id (WebAssembly): the core's is @noble's, so the two still
// differ, and a derivation costs the harness about 0.5 s of CPU instead of 2 s. X25519's curve
// operation is OpenSSL's (./x25519.ts), for the same reason; the seals around it are written here.
import { xchacha20poly1305, chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { x25519 } from './x25519.ts';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { argon2id } from 'hash-wasm';
import { driveSpec } from '../../schemas/ts/drive.ts';
import { limits } from '../../schemas/ts/limits.ts';
import type { Profile } from '../../protocol/common/profile.ts';
import { fillTemplate } from '../../protocol/common/profile.ts';
import { verify } from './noble.ts';

type Obj = Record<string, unknown>;
type Spec = Record<string, unknown>;
const b64 = (text: unknown): Uint8Array => {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text)) throw new TypeError('not base64url');
  return new Uint8Array(Buffer.from(text, 'base64url'));
};
const u32 = (n: number): Uint8Array => new Uint8Array([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
const get = (o: unknown, path: string): unknown => path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Obj)[k] : undefined), o);
const utf8Order = (a: string, b: string): number => {
  const [x, y] = [utf8ToBytes(a), utf8ToBytes(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};
const shape = (v: string, t: unknown): string => (t === 'lowercase' ? v.toLowerCase() : t === 'lowercase-trim' ? v.trim().toLowerCase() : v);

/** The flat field list a table entry yields; `lines` joins an entry's parts into one line. */
function gather(name: string, items: readonly Spec[], o: unknown, lines: boolean, key?: string): string[] {
  const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return items.flatMap((it): string[] => {
    const [op, arg] = Object.entries(it)[0] as [string, string];
    const val = arg === '@key' ? key : arg === '.' ? o : get(o, arg);
    if (op === 'literal') return [fillTemplate(arg, name)];
    if (op === 'field') return [shape(str(val), it.transform)];
    if (op === 'number') return [val === undefined || val === null ? '0' : String(val as number)];
    if (op === 'sealed') return ['ephemeral_public_key', 'nonce', 'ciphertext'].map((p) => str(get(val, p)));
    if (op === 'count') return [String(val ? Object.keys(val).length : 0)];
    if (op === 'list')
      return [
        ((val as string[] | null) ?? [])
          .map((v) => shape(v, it.transform))
          .sort(utf8Order)
          .join(String(it.join)),
      ];
    const sub = it.items as Spec[];
    if (op === 'when') return val === true || (Array.isArray(val) && val.length > 0) ? gather(name, sub, o, lines) : [];
    const list: [string | undefined, unknown][] = it.by_key
      ? Object.keys((val as Obj) ?? {})
          .sort(utf8Order)
          .map((k) => [k, (val as Obj)[k]])
      : ((val as unknown[]) ?? []).map((v) => [undefined, v]);
    return list.flatMap(([k, v]) => (lines ? [gather(name, sub, v, lines, k).join(String(it.join ?? ''))] : gather(name, sub, v, lines, k)));
  });
}

const framed = (fields: string[]): Uint8Array => concatBytes(...fields.flatMap((f) => [u32(utf8ToBytes(f).length), utf8ToBytes(f)]));
const line = (profile: Profile, template: string): Uint8Array => utf8ToBytes(`${fillTemplate(template, profile.name)}\n`);

export function driveString(profile: Profile, which: keyof typeof driveSpec.strings, o: unknown): Uint8Array {
  const spec = driveSpec.strings[which] as unknown as { framing: string; domain?: string; items: Spec[] };
  const lines = spec.framing === 'lines';
  const fields = gather(profile.name, spec.items, o, lines);
  return lines ? utf8ToBytes(fields.join('\n')) : concatBytes(line(profile, spec.domain!), framed(fields));
}

export function verifySigned(profile: Profile, which: keyof typeof driveSpec.strings, o: Obj, publicKey: Uint8Array): boolean {
  try {
    return verify(publicKey, driveString(profile, which, o), b64(o.signature));
  } catch {
    return false;
  }
}

export function hashOf(profile: Profile, which: 'page' | 'manifest' | 'record' | 'share', o: Obj): string {
  const spec = driveSpec.hashes[which] as { string: keyof typeof driveSpec.strings; input: string; domain?: string };
  const body = driveString(profile, spec.string, o);
  return bytesToHex(sha256(spec.input === 'canonical' ? body : concatBytes(line(profile, spec.domain!), body, b64(o.signature))));
}

export const context = (drive: string, node: string, purpose: string, generation: number): Uint8Array => framed([drive, node, purpose, String(generation)]);
export const recordContext = (r: Obj): Uint8Array =>
  context(
    String(r.drive),
    String(r.node),
    driveSpec.context.record_purpose.replace('{author}', String(r.author)).replace('{sequence}', String(r.sequence)).replace('{previous}', String(r.previous)),
    Number(r.generation),
  );

const { nonce_bytes: NONCE, tag_bytes: TAG, length_prefix_bytes: PREFIX } = driveSpec.chunk;
const BUCKET = limits.drive_chunk_padding_bytes;
const chunkAad = (profile: Profile, ctx: Uint8Array) => concatBytes(line(profile, driveSpec.chunk.aad_domain), ctx);

export function sealChunk(profile: Profile, key: Uint8Array, plaintext: Uint8Array, ctx: Uint8Array, nonce: Uint8Array): Uint8Array {
  const buckets = Math.max(1, Math.ceil((plaintext.length + PREFIX) / BUCKET));
  const padded = concatBytes(u32(plaintext.length), plaintext, new Uint8Array(buckets * BUCKET - PREFIX - plaintext.length));
  return concatBytes(nonce, xchacha20poly1305(key, nonce, chunkAad(profile, ctx)).encrypt(padded));
}

export function openChunk(profile: Profile, key: Uint8Array, chunk: Uint8Array, ctx: Uint8Array): Uint8Array | undefined {
  const body = chunk.length - NONCE - TAG;
  if (ctx.length === 0 || body < BUCKET || body % BUCKET !== 0 || body > limits.drive_chunk_max_plaintext_bytes + BUCKET) return undefined;
  try {
    const padded = xchacha20poly1305(key, chunk.slice(0, NONCE), chunkAad(profile, ctx)).decrypt(chunk.slice(NONCE));
    const n = ((padded[0]! << 24) | (padded[1]! << 16) | (padded[2]! << 8) | padded[3]!) >>> 0;
    if (n > limits.drive_chunk_max_plaintext_bytes || Math.ceil((n + PREFIX) / BUCKET) * BUCKET !== padded.length || padded.slice(PREFIX + n).some(Boolean)) return undefined;
    return padded.slice(PREFIX, PREFIX + n);
  } catch {
    return undefined;
  }
}

export const sha256Hex = (bytes: Uint8Array): string => bytesToHex(sha256(bytes));

/** A drive seal kind's domain under a profile (spec/drive.yaml `seals`). */
export const sealDomainOf = (profile: Profile, kind: 'key' | 'name' | 'record' | 'group'): string => fillTemplate(driveSpec.seals.domains[kind].domain, profile.name);

/** An x25519-chacha20-poly1305 seal under `domain` to `recipient`, the context appended to the AAD. */
export function sealTo(domain: string, recipient: Uint8Array, plaintext: Uint8Array, ctx: Uint8Array): { ephemeral_public_key: string; nonce: string; ciphertext: string } {
  const eph = x25519.utils.randomSecretKey();
  const ephPub = x25519.getPublicKey(eph);
  const key = hkdf(sha256, x25519.getSharedSecret(eph, recipient), concatBytes(ephPub, recipient), utf8ToBytes(domain), 32);
  const nonce = randomBytes(12);
  const ciphertext = chacha20poly1305(key, nonce, concatBytes(utf8ToBytes(`${domain}\n`), ephPub, recipient, ctx)).encrypt(plaintext);
  const enc = (b: Uint8Array) => Buffer.from(b).toString('base64url');
  return { ephemeral_public_key: enc(ephPub), nonce: enc(nonce), ciphertext: enc(ciphertext) };
}

export function openSeal(domain: string, recipientPrivate: Uint8Array, payload: Obj, ctx: Uint8Array): Uint8Array | undefined {
  try {
    const eph = b64(payload.ephemeral_public_key);
    const me = x25519.getPublicKey(recipientPrivate);
    const key = hkdf(sha256, x25519.getSharedSecret(recipientPrivate, eph), concatBytes(eph, me), utf8ToBytes(domain), 32);
    return chacha20poly1305(key, b64(payload.nonce), concatBytes(utf8ToBytes(`${domain}\n`), eph, me, ctx)).decrypt(b64(payload.ciphertext));
  } catch {
    return undefined;
  }
}

export function validName(name: string): string | undefined {
  const nfc = name.normalize('NFC');
  const n = utf8ToBytes(nfc).length;
  const bad = n === 0 || n > limits.drive_name_max_bytes || nfc === '.' || nfc === '..' || nfc.includes('/') || nfc.includes('\u0000') || /\p{Cs}/u.test(nfc);
  return bad ? undefined : nfc;
}

export function nameHash(profile: Profile, folderPrivate: Uint8Array, name: string): string | undefined {
  const nfc = validName(name);
  if (nfc === undefined) return undefined;
  const key = hkdf(sha256, folderPrivate, x25519.getPublicKey(folderPrivate), utf8ToBytes(fillTemplate(driveSpec.names.index_domain, profile.name)), 32);
  return bytesToHex(hmac(sha256, key, utf8ToBytes(nfc)));
}

export function linkSecrets(password: string, salt: Uint8Array): Promise<{ key: Uint8Array; verifier: Uint8Array; verifierHash: string }> {
  // argon2id at 64 MiB is the harness's costliest step: a link made and then opened derives once.
  const key = `${password}\u0000${Buffer.from(salt).toString('hex')}`;
  let derived = DERIVED.get(key);
  if (!derived) {
    const k = driveSpec.link_kdf;
    derived = argon2id({ password: utf8ToBytes(password), salt, memorySize: k.memory_kib, iterations: k.passes, parallelism: k.lanes, hashLength: k.output_bytes, outputType: 'binary' }).then(
      (out) => {
        const verifier = out.slice(...k.verifier_bytes);
        return { key: out.slice(...k.key_bytes), verifier, verifierHash: sha256Hex(verifier) };
      },
    );
    derived.catch(() => DERIVED.delete(key));
    DERIVED.set(key, derived);
    if (DERIVED.size > 64) DERIVED.delete(DERIVED.keys().next().value!);
  }
  return derived;
}

const DERIVED = new Map<string, Promise<{ key: Uint8Array; verifier: Uint8Array; verifierHash: string }>>();

/**
 * The link key (ra.drive.link-kdf): the X25519 private key a link share's node_key is sealed to,
 * from the secret the link string carries and, for a password link, the KDF's key bytes.
 */
export function linkPrivateKey(profile: Profile, secret: Uint8Array, kdfKey?: Uint8Array): Uint8Array {
  if (!kdfKey) return secret;
  return hkdf(sha256, secret, kdfKey, utf8ToBytes(fillTemplate(driveSpec.link_kdf.link_key_domain, profile.name)), 32);
}

export function powValid(token: string, solution: string, bits: number): boolean {
  const d = sha256(utf8ToBytes(`${token}${driveSpec.pow.join}${solution}`));
  const zeros = d.findIndex((b) => b !== 0);
  const lead = zeros < 0 ? 256 : zeros * 8 + Math.clz32(d[zeros]!) - 24;
  return lead >= bits;
}

export const powClamp = (bits: number): number => (bits <= 0 ? limits.drive_pow_default_bits : Math.min(limits.drive_pow_max_bits, Math.max(limits.drive_pow_min_bits, bits)));

export function guestAuthor(publicKey: Uint8Array): string {
  const bitsText = [...publicKey].map((b) => b.toString(2).padStart(8, '0')).join('');
  const padded = bitsText.padEnd(Math.ceil(bitsText.length / 5) * 5, '0');
  const body = (padded.match(/.{5}/g) ?? []).map((g) => 'abcdefghijklmnopqrstuvwxyz234567'[parseInt(g, 2)]).join('');
  return `${driveSpec.guest.prefix}${body}${driveSpec.guest.suffix}`;
}

/** A member's epoch keys (newest first) from a keyring, each checked against its public key. */
export function keyringKeys(profile: Profile, ring: Obj, member: string, memberPrivate: Uint8Array): { epoch: number; private: Uint8Array }[] | undefined {
  const domain = sealDomainOf(profile, 'group');
  const fill = (kind: 'member' | 'previous', epoch: number, last: string) =>
    utf8ToBytes(
      driveSpec.seals.group_contexts[kind]
        .replace('{group}', String(ring.group).toLowerCase())
        .replace('{epoch}', String(epoch))
        .replace(kind === 'member' ? '{recipient}' : '{current}', last),
    );
  const ok = (priv: Uint8Array | undefined, pub: unknown) => priv !== undefined && Buffer.from(x25519.getPublicKey(priv)).toString('base64url') === pub;
  const sealed = (ring.sealed as Record<string, Obj>)[member.toLowerCase()];
  const current = sealed && openSeal(domain, memberPrivate, sealed, fill('member', Number(ring.epoch), member.toLowerCase()));
  if (!ok(current, ring.public)) return undefined;
  const out = [{ epoch: Number(ring.epoch), private: current! }];
  for (const prev of (ring.previous as Obj[] | undefined) ?? []) {
    const key = openSeal(domain, current!, prev.sealed as Obj, fill('previous', Number(prev.epoch), String(ring.epoch)));
    if (!ok(key, prev.public)) return undefined;
    out.push({ epoch: Number(prev.epoch), private: key! });
  }
  return out;
}
