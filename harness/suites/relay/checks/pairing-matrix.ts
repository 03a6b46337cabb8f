// Pairing across its matrix (spec/facets/relay-owner.yaml): each part the approver's signature,
// the commitment and the claim token are bound to, swapped alone; each once-only step (the
// approver slot, the reveal, the delivery, the sealed seed) replayed and raced 20 ways; the offer's
// life from both sides on every step; the offers cap at 5, 6 and on another identity; and what an
// abandon and a consumed pairing end.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import { adminSigned, enrollStepWith, race as raceOn, type Swap } from '../../../actors/relay/owner.ts';
import { newDeviceKey, offer, sealFor, type DeviceKey } from '../../../actors/relay/pairing.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, CheckSkip, codeOf, isObject, safeJson, said, sleep, type RelayTarget, type Session } from '../driver.ts';

/** Its own lane: fresh identities only, overlapping the suite's other checks. */
const LANE = 'relay/pairing-matrix';
const RACE = 20;
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const refused = (r: HttpResponse) => r.status >= 400 && r.status < 500;
const b64 = (n = 32) => randomBytes(n).toString('base64url');
const bodyOf = (r: HttpResponse): Record<string, unknown> => {
  const b = safeJson(r);
  return isObject(b) ? b : {};
};

/** A live offer as the new device holds it. */
export interface Live extends DeviceKey {
  id: RelayIdentity;
  code: string;
  token: string;
}

/** Offers on fresh identities, at most `per` live on each (under the cap of 5). */
export class Offers {
  #ids: Array<Promise<RelayIdentity>> = [];
  #n = 0;
  constructor(
    readonly s: Session,
    readonly per = 4,
  ) {}

  identity(): Promise<RelayIdentity> {
    const i = Math.floor(this.#n++ / this.per);
    return (this.#ids[i] ??= this.s.identity());
  }

  async next(): Promise<Live> {
    return offerOn(this.s, await this.identity());
  }
}

export async function offerOn(s: Session, id: RelayIdentity): Promise<Live> {
  const o = await offer(s.relay, id.identity, 'matrix phone');
  if (o.code === undefined || o.token === undefined) throw new CheckFailure(`the offer (POST .../enroll/offer) answered ${said(o.answer)}, not 201 with rendezvous_id and claim_token`);
  return { id, code: o.code, token: o.token, key: o.key, commitment: o.commitment, secret: o.secret };
}

/** The approver's fetch with `nonce`, the code typed as `typed`. */
export const fetchAs = (s: Session, o: Live, nonce = b64(), typed = o.code) => s.relay.enrollFetch(o.id, typed, { approver_nonce: nonce, mode: 'compare' }, o.code);

/** Takes `o` through the steps up to `state`; fails the check when one is refused. */
export async function advance(s: Session, o: Live, state: 'nonce' | 'revealed' | 'delivered'): Promise<{ nonce: string; sealed?: string }> {
  const nonce = b64();
  const must = (r: HttpResponse, what: string) => {
    if (!ok(r)) throw new CheckFailure(`setting up: ${what} answered ${said(r)}`);
  };
  must(await fetchAs(s, o, nonce), "the approver's fetch");
  if (state === 'nonce') return { nonce };
  must(await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key), 'the reveal');
  if (state === 'revealed') return { nonce };
  const sealed = sealFor(s.profile, o.key.ephemeral_public_key, new Uint8Array(randomBytes(32)));
  must(await s.relay.enrollDeliver(o.id, o.code, sealed), 'the delivery');
  return { nonce, sealed };
}

const APPROVER_PARTS = ['identity', 'code', 'issued-at', 'nonce'] as const;

function approverSwap(part: string, other: { identity: string; code: string }): Swap {
  if (part === 'identity') return { field: 'identity', value: other.identity };
  if (part === 'code') return { field: 'rendezvous_id', value: other.code };
  return { part: part === 'issued-at' ? 'issued-at' : 'nonce' };
}

function approverBindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing-matrix/approver-signature',
    lane: LANE,
    title: "the approver's fetch and delivery signed over another identity, another live code of the owner, another issued_at or another nonce than sent are refused and move nothing",
    rules: ['ra.signing.enroll-fetch', 'ra.signing.enroll-deliver'],
    cells: [
      ...APPROVER_PARTS.map((value) => ({ rule: 'ra.signing.enroll-fetch' as const, facet: 'binding', value, operation: 'enrollFetch' })),
      ...APPROVER_PARTS.map((value) => ({ rule: 'ra.signing.enroll-deliver' as const, facet: 'binding', value, operation: 'enrollDeliver' })),
    ],
    run: async (s, e) => {
      const offers = new Offers(s);
      const [fresh, revealed, sibling, other] = await Promise.all([offers.next(), offers.next(), offers.next(), s.identity()]);
      await advance(s, revealed, 'revealed');
      const swapTo = { identity: other.identity, code: sibling.code };
      const sealed = sealFor(s.profile, revealed.key.ephemeral_public_key, new Uint8Array(randomBytes(32)));
      await Promise.all(
        APPROVER_PARTS.flatMap((part) => [
          (async () => {
            const env = adminSigned(s.profile, 'enroll-fetch', { identity: fresh.id.identity, rendezvous_id: fresh.code }, fresh.id.seed, approverSwap(part, swapTo));
            const r = await enrollStepWith(s.relay, fresh.id.identity, fresh.code, 'fetch', { approver_nonce: b64(), mode: 'scan', ...env });
            e.that(refused(r), `a fetch signed over another ${part} answered ${said(r)}, expected a refusal`);
          })(),
          (async () => {
            const env = adminSigned(s.profile, 'enroll-deliver', { identity: revealed.id.identity, rendezvous_id: revealed.code }, revealed.id.seed, approverSwap(part, swapTo));
            const r = await enrollStepWith(s.relay, revealed.id.identity, revealed.code, 'deliver', { sealed: `${sealed}${part.length}`, ...env });
            e.that(refused(r), `a delivery signed over another ${part} answered ${said(r)}, expected a refusal`);
          })(),
        ]),
      );
      const f = await fetchAs(s, fresh);
      e.that(f.status === 200, `after the refused fetches the owner's own fetch answered ${said(f)}, expected 200 (no approver recorded)`);
      const d = await s.relay.enrollDeliver(revealed.id, revealed.code, sealed);
      e.that(ok(d), `after the refused deliveries the owner's own delivery answered ${said(d)}`);
      const got = bodyOf(await s.relay.enrollPoll(revealed.id.identity, revealed.code, revealed.token));
      e.that(got.sealed === sealed, `the new device took ${JSON.stringify(got.sealed)}, not the owner's delivery`);
    },
  });
}

