// The keystore (document 3, Keystore): enrollment signed by the identity key (its wrapped JSON
// digested as sent), the metadata-only list, the fetch by WebAuthn assertion alone (each check of
// the assertion broken one at a time with the software authenticator), removal with its 404, 409
// last_enrollment and recovery-master 403, and the project's codes in the profile.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { newRelayIdentity, SoftwareAuthenticator, type EnrollmentInput, type RelayIdentity } from '../../../actors/relay/index.ts';
import { FLAG_UP, FLAG_UV, type ChallengeForm, type CoseAlg } from '../../../../protocol/relay/webauthn.ts';
import { registrableDomain } from '../../../../protocol/relay/rp-id.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { relayCheck, type Expect } from '../check.ts';
import { CheckFailure, codeOf, isObject, safeJson, said, type RelayTarget, type Session } from '../driver.ts';

/** Its own lane: fresh identities only, so these checks overlap the suite's others. */
export const LANE = 'relay/keystore';

/** The metadata fields the list returns (ra.keystore.list), and nothing of the seed. */
const LIST_FIELDS = ['enrollment_id', 'kind', 'wrap', 'label', 'role', 'has_passkey', 'created_at', 'last_used_at'];

/** Wrapped JSON with spaces and an unusual key order: a relay that re-serializes it digests other bytes. */
export const wrappedText = (): string => `{ "ciphertext" : "${randomBytes(48).toString('base64url')}",  "iv":"${randomBytes(12).toString('base64url')}" }`;

/** An enrollment to send: a recovery kit, or with `auth` a passkey of its credential; `o` sets or overrides any field. */
export const enrollmentInput = (o: Partial<EnrollmentInput> = {}, auth?: SoftwareAuthenticator): EnrollmentInput => ({
  enrollment_id: `enr-${randomBytes(6).toString('hex')}`,
  kind: auth ? 'passkey' : 'recovery-kit',
  wrap: auth ? 'prf' : 'passphrase',
  wrapped: wrappedText(),
  ...(auth ? auth.credential() : {}),
  ...o,
});

/** The identity's listed enrollments (the list's one array, whatever its member is named), failing the check unless 200. */
export async function listedRows(s: Session, id: RelayIdentity): Promise<Array<Record<string, unknown>>> {
  const r = await s.relay.keystoreList(id);
  const b = safeJson(r);
  const rows = isObject(b) ? Object.values(b).find(Array.isArray) : undefined;
  if (r.status !== 200 || !rows) throw new CheckFailure(`POST .../keystore/list answered ${said(r)}, not 200 with the enrollments`);
  return rows.filter(isObject);
}

export interface Enrolled {
  id: RelayIdentity;
  auth: SoftwareAuthenticator;
  input: EnrollmentInput;
}

/** Enrolls a passkey of `alg` for `id` (a new hosted identity when none), failing the check unless 200. */
export async function enrolled(s: Session, o: { id?: RelayIdentity; alg?: CoseAlg; role?: string } = {}): Promise<Enrolled> {
  const id = o.id ?? (await s.identity());
  const auth = new SoftwareAuthenticator(o.alg ?? -7);
  const input = enrollmentInput({ label: 'harness key', ...(o.role ? { role: o.role } : {}) }, auth);
  const r = await s.relay.keystoreEnroll(id, input);
  if (r.status !== 200) throw new CheckFailure(`enrolling a passkey (PUT .../keystore) answered ${said(r)}, not 200`);
  return { id, auth, input };
}

export async function challengeFor(s: Session, identity: string): Promise<string> {
  const r = await s.relay.challenge(identity);
  const b = safeJson(r);
  if (r.status !== 200 || !isObject(b) || typeof b.challenge !== 'string') throw new CheckFailure(`GET /auth/challenge answered ${said(r)}`);
  return b.challenge;
}

/**
 * How the relay takes the issued challenge in clientDataJSON. Document 3 says only that it "matches
 * the relay-issued one": browsers write base64url of whatever bytes the web app passes, so a web
 * app passing TextEncoder's bytes of the string (`utf8`) and one passing the string's base64url
 * bytes (`issued`) both follow it. The first form a valid fetch succeeds with is used; learned
 * once per relay.
 */
