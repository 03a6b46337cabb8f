// A read through a node is bound to that node (spec/facets/drive.yaml, kind binding): a member
// (or a link holder) granted one file reads that file's version, page, chunk and record chunk, and
// through the same routes asks for another node's version, page, chunk or record chunk, which it
// holds no share on: each is refused, so knowing an id or a hash grants nothing.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { DriveActor } from '../../../actors/drive/client.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { DriveSession, bodyOf, type Made, type RelayTarget } from '../driver.ts';
import { answerOf, judge, pool, type Answer } from './cells.ts';
import { driveCheck } from './document.ts';

const text = (s: string) => new Uint8Array(Buffer.from(s));
const OPERATIONS = ['driveVersion', 'drivePage', 'driveVersionChunk', 'driveRecordChunk'] as const;

export function bindingCells(): Array<{ rule: RuleId; facet: string; value: string; operation: string }> {
  return (['ra.drive.members', 'ra.drive.link-auth'] as const).flatMap((rule) => OPERATIONS.map((operation) => ({ rule, facet: 'read-bound', value: 'node', operation })));
}

/** The first page hash of a version, read as the owner. */
async function firstPage(s: DriveSession, owner: RelayIdentity, f: Made): Promise<string> {
  const v = await s.drive.get(owner.identity, `/nodes/${f.keys.node}/versions/${f.version}`, s.actor(owner));
  return String(((bodyOf(v)?.pages as string[] | undefined) ?? [])[0]);
}

export function readsBound(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/matrix/reads-bound',
    title:
      "a member or link holder granted one folder reads its file's version, page, chunk and record chunk, and the same routes naming another node's version, page, chunk or record chunk are refused",
    rules: ['ra.drive.members', 'ra.drive.link-auth'],
    context: ['ra.drive.versions', 'ra.drive.chunk-access', 'ra.drive.roles'],
    cells: bindingCells(),
    lane: 'drive-bound',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const [granted, apart] = await Promise.all([s.folder(owner, root.keys, 'granted'), s.folder(owner, root.keys, 'apart')]);
      const [a, b, la, lb, member] = await Promise.all([
        s.file(owner, granted.keys, 'a', text('granted content')),
        s.file(owner, apart.keys, 'b', text('content apart')),
        s.log(owner, granted.keys, 'la'),
        s.log(owner, apart.keys, 'lb'),
        s.identity(),
      ]);
      const link = randomBytes(16).toString('hex');
      await Promise.all([
        s.share(owner, { node: granted.keys, role: 'read', member: { identity: member.identity, encryption: member.encryption.publicKey } }),
        s.share(owner, { node: granted.keys, role: 'read', link }),
      ]);
      const [pageA, pageB] = await Promise.all([firstPage(s, owner, a), firstPage(s, owner, b)]);
      const holders: Array<[string, DriveActor]> = [
        ['the member', s.actor(member)],
        ['the link holder', { link }],
      ];
      type Read = { what: string; allowed: boolean; run: (actor: DriveActor) => Promise<Answer> };
      const get = (rest: string) => async (actor: DriveActor) => answerOf(await s.drive.get(drive, rest, actor));
      const va = `/nodes/${a.keys.node}/versions/${a.version}`;
      const reads: Read[] = [
        { what: "its file's version", allowed: true, run: get(va) },
        { what: "its file's page", allowed: true, run: get(`${va}/pages/${pageA}`) },
        { what: "its file's chunk", allowed: true, run: async (x) => answerOf(await s.drive.chunk(drive, x, a.keys.node, a.version, a.chunks[0]!.id)) },
        { what: "its append file's record chunk", allowed: true, run: async (x) => answerOf(await s.drive.chunk(drive, x, la.log.keys.node, undefined, la.chunks[0]!.id)) },
        { what: "another file's version through its file", allowed: false, run: get(`/nodes/${a.keys.node}/versions/${b.version}`) },
        { what: "another file's page through its file's version", allowed: false, run: get(`${va}/pages/${pageB}`) },
        { what: "another file's chunk through its file's version", allowed: false, run: async (x) => answerOf(await s.drive.chunk(drive, x, a.keys.node, a.version, b.chunks[0]!.id)) },
        { what: "another append file's record chunk through its own", allowed: false, run: async (x) => answerOf(await s.drive.chunk(drive, x, la.log.keys.node, undefined, lb.chunks[0]!.id)) },
      ];
      const jobs = holders.flatMap(([who, actor]) => reads.map((r) => ({ who, actor, r })));
      const verdicts = await pool(jobs, 8, async ({ who, actor, r }) => {
        const problem = judge(r.allowed ? 'allowed' : 'refused', await r.run(actor));
        return problem ? `${who} reading ${r.what} ${problem}` : undefined;
      });
      for (const v of verdicts) if (v) e.fail(v);
    },
  });
}