function deviceBindingCheck(t: RelayTarget): Check {
  const ops = ['enrollReveal', 'enrollPoll', 'enrollAbandon'] as const;
  return relayCheck(t, {
    id: 'relay/pairing-matrix/device-binding',
    lane: LANE,
    title:
      "a reveal of another valid key or commit_nonce than committed is refused; the claim token of the owner's other offer, or this offer's code and token under another identity, are refused on reveal, poll and abandon; the offer goes on",
    rules: ['ra.pairing.commitment', 'ra.pairing.bearer'],
    cells: [
      { rule: 'ra.pairing.commitment', facet: 'binding', value: 'ephemeral-key', operation: 'enrollReveal' },
      { rule: 'ra.pairing.commitment', facet: 'binding', value: 'commit-nonce', operation: 'enrollReveal' },
      ...ops.flatMap((operation) => ['rendezvous', 'identity'].map((value) => ({ rule: 'ra.pairing.bearer' as const, facet: 'binding', value, operation }))),
    ],
    run: async (s, e) => {
      const offers = new Offers(s);
      const [o, sibling, otherOwn] = await Promise.all([offers.next(), offers.next(), (async () => offerOn(s, await s.identity()))()]);
      const { nonce } = await advance(s, o, 'nonce');
      const another = newDeviceKey(s.profile).key;
      for (const [part, key] of [
        ['ephemeral-key', { ...o.key, ephemeral_public_key: another.ephemeral_public_key }],
        ['commit-nonce', { ...o.key, commit_nonce: another.commit_nonce }],
      ] as const) {
        const r = await s.relay.enrollReveal(o.id.identity, o.code, o.token, key);
        e.that(refused(r), `a reveal with another ${part} than committed answered ${said(r)}, expected a refusal`);
      }
      const path = (identity: string) => `/identities/${encodeURIComponent(identity)}/enroll/${encodeURIComponent(o.code)}`;
      for (const [part, identity, token] of [
        ['rendezvous', o.id.identity, sibling.token],
        ['identity', otherOwn.id.identity, o.token],
      ] as const) {
        const h = { authorization: `Bearer ${token}` };
        const rv = await s.relay.post(`${path(identity)}/reveal`, o.key, h);
        e.that(refused(rv), `a reveal bound to another ${part} answered ${said(rv)}, expected a refusal`);
        const p = await s.relay.get(path(identity), h);
        e.that(refused(p) && !p.text().includes(nonce), `a poll bound to another ${part} answered ${said(p)}, expected a refusal`);
        const d = await s.relay.post(path(identity), '', h, 'DELETE');
        e.that(refused(d), `an abandon bound to another ${part} answered ${said(d)}, expected a refusal`);
      }
      const r = await s.relay.enrollReveal(o.id.identity, o.code, o.token, o.key);
      e.that(ok(r), `the reveal of the committed key after the refused calls answered ${said(r)}`);
    },
  });
}

