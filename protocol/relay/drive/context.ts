// Envelope context (ra.drive.context): drive, node, purpose and key generation as length-prefixed
// fields, no domain line; each field 1 to drive_context_field_max_bytes of UTF-8 without NUL.
import { driveSpec } from '../../../schemas/ts/drive.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { lengthPrefixed } from './framing.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export class ContextError extends Error {}

export type Purpose = keyof typeof driveSpec.context.purposes;

export function driveContext(drive: string, node: string, purpose: string, generation: number): Uint8Array {
  if (!Number.isSafeInteger(generation) || generation < 0) throw new ContextError('invalid generation');
  const fields = [drive, node, purpose, String(generation)];
  for (const f of fields) {
    const n = Buffer.byteLength(f, 'utf8');
    if (n === 0 || n > limits.drive_context_field_max_bytes || f.includes('\u0000') || LONE_SURROGATE.test(f)) throw new ContextError('invalid context field');
  }
  return lengthPrefixed(fields);
}

/** The purpose an append record's sealed payload is bound to: its place in the author's chain. */
export function recordPurpose(author: string, sequence: number, previous: string): string {
  return driveSpec.context.record_purpose.replace('{author}', author).replace('{sequence}', String(sequence)).replace('{previous}', previous);
}
