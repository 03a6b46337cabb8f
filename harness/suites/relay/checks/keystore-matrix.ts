// The keystore across its matrix (spec/facets/relay-owner.yaml): each signed part of an
// enrollment, list and removal swapped alone for another valid one; the fetch's challenge bound to
// this identity and spent once, even by 20 racing fetches; the recovery master's assertion bound
// to its role and its identity; and what a removal ends.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { SoftwareAuthenticator, type EnrollmentInput, type RelayIdentity } from '../../../actors/relay/index.ts';
import { adminSigned, enrollFields, enrollWithEnvelope, keystoreListWith, keystoreRemoveWith, race, type Swap } from '../../../actors/relay/owner.ts';
import { relayCheck } from '../check.ts';
import { enrollmentInput, listedRows } from './keystore.ts';
import { CheckFailure, CheckSkip, isObject, safeJson, said, sleep, type RelayTarget, type Session } from '../driver.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { registrableDomain } from '../../../../protocol/relay/rp-id.ts';

/** Its own lane: fresh identities only, overlapping the suite's other checks. */
const LANE = 'relay/keystore-matrix';
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const RACE = 20;

const enrollment = (auth?: SoftwareAuthenticator, role?: string): EnrollmentInput => enrollmentInput({ label: 'matrix', ...(role ? { role } : {}) }, auth);

async function enrolled(s: Session, id: RelayIdentity, en: EnrollmentInput): Promise<EnrollmentInput> {
  const r = await s.relay.keystoreEnroll(id, en);
  if (r.status !== 200) throw new CheckFailure(`enrolling ${en.enrollment_id} answered ${said(r)}, not 200`);
  return en;
}

/** The ids of the identity's listed enrollments. */
export async function listed(s: Session, id: RelayIdentity): Promise<string[]> {
  return (await listedRows(s, id)).map((x) => String(x.enrollment_id));
}

async function challengeFor(s: Session, identity: string): Promise<string> {
  const b = safeJson(await s.relay.challenge(identity));
  if (!isObject(b) || typeof b.challenge !== 'string') throw new CheckFailure(`GET /auth/challenge for ${identity} answered no challenge`);
  return b.challenge;
}

const ENROLL_PARTS = ['identity', 'enrollment-id', 'kind', 'credential-id', 'wrapped-digest', 'issued-at', 'nonce'] as const;
const LIST_PARTS = ['identity', 'issued-at', 'nonce'] as const;
const REMOVE_PARTS = ['identity', 'enrollment-id', 'issued-at', 'nonce'] as const;

/** The swap of `part`: another valid value in place of the one sent. */
function swapOf(part: string, other: { identity: string; enrollmentId: string; credentialId: string }): Swap {
  switch (part) {
    case 'identity':
      return { field: 'identity', value: other.identity };
    case 'enrollment-id':
      return { field: 'enrollment_id', value: other.enrollmentId };
    case 'kind':
      return { field: 'kind', value: 'hardware-key' };
    case 'credential-id':
      return { field: 'credential_id', value: other.credentialId };
    case 'wrapped-digest':
      return { field: 'wrapped_digest', value: randomBytes(32).toString('base64url') };
    case 'issued-at':
      return { part: 'issued-at' };
    default:
      return { part: 'nonce' };
  }
}

function bindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore-matrix/signed-parts',
    lane: LANE,
    title:
      'an enrollment and a removal whose identity_signature covers one other valid part than the one sent (identity, enrollment_id, kind, credential_id, wrapped_digest, issued_at, nonce) are refused 401, a list refused, and nothing changes',
    rules: ['ra.signing.keystore-enroll', 'ra.signing.keystore-list', 'ra.signing.keystore-remove'],
    cells: [
      ...ENROLL_PARTS.map((value) => ({ rule: 'ra.signing.keystore-enroll' as const, facet: 'binding', value, operation: 'keystoreEnroll' })),
      ...LIST_PARTS.map((value) => ({ rule: 'ra.signing.keystore-list' as const, facet: 'binding', value, operation: 'keystoreList' })),
      ...REMOVE_PARTS.map((value) => ({ rule: 'ra.signing.keystore-remove' as const, facet: 'binding', value, operation: 'keystoreRemove' })),
    ],
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const [first, second] = [await enrolled(s, owner, enrollment()), await enrolled(s, owner, enrollment())];
      const others = { identity: other.identity, enrollmentId: second.enrollment_id, credentialId: new SoftwareAuthenticator(-7).credentialId };
      const tried: string[] = [];
      await Promise.all([
        ...ENROLL_PARTS.map(async (part) => {
          const en = enrollment(new SoftwareAuthenticator(-7));
          tried.push(en.enrollment_id);
          const r = await enrollWithEnvelope(s.relay, owner.identity, en, adminSigned(s.profile, 'keystore-enroll', await enrollFields(owner.identity, en), owner.seed, swapOf(part, others)));
          e.that(r.status === 401, `an enrollment signed over another ${part} answered ${said(r)}, expected 401`);
        }),
        ...LIST_PARTS.map(async (part) => {
          const r = await keystoreListWith(s.relay, owner.identity, adminSigned(s.profile, 'keystore-list', { identity: owner.identity }, owner.seed, swapOf(part, others)));
          // Document 3 gives the list no statuses: any refusal, showing nothing.
          e.that(r.status >= 400 && r.status < 500 && !r.text().includes(first.enrollment_id), `a list signed over another ${part} answered ${said(r)}, expected a refusal`);
        }),
        ...REMOVE_PARTS.map(async (part) => {
          const r = await keystoreRemoveWith(
            s.relay,
            owner.identity,
            first.enrollment_id,
            adminSigned(s.profile, 'keystore-remove', { identity: owner.identity, enrollment_id: first.enrollment_id }, owner.seed, swapOf(part, others)),
          );
          e.that(r.status === 401, `a removal of ${first.enrollment_id} signed over another ${part} answered ${said(r)}, expected 401`);
        }),
      ]);
      const now = await listed(s, owner);
      e.that(
        now.includes(first.enrollment_id) && now.includes(second.enrollment_id) && !tried.some((x) => now.includes(x)),
        `after the refused calls the keystore lists ${JSON.stringify(now)}, expected exactly ${first.enrollment_id} and ${second.enrollment_id}`,
      );
    },
  });
}

function challengeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore-matrix/challenge',
    lane: LANE,
    title: `a fetch over a challenge issued for another identity is refused 401; one assertion sent ${RACE} times at once fetches exactly once, and again afterwards is refused`,
    rules: ['ra.keystore.assertion-challenge'],
    cells: [
      { rule: 'ra.keystore.assertion-challenge', facet: 'binding', value: 'challenge-identity', operation: 'keystoreFetch' },
      { rule: 'ra.keystore.assertion-challenge', facet: 'once', value: 'race', operation: 'keystoreFetch' },
      { rule: 'ra.keystore.assertion-challenge', facet: 'once', value: 'replay', operation: 'keystoreFetch' },
    ],
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const auth = new SoftwareAuthenticator(-7);
      await enrolled(s, owner, enrollment(auth));
      const foreign = await s.relay.keystoreFetch(owner.identity, auth.assert({ challenge: await challengeFor(s, other.identity), rpId: owner.identity }), owner.identity);
      e.that(foreign.status === 401, `a fetch over a challenge issued for ${other.identity} answered ${said(foreign)}, expected 401`);
      const assertion = auth.assert({ challenge: await challengeFor(s, owner.identity), rpId: owner.identity });
      const answers = await race(s.relay, RACE, () => s.relay.keystoreFetch(owner.identity, assertion, owner.identity));
      const won = answers.filter((r) => r.status === 200).length;
      e.that(won === 1, `${RACE} fetches with one assertion at once: ${won} answered 200 (${answers.map((r) => r.status).join(' ')}), expected exactly 1`);
      e.that(
        answers.every((r) => r.status === 200 || r.status === 401),
        `the racing fetches answered ${said(answers.find((r) => r.status !== 200 && r.status !== 401) ?? answers[0]!)}, expected 200 or 401`,
      );
      const again = await s.relay.keystoreFetch(owner.identity, assertion, owner.identity);
      e.that(again.status === 401, `the same assertion after the race answered ${said(again)}, expected 401`);
    },
  });
}

function recoveryMasterCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore-matrix/recovery-master',
    lane: LANE,
    title:
      "with a recovery master enrolled, a removal whose actor_assertion comes from another identity's recovery master, or from a device of this one, is refused 403 and removes nothing; the master's own assertion removes once, again or raced 20 ways it is taken once",
    rules: ['ra.keystore.recovery-master'],
    cells: [
      { rule: 'ra.keystore.recovery-master', facet: 'binding', value: 'role', operation: 'keystoreRemove' },
      { rule: 'ra.keystore.recovery-master', facet: 'binding', value: 'identity', operation: 'keystoreRemove' },
      { rule: 'ra.keystore.recovery-master', facet: 'once', value: 'replay', operation: 'keystoreRemove' },
      { rule: 'ra.keystore.recovery-master', facet: 'once', value: 'race', operation: 'keystoreRemove' },
    ],
    run: async (s, e) => {
      const [owner, other] = await Promise.all([s.identity(), s.identity()]);
      const [master, device, foreignMaster] = [new SoftwareAuthenticator(-7), new SoftwareAuthenticator(-7), new SoftwareAuthenticator(-7)];
      await enrolled(s, owner, enrollment(master, 'recovery-master'));
      const target = await enrolled(s, owner, enrollment(device));
      await enrolled(s, other, enrollment(foreignMaster, 'recovery-master'));
      const rpId = owner.identity;
      for (const [part, by] of [
        ['identity', foreignMaster],
        ['role', device],
      ] as const) {
        const r = await s.relay.keystoreRemove(owner, target.enrollment_id, { actor_assertion: by.assert({ challenge: await challengeFor(s, owner.identity), rpId }), rp_id: rpId });
        e.that(r.status === 403, `a removal with the actor_assertion of ${part === 'identity' ? "another identity's recovery master" : 'a device'} answered ${said(r)}, expected 403`);
      }
      e.that((await listed(s, owner)).includes(target.enrollment_id), 'the enrollment was removed by a refused removal');
      const actor = master.assert({ challenge: await challengeFor(s, owner.identity), rpId });
      const r = await s.relay.keystoreRemove(owner, target.enrollment_id, { actor_assertion: actor, rp_id: rpId });
      if (!e.that(ok(r), `the removal with this identity's recovery master's assertion answered ${said(r)}`)) return;
      // The master's assertion answered its challenge: a second removal with it is refused.
      const next = await enrolled(s, owner, enrollment(new SoftwareAuthenticator(-7)));
      const replay = await s.relay.keystoreRemove(owner, next.enrollment_id, { actor_assertion: actor, rp_id: rpId });
      e.that(replay.status === 403, `a second removal with the same actor_assertion answered ${said(replay)}, expected 403`);
      e.that((await listed(s, owner)).includes(next.enrollment_id), 'the replayed actor_assertion removed the enrollment');
      // One fresh assertion of the master racing to remove RACE enrollments: it authorizes one.
      const targets = await Promise.all(Array.from({ length: RACE }, () => enrolled(s, owner, enrollment())));
      const racing = master.assert({ challenge: await challengeFor(s, owner.identity), rpId });
      const answers = await race(s.relay, RACE, (i) => s.relay.keystoreRemove(owner, targets[i]!.enrollment_id, { actor_assertion: racing, rp_id: rpId }));
      const won = answers.filter(ok).length;
      e.that(won === 1, `${RACE} removals with one actor_assertion at once: ${won} taken (statuses ${answers.map((a) => a.status).join(' ')}), expected exactly 1`);
      e.that(
        answers.every((a) => a.status < 500),
        `a racing removal answered ${said(answers.find((a) => a.status >= 500) ?? answers[0]!)}`,
      );
      const left = await listed(s, owner);
      e.that(
        targets.filter((x) => !left.includes(x.enrollment_id)).length === won,
        `after the race ${targets.filter((x) => !left.includes(x.enrollment_id)).length} enrollments are gone, ${won} removals answered success`,
      );
    },
  });
}

function removalEndsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore-matrix/removal-ends',
    lane: LANE,
    title: 'after its removal an enrollment fetches no more (401), is not listed, and a second removal answers 404; the enrollment left still fetches',
    rules: ['ra.keystore.remove'],
    cells: [
      { rule: 'ra.keystore.remove', facet: 'lifecycle', value: 'enrollment', operation: 'keystoreFetch' },
      { rule: 'ra.keystore.remove', facet: 'lifecycle', value: 'enrollment', operation: 'keystoreList' },
      { rule: 'ra.keystore.remove', facet: 'lifecycle', value: 'enrollment', operation: 'keystoreRemove' },
    ],
    run: async (s, e) => {
      const owner = await s.identity();
      const [gone, kept] = [new SoftwareAuthenticator(-8), new SoftwareAuthenticator(-7)];
      const removed = await enrolled(s, owner, enrollment(gone));
      await enrolled(s, owner, enrollment(kept));
      const before = await s.relay.keystoreFetch(owner.identity, gone.assert({ challenge: await challengeFor(s, owner.identity), rpId: owner.identity }), owner.identity);
      if (!e.that(before.status === 200, `before its removal the enrollment's fetch answered ${said(before)}`)) return;
      const rm = await s.relay.keystoreRemove(owner, removed.enrollment_id);
      if (!e.that(ok(rm), `the removal answered ${said(rm)}`)) return;
      const after = await s.relay.keystoreFetch(owner.identity, gone.assert({ challenge: await challengeFor(s, owner.identity), rpId: owner.identity }), owner.identity);
      e.that(after.status === 401, `the removed enrollment's fetch answered ${said(after)}, expected 401`);
      e.that(!(await listed(s, owner)).includes(removed.enrollment_id), 'the removed enrollment is still listed');
      const again = await s.relay.keystoreRemove(owner, removed.enrollment_id);
      e.that(again.status === 404, `a second removal answered ${said(again)}, expected 404`);
      const still = await s.relay.keystoreFetch(owner.identity, kept.assert({ challenge: await challengeFor(s, owner.identity), rpId: owner.identity }), owner.identity);
      e.that(still.status === 200, `the enrollment left answered ${said(still)}, expected 200`);
    },
  });
}

function rpIdFormsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore-matrix/rp-id-forms',
    lane: LANE,
    title:
      "a fetch's RP id may be the identity or, for a hosted identity, its registrable domain (by the public suffix list); the hosting relay's own domain when it is neither, a sibling, or the identity with a suffix, is refused 401",
    rules: ['ra.keystore.assertion-rp-id'],
    cells: [...['identity', 'registrable-domain', 'near-miss'].map((value) => ({ rule: 'ra.keystore.assertion-rp-id' as const, facet: 'normalization', value, operation: 'keystoreFetch' }))],
    run: async (s, e) => {
      const owner = await s.identity();
      const hosting = (await s.facts()).relay.hostedDomains.find((d) => owner.identity.endsWith(`.${d}`));
      if (hosting === undefined) throw new CheckSkip('the relay hosts no domain: the test identity is not hosted, so it has no registrable domain to judge');
      // "the identity itself, or its registrable domain when hosted": the registrable domain is the
      // public suffix list's (x.a.relay.test → relay.test), not the hosting relay's domain.
      const domain = registrableDomain(owner.identity);
      if (domain === undefined || domain === owner.identity) throw new CheckSkip(`${owner.identity} has no registrable domain apart from itself`);
      const auth = new SoftwareAuthenticator(-7);
      await enrolled(s, owner, enrollment(auth));
      const fetchAt = async (rpId: string) => s.relay.keystoreFetch(owner.identity, auth.assert({ challenge: await challengeFor(s, owner.identity), rpId }), rpId);
      for (const [form, rpId] of [
        ['the identity', owner.identity],
        ['the registrable domain', domain],
      ] as const) {
        const r = await fetchAt(rpId);
        e.that(r.status === 200, `a fetch with ${form} (${rpId}) as RP id answered ${said(r)}, expected 200`);
      }
      const nearMisses = [...(hosting !== domain ? [hosting] : []), `other.${domain}`, `${owner.identity}.evil.example`];
      for (const rpId of nearMisses) {
        const r = await fetchAt(rpId);
        e.that(r.status === 401, `a fetch with ${rpId} as RP id (identity ${owner.identity}, registrable domain ${domain}) answered ${said(r)}, expected 401`);
      }
    },
  });
}

