// A link's opens and its proof-of-work token across the matrix (spec/facets/drive.yaml, rule
// ra.drive.link-opens, the project's: document 3 says only that the link answer tells the opens
// left and the proof-of-work). Opens: a link with N downloads serves N (a download is a read of a
// version's first chunk, or of an append record's first chunk), refuses the next 410 `link_gone`,
// and another link on the same node keeps all its own. Token: one token solved once serves every
// request of the link for its ten minutes, not one.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { refusedWith } from '../../../run/answers.ts';
import { solvePow } from '../../../actors/drive/link.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { DriveSession, bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { cellsOf } from './cells.ts';
import { driveCheck } from './document.ts';

const RULE = 'ra.drive.link-opens' as RuleId;
const text = (s: string) => new Uint8Array(Buffer.from(s));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The opens each link of the opens check carries. */
const OPENS = 2;

function linkOpensMatrix(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/matrix/link-opens',
    title: `a link with ${OPENS} downloads serves ${OPENS} downloads of a version's chunk and of a record chunk, refuses the next 410 \`link_gone\`, and another link on the same node still serves its own ${OPENS}; of 20 downloads at once through a fresh link, ${OPENS} are served`,
    rules: [RULE],
    cells: cellsOf(RULE, 'downloads', ['at', 'past', 'other-scope'], ['driveVersionChunk', 'driveRecordChunk']),
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const [
        file,
        {
          log,
          chunks: [chunk],
        },
      ] = await Promise.all([s.file(owner, root.keys, 'f', text('downloaded a few times')), s.log(owner, root.keys, 'log')]);
      const reads = [
        { operation: 'driveVersionChunk', made: file, read: (link: string) => s.drive.chunk(drive, { link }, file.keys.node, file.version, file.chunks[0]!.id) },
        { operation: 'driveRecordChunk', made: log, read: (link: string) => s.drive.chunk(drive, { link }, log.keys.node, undefined, chunk!.id) },
      ];
      for (const r of reads) {
        const [spent, other] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
        await Promise.all([spent, other].map((link) => s.share(owner, { node: r.made.keys, role: 'read', link, caps: { downloads: OPENS } })));
        for (let i = 1; i <= OPENS; i++) {
          const a = await r.read(spent);
          if (!e.that(ok(a), `${r.operation}: download ${i} of ${OPENS} through a link with ${OPENS} answered ${said(a)}`)) break;
        }
        const past = await r.read(spent);
        e.that(refusedWith(past, 410, 'link_gone'), `${r.operation}: download ${OPENS + 1} through a link with ${OPENS} answered ${said(past)}, not 410 link_gone`);
        for (let i = 1; i <= OPENS; i++) {
          const a = await r.read(other);
          if (!e.that(ok(a), `${r.operation}: after another link on the node ran out, download ${i} of ${OPENS} through this one answered ${said(a)}`)) break;
        }
      }
      // Raced: of 20 downloads at once through a fresh link with OPENS, OPENS are served and the rest refused 410.
      const raced = randomBytes(16).toString('hex');
      await s.share(owner, { node: file.keys, role: 'read', link: raced, caps: { downloads: OPENS } });
      const all = await Promise.all(Array.from({ length: 20 }, () => reads[0]!.read(raced)));
      const served = all.filter((a) => ok(a)).length;
      const other = all.find((a) => !ok(a) && !refusedWith(a, 410, 'link_gone'));
      e.that(
        served === OPENS && other === undefined,
        `20 downloads at once through a link with ${OPENS}: ${served} served${other ? `, one answered ${said(other)}` : ''}, not ${OPENS} served and the rest 410 link_gone`,
      );
    },
  });
}

