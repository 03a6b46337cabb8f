// A drive's bytes used and its quota are the drive's (spec/facets/drive.yaml, kind limit, scope
// drive): a member's upload counts in the drive's bytes used; uploads up to the quota are taken
// (at), the next one is refused and leaves the bytes used as they were (past) whoever sends it,
// and the member's own drive still takes it (other scope). The root answer's `used` and `quota`
// are the names the deployed client reads (wire transcript drive.json), context here.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { CheckSkip } from '../../../run/verdict.ts';
import type { DriveActor } from '../../../actors/drive/client.ts';
import { encryptContent, nodeKeys, type Chunk } from '../../../actors/drive/objects.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { DriveSession, bodyOf, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

const BUCKET = 4096;
/** A stored chunk's bytes beyond its buckets: nonce and tag (ra.drive.chunk). */
const OVERHEAD = limits.drive_chunk_min_bytes - BUCKET;
const MAX_BUCKETS = (limits.drive_chunk_max_bytes - OVERHEAD) / BUCKET;
/** Above this quota, filling the drive is not checked (it would upload that much). */
const FILLABLE = 16 * 1024 * 1024;

export function quotaCells(): Array<{ rule: RuleId; facet: string; value: string; operation: string }> {
  return ['at', 'past', 'other-scope'].flatMap((value) => ['driveChunkPut', 'driveMissing'].map((operation) => ({ rule: 'ra.drive.root' as RuleId, facet: 'quota', value, operation })));
}

/** A chunk of `buckets` buckets (its stored size OVERHEAD + buckets * BUCKET). */
function chunkOf(s: DriveSession, drive: string, buckets: number): Chunk {
  const plain = new Uint8Array(randomBytes(buckets * BUCKET - 4));
  return encryptContent(s.profile, drive, nodeKeys(undefined, true), plain, 1, plain.length)[0]!;
}

async function usage(s: DriveSession, drive: string, actor: DriveActor): Promise<{ used: number; quota: number; shown: string }> {
  const r = await s.drive.root(drive, actor);
  const b = bodyOf(r);
  return { used: Number(b?.used), quota: Number(b?.quota), shown: said(r) };
}

export function quotaScope(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/matrix/quota-scope',
    title: "a member's uploads count in the drive's bytes used; uploads up to the quota are taken, the next is refused whoever sends it and changes nothing, and the member's own drive still takes it",
    rules: ['ra.drive.root'],
    context: ['ra.drive.root-body', 'ra.drive.quota', 'ra.drive.missing', 'ra.drive.chunk'],
    cells: quotaCells(),
    lane: 'drive-quota',
    timeoutMs: 60_000,
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const start = await usage(s, drive, s.actor(owner));
      if (!Number.isFinite(start.used) || !Number.isFinite(start.quota)) return e.fail(`the root answer carries no numeric used and quota: ${start.shown}`);
      if (start.quota > FILLABLE) throw new CheckSkip(`the quota is ${start.quota} bytes: filling it is not checked above ${FILLABLE}`);
      const member = await s.identity();
      await s.share(owner, { node: root.keys, role: 'write', member: { identity: member.identity, encryption: member.encryption.publicKey } });
      const [ownerActor, memberActor] = [s.actor(owner), s.actor(member)];
      // A member's upload is the drive's bytes.
      const first = chunkOf(s, drive, Math.min(MAX_BUCKETS, Math.floor((start.quota - start.used - OVERHEAD) / BUCKET / 2)));
      const up = await s.drive.uploadChunks(drive, memberActor, [first]);
      if (!e.that(up === undefined, `the member's upload of ${first.size} bytes into the drive: ${up?.text}`)) return;
      const after = await usage(s, drive, ownerActor);
      e.that(after.used >= start.used + first.size, `after the member uploaded ${first.size} bytes the drive's bytes used went from ${start.used} to ${after.used}: ${after.shown}`);
      // At: chunks filling the drive to within one bucket of its quota are taken.
      let used = after.used;
      for (let room = Math.floor((start.quota - used - OVERHEAD) / BUCKET); room >= 1; room = Math.floor((start.quota - used - OVERHEAD) / BUCKET)) {
        const c = chunkOf(s, drive, Math.min(room, MAX_BUCKETS));
        const r = await s.drive.uploadChunks(drive, ownerActor, [c]);
        if (!e.that(r === undefined, `with ${start.quota - used} bytes left of the quota, an upload of ${c.size} bytes: ${r?.text}`)) return;
        used += c.size;
      }
      // Past: the smallest chunk no longer fits, whoever sends it; nothing is stored.
      const past = chunkOf(s, drive, 1);
      for (const [who, actor] of [
        ['the member', memberActor],
        ['the owner', ownerActor],
      ] as const) {
        const listed = await s.drive.missing(drive, actor, [past]);
        const put = await s.drive.putChunk(drive, actor, past);
        e.that(
          listed.status >= 400 || put.status >= 400,
          `${who}'s ${past.size} bytes past the quota (${start.quota - used} left) were taken: the missing list answered ${said(listed)}, the upload ${said(put)}`,
        );
      }
      const full = await usage(s, drive, ownerActor);
      e.that(full.used === used && full.used <= full.quota, `past the quota the drive's bytes used are ${full.used} (expected ${used}, quota ${full.quota}): ${full.shown}`);
      // Other scope: the member's own drive takes the same chunk.
      const own = await s.drive.uploadChunks(member.identity, memberActor, [past]);
      e.that(own === undefined, `the member's own drive refused ${past.size} bytes while another drive is full: ${own?.text}`);
    },
  });
}
