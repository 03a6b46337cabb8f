// Pairing's fields in and out of form (issue 25's whole-area run of reference/relay/pairing.ts).
// Document 3 gives a commitment and an approver nonce of 32 bytes and a mode of scan or compare,
// but not what a relay does with others: refusing them is the project's (a profile check), while
// 404 for an identity not hosted, scan as a mode and the bearer claim token are the document's.
// The project's replies follow the deployed relay (interop/poweur/wire/pairing.json).
import type { Check } from '../../../run/model.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { relayCheck, type Expect } from '../check.ts';
import { codeOf, said, type RelayTarget, type Session } from '../driver.ts';
import { LANE, b64, body, fetchBy, offered, type Offered } from './pairing.ts';

/** Values out of a 32-byte base64url field's form: short, long, not base64url, not a string. */
const NOT_32 = [b64(31), b64(33), '!!not base64url!!', 5] as const;

export function pairingFieldsCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing/field-forms',
    lane: LANE,
    title:
      'an offer for an identity not hosted is 404; scan is a mode as compare is; an Authorization near the bearer claim token, but not it, is refused 401 on the poll, the reveal and the abandon and changes nothing',
    rules: ['ra.pairing.offer', 'ra.pairing.fetch', 'ra.pairing.bearer'],
    run: async (s, e) => {
      const nobody = s.nobody();
      const stranger = await s.stranger();
      for (const [what, who] of [
        ['no directory knows', nobody],
        ['homed elsewhere', stranger],
      ] as const) {
        const r = await s.relay.enrollOffer(who.identity, { commitment: b64(), label: 'phone' });
        e.that(r.status === 404, `an offer for an identity ${what}: ${said(r)}, not 404`);
      }
      const o = await offered(s);
      const scan = await s.relay.enrollFetch(o.id, o.code, { approver_nonce: b64(), mode: 'scan' });
      e.that(scan.status === 200, `a fetch in scan mode: ${said(scan)}, not 200`);
      await bearerNearMisses(s, e, o);
    },
  });
}

/**
 * An Authorization near the bearer claim token, but not it, is refused 401 on each of the new
 * device's calls and changes nothing: afterwards the token itself still polls the fetched offer.
 */
async function bearerNearMisses(s: Session, e: Expect, o: Offered): Promise<void> {
  const calls = {
    poll: (authorization: string) => s.relay.enrollPoll(o.id.identity, o.code, { authorization }),
    reveal: (authorization: string) => s.relay.enrollReveal(o.id.identity, o.code, { authorization }, o.key),
    abandon: (authorization: string) => s.relay.enrollAbandon(o.id.identity, o.code, { authorization }),
  };
  for (const authorization of [`Bearer ${o.token} x`, `xBearer ${o.token}`, `Bearer${o.token}`, `Basic ${o.token}`, `Bearer ${o.token.slice(1)}`])
    for (const [name, call] of Object.entries(calls)) {
      const r = await call(authorization);
      e.that(r.status === 401, `a ${name} with Authorization ${JSON.stringify(authorization.replace(o.token, '<claim_token>'))}: ${said(r)}, not 401`);
    }
  const r = await s.relay.enrollPoll(o.id.identity, o.code, o.token);
  e.that(r.status === 200 && body(r).state === 'nonce', `a poll with the claim token after the near misses: ${said(r)}, not 200 with the state the approver's fetch left (nonce)`);
}

export function pairingFieldsProfileCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/profile/pairing-fields',
    lane: LANE,
    title:
      "the project's pairing limits and replies: 400 invalid_request for a field out of form, a label of 64 bytes and none, an offer with a commitment beside a key, sealed up to its cap, reveal and deliver answering their state, the bearer scheme in any case",
    rules: ['ra.pairing.limits', 'ra.pairing.replies', 'ra.pairing.bearer-scheme'],
    run: async (s, e) => {
      const a = await s.identity();
      const offerWith = (b: Record<string, unknown>) => s.relay.enrollOffer(a.identity, b);
      const invalid = (what: string, r: { status: number }, code = codeOf(r as never)) =>
        e.that(r.status === 400 && code === 'invalid_request', `${what}: ${r.status} ${code ?? ''}, not 400 invalid_request`);
      for (const commitment of NOT_32) invalid(`an offer with the commitment ${JSON.stringify(commitment)}`, await offerWith({ commitment, label: 'phone' }));
      invalid('an offer with a label that is a number', await offerWith({ commitment: b64(), label: 5 }));
      invalid('an offer with neither commitment nor key', await offerWith({ label: 'phone' }));
      const at = await offerWith({ commitment: b64(), label: 'x'.repeat(limits.pairing_label_max_bytes) });
      e.that(at.status === 201, `an offer with a ${limits.pairing_label_max_bytes}-byte label: ${said(at)}, not 201`);
      const bothKeys = await offerWith({ commitment: b64(), ephemeral_public_key: b64(), label: 'phone' });
      e.that(bothKeys.status === 201, `an offer with a commitment and a key beside it (v2 with an extra field): ${said(bothKeys)}, not 201`);
      const o = await offered(s, a);
      const unlabelled = await offerWith({ commitment: b64() });
      const code = body(unlabelled).rendezvous_id;
      if (unlabelled.status !== 201 || typeof code !== 'string') return e.fail(`an offer without a label: ${said(unlabelled)}`);
      const shown = await s.relay.enrollFetch(a, code, { approver_nonce: b64(), mode: 'compare' });
      e.that(body(shown).label === '', `an offer without a label is fetched with label ${JSON.stringify(body(shown).label)}, not ""`);
      for (const authorization of [`bearer ${o.token}`, `BEARER   ${o.token}`]) {
        const r = await s.relay.enrollPoll(a.identity, o.code, { authorization });
        e.that(r.status === 200, `a poll with Authorization ${JSON.stringify(authorization.replace(o.token, '<claim_token>'))}: ${said(r)}, not 200`);
      }
      const fetches: Array<[string, Record<string, unknown>]> = [
        ...['other', '', 'SCAN', 5, undefined].map((mode): [string, Record<string, unknown>] => [`mode ${JSON.stringify(mode)}`, { approver_nonce: b64(), mode }]),
        ...NOT_32.map((nonce): [string, Record<string, unknown>] => [`approver_nonce ${JSON.stringify(nonce)}`, { approver_nonce: nonce, mode: 'compare' }]),
      ];
      for (const [what, b] of fetches) invalid(`a fetch with ${what}`, await s.relay.enrollFetch(a, o.code, b as { approver_nonce: string; mode: string }));
      const fetched = await fetchBy(s, o);
      e.that(fetched.status === 200, `after the refused fetches, the approver's: ${said(fetched)}, not 200 (a refused fetch took the offer)`);
      const revealed = await s.relay.enrollReveal(a.identity, o.code, o.token, o.key);
      e.that(revealed.status === 200 && body(revealed).state === 'revealed', `the reveal: ${said(revealed)}, not 200 {state: "revealed"}`);
      for (const [what, sealed] of [
        ['over its cap', 'x'.repeat(limits.pairing_sealed_max_bytes + 1)],
        ['empty', ''],
        ['a number', 5],
      ] as const)
        invalid(`a delivery with sealed ${what}`, await s.relay.enrollDeliver(a, o.code, sealed as string));
      const delivered = await s.relay.enrollDeliver(a, o.code, 'x'.repeat(limits.pairing_sealed_max_bytes));
      e.that(delivered.status === 200 && body(delivered).state === 'delivered', `a delivery with sealed at its cap: ${said(delivered)}, not 200 {state: "delivered"}`);
    },
  });
}