const statuses = (rs: HttpResponse[]) => rs.map((r) => r.status).join(' ');

function onceCheck(t: RelayTarget): Check {
  const cells = (
    [
      ['ra.pairing.already-approving', 'enrollFetch'],
      ['ra.pairing.reveal', 'enrollReveal'],
      ['ra.pairing.deliver', 'enrollDeliver'],
      ['ra.pairing.poll', 'enrollPoll'],
    ] as const
  ).flatMap(([rule, operation]) => ['race', 'replay'].map((value) => ({ rule, facet: 'once', value, operation })));
  return relayCheck(t, {
    id: 'relay/pairing-matrix/once',
    lane: LANE,
    title: `${RACE} approvers fetching at once, ${RACE} reveals, ${RACE} deliveries and ${RACE} polls of the sealed seed: exactly one of each is taken, and each again afterwards is refused`,
    rules: ['ra.pairing.already-approving', 'ra.pairing.reveal', 'ra.pairing.deliver', 'ra.pairing.poll'],
    cells,
    run: async (s, e) => {
      const offers = new Offers(s);
      const [a, b, c, d] = await Promise.all([offers.next(), offers.next(), offers.next(), offers.next()]);
      await Promise.all([advance(s, b, 'nonce'), advance(s, c, 'revealed'), advance(s, d, 'delivered')]);
      const nonces = Array.from({ length: RACE }, () => b64());
      const sealed = Array.from({ length: RACE }, (_, i) => `${sealFor(s.profile, c.key.ephemeral_public_key, new Uint8Array(randomBytes(32)))}${i}`);
      // One race after another, each on connections already open, so its calls arrive together.
      const fetches = await raceOn(s.relay, RACE, (i) => fetchAs(s, a, nonces[i]));
      const reveals = await raceOn(s.relay, RACE, () => s.relay.enrollReveal(b.id.identity, b.code, b.token, b.key));
      const deliveries = await raceOn(s.relay, RACE, (i) => s.relay.enrollDeliver(c.id, c.code, sealed[i]!));
      const polls = await raceOn(s.relay, RACE, () => s.relay.enrollPoll(d.id.identity, d.code, d.token));
      const one = (rs: HttpResponse[], won: (r: HttpResponse) => boolean, what: string) => {
        const n = rs.filter(won).length;
        e.that(n === 1, `${RACE} ${what} at once: ${n} taken (statuses ${statuses(rs)}), expected exactly 1`);
        e.that(
          rs.every((r) => r.status < 500),
          `${what}: a racing call answered ${said(rs.find((r) => r.status >= 500) ?? rs[0]!)}`,
        );
      };
      one(fetches, (r) => r.status === 200, 'fetches with distinct approver nonces');
      one(reveals, ok, 'reveals');
      one(deliveries, ok, 'deliveries');
      one(polls, (r) => r.status === 200 && typeof bodyOf(r).sealed === 'string', 'polls after the delivery');
      const winner = nonces[fetches.findIndex((r) => r.status === 200)];
      const seen = bodyOf(await s.relay.enrollPoll(a.id.identity, a.code, a.token));
      e.that(seen.approver_nonce === winner, `after the race the offer holds approver nonce ${JSON.stringify(seen.approver_nonce)}, not the winner's`);
      const again = await fetchAs(s, a);
      e.that(again.status === 409 && codeOf(again) === 'already_approving', `another approver after the race answered ${said(again)}, expected 409 already_approving`);
      const rv = await s.relay.enrollReveal(b.id.identity, b.code, b.token, b.key);
      e.that(rv.status === 409, `a reveal after the race answered ${said(rv)}, expected 409`);
      const dv = await s.relay.enrollDeliver(c.id, c.code, sealFor(s.profile, c.key.ephemeral_public_key, new Uint8Array(randomBytes(32))));
      e.that(dv.status === 409, `a delivery after the race answered ${said(dv)}, expected 409`);
      const pl = await s.relay.enrollPoll(d.id.identity, d.code, d.token);
      e.that(!(pl.status === 200 && typeof bodyOf(pl).sealed === 'string'), `a poll after the race answered ${said(pl)}: the sealed seed again`);
    },
  });
}