const forms = new WeakMap<object, ChallengeForm>();
export async function challengeForm(s: Session, e: Enrolled): Promise<ChallengeForm> {
  const known = forms.get(s.relay);
  if (known) return known;
  for (const form of ['utf8', 'issued'] as const) {
    const r = await s.relay.keystoreFetch(e.id.identity, e.auth.assert({ challenge: await challengeFor(s, e.id.identity), challengeForm: form, rpId: e.id.identity }), e.id.identity);
    if (!fetched(r)) continue;
    forms.set(s.relay, form);
    return form;
  }
  // Neither fetched (a credential no longer enrolled): nothing learned, the browser's form is sent.
  return 'utf8';
}

/** A fetch by `e`'s authenticator with a fresh challenge; `change` breaks one thing. */
export async function fetchWith(s: Session, e: Enrolled, change: Partial<Parameters<SoftwareAuthenticator['assert']>[0]> & { rpIdSent?: string } = {}): Promise<HttpResponse> {
  const form = change.challengeForm ?? (await challengeForm(s, e));
  const challenge = change.challenge ?? (await challengeFor(s, e.id.identity));
  const rpId = change.rpId ?? e.id.identity;
  return s.relay.keystoreFetch(e.id.identity, e.auth.assert({ ...change, challenge, challengeForm: form, rpId }), change.rpIdSent ?? rpId);
}

export const fetched = (r: HttpResponse): boolean => {
  const b = safeJson(r);
  return r.status === 200 && isObject(b) && Array.isArray(b.entries);
};

/** A refused fetch: 401 (the document's status for every refused assertion). */
function refused401(e: Expect, r: HttpResponse, what: string): void {
  e.that(r.status === 401, `${what}: the fetch answered ${said(r)}, expected 401`);
}

function enrollListFetchCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/enroll-list-fetch',
    lane: LANE,
    title: 'a passkey enrolled with its wrapped JSON digested as sent is listed as metadata only and fetched by an assertion alone, ciphertext as sent',
    rules: ['ra.keystore.enroll', 'ra.signing.keystore-enroll', 'ra.keystore.list', 'ra.signing.keystore-list', 'ra.keystore.fetch'],
    context: ['ra.auth.challenge'],
    run: async (s, e) => {
      const id = await s.identity();
      const auth = new SoftwareAuthenticator(-7);
      const input = enrollmentInput({ label: 'harness key' }, auth);
      const put = await s.relay.keystoreEnroll(id, input);
      const pb = safeJson(put);
      if (
        !e.that(
          put.status === 200 && isObject(pb) && pb.enrollment_id === input.enrollment_id && typeof pb.created_at === 'string',
          `PUT .../keystore answered ${said(put)}, expected 200 with enrollment_id and created_at`,
        )
      )
        return;
      const list = await s.relay.keystoreList(id);
      const lb = safeJson(list);
      const rows = isObject(lb) ? Object.values(lb).find(Array.isArray) : undefined;
      const row = rows?.find((x) => isObject(x) && x.enrollment_id === input.enrollment_id) as Record<string, unknown> | undefined;
      if (e.that(list.status === 200 && row !== undefined, `POST .../keystore/list answered ${said(list)}, without the enrollment`)) {
        const extra = Object.keys(row!).filter((k) => !LIST_FIELDS.includes(k));
        e.that(extra.length === 0, `the list carries more than metadata: ${extra.join(', ')}`);
        e.that(row!.has_passkey === true && row!.kind === 'passkey' && row!.wrap === 'prf', `the listed enrollment is ${JSON.stringify(row)}`);
      }
      const f = await fetchWith(s, { id, auth, input });
      const fb = safeJson(f);
      const entries = isObject(fb) && Array.isArray(fb.entries) ? fb.entries : [];
      if (!e.that(fetched(f) && isObject(fb) && fb.identity === id.identity, `the fetch by a valid assertion answered ${said(f)}, expected 200 with identity and entries`)) return;
      const sent = JSON.parse(input.wrapped) as unknown;
      e.that(
        entries.some((x) => isObject(x) && JSON.stringify(x.wrapped) === JSON.stringify(sent)),
        `no entry carries the wrapped object as sent: ${JSON.stringify(entries).slice(0, 300)}`,
      );
    },
  });
}

function enrollRefusalsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/enroll-refusals',
    lane: LANE,
    title:
      'an enrollment is refused with 400 when credential_id comes without its public key or the key without its id, 401 when signed by another key or over another wrapped_digest, 404 for an identity not hosted',
    rules: ['ra.keystore.enroll', 'ra.signing.keystore-enroll'],
    run: async (s, e) => {
      const id = await s.identity();
      const auth = new SoftwareAuthenticator(-7);
      const base = (): EnrollmentInput => enrollmentInput({ kind: 'passkey', wrap: 'prf' });
      const lone = await s.relay.keystoreEnroll(id, { ...base(), credential_id: auth.credentialId });
      e.that(lone.status === 400, `credential_id without credential_public_key answered ${said(lone)}, expected 400`);
      // "must be supplied together": the other one alone too.
      const { credential_id: _id, ...keyAlone } = auth.credential();
      void _id;
      const keyOnly = await s.relay.keystoreEnroll(id, { ...base(), ...keyAlone });
      e.that(keyOnly.status === 400, `credential_public_key without credential_id answered ${said(keyOnly)}, expected 400`);
      const other = await s.relay.keystoreEnroll(id, { ...base(), ...auth.credential() }, { seed: new Uint8Array(randomBytes(32)) });
      e.that(other.status === 401, `an enrollment signed by another key answered ${said(other)}, expected 401`);
      const digest = await s.relay.keystoreEnroll(id, { ...base(), ...auth.credential() }, { signedDigest: randomBytes(32).toString('base64url') });
      e.that(digest.status === 401, `an enrollment whose signed wrapped_digest is not the SHA-256 of the wrapped JSON sent answered ${said(digest)}, expected 401`);
      const stranger = newRelayIdentity(`t${randomBytes(5).toString('hex')}.${(await s.facts()).relay.hostedDomains[0] ?? 'id.test'}`);
      const missing = await s.relay.keystoreEnroll(stranger, { ...base(), ...auth.credential() });
      e.that(missing.status === 404, `an enrollment for an identity not hosted here answered ${said(missing)}, expected 404`);
    },
  });
}

function algorithmsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/algorithms',
    lane: LANE,
    title: 'assertions of ES256 (-7, DER), EdDSA (-8) and RS256 (-257) credentials each fetch',
    rules: ['ra.keystore.assertion-signature', 'ra.keystore.fetch'],
    run: async (s, e) => {
      const id = await s.identity();
      for (const alg of [-7, -8, -257] as const) {
        const en = await enrolled(s, { id, alg });
        const f = await fetchWith(s, en);
        e.that(fetched(f), `an assertion of a COSE ${alg} credential answered ${said(f)}, expected 200 with entries`);
      }
    },
  });
}

function assertionTypeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/assertion-type',
    lane: LANE,
    title: 'an assertion whose clientDataJSON type is webauthn.create is refused 401',
    rules: ['ra.keystore.assertion-type'],
    cells: [{ rule: 'ra.keystore.assertion-type', facet: 'binding', value: 'ceremony-type', operation: 'keystoreFetch' }],
    run: async (s, e) => {
      const en = await enrolled(s);
      refused401(e, await fetchWith(s, en, { type: 'webauthn.create' }), 'type webauthn.create');
      e.that(fetched(await fetchWith(s, en)), 'the same credential then failed to fetch with a valid assertion');
    },
  });
}

function assertionChallengeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/assertion-challenge',
    lane: LANE,
    title:
      'an assertion over a challenge the relay never issued, while one it issued is live, is refused 401; a valid assertion over the live one fetches once, and the same assertion again is refused 401',
    rules: ['ra.keystore.assertion-challenge'],
    run: async (s, e) => {
      const en = await enrolled(s);
      const form = await challengeForm(s, en);
      const challenge = await challengeFor(s, en.id.identity);
      refused401(e, await fetchWith(s, en, { challenge: randomBytes(32).toString('base64url'), challengeForm: form }), 'a challenge the relay never issued, while one it issued is live');
      const assertion = en.auth.assert({ challenge, challengeForm: form, rpId: en.id.identity });
      const first = await s.relay.keystoreFetch(en.id.identity, assertion, en.id.identity);
      if (!e.that(fetched(first), `a valid assertion answered ${said(first)}, expected 200`)) return;
      refused401(e, await s.relay.keystoreFetch(en.id.identity, assertion, en.id.identity), 'the same assertion (and challenge) a second time');
    },
  });
}

function assertionRpIdCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/assertion-rp-id',
    lane: LANE,
    title: 'an assertion for another RP id is refused 401; for a hosted identity its registrable domain (by the public suffix list) is accepted',
    rules: ['ra.keystore.assertion-rp-id'],
    run: async (s, e) => {
      const en = await enrolled(s);
      refused401(e, await fetchWith(s, en, { rpId: 'elsewhere.example' }), 'rp_id and rpIdHash of elsewhere.example');
      refused401(e, await fetchWith(s, en, { rpId: 'elsewhere.example', rpIdSent: en.id.identity }), 'rpIdHash of elsewhere.example, rp_id the identity');
      const hosted = (await s.facts()).relay.hostedDomains.some((d) => en.id.identity.endsWith(`.${d}`));
      const domain = hosted ? registrableDomain(en.id.identity) : undefined;
      if (domain && domain !== en.id.identity) e.that(fetched(await fetchWith(s, en, { rpId: domain })), `an assertion for the registrable domain ${domain} of the hosted identity was refused`);
    },
  });
}

function assertionFlagsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/assertion-flags',
    lane: LANE,
    title: 'an assertion without user verification, or without user presence, is refused 401',
    rules: ['ra.keystore.assertion-flags'],
    cells: (['user-present', 'user-verified'] as const).map((value) => ({ rule: 'ra.keystore.assertion-flags' as const, facet: 'binding', value, operation: 'keystoreFetch' })),
    run: async (s, e) => {
      const en = await enrolled(s);
      refused401(e, await fetchWith(s, en, { flags: FLAG_UP }), 'user present, not verified');
      refused401(e, await fetchWith(s, en, { flags: FLAG_UV }), 'user verified, not present');
    },
  });
}

function assertionSignatureCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/assertion-signature',
    lane: LANE,
    title: 'an assertion signed by another key than the enrolled credential is refused 401',
    rules: ['ra.keystore.assertion-signature'],
    cells: [{ rule: 'ra.keystore.assertion-signature', facet: 'binding', value: 'credential-key', operation: 'keystoreFetch' }],
    run: async (s, e) => {
      const en = await enrolled(s);
      refused401(e, await fetchWith(s, en, { wrongKey: true }), 'signed by another key');
    },
  });
}

function indistinctCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/indistinct',
    lane: LANE,
    title: 'an unenrolled credential and a bad signature get byte-identical 401 answers',
    rules: ['ra.keystore.fetch-indistinct'],
    run: async (s, e) => {
      const en = await enrolled(s);
      const unknown = new SoftwareAuthenticator(-7);
      const a = await s.relay.keystoreFetch(
        en.id.identity,
        unknown.assert({ challenge: await challengeFor(s, en.id.identity), challengeForm: await challengeForm(s, en), rpId: en.id.identity }),
        en.id.identity,
      );
      const b = await fetchWith(s, en, { wrongKey: true });
      e.that(a.status === 401 && b.status === 401, `the unenrolled credential answered ${said(a)}, the bad signature ${said(b)}; both must be 401`);
      e.that(a.text() === b.text() && a.headers['content-type'] === b.headers['content-type'], `the two 401s differ: ${JSON.stringify(a.text())} and ${JSON.stringify(b.text())}`);
    },
  });
}

function removeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/remove',
    lane: LANE,
    title: 'removing an enrollment answers 204 (or 200 with enrollment_id and sessions_revoked when asked), it leaves the list and fetches no more; an unknown one is 404',
    rules: ['ra.keystore.remove', 'ra.signing.keystore-remove'],
    run: async (s, e) => {
      const first = await enrolled(s);
      const second = await enrolled(s, { id: first.id });
      const gone = await s.relay.keystoreRemove(first.id, first.input.enrollment_id);
      e.that(gone.status === 204 || gone.status === 200, `the removal answered ${said(gone)}, expected 204`);
      const listed = JSON.stringify(safeJson(await s.relay.keystoreList(first.id)) ?? '');
      e.that(!listed.includes(first.input.enrollment_id), 'the removed enrollment is still listed');
      refused401(e, await fetchWith(s, first), 'the removed credential');
      const unknown = await s.relay.keystoreRemove(first.id, `enr-${randomBytes(6).toString('hex')}`);
      e.that(unknown.status === 404, `removing an unknown enrollment answered ${said(unknown)}, expected 404`);
      const third = await enrolled(s, { id: first.id });
      const withSessions = await s.relay.keystoreRemove(first.id, second.input.enrollment_id, { revoke_sessions: true });
      const wb = safeJson(withSessions);
      e.that(
        withSessions.status === 200 && isObject(wb) && wb.enrollment_id === second.input.enrollment_id && typeof wb.sessions_revoked === 'number',
        `a removal with revoke_sessions answered ${said(withSessions)}, expected 200 with enrollment_id and sessions_revoked`,
      );
      e.that(fetched(await fetchWith(s, third)), 'the enrollment left in place no longer fetches');
    },
  });
}

function lastEnrollmentCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/last-enrollment',
    lane: LANE,
    title: 'removing the final enrollment answers 409 last_enrollment, and succeeds with allow_last',
    rules: ['ra.keystore.last-enrollment'],
    run: async (s, e) => {
      const only = await enrolled(s);
      const r = await s.relay.keystoreRemove(only.id, only.input.enrollment_id);
      e.that(r.status === 409 && codeOf(r) === 'last_enrollment', `removing the last enrollment answered ${said(r)}, expected 409 last_enrollment`);
      const allowed = await s.relay.keystoreRemove(only.id, only.input.enrollment_id, { allow_last: true });
      e.that(allowed.status === 204 || allowed.status === 200, `with allow_last the removal answered ${said(allowed)}`);
    },
  });
}

function recoveryMasterCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/recovery-master',
    lane: LANE,
    title: "with a recovery-master enrolled, a removal without actor_assertion, or with a device's, is refused 403; with the master's assertion it succeeds",
    rules: ['ra.keystore.recovery-master'],
    run: async (s, e) => {
      const master = await enrolled(s, { role: 'recovery-master' });
      const device = await enrolled(s, { id: master.id });
      const bare = await s.relay.keystoreRemove(master.id, device.input.enrollment_id);
      e.that(bare.status === 403, `a removal without actor_assertion answered ${said(bare)}, expected 403`);
      const rpId = master.id.identity;
      const form = await challengeForm(s, master);
      const byDevice = await s.relay.keystoreRemove(master.id, device.input.enrollment_id, {
        actor_assertion: device.auth.assert({ challenge: await challengeFor(s, rpId), challengeForm: form, rpId }),
        rp_id: rpId,
      });
      e.that(byDevice.status === 403, `a removal with a device's assertion answered ${said(byDevice)}, expected 403`);
      const byMaster = await s.relay.keystoreRemove(master.id, device.input.enrollment_id, {
        actor_assertion: master.auth.assert({ challenge: await challengeFor(s, rpId), challengeForm: form, rpId }),
        rp_id: rpId,
      });
      e.that(byMaster.status === 204 || byMaster.status === 200, `a removal with the recovery master's assertion answered ${said(byMaster)}`);
    },
  });
}

function profileKeystoreCodesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/keystore-codes',
    lane: LANE,
    title: 'a refused fetch answers 401 not_authorized; a removal wanting the recovery master 403 recovery_master_required; a label over 64 bytes 400',
    rules: ['ra.errors.keystore-unauthorized', 'ra.errors.recovery-master-required', 'ra.keystore.enrollment-shape'],
    run: async (s, e) => {
      const master = await enrolled(s, { role: 'recovery-master' });
      const f = await fetchWith(s, master, { wrongKey: true });
      e.that(f.status === 401 && codeOf(f) === 'not_authorized', `a refused fetch answered ${said(f)}, expected 401 not_authorized`);
      const device = await enrolled(s, { id: master.id });
      const r = await s.relay.keystoreRemove(master.id, device.input.enrollment_id);
      e.that(r.status === 403 && codeOf(r) === 'recovery_master_required', `a removal without the master answered ${said(r)}, expected 403 recovery_master_required`);
      const long = await s.relay.keystoreEnroll(master.id, enrollmentInput({ label: 'x'.repeat(65) }));
      e.that(long.status === 400, `a label of 65 bytes answered ${said(long)}, expected 400`);
    },
  });
}

export function keystoreChecks(t: RelayTarget): Check[] {
  return [
    enrollListFetchCheck(t),
    enrollRefusalsCheck(t),
    algorithmsCheck(t),
    assertionTypeCheck(t),
    assertionChallengeCheck(t),
    assertionRpIdCheck(t),
    assertionFlagsCheck(t),
    assertionSignatureCheck(t),
    indistinctCheck(t),
    removeCheck(t),
    lastEnrollmentCheck(t),
    recoveryMasterCheck(t),
    profileKeystoreCodesCheck(t),
  ];
}
