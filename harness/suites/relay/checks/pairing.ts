// Pairing v2 (document 3, Pairing: commit, then reveal), driven as both sides: the new device
// (offer, reveal, poll, abandon with its bearer claim token) and the approver (fetch and deliver
// signed by the identity key). The six digits both show come from pairingSas through the pairing actor (the relay computes
// none); the approver seals the seed to the revealed key with message-seal-v1 and the new device
// opens it, while the relay only carries the opaque `sealed` string.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import { offer, openSealed as openWith, sealFor as sealWith, sixDigits } from '../../../actors/relay/pairing.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { pairingModelCheck } from './pairing-model.ts';
import { CheckFailure, CheckSkip, codeOf, isObject, safeJson, said, sleep, type RelayTarget, type Session } from '../driver.ts';

/** Its own lane: fresh identities only, so these checks overlap the suite's others. */
export const LANE = 'relay/pairing';

export const b64 = (n = 32) => randomBytes(n).toString('base64url');

/** A new device's offer: its secrets, and what the relay answered. */
export interface Offered {
  id: RelayIdentity;
  code: string;
  token: string;
  key: { ephemeral_public_key: string; commit_nonce: string };
  /** The new device's X25519 private key: the seed is sealed to its public half. */
  secret: Uint8Array;
  commitment: string;
  answer: HttpResponse;
}

export async function offered(s: Session, id?: RelayIdentity): Promise<Offered> {
  const who = id ?? (await s.identity());
  const o = await offer(s.relay, who.identity, 'harness phone');
  if (o.code === undefined || o.token === undefined) throw new CheckFailure(`the offer (POST .../enroll/offer) answered ${said(o.answer)}, not 201 with rendezvous_id and claim_token`);
  return { id: who, code: o.code, token: o.token, key: o.key, secret: o.secret, commitment: o.commitment, answer: o.answer };
}

const sealFor = (s: Session, devicePublic: string, seed: Uint8Array): string => sealWith(s.profile, devicePublic, seed);
const openSealed = (s: Session, secret: Uint8Array, sealed: string): Uint8Array | undefined => openWith(s.profile, secret, sealed);

export const fetchBy = (s: Session, o: Offered, nonce = b64(), code = o.code) => s.relay.enrollFetch(o.id, code, { approver_nonce: nonce, mode: 'compare' }, o.code);
export const body = (r: HttpResponse): Record<string, unknown> => {
  const b = safeJson(r);
  return isObject(b) ? b : {};
};

function happyPathCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/happy-path',
    lane: LANE,
    title: 'offer, approver fetch, reveal, delivery and the sealed seed taken once: every step answers as document 3 shows, and both sides can derive the same six digits',
    rules: ['ra.pairing.offer', 'ra.pairing.fetch', 'ra.pairing.reveal', 'ra.pairing.deliver', 'ra.pairing.poll', 'ra.signing.enroll-fetch', 'ra.signing.enroll-deliver'],
    run: async (s, e) => {
      const o = await offered(s);
      const ob = body(o.answer);
      const ttl = typeof ob.expires_at === 'string' ? (Date.parse(ob.expires_at) - Date.now()) / 1000 : NaN;
      const life = lifeOf(t);
      e.that(/^[0-9A-HJKMNP-TV-Z]{8}$/.test(o.code), `rendezvous_id ${JSON.stringify(o.code)} is not an 8-character short code`);
      e.that(Math.abs(ttl - life) < Math.min(60, life / 2), `expires_at ${JSON.stringify(ob.expires_at)} is not ${life} s ahead`);
      const nonce = b64();
      const f = await fetchBy(s, o, nonce);
      const fb = body(f);
      if (!e.that(f.status === 200 && fb.commitment === o.commitment && typeof fb.state === 'string' && typeof fb.expires_at === 'string', `the approver's fetch answered ${said(f)}`)) return;
      e.that(fb.label === 'harness phone' && fb.ephemeral_public_key === undefined, `before the reveal the fetch shows ${JSON.stringify(fb)}`);
      const p = body(await s.relay.enrollPoll(o.id.identity, o.code, o.token));
      e.that(p.approver_nonce === nonce && p.mode === 'compare', `the new device's poll shows ${JSON.stringify(p)}, not the approver's nonce and mode`);
      const r = await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key);
      if (!e.that(r.status >= 200 && r.status < 300, `the reveal answered ${said(r)}`)) return;
      const again = body(await fetchBy(s, o, nonce));
      e.that(again.ephemeral_public_key === o.key.ephemeral_public_key && again.commit_nonce === o.key.commit_nonce, `after the reveal the fetch shows ${JSON.stringify(again)}`);
      const sas = sixDigits(s.profile, o, nonce);
      s.note(`six digits ${sas}`);
      // The approver seals the seed to the revealed key (message-seal-v1); the new device opens it.
      const seed = new Uint8Array(randomBytes(32));
      const sealed = sealFor(s, o.key.ephemeral_public_key, seed);
      const d = await s.relay.enrollDeliver(o.id, o.code, sealed);
      e.that(d.status >= 200 && d.status < 300, `the delivery answered ${said(d)}`);
      const got = body(await s.relay.enrollPoll(o.id.identity, o.code, o.token));
      e.that(got.state === 'delivered' && got.sealed === sealed && got.ready === true, `after the delivery the poll shows ${JSON.stringify(got)}`);
      const opened = typeof got.sealed === 'string' ? openSealed(s, o.secret, got.sealed) : undefined;
      e.that(opened !== undefined && Buffer.from(opened).equals(Buffer.from(seed)), 'the new device cannot open the sealed seed it was handed');
      const twice = await s.relay.enrollPoll(o.id.identity, o.code, o.token);
      e.that(!(twice.status === 200 && body(twice).sealed === sealed), `the sealed seed was handed out a second time: ${said(twice)}`);
    },
  });
}