function powWindow(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/matrix/link-pow-window',
    title: "one proof-of-work token of a link's answer, solved once, serves the link's node and chunk reads again and again a few seconds later (it is good for ten minutes, not once)",
    rules: [RULE],
    context: ['ra.drive.pow', 'ra.drive.links-body'],
    cells: cellsOf(RULE, 'pow-token', ['inside'], ['driveNode', 'driveVersionChunk']),
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const file = await s.file(owner, root.keys, 'worked for', text('behind some work'));
      const link = randomBytes(16).toString('hex');
      await s.share(owner, { node: file.keys, role: 'read', link, pow: 8 });
      const answer = await s.drive.link(drive, link);
      const pow = bodyOf(answer)?.pow as Record<string, unknown> | null | undefined;
      const solved = pow && typeof pow.token === 'string' ? solvePow(pow.token, Number(pow.bits), 1 << 22) : undefined;
      if (!e.that(solved !== undefined, `the link answer gave no proof-of-work to solve: ${said(answer)}`)) return;
      const holder = { link, pow: solved! };
      const uses = [
        ['driveNode', () => s.drive.node(drive, holder, file.keys.node)],
        ['driveVersionChunk', () => s.drive.chunk(drive, holder, file.keys.node, file.version, file.chunks[0]!.id)],
      ] as const;
      // Each use twice, the second round a little later: the token is neither spent nor stale.
      for (const round of [1, 2]) {
        if (round === 2) await sleep(1500);
        for (const [operation, use] of uses) {
          const r = await use();
          e.that(ok(r), `${operation} with the link's token (use ${round}) answered ${said(r)}`);
        }
      }
    },
  });
}

/** A link answer's proof-of-work solved (`<token>.<solution>`) and its bits, or undefined when it asks none. */
async function solved(s: DriveSession, drive: string, link: string): Promise<{ solution: string; bits: number } | undefined> {
  const pow = bodyOf(await s.drive.link(drive, link))?.pow as Record<string, unknown> | null | undefined;
  const solution = pow && typeof pow.token === 'string' ? solvePow(pow.token, Number(pow.bits), 1 << 22) : undefined;
  return solution === undefined ? undefined : { solution, bits: Number(pow!.bits) };
}

function powBound(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/link-pow',
    title:
      "a link whose share asks for work refuses a node read 403 `not_authorized` without X-Svc-Link-Pow, with a wrong solution, with a token it never issued (solved) and with another link's solved token; its own solved token reads",
    rules: [RULE],
    context: ['ra.drive.pow', 'ra.drive.links-body'],
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const file = await s.file(owner, root.keys, 'worked for', text('behind some work'));
      const [link, other] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
      await Promise.all([link, other].map((l) => s.share(owner, { node: file.keys, role: 'read', link: l, pow: 8 })));
      const [mine, theirs] = await Promise.all([solved(s, drive, link), solved(s, drive, other)]);
      if (!e.that(mine !== undefined && theirs !== undefined, 'the link answers gave no proof-of-work to solve')) return;
      const [token] = mine!.solution.split('.');
      // A token of the right form, solved at the link's bits, that the relay never handed out.
      const unissued = solvePow(randomBytes(16).toString('base64url'), mine!.bits, 1 << 22);
      const cases: Array<[string, string | undefined]> = [
        ['without X-Svc-Link-Pow', undefined],
        ['with a wrong solution', `${token}.not-a-solution`],
        ['with a token it never issued, solved', unissued],
        ["with the other link's solved token", theirs!.solution],
      ];
      for (const [what, pow] of cases) {
        const r = await s.drive.node(drive, { link, ...(pow !== undefined ? { pow } : {}) }, file.keys.node);
        e.that(refusedWith(r, 403, 'not_authorized'), `a node read through the link ${what}: ${said(r)}, not 403 not_authorized`);
      }
      const r = await s.drive.node(drive, { link, pow: mine!.solution }, file.keys.node);
      e.that(ok(r), `a node read through the link with its own solved token: ${said(r)}`);
    },
  });
}

export function linkMatrixChecks(t: RelayTarget): Check[] {
  return [linkOpensMatrix(t), powWindow(t), powBound(t)];
}
