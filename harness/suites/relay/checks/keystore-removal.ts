// The keystore's fetch and removal beyond one good request (issue 25's whole-area run of
// keystore.ts): a fetch whose assertion is malformed is refused, never met with a 5xx; one
// enrollment removed many ways at once is removed once; a removal ends the identity's sessions
// only when it asks. Which entries a fetch answers, and what the body's rp_id means, are the
// project's (ra.keystore.fetch-own, ra.keystore.rp-id-field), as is which of an unknown enrollment's
// 404 and a recovery master's 403 comes first (ra.keystore.remove-order).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { race, registeredSession, type RegisteredSession } from '../../../actors/relay/owner.ts';
import { registrableDomain } from '../../../../protocol/relay/rp-id.ts';
import { relayCheck } from '../check.ts';
import { isObject, safeJson, said, type RelayTarget } from '../driver.ts';
import { challengeFor, challengeForm, enrolled, fetched, fetchWith, LANE, type Enrolled } from './keystore.ts';
import { listed } from './keystore-matrix.ts';

const RACE = 20;
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const b64 = (text: string) => Buffer.from(text).toString('base64url');

function fetchMalformedCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/fetch-malformed',
    lane: LANE,
    title:
      'a fetch whose assertion is missing, not an object, lacks a field, has a field out of base64url or of another type, clientDataJSON that is not JSON, or authenticatorData shorter than its head, is refused with a 4xx (never a 5xx) and fetches nothing',
    rules: ['ra.keystore.fetch', 'ra.errors.listed-statuses'],
    run: async (s, e) => {
      const en = await enrolled(s);
      const good = en.auth.assert({ challenge: 'not-issued', rpId: en.id.identity }) as unknown as Record<string, unknown>;
      const without = (field: string) => Object.fromEntries(Object.entries(good).filter(([k]) => k !== field));
      const bodies: [string, Record<string, unknown>][] = [
        ['no assertion', { rp_id: en.id.identity }],
        ['an assertion that is a string', { assertion: 'assertion', rp_id: en.id.identity }],
        ['an assertion that is null', { assertion: null, rp_id: en.id.identity }],
        ...Object.keys(good).map((f): [string, Record<string, unknown>] => [`an assertion without ${f}`, { assertion: without(f), rp_id: en.id.identity }]),
        ...Object.keys(good).map((f): [string, Record<string, unknown>] => [`an assertion whose ${f} is a number`, { assertion: { ...good, [f]: 7 }, rp_id: en.id.identity }]),
        ...Object.keys(good).map((f): [string, Record<string, unknown>] => [
          `an assertion whose ${f} is out of base64url`,
          { assertion: { ...good, [f]: '*** not base64url ***' }, rp_id: en.id.identity },
        ]),
        ['clientDataJSON that is not JSON', { assertion: { ...good, client_data_json: b64('webauthn.get') }, rp_id: en.id.identity }],
        ['clientDataJSON that is a JSON list', { assertion: { ...good, client_data_json: b64('["webauthn.get"]') }, rp_id: en.id.identity }],
        ['authenticatorData of 10 bytes', { assertion: { ...good, authenticator_data: randomBytes(10).toString('base64url') }, rp_id: en.id.identity }],
        ['an rp_id that is a number', { assertion: good, rp_id: 7 }],
      ];
      const path = `/identities/${encodeURIComponent(en.id.identity)}/keystore/fetch`;
      const answers = await Promise.all(bodies.map(([, body]) => s.relay.post(path, body)));
      answers.forEach((r, i) => e.that(r.status >= 400 && r.status < 500, `${bodies[i]![0]}: ${said(r)}, not a 4xx`));
      e.that(fetched(await fetchWith(s, en)), 'after the malformed fetches, a valid assertion no longer fetches');
    },
  });
}

function removalRaceCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/removal-race',
    lane: LANE,
    title: `one enrollment removed ${RACE} ways at once (each a signed removal of its own) is removed once: one removal succeeds and the others answer 404; the enrollment beside it stays`,
    rules: ['ra.keystore.remove'],
    run: async (s, e) => {
      const target = await enrolled(s);
      const kept = await enrolled(s, { id: target.id });
      const answers = await race(s.relay, RACE, () => s.relay.keystoreRemove(target.id, target.input.enrollment_id));
      const won = answers.filter(ok).length;
      e.that(won === 1 && answers.every((r) => ok(r) || r.status === 404), `${RACE} removals of one enrollment at once answered ${answers.map((r) => r.status).join(' ')}, not one success and 404s`);
      const left = await listed(s, target.id);
      e.that(!left.includes(target.input.enrollment_id) && left.includes(kept.input.enrollment_id), `after the race the list holds ${JSON.stringify(left)}`);
    },
  });
}

function removalSessionsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/keystore/removal-sessions',
    lane: LANE,
    title: "a removal without revoke_sessions leaves the identity's sessions working; one with revoke_sessions answers 200 with sessions_revoked counting them, and each is refused afterwards",
    rules: ['ra.keystore.remove'],
    run: async (s, e) => {
      const first = await enrolled(s);
      const id = first.id;
      const more = [await enrolled(s, { id }), await enrolled(s, { id })];
      const sessions = [await registeredSession(s.relay, id), await registeredSession(s.relay, id)];
      const works = async (x: RegisteredSession) => (await s.relay.pickup(id, { mode: 'signed-request', sessionId: x.sessionId, seed: x.seed })).status;
      const plain = await s.relay.keystoreRemove(id, first.input.enrollment_id);
      if (!e.that(ok(plain), `the removal without revoke_sessions answered ${said(plain)}`)) return;
      const after = await Promise.all(sessions.map(works));
      e.that(
        after.every((x) => x === 200),
        `after a removal without revoke_sessions the sessions' pickups answered ${after.join(', ')}, not 200`,
      );
      const revoking = await s.relay.keystoreRemove(id, more[0]!.input.enrollment_id, { revoke_sessions: true });
      const b = safeJson(revoking);
      e.that(
        revoking.status === 200 && isObject(b) && typeof b.sessions_revoked === 'number' && b.sessions_revoked >= sessions.length,
        `a removal with revoke_sessions, ${sessions.length} sessions open, answered ${said(revoking)}, not 200 counting them`,
      );
      const ended = await Promise.all(sessions.map(works));
      e.that(
        ended.every((x) => x === 401),
        `after a removal with revoke_sessions the sessions' pickups answered ${ended.join(', ')}, not 401`,
      );
    },
  });
}

function fetchOwnCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/fetch-own',
    lane: LANE,
    title: "a fetch answers the asserted credential's entries only: not another passkey's, nor a recovery kit's",
    rules: ['ra.keystore.fetch-own'],
    run: async (s, e) => {
      const mine = await enrolled(s);
      const other = await enrolled(s, { id: mine.id, alg: -8 });
      const kit = await s.relay.keystoreEnroll(mine.id, { enrollment_id: `kit-${randomBytes(4).toString('hex')}`, kind: 'recovery-kit', wrap: 'passphrase', wrapped: '{"iv":"a","ciphertext":"b"}' });
      if (!e.that(kit.status === 200, `the recovery kit's enrollment answered ${said(kit)}`)) return;
      const f = await fetchWith(s, mine);
      const b = safeJson(f);
      const ids = isObject(b) && Array.isArray(b.entries) ? b.entries.map((x) => (isObject(x) ? x.enrollment_id : x)) : [];
      e.that(
        JSON.stringify(ids) === JSON.stringify([mine.input.enrollment_id]),
        `the fetch answered entries ${JSON.stringify(ids)} (${said(f)}), not ${mine.input.enrollment_id}'s alone (not ${other.input.enrollment_id}'s)`,
      );
    },
  });
}

function rpIdFieldCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/rp-id-field',
    lane: LANE,
    title: 'a fetch with rp_id left out is judged against every acceptable RP id (200); one whose rp_id is not acceptable, or names another acceptable id than the rpIdHash, is refused 401',
    rules: ['ra.keystore.rp-id-field'],
    run: async (s, e) => {
      const en: Enrolled = await enrolled(s);
      const identity = en.id.identity;
      const domain = registrableDomain(identity);
      const form = await challengeForm(s, en);
      const cases: [string, string | undefined, number][] = [
        ['rp_id left out', undefined, 200],
        [`rp_id ${identity}.evil.example`, `${identity}.evil.example`, 401],
        ...(domain && domain !== identity ? [[`rp_id ${domain} while the rpIdHash names ${identity}`, domain, 401] as [string, string, number]] : []),
      ];
      for (const [what, sent, want] of cases) {
        const f = await s.relay.keystoreFetch(identity, en.auth.assert({ challenge: await challengeFor(s, identity), challengeForm: form, rpId: identity }), sent);
        e.that(f.status === want, `${what}: ${said(f)}, not ${want}`);
      }
      const assertion = en.auth.assert({ challenge: await challengeFor(s, identity), challengeForm: form, rpId: identity });
      const asNull = await s.relay.post(`/identities/${encodeURIComponent(identity)}/keystore/fetch`, { assertion, rp_id: null });
      e.that(asNull.status === 200, `rp_id null (as if left out): ${said(asNull)}, not 200`);
    },
  });
}

function removeOrderCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/remove-order',
    lane: LANE,
    title:
      "with a recovery master enrolled, a removal of an enrollment the identity does not hold answers 404, with or without the master's actor_assertion, and that assertion then still removes an enrollment it holds",
    rules: ['ra.keystore.remove-order'],
    run: async (s, e) => {
      const master = await enrolled(s, { role: 'recovery-master' });
      const device = await enrolled(s, { id: master.id });
      const rpId = master.id.identity;
      const unknown = `enr-${randomBytes(6).toString('hex')}`;
      const bare = await s.relay.keystoreRemove(master.id, unknown);
      e.that(bare.status === 404, `removing an unknown enrollment without actor_assertion: ${said(bare)}, not 404`);
      const actor = master.auth.assert({ challenge: await challengeFor(s, rpId), challengeForm: await challengeForm(s, master), rpId });
      const withActor = await s.relay.keystoreRemove(master.id, unknown, { actor_assertion: actor, rp_id: rpId });
      e.that(withActor.status === 404, `removing an unknown enrollment with the master's actor_assertion: ${said(withActor)}, not 404`);
      const then = await s.relay.keystoreRemove(master.id, device.input.enrollment_id, { actor_assertion: actor, rp_id: rpId });
      e.that(ok(then), `the same actor_assertion then removing an enrollment the identity holds: ${said(then)}, not a success`);
    },
  });
}

export function keystoreRemovalChecks(t: RelayTarget): Check[] {
  return [fetchMalformedCheck(t), removalRaceCheck(t), removalSessionsCheck(t), fetchOwnCheck(t), rpIdFieldCheck(t), removeOrderCheck(t)];
}
