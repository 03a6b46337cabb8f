// Chunks (ra.drive.chunk): nonce || XChaCha20-Poly1305 over a uint32 length, the plaintext and zero
// padding to whole buckets, AAD = the chunk domain line || the context. node:crypto has no
// XChaCha20, so @noble/ciphers encrypts; the id is node's SHA-256.
import { createHash, randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { driveSpec } from '../../../schemas/ts/drive.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import type { Profile } from '../../common/profile.ts';
import { domainLine } from './framing.ts';
import { ContextError } from './context.ts';

const { nonce_bytes: NONCE, tag_bytes: TAG, length_prefix_bytes: PREFIX } = driveSpec.chunk;
const BUCKET = limits.drive_chunk_padding_bytes;
const MAX_PLAIN = limits.drive_chunk_max_plaintext_bytes;

const aad = (profile: Profile, context: Uint8Array) => Buffer.concat([domainLine(profile, driveSpec.chunk.aad_domain), context]);

/** The padded size of a plaintext: length prefix and bytes, up to whole buckets. */
export const paddedSize = (plainLength: number): number => Math.ceil((plainLength + PREFIX) / BUCKET) * BUCKET;

/** `nonce` only for reproducible vectors; a writer draws a fresh one per chunk. */
export function sealChunk(profile: Profile, key: Uint8Array, plaintext: Uint8Array, context: Uint8Array, nonce: Uint8Array = randomBytes(NONCE)): Uint8Array {
  if (context.length === 0) throw new ContextError('chunk context required');
  if (plaintext.length > MAX_PLAIN) throw new RangeError('chunk plaintext exceeds the maximum');
  const padded = Buffer.alloc(paddedSize(plaintext.length));
  padded.writeUInt32BE(plaintext.length);
  padded.set(plaintext, PREFIX);
  return new Uint8Array(Buffer.concat([nonce, xchacha20poly1305(key, nonce, aad(profile, context)).encrypt(padded)]));
}

/** A stored size on the bucket grid (nonce, whole buckets, tag) within the limits. */
export function validChunkSize(size: number): boolean {
  return Number.isSafeInteger(size) && size >= limits.drive_chunk_min_bytes && size <= limits.drive_chunk_max_bytes && (size - NONCE - TAG) % BUCKET === 0;
}

/** The plaintext, or undefined for a bad length, failed authentication, a bad prefix or padding. */
export function openChunk(profile: Profile, key: Uint8Array, chunk: Uint8Array, context: Uint8Array): Uint8Array | undefined {
  if (context.length === 0 || key.length !== 32 || !validChunkSize(chunk.length)) return undefined;
  let padded: Uint8Array;
  try {
    padded = xchacha20poly1305(key, chunk.subarray(0, NONCE), aad(profile, context)).decrypt(chunk.subarray(NONCE));
  } catch {
    return undefined;
  }
  const size = Buffer.from(padded.buffer, padded.byteOffset, padded.byteLength).readUInt32BE(0);
  if (size > MAX_PLAIN || paddedSize(size) !== padded.length) return undefined;
  if (padded.subarray(PREFIX + size).some((b) => b !== 0)) return undefined;
  return padded.slice(PREFIX, PREFIX + size);
}

/** A chunk's id: the hex SHA-256 of its stored bytes. */
export const chunkId = (chunk: Uint8Array): string => createHash('sha256').update(chunk).digest('hex');
