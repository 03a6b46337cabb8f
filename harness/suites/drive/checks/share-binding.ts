// A share's signature is bound to its fields (spec/facets/drive.yaml, binding share-signature; a
// project decision, ra.drive.commit-validated): the owner commits shares each with one signed
// field changed after signing (its drive, node, member, role, expiry, caps), and each is refused
// and never listed, while the share as signed is taken.
import type { Check } from '../../../run/model.ts';
import { share } from '../../../actors/drive/objects.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

type Obj = Record<string, unknown>;
const PARTS = ['drive', 'node', 'member', 'role', 'expires', 'caps'] as const;
const inAYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function shareBinding(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/share-signature',
    title: `a share with one signed field changed after signing (${PARTS.join(', ')}) is refused and never listed; the share as signed is taken`,
    rules: ['ra.drive.commit-validated'],
    context: ['ra.drive.share'],
    cells: PARTS.map((value) => ({ rule: 'ra.drive.commit-validated' as RuleId, facet: 'share-signature', value, operation: 'driveCommit' })),
    lane: 'drive-binding',
    run: async (s, e) => {
      const { id: owner, root } = await s.owner();
      const drive = owner.identity;
      const [docs, member, other] = await Promise.all([s.folder(owner, root.keys, 'docs'), s.identity(), s.stranger()]);
      const to = { identity: member.identity, encryption: member.encryption.publicKey };
      const base = () =>
        share(s.profile, { drive, issuer: owner, node: docs.keys, role: 'read', member: to, caps: { bytes: 4096 }, expires: new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z') });
      const swaps: Record<(typeof PARTS)[number], (x: Obj) => void> = {
        drive: (x) => void (x.drive = other.identity),
        node: (x) => void (x.node = root.keys.node),
        member: (x) => void (x.member = other.identity),
        role: (x) => void (x.role = 'admin'),
        expires: (x) => void (x.expires = inAYear()),
        caps: (x) => void (x.caps = { bytes: 8192 }),
      };
      const tried: string[] = [];
      for (const part of PARTS) {
        const made = base();
        swaps[part](made.body.share as Obj);
        tried.push(String((made.body.share as Obj).id));
        const r = await s.drive.commit(drive, s.actor(owner), made.body);
        e.that(r.status >= 400 && r.status < 500, `a share whose ${part} was changed after signing answered ${said(r)}`);
      }
      const signed = base();
      const r = await s.drive.commit(drive, s.actor(owner), signed.body);
      e.that(ok(r), `the share as signed answered ${said(r)}`);
      const [onDocs, onRoot] = await Promise.all([s.drive.node(drive, s.actor(owner), docs.keys.node, '/shares'), s.drive.node(drive, s.actor(owner), root.keys.node, '/shares')]);
      const listed = tried.filter((id) => onDocs.text().includes(id) || onRoot.text().includes(id));
      e.that(listed.length === 0, `shares refused for a changed field are listed: ${listed.join(', ')} (${said(onDocs)})`);
    },
  });
}
