// The rendezvous code typed loosely (document 3, Pairing offer; spec/facets/relay-owner.yaml,
// normalization): every step of a pairing (fetch, poll, reveal, delivery, abandon) takes the code
// in lower case, with spaces, a dash or an en dash, O for 0 and I or L for 1; and refuses the near
// misses (U for V, seven or nine characters, a character outside the alphabet), moving nothing.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { adminSigned, enrollStepWith } from '../../../actors/relay/owner.ts';
import { sealFor } from '../../../actors/relay/pairing.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, isObject, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import { offerOn, type Live } from './pairing-matrix.ts';

const LANE = 'relay/pairing-code-forms';
const ok = (r: HttpResponse) => r.status >= 200 && r.status < 300;
const refused = (r: HttpResponse) => r.status >= 400 && r.status < 500;
const b64 = (n = 32) => randomBytes(n).toString('base64url');
const bodyOf = (r: HttpResponse): Record<string, unknown> => {
  const b = safeJson(r);
  return isObject(b) ? b : {};
};
const OPS = ['enrollFetch', 'enrollPoll', 'enrollReveal', 'enrollDeliver', 'enrollAbandon'] as const;

/** A loose typing of a code and the forms it exercises (accepted only if each of them is). */
interface Typing {
  needs: (code: string) => boolean;
  type: (code: string) => string;
  forms: string[];
}

const TYPINGS: Typing[] = [
  { needs: (c) => c.includes('0'), type: (c) => `${c.slice(0, 4)}\u2013${c.slice(4)}`.toLowerCase().replaceAll('0', 'o'), forms: ['lower-case', 'en-dash', 'o-for-zero'] },
  { needs: (c) => c.includes('1'), type: (c) => ` ${c.slice(0, 4)} - ${c.slice(4)} `.replaceAll('1', 'I'), forms: ['spaces', 'dash', 'i-for-one'] },
  { needs: (c) => c.includes('1'), type: (c) => `${c.slice(0, 2)} ${c.slice(2)}`.replaceAll('1', 'L'), forms: ['l-for-one'] },
];

/** Each form alone as well, at the code's own length: a relay may take a form only beside another. */
const ALONE: Typing[] = [
  { needs: (c) => c.includes('0'), type: (c) => c.replaceAll('0', 'O'), forms: ['o-for-zero'] },
  { needs: (c) => /[A-Z]/.test(c), type: (c) => c.toLowerCase(), forms: ['lower-case'] },
];

/**
 * Near misses of a code holding a V: each names no offer (document 3: other lengths and
 * characters are invalid; the interop set's near misses). Separators beyond spaces and dashes
 * are left open by the document, so none is judged here.
 */
const NEAR_MISSES: Array<[string, (c: string) => string]> = [
  ['U for V', (c) => c.replace('V', 'U')],
  ['seven characters', (c) => c.slice(0, 7)],
  ['nine characters', (c) => `${c}${c[0]}`],
  ['a ! for its last character', (c) => `${c.slice(0, 7)}!`],
];

/** A live offer whose code satisfies `needs`, on an identity of its own (other offers abandoned). */
async function offerWith(s: Session, needs: (code: string) => boolean): Promise<Live> {
  const id = await s.identity();
  for (let i = 0; i < 80; i++) {
    const o = await offerOn(s, id);
    if (needs(o.code)) return o;
    await s.relay.enrollAbandon(id.identity, o.code, o.token);
  }
  throw new CheckFailure('80 offers in a row gave no code of the kind this check needs (a 0, a 1 or a V): are codes Crockford base32?');
}

const path = (o: Live, typed: string) => `/identities/${encodeURIComponent(o.id.identity)}/enroll/${encodeURIComponent(typed)}`;
const bearer = (o: Live) => ({ authorization: `Bearer ${o.token}` });
const fetchTyped = (s: Session, o: Live, typed: string, nonce = b64()) =>
  enrollStepWith(s.relay, o.id.identity, typed, 'fetch', {
    approver_nonce: nonce,
    mode: 'compare',
    ...adminSigned(s.profile, 'enroll-fetch', { identity: o.id.identity, rendezvous_id: o.code }, o.id.seed),
  });
const deliverTyped = (s: Session, o: Live, typed: string, sealed: string) =>
  enrollStepWith(s.relay, o.id.identity, typed, 'deliver', { sealed, ...adminSigned(s.profile, 'enroll-deliver', { identity: o.id.identity, rendezvous_id: o.code }, o.id.seed) });
const revealTyped = (s: Session, o: Live, typed: string) => s.relay.post(`${path(o, typed)}/reveal`, o.key, bearer(o));
const pollTyped = (s: Session, o: Live, typed: string) => s.relay.get(path(o, typed), bearer(o));
const abandonTyped = (s: Session, o: Live, typed: string) => s.relay.post(path(o, typed), '', bearer(o), 'DELETE');