/** The longest declared challenge life the window check waits for. */
const MAX_WAIT_S = 60;

function challengeWindowCheck(t: RelayTarget): Check {
  const life = t.declared.challengeTtlS ?? limits.challenge_ttl_seconds;
  return relayCheck(t, {
    id: 'relay/keystore-matrix/challenge-window',
    // Mostly a wait on challenges of its own: a lane of its own.
    lane: 'relay/keystore-matrix/challenge-window',
    title: `a keystore fetch answering a challenge just inside its life (${life} s) fetches; one answering a challenge just past it is refused 401`,
    rules: ['ra.keystore.assertion-challenge'],
    cells: [
      { rule: 'ra.keystore.assertion-challenge', facet: 'window', value: 'inside', operation: 'keystoreFetch' },
      { rule: 'ra.keystore.assertion-challenge', facet: 'window', value: 'outside', operation: 'keystoreFetch' },
    ],
    timeoutMs: (Math.min(life, MAX_WAIT_S) + 40) * 1000,
    run: async (s, e) => {
      if (life > MAX_WAIT_S) throw new CheckSkip(`the target declares no challenge life of at most ${MAX_WAIT_S} s (--relay-challenge-ttl); document 3's 60 s are not waited for`);
      const owner = await s.identity();
      const auth = new SoftwareAuthenticator(-7);
      await enrolled(s, owner, enrollment(auth));
      const late = await challengeFor(s, owner.identity);
      const after = Date.now();
      // Just inside, then earlier while the answer came back past the life (a loaded machine
      // cannot tell when the relay read it): only an answer back within the life is judged.
      let inside: { r: HttpResponse; at: number } | undefined;
      for (const offset of [life - Math.min(1.5, life / 3), life / 2, 0]) {
        const issued = Date.now();
        const challenge = await challengeFor(s, owner.identity);
        await sleep(Math.max(0, issued + offset * 1000 - Date.now()), s.signal);
        const r = await s.relay.keystoreFetch(owner.identity, auth.assert({ challenge, rpId: owner.identity }), owner.identity);
        inside = { r, at: (Date.now() - issued) / 1000 };
        if (r.status === 200 || inside.at < life) break;
      }
      e.that(inside!.r.status === 200, `a fetch back ${inside!.at.toFixed(1)} s after its challenge (life ${life} s) answered ${said(inside!.r)}, expected 200`);
      await sleep(Math.max(0, after + life * 1000 + 1000 - Date.now()), s.signal);
      const outside = await s.relay.keystoreFetch(owner.identity, auth.assert({ challenge: late, rpId: owner.identity }), owner.identity);
      e.that(outside.status === 401, `a fetch ${((Date.now() - after) / 1000).toFixed(1)} s after its challenge (life ${life} s) answered ${said(outside)}, expected 401`);
    },
  });
}

export function keystoreMatrixChecks(t: RelayTarget): Check[] {
  return [challengeWindowCheck(t), rpIdFormsCheck(t), bindingCheck(t), challengeCheck(t), recoveryMasterCheck(t), removalEndsCheck(t)];
}
