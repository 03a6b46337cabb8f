// A model of one pairing offer (document 3, Pairing): random sequences of the approver's fetch
// (with its own nonce or another's), the new device's reveal (opening the commitment or not),
// the delivery, the new device's poll and abandon, each answer judged against the states the
// document shows (offered, nonce, revealed, delivered, then gone). Where the document names a
// status (409 already_approving, out_of_order) the model asks for it; elsewhere any refusal (4xx).
// Expiry is its own check (relay/pairing/expiry): a property does not wait.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { Check } from '../../../run/model.ts';
import type { PropertyVerdict } from '../../../run/property.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { pairingCommitment } from '../../../../protocol/common/canonical.ts';
import { relayProperty } from '../check.ts';
import { Session, codeOf, isObject, safeJson, said, type RelayTarget } from '../driver.ts';

type Command = 'fetch' | 'fetch-other' | 'reveal' | 'reveal-wrong' | 'deliver' | 'poll' | 'abandon';
type State = 'offered' | 'nonce' | 'revealed' | 'delivered' | 'gone';

const MAX_SEQUENCES = 12;
const MAX_COMMANDS = 8;
const b64 = () => randomBytes(32).toString('base64url');
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const refusal = (r: HttpResponse) => r.status >= 400 && r.status < 500;
const conflict = (r: HttpResponse, code: string) => r.status === 409 && codeOf(r) === code;

/**
 * What the answer must be in `state` (for a fetch, `sameApprover`: its nonce is the one the offer
 * holds), and the state after it, or what was expected instead.
 */
function step(cmd: Command, state: State, r: HttpResponse, sameApprover: boolean): { next: State } | { expected: string } {
  const gone = state === 'gone';
  switch (cmd) {
    case 'fetch':
    case 'fetch-other':
      if (gone) return refusal(r) ? { next: state } : { expected: 'a refusal: the offer is gone' };
      if (state === 'offered') return ok(r) ? { next: 'nonce' } : { expected: 'the first fetch taken (2xx)' };
      if (!sameApprover) return conflict(r, 'already_approving') ? { next: state } : { expected: '409 already_approving: another approver holds the offer' };
      // The same approver fetching again: the document shows no answer; any but a server error.
      return r.status < 500 ? { next: state } : { expected: 'no server error' };
    case 'reveal':
      if (gone) return refusal(r) ? { next: state } : { expected: 'a refusal: the offer is gone' };
      if (state === 'nonce') return ok(r) ? { next: 'revealed' } : { expected: 'the reveal taken (2xx)' };
      return conflict(r, 'out_of_order') ? { next: state } : { expected: `409 out_of_order: a reveal in state ${state}` };
    case 'reveal-wrong':
      return refusal(r) ? { next: state } : { expected: 'a refusal: the key does not open the commitment' };
    case 'deliver':
      if (gone) return refusal(r) ? { next: state } : { expected: 'a refusal: the offer is gone' };
      if (state === 'revealed') return ok(r) ? { next: 'delivered' } : { expected: 'the delivery taken (2xx)' };
      return conflict(r, 'out_of_order') ? { next: state } : { expected: `409 out_of_order: a delivery in state ${state}` };
    case 'poll': {
      if (gone) return refusal(r) ? { next: state } : { expected: 'a refusal: the offer is gone' };
      const b = safeJson(r);
      const sealed = isObject(b) && b.sealed !== undefined;
      if (state === 'delivered') return r.status === 200 && sealed && isObject(b) && b.ready === true ? { next: 'gone' } : { expected: 'the sealed seed, ready' };
      return r.status === 200 && !sealed ? { next: state } : { expected: 'the state, without a sealed seed' };
    }
    case 'abandon':
      if (gone) return refusal(r) ? { next: state } : { expected: 'a refusal: the offer is gone' };
      return ok(r) ? { next: 'gone' } : { expected: 'the offer abandoned (2xx)' };
  }
}

export function pairingModelCheck(t: RelayTarget): Check {
  const check = relayProperty({
    id: 'relay/pairing/model',
    lane: 'relay/pairing',
    title: `random sequences of up to ${MAX_COMMANDS} pairing steps (fetch by the approver or another, reveal right or wrong, deliver, poll, abandon) answer as the states of document 3 allow`,
    rules: ['ra.pairing.fetch', 'ra.pairing.already-approving', 'ra.pairing.reveal', 'ra.pairing.out-of-order', 'ra.pairing.deliver', 'ra.pairing.poll', 'ra.pairing.abandon'],
    context: ['ra.pairing.offer', 'ra.pairing.commitment'],
    arbitrary: fc.array(fc.constantFrom<Command>('fetch', 'fetch-other', 'reveal', 'reveal-wrong', 'deliver', 'poll', 'abandon'), { minLength: 1, maxLength: MAX_COMMANDS }),
    predicate: async (cmds, ctx): Promise<PropertyVerdict> => {
      const s = new Session(t, ctx.signal);
      const trace: string[] = [];
      try {
        const id = await s.identity();
        const key = { ephemeral_public_key: b64(), commit_nonce: b64() };
        const o = await s.relay.enrollOffer(id.identity, { commitment: pairingCommitment(s.profile, key), label: 'model' });
        const ob = safeJson(o);
        if (o.status !== 201 || !isObject(ob) || typeof ob.rendezvous_id !== 'string' || typeof ob.claim_token !== 'string')
          return { ok: false, detail: `the offer answered ${said(o)}`, evidence: s.evidence() };
        const [code, token, mine] = [ob.rendezvous_id, ob.claim_token, b64()];
        let state: State = 'offered';
        let approver: string | undefined;
        for (const cmd of cmds) {
          // `fetch` is this approver (one nonce throughout), `fetch-other` a new approver each time.
          const nonce = cmd === 'fetch' ? mine : b64();
          const r =
            cmd === 'fetch' || cmd === 'fetch-other'
              ? await s.relay.enrollFetch(id, code, { approver_nonce: nonce, mode: 'compare' })
              : cmd === 'reveal' || cmd === 'reveal-wrong'
                ? await s.relay.enrollReveal(id.identity, code, token, cmd === 'reveal' ? key : { ...key, commit_nonce: b64() })
                : cmd === 'deliver'
                  ? await s.relay.enrollDeliver(id, code, b64())
                  : cmd === 'poll'
                    ? await s.relay.enrollPoll(id.identity, code, token)
                    : await s.relay.enrollAbandon(id.identity, code, token);
          trace.push(`${cmd} in ${state}: ${r.status}${codeOf(r) ? ` ${codeOf(r)}` : ''}`);
          const judged = step(cmd, state, r, approver === nonce);
          if ('expected' in judged) return { ok: false, detail: `${trace.join('; ')}: expected ${judged.expected} (${said(r)})`, evidence: s.evidence() };
          if ((cmd === 'fetch' || cmd === 'fetch-other') && state === 'offered') approver = nonce;
          state = judged.next;
        }
        return true;
      } finally {
        await s.close();
      }
    },
  });
  return { ...check, run: (ctx) => check.run({ ...ctx, runs: Math.min(ctx.runs, MAX_SEQUENCES) }) };
}