/** The typings of `typings`, each on its own two offers at once (a check of its own keeps the offers' clock short). */
function formsCheck(t: RelayTarget, id: string, title: string, typings: readonly Typing[]): Check {
  return relayCheck(t, {
    id,
    lane: LANE,
    title,
    rules: ['ra.pairing.short-code'],
    cells: OPS.flatMap((operation) => [...new Set(typings.flatMap((x) => x.forms))].map((value) => ({ rule: 'ra.pairing.short-code' as const, facet: 'normalization', value, operation }))),
    run: async (s, e) => {
      await Promise.all(
        typings.map(async (x) => {
          // Each typing draws its own two offers and uses them at once: none waits on the others' draws.
          const [o, dropped] = await Promise.all([offerWith(s, x.needs), offerWith(s, x.needs)]);
          const typed = x.type(o.code);
          const as = `${JSON.stringify(typed)} (code ${o.code})`;
          const nonce = b64();
          const f = await fetchTyped(s, o, typed, nonce);
          e.that(f.status === 200 && bodyOf(f).commitment === o.commitment, `the fetch at ${as} answered ${said(f)}`);
          const p = await pollTyped(s, o, typed);
          e.that(p.status === 200 && bodyOf(p).approver_nonce === nonce, `the poll at ${as} answered ${said(p)}`);
          const rv = await revealTyped(s, o, typed);
          e.that(ok(rv), `the reveal at ${as} answered ${said(rv)}`);
          const sealed = sealFor(s.profile, o.key.ephemeral_public_key, new Uint8Array(randomBytes(32)));
          const d = await deliverTyped(s, o, typed, sealed);
          e.that(ok(d), `the delivery at ${as} answered ${said(d)}`);
          const got = await pollTyped(s, o, typed);
          e.that(bodyOf(got).sealed === sealed, `the poll of the sealed seed at ${as} answered ${said(got)}`);
          const typedDrop = x.type(dropped.code);
          const ab = await abandonTyped(s, dropped, typedDrop);
          e.that(ok(ab), `the abandon at ${JSON.stringify(typedDrop)} (code ${dropped.code}) answered ${said(ab)}`);
          const after = await s.relay.enrollPoll(dropped.id.identity, dropped.code, dropped.token);
          e.that(refused(after), `after the abandon at ${JSON.stringify(typedDrop)} the offer still answers ${said(after)}`);
        }),
      );
    },
  });
}

function nearMissCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/pairing-code-forms/near-misses',
    lane: LANE,
    title: 'no step of a pairing takes a near miss of its code (U for V, seven or nine characters, a character outside the alphabet), and none of them moves the offer',
    rules: ['ra.pairing.short-code'],
    cells: OPS.map((operation) => ({ rule: 'ra.pairing.short-code' as const, facet: 'normalization', value: 'near-miss', operation })),
    run: async (s, e) => {
      const hasV = (c: string) => c.includes('V');
      const [o, kept] = await Promise.all([offerWith(s, hasV), offerWith(s, hasV)]);
      const each = async (what: string, call: (typed: string) => Promise<HttpResponse>, judge: (r: HttpResponse) => boolean = refused, of: Live = o) => {
        await Promise.all(
          NEAR_MISSES.map(async ([miss, make]) => {
            const typed = make(of.code);
            const r = await call(typed);
            e.that(judge(r), `${what} at ${JSON.stringify(typed)} (${miss} of ${of.code}) answered ${said(r)}, expected a refusal`);
          }),
        );
      };
      await each('a fetch', (typed) => fetchTyped(s, o, typed));
      const nonce = b64();
      const f = await fetchTyped(s, o, o.code, nonce);
      e.that(f.status === 200, `the fetch at the code itself after the near misses answered ${said(f)}, expected 200 (no approver recorded)`);
      await each(
        'a poll',
        (typed) => pollTyped(s, o, typed),
        (r) => refused(r) && !r.text().includes(nonce),
      );
      await each('a reveal', (typed) => revealTyped(s, o, typed));
      const rv = await revealTyped(s, o, o.code);
      e.that(ok(rv), `the reveal at the code itself after the near misses answered ${said(rv)}`);
      const sealed = sealFor(s.profile, o.key.ephemeral_public_key, new Uint8Array(randomBytes(32)));
      await each('a delivery', (typed) => deliverTyped(s, o, typed, `${sealed}x`));
      const d = await deliverTyped(s, o, o.code, sealed);
      e.that(ok(d), `the delivery at the code itself after the near misses answered ${said(d)}`);
      await each('an abandon', (typed) => abandonTyped(s, kept, typed), refused, kept);
      const got = await pollTyped(s, o, o.code);
      e.that(bodyOf(got).sealed === sealed, `the poll at the code itself answered ${said(got)}, not the delivery`);
      const alive = await s.relay.enrollPoll(kept.id.identity, kept.code, kept.token);
      e.that(alive.status === 200, `after abandons at near misses of ${kept.code} its poll answered ${said(alive)}, expected 200 (not abandoned)`);
    },
  });
}

export function pairingCodeFormChecks(t: RelayTarget): Check[] {
  return [
    formsCheck(
      t,
      'relay/pairing-code-forms/accepted',
      'every step of a pairing takes its code typed loosely: lower case with an en dash and O for 0, spaces and a dash with I for 1, L for 1',
      TYPINGS,
    ),
    formsCheck(t, 'relay/pairing-code-forms/accepted-alone', "every step of a pairing takes its code with O for 0 alone, and in lower case alone, at the code's own length", ALONE),
    nearMissCheck(t),
  ];
}
