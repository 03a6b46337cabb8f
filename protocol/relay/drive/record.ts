// Append records (ra.drive.record): chunks or one sealed payload, and the per-author chain.
import type { Profile } from '../../common/profile.ts';
import { driveContext, recordPurpose } from './context.ts';
import { openSeal, type SealedPayload } from './seal.ts';

type Obj = Record<string, unknown>;

/** Record shape beyond the schema: chunks or a sealed payload, and the chain start. */
export function recordProblems(r: Obj): string[] {
  const problems: string[] = [];
  const chunks = Array.isArray(r.chunks) ? r.chunks.length : -1;
  const sealed = r.sealed !== undefined && r.sealed !== null;
  if (chunks < 0 || (chunks === 0) !== sealed) problems.push('a record carries chunks or a sealed payload, exclusively');
  if ((r.sequence === 1) !== (r.previous === '')) problems.push('sequence 1, and only it, has an empty previous hash');
  return problems;
}

/** Whether `next` continues an author's chain after (lastSequence, lastHash); the problem if not. */
export function chainProblem(next: Obj, lastSequence: number, lastHash: string): string | undefined {
  if (Number(next.sequence) <= lastSequence) return 'duplicate or reordered author sequence';
  if (next.sequence !== lastSequence + 1) return `author sequence gap: have ${lastSequence}, got ${String(next.sequence)}`;
  return next.previous === lastHash ? undefined : 'author chain mismatch';
}

/** The context a record's sealed payload is bound to: its drive, node, chain place and generation. */
export const recordContext = (r: Obj): Uint8Array => driveContext(String(r.drive), String(r.node), recordPurpose(String(r.author), Number(r.sequence), String(r.previous)), Number(r.generation));

/** A sealed record's plaintext, opened with the node's private key. */
export function openRecord(profile: Profile, r: Obj, nodePrivate: Uint8Array): Uint8Array | undefined {
  if (r.sealed === undefined || r.sealed === null) return undefined;
  return openSeal(profile, 'record', nodePrivate, r.sealed as SealedPayload, recordContext(r));
}