function capAndEndsCheck(t: RelayTarget): Check {
  const max = limits.pairing_offers_max;
  return relayCheck(t, {
    id: 'relay/pairing-matrix/cap-and-ends',
    lane: LANE,
    title: `${max} offers of one identity are taken, one more is refused 429 too_many_offers while another identity still offers; an abandoned offer refuses fetch, reveal and poll and frees its slot; a consumed one refuses the poll and a delivery`,
    rules: ['ra.pairing.offers-max', 'ra.pairing.abandon', 'ra.pairing.poll'],
    cells: [
      ...['at', 'past', 'other-scope'].map((value) => ({ rule: 'ra.pairing.offers-max' as const, facet: 'limit', value, operation: 'enrollOffer' })),
      ...['enrollFetch', 'enrollReveal', 'enrollPoll', 'enrollOffer'].map((operation) => ({ rule: 'ra.pairing.abandon' as const, facet: 'lifecycle', value: 'offer', operation })),
      { rule: 'ra.pairing.poll', facet: 'lifecycle', value: 'offer', operation: 'enrollPoll' },
      { rule: 'ra.pairing.poll', facet: 'lifecycle', value: 'offer', operation: 'enrollDeliver' },
    ],
    run: async (s, e) => {
      const [full, other] = await Promise.all([s.identity(), s.identity()]);
      const live = await Promise.all(Array.from({ length: max }, () => offerOn(s, full)));
      const past = await s.relay.enrollOffer(full.identity, { commitment: b64(), label: 'one too many' });
      e.that(past.status === 429 && codeOf(past) === 'too_many_offers', `offer ${max + 1} of one identity answered ${said(past)}, expected 429 too_many_offers`);
      const elsewhere = await s.relay.enrollOffer(other.identity, { commitment: newDeviceKey(s.profile).commitment, label: 'another identity' });
      e.that(elsewhere.status === 201, `an offer of another identity while the first has ${max} answered ${said(elsewhere)}, expected 201`);
      const [gone, consumed] = [live[0]!, live[1]!];
      await advance(s, gone, 'nonce');
      const { sealed } = await advance(s, consumed, 'delivered');
      const ab = await s.relay.enrollAbandon(gone.id.identity, gone.code, gone.token);
      if (!e.that(ok(ab), `the abandon answered ${said(ab)}`)) return;
      const f = await fetchAs(s, gone);
      e.that(refused(f), `a fetch of the abandoned offer answered ${said(f)}, expected a refusal`);
      const rv = await s.relay.enrollReveal(gone.id.identity, gone.code, gone.token, gone.key);
      e.that(refused(rv), `a reveal of the abandoned offer answered ${said(rv)}, expected a refusal`);
      const p = await s.relay.enrollPoll(gone.id.identity, gone.code, gone.token);
      e.that(refused(p), `a poll of the abandoned offer answered ${said(p)}, expected a refusal`);
      const slot = await s.relay.enrollOffer(full.identity, { commitment: b64(), label: 'in the freed slot' });
      e.that(slot.status === 201, `an offer after abandoning one of ${max} answered ${said(slot)}, expected 201 (the slot freed)`);
      const first = bodyOf(await s.relay.enrollPoll(consumed.id.identity, consumed.code, consumed.token));
      if (!e.that(first.sealed === sealed, `the first poll after the delivery took ${JSON.stringify(first)}`)) return;
      const second = await s.relay.enrollPoll(consumed.id.identity, consumed.code, consumed.token);
      e.that(!(second.status === 200 && typeof bodyOf(second).sealed === 'string'), `a poll after the sealed seed was taken answered ${said(second)}`);
      const dv = await s.relay.enrollDeliver(consumed.id, consumed.code, sealFor(s.profile, consumed.key.ephemeral_public_key, new Uint8Array(randomBytes(32))));
      e.that(refused(dv), `a delivery after the sealed seed was taken answered ${said(dv)}, expected a refusal`);
    },
  });
}

/** An offer's life: document 3's 10 minutes, or the shorter one the target declares for tests. */
const lifeOf = (t: RelayTarget): number => t.declared.pairingTtlS ?? limits.pairing_offer_ttl_seconds;
/** The longest declared life the window check waits for. */
const MAX_WAIT_S = 60;

