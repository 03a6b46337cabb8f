// Uploads of one chunk side by side (the project's decisions, spec/rules ra.drive.chunk-upload and
// ra.drive.quota): one of them creates the chunk, and they store its bytes once, so they count
// once against the quota. Found from outside against the reference (issue 26, item 4).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { encryptContent, nodeKeys, type Chunk } from '../../../actors/drive/objects.ts';
import { CheckSkip } from '../../../run/verdict.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import type { DriveSession } from '../driver.ts';
import { driveCheck } from './document.ts';

/**
 * Uploads in flight together: each authenticates with its own challenge, and the project keeps at
 * most 16 per identity (challenges_per_identity_max).
 */
const TOGETHER = 8;
const MiB = 1024 * 1024;

/** One chunk of about `bytes` bytes, sealed for a new node of `drive`. */
const chunkOf = (s: DriveSession, drive: string, bytes: number): Chunk => encryptContent(s.profile, drive, nodeKeys(undefined, true), new Uint8Array(randomBytes(bytes)), 1, bytes)[0]!;

function createdOnce(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/chunk-upload-race',
    title: `${TOGETHER} uploads of one new chunk side by side answer one 201 (the upload that created it) and 200 to every other`,
    rules: ['ra.drive.chunk-upload'],
    cells: [{ rule: 'ra.drive.chunk-upload', facet: 'once', value: 'race', operation: 'driveChunkPut' }],
    run: async (s, e) => {
      const { id } = await s.owner();
      const answers = await s.drive.putTogether(id.identity, s.actor(id), chunkOf(s, id.identity, 100_000), TOGETHER);
      const created = answers.filter((r) => r.status === 201).length;
      const other = answers.find((r) => r.status !== 200 && r.status !== 201);
      e.that(created === 1 && other === undefined, `the uploads answered ${answers.map((r) => r.status).join(', ')}${other ? `; one: ${said(other)}` : ''}`);
    },
  });
}

function heldOnce(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/quota-same-chunk',
    title: `with room left for one chunk, ${TOGETHER} uploads of it side by side are all stored: its bytes count once against the quota`,
    rules: ['ra.drive.quota'],
    cells: [{ rule: 'ra.drive.quota', facet: 'same-chunk', value: 'at', operation: 'driveChunkPut' }],
    timeoutMs: 60_000,
    run: async (s, e) => {
      const { id } = await s.owner();
      const root = bodyOf(await s.drive.root(id.identity, s.actor(id)));
      const q = Number(root?.quota);
      if (!(q > 0 && q <= 16 * MiB)) throw new CheckSkip(`the quota is ${String(q)} bytes: filling it is not checked above 16 MiB`);
      const c = chunkOf(s, id.identity, MiB);
      // Chunks of its size until less than twice its size is left: room for it once, not twice.
      let used = Number(root?.used);
      while (q - used >= 2 * c.size) {
        const filler = await s.drive.putChunk(id.identity, s.actor(id), chunkOf(s, id.identity, MiB));
        if (!ok(filler)) throw new CheckSkip(`filling the drive to ${used} of ${q} bytes, an upload answered ${said(filler)}`);
        used = Number(bodyOf(await s.drive.root(id.identity, s.actor(id)))?.used);
      }
      const answers = await s.drive.putTogether(id.identity, s.actor(id), c, TOGETHER);
      const refused = answers.find((r) => !ok(r));
      e.that(
        refused === undefined,
        `with ${q - used} of ${q} bytes left, uploads of one ${c.size}-byte chunk answered ${answers.map((r) => r.status).join(', ')}${refused ? `; one: ${said(refused)}` : ''}`,
      );
      const after = Number(bodyOf(await s.drive.root(id.identity, s.actor(id)))?.used);
      e.that(after === used + c.size, `the drive holds ${after} bytes after them, not ${used} + ${c.size}`);
    },
  });
}

export function concurrencyChecks(t: RelayTarget): Check[] {
  return [createdOnce(t), heldOnce(t)];
}
