// The project's codes for the drive's refusals of who it does not know (spec/rules
// ra.drive.refusals): document 3 names no drive failure's code. Found by measuring
// reference/relay/drive/access.ts whole (issue 25): a relay answering the drive of an identity
// homed on another relay, or naming an unknown link with another code, passed every check.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { refusedWith } from '../../../run/answers.ts';
import { said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

const text = (s: string) => new Uint8Array(Buffer.from(s));

function refusalCodes(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/refusals',
    title:
      "the drive of an identity homed on the peer, or of one nothing resolves, is 404 `not_found` here; a caller nothing resolves 401 `challenge_invalid`; an X-Svc-Link naming no live link (unknown, or with a character more), a stranger with no share and a password link's wrong verifier 403 `not_authorized`",
    rules: ['ra.drive.refusals', 'ra.drive.link-opens'],
    run: async (s, e) => {
      const { id, root } = await s.owner();
      const f = await s.file(id, root.keys, 'kept.txt', text('kept'));
      const [remote, stranger] = await Promise.all([s.identity('peer'), s.identity()]);
      const nobody = await s.unresolvable();
      const unresolved = { identity: nobody, seed: new Uint8Array(randomBytes(32)) };
      const [link, locked] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
      // A password link (a verifier hash that no header hashes to: no KDF is run here).
      await s.share(id, { node: f.keys, role: 'read', link: locked, password: { salt: new Uint8Array(16), verifierHash: 'ab'.repeat(32), key: new Uint8Array(32) } });
      const cases = [
        [`GET /drive/${remote.identity} (homed on the peer) by its owner`, () => s.drive.get(remote.identity, '', s.actor(remote)), 404, 'not_found'],
        [`GET /drive/${nobody} (nothing resolves) by its name`, () => s.drive.get(nobody, '', unresolved), 404, 'not_found'],
        [`a read by ${nobody}, which nothing resolves`, () => s.drive.node(id.identity, unresolved, f.keys.node), 401, 'challenge_invalid'],
        ['a read through a link the drive never made', () => s.drive.node(id.identity, { link }, f.keys.node), 403, 'not_authorized'],
        ['a read through a link of 33 hex digits', () => s.drive.node(id.identity, { link: `${link}0` }, f.keys.node), 403, 'not_authorized'],
        ['a read by an identity with no share', () => s.drive.node(id.identity, s.actor(stranger), f.keys.node), 403, 'not_authorized'],
        ['a read through a password link with a wrong verifier', () => s.drive.node(id.identity, { link: locked, verifier: new Uint8Array(32) }, f.keys.node), 403, 'not_authorized'],
      ] as const;
      for (const [what, call, status, code] of cases) {
        const r = await call();
        e.that(refusedWith(r, status, code), `${what}: ${said(r)}, not ${status} ${code}`);
      }
    },
  });
}

export function refusalChecks(t: RelayTarget): Check[] {
  return [refusalCodes(t)];
}