function windowCheck(t: RelayTarget): Check {
  const life = lifeOf(t);
  const ops = ['enrollFetch', 'enrollReveal', 'enrollDeliver', 'enrollPoll'] as const;
  return relayCheck(t, {
    id: 'relay/pairing-matrix/window',
    // Mostly a wait on offers of its own: a lane of its own.
    lane: 'relay/pairing-matrix/window',
    title: `each step of an offer is taken just inside its life (${life} s) and refused just after it: the fetch, the reveal, the delivery and the poll of the sealed seed`,
    rules: ['ra.pairing.expiry'],
    cells: ops.flatMap((operation) => ['inside', 'outside'].map((value) => ({ rule: 'ra.pairing.expiry' as const, facet: 'window', value, operation }))),
    timeoutMs: (Math.min(life, MAX_WAIT_S) + 40) * 1000,
    run: async (s, e) => {
      if (life > MAX_WAIT_S) throw new CheckSkip(`the target declares no pairing life of at most ${MAX_WAIT_S} s (--relay-pairing-ttl); document 3's 10 minutes are not waited for`);
      const offers = new Offers(s);
      const before = Date.now();
      const made = await Promise.all(Array.from({ length: 8 }, () => offers.next()));
      const after = Date.now();
      const [inside, outside] = [made.slice(0, 4), made.slice(4)];
      // Per side: one fresh, one fetched, one revealed, one delivered (the step each is judged on).
      const states = await Promise.all(
        [inside, outside].map((side) => Promise.all([Promise.resolve(undefined), advance(s, side[1]!, 'nonce'), advance(s, side[2]!, 'revealed'), advance(s, side[3]!, 'delivered')])),
      );
      const steps = async (side: Live[], sealed: string | undefined) => {
        const [fresh, fetched, revealed, delivered] = side as [Live, Live, Live, Live];
        return Promise.all([
          fetchAs(s, fresh),
          s.relay.enrollReveal(fetched.id.identity, fetched.code, fetched.token, fetched.key),
          s.relay.enrollDeliver(revealed.id, revealed.code, sealFor(s.profile, revealed.key.ephemeral_public_key, new Uint8Array(randomBytes(32)))),
          s.relay.enrollPoll(delivered.id.identity, delivered.code, delivered.token).then((r) => ({ r, sealed })),
        ]);
      };
      // Half the life: a loaded machine's round trips must not carry a step past it.
      const margin = (life / 2) * 1000;
      await sleep(Math.max(0, before + life * 1000 - margin - Date.now()), s.signal);
      const [fi, ri, di, pi] = await steps(inside, states[0]![3]!.sealed);
      const lateIn = (Date.now() - before) / 1000;
      e.that(fi.status === 200, `a fetch ${lateIn.toFixed(1)} s into the offer's ${life} s answered ${said(fi)}`);
      e.that(ok(ri), `a reveal ${lateIn.toFixed(1)} s into the offer's life answered ${said(ri)}`);
      e.that(ok(di), `a delivery ${lateIn.toFixed(1)} s into the offer's life answered ${said(di)}`);
      e.that(pi.r.status === 200 && bodyOf(pi.r).sealed === pi.sealed, `a poll ${lateIn.toFixed(1)} s into the offer's life answered ${said(pi.r)}, expected the sealed seed`);
      await sleep(Math.max(0, after + life * 1000 + 1000 - Date.now()), s.signal);
      const [fo, ro, dout, po] = await steps(outside, states[1]![3]!.sealed);
      const lateOut = ((Date.now() - after) / 1000).toFixed(1);
      e.that(refused(fo), `a fetch ${lateOut} s after the offer (life ${life} s) answered ${said(fo)}, expected a refusal`);
      e.that(refused(ro), `a reveal ${lateOut} s after the offer answered ${said(ro)}, expected a refusal`);
      e.that(refused(dout), `a delivery ${lateOut} s after the offer answered ${said(dout)}, expected a refusal`);
      e.that(refused(po.r) && bodyOf(po.r).sealed === undefined, `a poll ${lateOut} s after the offer answered ${said(po.r)}, expected a refusal without the sealed seed`);
    },
  });
}

export function pairingMatrixChecks(t: RelayTarget): Check[] {
  return [windowCheck(t), approverBindingCheck(t), deviceBindingCheck(t), onceCheck(t), capAndEndsCheck(t)];
}
