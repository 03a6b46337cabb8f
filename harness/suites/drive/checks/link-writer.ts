// A link writer (spec/facets/drive.yaml, binding link-writer; project decisions, ra.drive.guest and
// ra.drive.commit-validated): a link holder with an `append` share writes as a guest, the author `g` + the
// base32 of its own Ed25519 key + `.guest.invalid`. Its record signed by that key is taken; the
// same record naming the drive's owner (signed by the owner's key), a name that is no guest's, or
// a guest name signed by another key is refused, and none of them is stored.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { hex16, record, type Author } from '../../../actors/drive/objects.ts';
import { guestAuthor } from '../../../../protocol/relay/drive/guest.ts';
import { publicKeyFromSeed } from '../../../../protocol/common/ed25519.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { bodyOf, ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const text = (s: string) => new Uint8Array(Buffer.from(s));

const guest = (): Author => {
  const seed = new Uint8Array(randomBytes(32));
  return { identity: guestAuthor(publicKeyFromSeed(seed)), seed };
};

export function linkWriter(t: RelayTarget): Check {
  const PARTS = ['owner-author', 'not-a-guest', 'other-key'] as const;
  return driveCheck(t, {
    id: 'drive/profile/link-writer',
    title: `a link holder with an append share appends a record as a guest author signed by its key; the same record as the owner, under a name that is no guest's, or signed by another key is refused 4xx and not stored (${PARTS.join(', ')})`,
    rules: ['ra.drive.guest'],
    context: ['ra.drive.link-auth', 'ra.drive.record', 'ra.drive.commit-validated'],
    cells: [
      { rule: 'ra.drive.guest' as RuleId, facet: 'link-writer', value: 'guest', operation: 'driveCommit' },
      ...PARTS.map((value) => ({ rule: 'ra.drive.guest' as RuleId, facet: 'link-writer', value, operation: 'driveCommit' })),
    ],
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const log = await s.file(owner, root.keys, 'drop box', new Uint8Array(0), { mode: 'append' });
      const link = randomBytes(16).toString('hex');
      await s.share(owner, { node: log.keys, role: 'append', link });
      const holder = { link };
      const me = guest();
      const append = (author: Author, payload: string, o: { seed?: Uint8Array } = {}) =>
        s.drive.commit(drive, holder, {
          id: hex16(),
          records: [record(s.profile, { drive, node: log.keys, author: o.seed ? { ...author, seed: o.seed } : author, sequence: 1, previous: '', payload: text(payload) })],
        });
      const refusedCases: Record<(typeof PARTS)[number], () => ReturnType<typeof append>> = {
        'owner-author': () => append(owner, 'as the owner'),
        'not-a-guest': () => append({ identity: `x${me.identity.slice(1)}`, seed: me.seed }, 'under no guest name'),
        'other-key': () => append(me, 'signed by another key', { seed: new Uint8Array(randomBytes(32)) }),
      };
      for (const part of PARTS) {
        const r = await refusedCases[part]();
        e.that(r.status >= 400 && r.status < 500, `through the link, a record (${part}) answered ${said(r)}`);
      }
      const taken = await append(me, 'as a guest');
      e.that(ok(taken), `through the link, the guest's own record answered ${said(taken)}`);
      const tail = await s.drive.node(drive, s.actor(owner), log.keys.node, '/records');
      const authors = ((bodyOf(tail)?.records as Obj[] | undefined) ?? []).map((x) => String(((x.record as Obj | undefined) ?? x).author));
      e.that(authors.length === 1 && authors[0] === me.identity, `after the link writes the records' authors are [${authors.join(', ')}], not only ${me.identity} (${said(tail)})`);
    },
  });
}
