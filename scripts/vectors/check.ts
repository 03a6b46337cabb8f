import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { rules as ruleCatalogue } from '../../schemas/ts/rules.ts';
import { encodeBase64url } from '../../protocol/common/base64.ts';
import { root } from '../lib/outputs.ts';

// @noble/ed25519 hashes with @noble/hashes (its sync API needs one).
ed.hashes.sha512 = sha512;


export class VectorError extends Error {}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new VectorError(message);
}

export function same(label: string, actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new VectorError(`${label}: expected ${e}, got ${a}`);
}

export type Json = Record<string, unknown>;

export const RULE_IDS = new Set(ruleCatalogue.map((r) => r.id));
/** Rule ids from spec/rules/, de-duplicated; an unknown id stops the generator. */
export function ruleIds(...ids: string[]): string[] {
  for (const id of ids) check(RULE_IDS.has(id), `unknown rule id ${id} (not in spec/rules/)`);
  return [...new Set(ids)];
}

export const b64u = (bytes: Uint8Array): string => encodeBase64url(bytes);
export const fromB64u = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64url'));
export const digest = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest();
export const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
export const readJson = (path: string): Json => JSON.parse(readFileSync(join(root, path), 'utf8')) as Json;
/** Test material derived like the fixtures: SHA-256 of a label. */
export const derived = (label: string, length = 32): Uint8Array => new Uint8Array(digest(label).subarray(0, length));
export const lines = (...parts: string[]): string => parts.join('\n');
