// Who may call each owner operation of document 3 (spec/facets/relay-owner.yaml, kind who): the
// system documents (challenge-signed: the owner and its sessions), the keystore's writes and list
// (identity-signed: the identity key alone), its fetch (an authenticator enrolled for this
// identity), and the approver's pairing steps. Every refused principal is refused and changes
// nothing, read back by the owner; the allowed ones then succeed.
import { randomBytes } from 'node:crypto';
import type { Cell, Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { SoftwareAuthenticator, type EnrollmentInput } from '../../../actors/relay/index.ts';
import {
  adminSigned,
  castOf,
  enrollFields,
  enrollStepWith,
  enrollWithEnvelope,
  keystoreListWith,
  keystoreRemoveWith,
  learnSystemPath,
  REFUSED_PRINCIPALS,
  registeredSession,
  systemAs,
} from '../../../actors/relay/owner.ts';
import { offer, sealFor } from '../../../actors/relay/pairing.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, isObject, safeJson, said, type RelayTarget } from '../driver.ts';
import { listed as listedIds } from './keystore-matrix.ts';

/** Its own lane: fresh identities only, overlapping the suite's other checks. */
const LANE = 'relay/owner';
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const refused = (r: HttpResponse) => r.status >= 400 && r.status < 500;

/** The cells of a who facet: `values` on each of `operations`. */
export const cellsOf = (rule: RuleId, facet: string, values: readonly string[], operations: readonly string[]): Array<Cell & { rule: RuleId }> =>
  operations.flatMap((operation) => values.map((value) => ({ rule, facet, value, operation })));

const contacts = (who: string) => JSON.stringify({ version: 1, contacts: [{ identity: `${who}.example.org`, state: 'accepted' }] });

function systemWhoCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/owner/system-who',
    lane: LANE,
    title:
      "a private system document refuses (401) another identity, that identity's session, its session presented as the owner's, the owner's revoked session and a stranger, on GET, PUT and DELETE, and is unchanged; the owner and its own session read, write and delete it",
    rules: ['ra.system.files'],
    cells: cellsOf('ra.system.files', 'who', ['owner', 'own-session', ...REFUSED_PRINCIPALS], ['systemGet', 'systemPut', 'systemDelete']),
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const cast = await castOf(s.relay, owner, other);
      const { path, answer } = await learnSystemPath(s.relay, owner, 'relay/contacts.json', contacts('first'));
      if (!e.that(ok(answer), `the owner's PUT of its contacts.json answered ${said(answer)}`)) return;
      await Promise.all(
        REFUSED_PRINCIPALS.map(async (who) => {
          const get = await systemAs(s.relay, cast, who, 'GET', path);
          e.that(get.status === 401 && !get.text().includes('first.example.org'), `GET of the owner's ${path} by ${who} answered ${said(get)}, expected 401`);
          const put = await systemAs(s.relay, cast, who, 'PUT', path, contacts(who));
          e.that(put.status === 401, `PUT of the owner's ${path} by ${who} answered ${said(put)}, expected 401`);
          const del = await systemAs(s.relay, cast, who, 'DELETE', path);
          e.that(del.status === 401, `DELETE of the owner's ${path} by ${who} answered ${said(del)}, expected 401`);
        }),
      );
      const kept = await systemAs(s.relay, cast, 'owner', 'GET', path);
      e.that(kept.status === 200 && JSON.stringify(safeJson(kept)) === contacts('first'), `after the refused calls the owner reads ${said(kept)}, not what it wrote`);
      for (const who of ['own-session', 'owner'] as const) {
        const put = await systemAs(s.relay, cast, who, 'PUT', path, contacts(who));
        e.that(ok(put), `PUT by ${who} answered ${said(put)}`);
        const got = await systemAs(s.relay, cast, who, 'GET', path);
        e.that(got.status === 200 && JSON.stringify(safeJson(got)) === contacts(who), `GET by ${who} after its write answered ${said(got)}`);
        const del = await systemAs(s.relay, cast, who, 'DELETE', path);
        e.that(ok(del), `DELETE by ${who} answered ${said(del)}`);
        const after = await systemAs(s.relay, cast, 'owner', 'GET', path);
        e.that(refused(after), `after the DELETE by ${who} the owner's GET answered ${said(after)}`);
      }
    },
  });
}

const wrapped = () => JSON.stringify({ iv: randomBytes(12).toString('base64url'), ciphertext: randomBytes(48).toString('base64url') });
const enrollment = (auth?: SoftwareAuthenticator): EnrollmentInput => ({
  enrollment_id: `enr-${randomBytes(6).toString('hex')}`,
  kind: auth ? 'passkey' : 'recovery-kit',
  wrap: auth ? 'prf' : 'passphrase',
  wrapped: wrapped(),
  ...(auth ? auth.credential() : {}),
  label: 'matrix',
});

const KEYSTORE_REFUSED = ['own-session', 'other-identity', 'stranger'] as const;

function keystoreWhoCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/owner/keystore-who',
    lane: LANE,
    title:
      "the keystore's enrollment, list and removal signed by the owner's session key or by another identity's key, or unsigned, are refused and change nothing; the fetch refuses another identity's enrolled authenticator; the owner's identity key and its own authenticator succeed",
    rules: ['ra.keystore.enroll', 'ra.keystore.list', 'ra.keystore.remove', 'ra.keystore.fetch'],
    cells: [
      ...cellsOf('ra.keystore.enroll', 'who', ['owner', ...KEYSTORE_REFUSED], ['keystoreEnroll']),
      ...cellsOf('ra.keystore.list', 'who', ['owner', ...KEYSTORE_REFUSED], ['keystoreList']),
      ...cellsOf('ra.keystore.remove', 'who', ['owner', ...KEYSTORE_REFUSED], ['keystoreRemove']),
      ...cellsOf('ra.keystore.fetch', 'who', ['own-authenticator', 'other-identity-authenticator', 'stranger'], ['keystoreFetch']),
    ],
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const session = await registeredSession(s.relay, owner);
      const signer = { 'own-session': session.seed, 'other-identity': other.seed, stranger: undefined } as const;
      const mine = new SoftwareAuthenticator(-7);
      const theirs = new SoftwareAuthenticator(-7);
      const kept = enrollment(mine);
      const spare = enrollment();
      for (const [id, en] of [
        [owner, kept],
        [owner, spare],
        [other, enrollment(theirs)],
      ] as const) {
        const r = await s.relay.keystoreEnroll(id, en);
        if (r.status !== 200) throw new CheckFailure(`the owner's enrollment answered ${said(r)}`);
      }
      const intruded: string[] = [];
      await Promise.all(
        KEYSTORE_REFUSED.map(async (who) => {
          const seed = signer[who];
          const en = enrollment();
          intruded.push(en.enrollment_id);
          const envelope = async (name: 'keystore-enroll' | 'keystore-list' | 'keystore-remove', fields: Record<string, unknown>) => (seed ? adminSigned(s.profile, name, fields, seed) : {});
          const put = await enrollWithEnvelope(s.relay, owner.identity, en, await envelope('keystore-enroll', await enrollFields(owner.identity, en)));
          e.that(refused(put), `an enrollment by ${who} answered ${said(put)}, expected a refusal`);
          const list = await keystoreListWith(s.relay, owner.identity, await envelope('keystore-list', { identity: owner.identity }));
          e.that(refused(list) && !list.text().includes(kept.enrollment_id), `the list by ${who} answered ${said(list)}, expected a refusal`);
          const rm = await keystoreRemoveWith(s.relay, owner.identity, spare.enrollment_id, await envelope('keystore-remove', { identity: owner.identity, enrollment_id: spare.enrollment_id }));
          e.that(refused(rm), `the removal by ${who} answered ${said(rm)}, expected a refusal`);
        }),
      );
      const listed = await listedIds(s, owner);
      e.that(listed.includes(spare.enrollment_id) && !intruded.some((x) => listed.includes(x)), `after the refused calls the owner's list is ${JSON.stringify(listed)}`);
      const challenge = async () => String((safeJson(await s.relay.challenge(owner.identity)) as { challenge?: unknown } | undefined)?.challenge);
      const byTheirs = await s.relay.keystoreFetch(owner.identity, theirs.assert({ challenge: await challenge(), rpId: owner.identity }), owner.identity);
      e.that(byTheirs.status === 401, `a fetch of the owner's keystore by an authenticator enrolled for another identity answered ${said(byTheirs)}, expected 401`);
      const bare = await s.relay.post(`/identities/${encodeURIComponent(owner.identity)}/keystore/fetch`, { rp_id: owner.identity });
      e.that(refused(bare), `a fetch with no assertion answered ${said(bare)}, expected a refusal`);
      const byMine = await s.relay.keystoreFetch(owner.identity, mine.assert({ challenge: await challenge(), rpId: owner.identity }), owner.identity);
      e.that(byMine.status === 200, `a fetch by the owner's own authenticator answered ${said(byMine)}, expected 200`);
      const rm = await s.relay.keystoreRemove(owner, spare.enrollment_id);
      e.that(ok(rm), `the owner's removal answered ${said(rm)}`);
      e.that(!(await listedIds(s, owner)).includes(spare.enrollment_id), 'the enrollment the owner removed is still listed');
    },
  });
}

const PAIRING_APPROVER_REFUSED = ['other-identity', 'own-session', 'new-device'] as const;
const BEARER_REFUSED = ['other-offer-device', 'owner', 'stranger'] as const;

function pairingWhoCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/owner/pairing-who',
    lane: LANE,
    title:
      "the approver's fetch and delivery signed by another identity or the owner's session key, or borne by the claim token, are refused and move nothing; the new device's reveal, poll and abandon refuse another offer's token, the owner's signature and no token",
    rules: ['ra.pairing.fetch', 'ra.pairing.deliver', 'ra.pairing.bearer'],
    cells: [
      ...cellsOf('ra.pairing.fetch', 'who', ['owner', ...PAIRING_APPROVER_REFUSED], ['enrollFetch']),
      ...cellsOf('ra.pairing.deliver', 'who', ['owner', ...PAIRING_APPROVER_REFUSED], ['enrollDeliver']),
      ...cellsOf('ra.pairing.bearer', 'who', ['new-device', ...BEARER_REFUSED], ['enrollReveal', 'enrollPoll', 'enrollAbandon']),
    ],
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const session = await registeredSession(s.relay, owner);
      const [o, sibling] = await Promise.all([offer(s.relay, owner.identity, 'matrix phone'), offer(s.relay, owner.identity, 'other phone')]);
      if (!o.code || !o.token || !sibling.token) throw new CheckFailure(`the offer answered ${said(o.answer)}`);
      const code = o.code;
      const token = o.token;
      const signedBy = (who: (typeof PAIRING_APPROVER_REFUSED)[number], name: 'enroll-fetch' | 'enroll-deliver') =>
        who === 'new-device' ? {} : adminSigned(s.profile, name, { identity: owner.identity, rendezvous_id: code }, who === 'own-session' ? session.seed : other.seed);
      const bearer = (who: (typeof PAIRING_APPROVER_REFUSED)[number]): Record<string, string> => (who === 'new-device' ? { authorization: `Bearer ${token}` } : {});
      const nonce = randomBytes(32).toString('base64url');
      for (const who of PAIRING_APPROVER_REFUSED) {
        const r = await enrollStepWith(s.relay, owner.identity, code, 'fetch', { approver_nonce: randomBytes(32).toString('base64url'), mode: 'scan', ...signedBy(who, 'enroll-fetch') }, bearer(who));
        e.that(refused(r), `a fetch by ${who} answered ${said(r)}, expected a refusal`);
      }
      // Nothing recorded an approver nonce: the owner's fetch takes the offer with its own.
      const f = await s.relay.enrollFetch(owner, code, { approver_nonce: nonce, mode: 'compare' });
      e.that(f.status === 200, `the owner's fetch after the refused ones answered ${said(f)}, expected 200`);
      const ownerSigned = (name: 'enroll-fetch') => adminSigned(s.profile, name, { identity: owner.identity, rendezvous_id: code }, owner.seed);
      const tokenOf = { 'other-offer-device': sibling.token, owner: undefined, stranger: undefined } as const;
      const path = `/identities/${encodeURIComponent(owner.identity)}/enroll/${encodeURIComponent(code)}`;
      for (const who of BEARER_REFUSED) {
        const t = tokenOf[who];
        const h: Record<string, string> = t ? { authorization: `Bearer ${t}` } : {};
        const body = who === 'owner' ? { ...o.key, identity: owner.identity, ...ownerSigned('enroll-fetch') } : o.key;
        const rv = await s.relay.post(`${path}/reveal`, body, h);
        e.that(refused(rv), `a reveal by ${who} answered ${said(rv)}, expected a refusal`);
        const p = await s.relay.get(path, h);
        e.that(refused(p) && !p.text().includes(nonce), `a poll by ${who} answered ${said(p)}, expected a refusal`);
        const d = await s.relay.post(path, who === 'owner' ? { identity: owner.identity, ...ownerSigned('enroll-fetch') } : {}, h, 'DELETE');
        e.that(refused(d), `an abandon by ${who} answered ${said(d)}, expected a refusal`);
      }
      const poll = await s.relay.enrollPoll(owner.identity, code, token);
      const pb = safeJson(poll);
      e.that(poll.status === 200 && isObject(pb) && pb.approver_nonce === nonce, `the new device's poll answered ${said(poll)}, expected the approver's nonce`);
      const rv = await s.relay.enrollReveal(owner.identity, code, token, o.key);
      e.that(ok(rv), `the new device's reveal after the refused ones answered ${said(rv)}`);
      const sealed = sealFor(s.profile, o.key.ephemeral_public_key, new Uint8Array(randomBytes(32)));
      for (const who of PAIRING_APPROVER_REFUSED) {
        const r = await enrollStepWith(s.relay, owner.identity, code, 'deliver', { sealed: `${sealed}x`, ...signedBy(who, 'enroll-deliver') }, bearer(who));
        e.that(refused(r), `a delivery by ${who} answered ${said(r)}, expected a refusal`);
      }
      const d = await s.relay.enrollDeliver(owner, code, sealed);
      e.that(ok(d), `the owner's delivery after the refused ones answered ${said(d)}`);
      const got = safeJson(await s.relay.enrollPoll(owner.identity, code, token));
      e.that(isObject(got) && got.sealed === sealed, `the new device took ${JSON.stringify(got)}, not the owner's delivery`);
      const ab = await s.relay.enrollAbandon(owner.identity, sibling.code!, sibling.token);
      e.that(ok(ab), `the new device's abandon of its own offer answered ${said(ab)}`);
    },
  });
}

export function ownerWhoChecks(t: RelayTarget): Check[] {
  return [systemWhoCheck(t), keystoreWhoCheck(t), pairingWhoCheck(t)];
}
