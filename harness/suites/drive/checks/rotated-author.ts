// A drive's owner after a key rotation (project decision: each commit is signed by its author's
// key, ra.drive.commit-validated; a rotation makes the new key the identity's, ra.identities.rotate).
// The owner rotates its key at its relay, the old key still inside its previous_keys window; a
// manifest the new key signs, sent by a request the new key signs, is taken at once, and one the
// old key signs is taken while its window lasts.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { create, nodeKeys } from '../../../actors/drive/objects.ts';
import { rotation } from '../../../actors/relay/index.ts';
import { CheckSkip } from '../../relay/driver.ts';
import { ok, said, type RelayTarget } from '../driver.ts';
import { driveCheck } from './document.ts';

export function rotatedAuthor(t: RelayTarget): Check {
  return driveCheck(t, {
    id: 'drive/profile/rotated-author',
    title: "after the owner rotates its key, a manifest the new key signs is taken, and one the old key signs while the old key's window lasts",
    rules: ['ra.drive.commit-validated'],
    context: ['ra.identities.rotate', 'ra.drive.commit'],
    run: async (s, e) => {
      const facts = (await s.facts()).relay;
      if (facts.hostedDomains.length === 0) throw new CheckSkip('the relay hosts no domain: a drive owner cannot rotate its key there');
      const { id: owner, root } = await s.owner();
      const newSeed = new Uint8Array(randomBytes(32));
      const r = await s.relay.post(`/identities/${encodeURIComponent(owner.identity)}/rotate`, rotation(s.profile, owner, facts.relayAddress, newSeed));
      if (!e.that(ok(r), `the owner's rotation answered ${said(r)}`)) return;
      const rotated = { ...owner, seed: newSeed };
      for (const [which, author] of [
        ['the new key', rotated],
        ['the old key, inside its window', owner],
      ] as const) {
        const body = create(s.profile, {
          drive: owner.identity,
          author,
          keys: nodeKeys(),
          kind: 'folder',
          at: { folder: root.keys, name: `signed by ${which}` },
          ownerEncryption: owner.encryption.publicKey,
        });
        const c = await s.drive.commit(owner.identity, s.actor(author), body);
        e.that(ok(c), `a folder signed by ${which} after the rotation answered ${said(c)}`);
      }
    },
  });
}