function v1RefusedCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/v1-refused',
    lane: LANE,
    title: 'an offer with a key and no commitment (pairing v1) is refused 400 pairing_v1',
    rules: ['ra.pairing.v1-refused'],
    run: async (s, e) => {
      const id = await s.identity();
      const r = await s.relay.enrollOffer(id.identity, { ephemeral_public_key: b64(), label: 'old phone' });
      e.that(r.status === 400 && codeOf(r) === 'pairing_v1', `a v1 offer answered ${said(r)}, expected 400 pairing_v1`);
    },
  });
}

function offersMaxCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/offers-max',
    lane: LANE,
    title: `${limits.pairing_offers_max} live offers of one identity are taken; one more is refused 429 too_many_offers`,
    rules: ['ra.pairing.offers-max'],
    run: async (s, e) => {
      const id = await s.identity();
      const live: Offered[] = [];
      for (let i = 0; i < limits.pairing_offers_max; i++) live.push(await offered(s, id));
      const r = await s.relay.enrollOffer(id.identity, { commitment: b64(), label: 'one too many' });
      e.that(r.status === 429 && codeOf(r) === 'too_many_offers', `offer ${limits.pairing_offers_max + 1} answered ${said(r)}, expected 429 too_many_offers`);
      for (const o of live) await s.relay.enrollAbandon(o.id.identity, o.code, o.token);
    },
  });
}

function alreadyApprovingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/already-approving',
    lane: LANE,
    title:
      'a fetch with another approver_nonce than the first is refused 409 already_approving, in state nonce, after the reveal and after the delivery; the first nonce fetches again after the reveal and is shown the revealed key',
    rules: ['ra.pairing.already-approving'],
    run: async (s, e) => {
      const o = await offered(s);
      const nonce = b64();
      const first = await fetchBy(s, o, nonce);
      if (!e.that(first.status === 200, `the first fetch answered ${said(first)}`)) return;
      // "a later fetch must repeat the same nonce, else 409 already_approving": every later fetch, whatever the state.
      const another = async (when: string) => {
        const r = await fetchBy(s, o);
        e.that(r.status === 409 && codeOf(r) === 'already_approving', `another approver_nonce ${when} answered ${said(r)}, expected 409 already_approving`);
      };
      await another('in state nonce');
      const revealed = await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key);
      if (!e.that(revealed.status >= 200 && revealed.status < 300, `the reveal answered ${said(revealed)}`)) return;
      await another('after the reveal');
      const again = await fetchBy(s, o, nonce);
      e.that(
        again.status === 200 && typeof body(again).ephemeral_public_key === 'string',
        `the first approver's nonce fetching again after the reveal answered ${said(again)}, not 200 with the revealed ephemeral_public_key`,
      );
      const delivered = await s.relay.enrollDeliver(o.id, o.code, b64(64));
      if (!e.that(delivered.status >= 200 && delivered.status < 300, `the delivery answered ${said(delivered)}`)) return;
      const late = await fetchBy(s, o);
      e.that(
        late.status === 409 || late.status === 404 || late.status === 410,
        `another approver_nonce after the delivery answered ${said(late)}: the offer was shown to a second approver, not refused`,
      );
    },
  });
}

function outOfOrderCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/out-of-order',
    lane: LANE,
    title: 'a reveal before the fetch, a delivery before the reveal, and a second reveal or delivery are refused 409 out_of_order',
    rules: ['ra.pairing.out-of-order'],
    cells: (['enrollReveal', 'enrollDeliver'] as const).map((operation) => ({ rule: 'ra.pairing.out-of-order' as const, facet: 'once', value: 'replay', operation })),
    run: async (s, e) => {
      const o = await offered(s);
      const is409 = (r: HttpResponse, what: string) => e.that(r.status === 409 && codeOf(r) === 'out_of_order', `${what} answered ${said(r)}, expected 409 out_of_order`);
      is409(await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key), 'a reveal before any fetch');
      await fetchBy(s, o);
      is409(await s.relay.enrollDeliver(o.id, o.code, b64(64)), 'a delivery before the reveal');
      const r = await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key);
      if (!e.that(r.status >= 200 && r.status < 300, `the reveal after the fetch answered ${said(r)}`)) return;
      is409(await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key), 'a second reveal');
      const d = await s.relay.enrollDeliver(o.id, o.code, b64(64));
      if (!e.that(d.status >= 200 && d.status < 300, `the delivery answered ${said(d)}`)) return;
      is409(await s.relay.enrollDeliver(o.id, o.code, b64(64)), 'a second delivery');
    },
  });
}

const RACE = 20;

function outOfOrderRaceCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/once-race',
    lane: LANE,
    title: `after the fetch, ${RACE} reveals sent at once: exactly one is taken and the others refused 409 out_of_order; then ${RACE} deliveries at once, the same`,
    rules: ['ra.pairing.out-of-order'],
    cells: (['enrollReveal', 'enrollDeliver'] as const).map((operation) => ({ rule: 'ra.pairing.out-of-order' as const, facet: 'once', value: 'race', operation })),
    run: async (s, e) => {
      const o = await offered(s);
      await fetchBy(s, o);
      const judge = (what: string, answers: HttpResponse[]) => {
        const won = answers.filter((r) => r.status >= 200 && r.status < 300).length;
        const wrong = answers.find((r) => !(r.status >= 200 && r.status < 300) && !(r.status === 409 && codeOf(r) === 'out_of_order'));
        e.that(won === 1, `${won} of ${RACE} ${what} sent at once were taken (${answers.map((r) => r.status).join(',')}), not exactly 1`);
        e.that(wrong === undefined, `a ${what.replace(/s$/, '')} that lost the race answered ${wrong ? said(wrong) : ''}, not 409 out_of_order`);
        return won === 1;
      };
      if (!judge('reveals', await Promise.all(Array.from({ length: RACE }, () => s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key))))) return;
      judge('deliveries', await Promise.all(Array.from({ length: RACE }, () => s.relay.enrollDeliver(o.id, o.code, b64(64)))));
    },
  });
}

function commitmentCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/commitment',
    lane: LANE,
    title: 'a reveal that does not open the commitment is refused; the one that does is taken',
    rules: ['ra.pairing.commitment', 'ra.pairing.reveal'],
    run: async (s, e) => {
      const o = await offered(s);
      await fetchBy(s, o);
      const wrong = await s.relay.enrollReveal(o.id.identity, o.code, o.token, { ...o.key, commit_nonce: b64() });
      e.that(wrong.status >= 400 && wrong.status < 500, `a reveal that does not open the commitment answered ${said(wrong)}`);
      const right = await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key);
      e.that(right.status >= 200 && right.status < 300, `the reveal that opens the commitment answered ${said(right)}`);
    },
  });
}

/** The code typed loosely: lower case, a dash, 0 as O and 1 as L where it has them. */
function typedLoosely(code: string): string {
  const loose = code.toLowerCase().replaceAll('0', 'o').replaceAll('1', 'l');
  return `${loose.slice(0, 4)}-${loose.slice(4)}`;
}

function shortCodeCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/short-code',
    lane: LANE,
    title: 'the approver may type the rendezvous code loosely (case, a dash, O for 0, L for 1)',
    rules: ['ra.pairing.short-code'],
    run: async (s, e) => {
      const o = await offered(s);
      const typed = typedLoosely(o.code);
      const f = await fetchBy(s, o, b64(), typed);
      e.that(f.status === 200 && body(f).commitment === o.commitment, `the fetch at ${typed} (code ${o.code}) answered ${said(f)}`);
    },
  });
}

function bearerCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/bearer',
    lane: LANE,
    title: "the new device's calls without its claim token, or with another, are refused 401 and change nothing",
    rules: ['ra.pairing.bearer'],
    run: async (s, e) => {
      const o = await offered(s);
      await fetchBy(s, o);
      for (const [what, token] of [
        ['no token', undefined],
        ['another token', b64()],
      ] as const) {
        const p = await s.relay.enrollPoll(o.id.identity, o.code, token);
        e.that(p.status === 401, `a poll with ${what} answered ${said(p)}, expected 401`);
        const r = await s.relay.enrollReveal(o.id.identity, o.code, token, o.key);
        e.that(r.status === 401, `a reveal with ${what} answered ${said(r)}, expected 401`);
      }
      const ok = await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key);
      e.that(ok.status >= 200 && ok.status < 300, `the reveal with the claim token then answered ${said(ok)}`);
    },
  });
}

function abandonCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/abandon',
    lane: LANE,
    title: 'an offer abandoned with DELETE is gone: the approver cannot fetch it and the new device cannot poll it',
    rules: ['ra.pairing.abandon'],
    run: async (s, e) => {
      const o = await offered(s);
      const d = await s.relay.enrollAbandon(o.id.identity, o.code, o.token);
      e.that(d.status >= 200 && d.status < 300, `DELETE .../enroll/:rendezvous answered ${said(d)}`);
      const f = await fetchBy(s, o);
      e.that(f.status === 404, `a fetch of the abandoned offer answered ${said(f)}, expected 404`);
    },
  });
}

function profilePairingCodesCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/pairing-codes',
    lane: LANE,
    title: 'a bearer refused answers 401 not_authorized; an unknown code 404 not_found; a 65-byte label 400',
    rules: ['ra.errors.pairing-unauthorized', 'ra.pairing.limits'],
    run: async (s, e) => {
      const o = await offered(s);
      const p = await s.relay.enrollPoll(o.id.identity, o.code, b64());
      e.that(p.status === 401 && codeOf(p) === 'not_authorized', `a wrong token answered ${said(p)}, expected 401 not_authorized`);
      const unknown = await s.relay.enrollPoll(o.id.identity, 'ZZZZZZZZ', o.token);
      e.that(unknown.status === 404 && codeOf(unknown) === 'not_found', `an unknown code answered ${said(unknown)}, expected 404 not_found`);
      const long = await s.relay.enrollOffer(o.id.identity, { commitment: b64(), label: 'x'.repeat(65) });
      e.that(long.status === 400, `a 65-byte label answered ${said(long)}, expected 400`);
    },
  });
}

/** An offer's life: document 3's 10 minutes, or the shorter one the target declares for tests. */
const lifeOf = (t: RelayTarget): number => t.declared.pairingTtlS ?? limits.pairing_offer_ttl_seconds;

/** The longest declared life the expiry check waits for. */
const MAX_WAIT_S = 60;

function expiryCheck(t: RelayTarget): Check {
  const life = lifeOf(t);
  return relayCheck(t, {
    id: 'relay/pairing/expiry',
    // A wait on an offer of its own: a lane of its own, overlapping the other checks.
    lane: 'relay/pairing/expiry',
    title: `an offer is gone after its life (${life} s) counted from the offer, though the approver fetched it halfway: the approver's fetch and the new device's poll are refused`,
    rules: ['ra.pairing.expiry'],
    timeoutMs: (Math.min(life, MAX_WAIT_S) + 40) * 1000,
    run: async (s, e) => {
      if (life > MAX_WAIT_S) throw new CheckSkip(`the target declares no pairing life of at most ${MAX_WAIT_S} s (--relay-pairing-ttl); document 3's 10 minutes are not waited for`);
      const o = await offered(s);
      const made = Date.now();
      // The approver's fetch halfway through starts no new life: the offer still ends at its own.
      await sleep((life / 2) * 1000, s.signal);
      const early = await fetchBy(s, o);
      e.that(early.status === 200, `the approver's fetch halfway through the offer's ${life} s answered ${said(early)}`);
      await sleep(Math.max(0, made + (life + 1.5) * 1000 - Date.now()), s.signal);
      const f = await fetchBy(s, o);
      e.that(f.status >= 400 && f.status < 500, `the approver's fetch ${life + 1.5} s after the offer (fetched halfway through) answered ${said(f)}`);
      const p = await s.relay.enrollPoll(o.id.identity, o.code, o.token);
      e.that(p.status >= 400 && p.status < 500, `the new device's poll ${life + 1.5} s after the offer answered ${said(p)}`);
    },
  });
}

export function pairingChecks(t: RelayTarget): Check[] {
  return [
    expiryCheck(t),
    happyPathCheck(t),
    v1RefusedCheck(t),
    offersMaxCheck(t),
    alreadyApprovingCheck(t),
    outOfOrderCheck(t),
    outOfOrderRaceCheck(t),
    commitmentCheck(t),
    shortCodeCheck(t),
    bearerCheck(t),
    abandonCheck(t),
    profilePairingCodesCheck(t),
    pairingModelCheck(t),
  ];
}
