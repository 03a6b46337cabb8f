// The `once` facets of the relay's core (spec/facets/relay-core.yaml): each single-use secret spent,
// then used again, and used 20 ways at once. A signed request's nonce ("refuses a nonce already
// seen in that window") on every signed operation, and a challenge ("single-use") on pickup,
// consume and events: the replay is refused, and of 20 identical requests sent together exactly
// one succeeds.
import type { Check } from '../../../run/model.ts';
import { challengeHeaders } from '../../../actors/relay/index.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, isObject, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import { inboxCall, INBOX_OPS, ok, refused4xx, signedCall, signedOperations, type Answer, type InboxOp } from './matrix-ops.ts';
import { asSigned, concrete, inOrder, type Concrete } from './matrix-binding.ts';
import type { RelayIdentity } from '../../../actors/relay/index.ts';
import { registeredSession } from '../../../actors/relay/owner.ts';

const RACE = 20;

/** The one request an inbox operation sends, authenticated by `headers` (the same bytes each time). */
const sendWith = (s: Session, op: InboxOp, a: RelayIdentity, headers: Record<string, string>) => inboxCall(s, op, a, { mode: 'headers', headers });

function nonceOnceCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/once-nonce',
    title: `every operation the relay OpenAPI opens with a signed request: sent again with its nonce it is refused, and of ${RACE} copies sent at once exactly one succeeds`,
    rules: ['ra.auth.signed-request-replay'],
    // A few hundred requests on the check's own identity: in a lane of its own, beside the suite's other checks.
    lane: 'relay/matrix/signed',
    cells: ['replay', 'race'].flatMap((value) => signedOperations().map((o) => ({ rule: 'ra.auth.signed-request-replay' as const, facet: 'once', value, operation: o.id }))),
    run: async (s, e) => {
      const a = await s.identity();
      const { ops } = await concrete(s, a);
      const putOp = ops.find((c) => c.op.id === 'systemPut');
      const put = async () => {
        if (!putOp) return;
        const p = asSigned(a, putOp);
        await signedCall(s, p, p);
      };
      // One operation after another, the system document written first and written again before each delete.
      const judge = async (c: Concrete) => {
        const refusal = (INBOX_OPS as readonly string[]).includes(c.op.id) ? (r: Answer) => r.status === 401 : refused4xx;
        if (c.op.id === 'systemDelete') await put();
        const once = asSigned(a, c);
        const first = await signedCall(s, once, once);
        e.that(ok(first), `${c.op.id}, a signed request's first use: ${first.text}, not a success`);
        const again = await signedCall(s, once, once);
        e.that(refusal(again), `${c.op.id}, the same signed request again (its nonce seen): ${again.text}, not ${refusal === refused4xx ? 'refused' : '401'}`);
        if (c.op.id === 'systemDelete') await put();
        const raced = asSigned(a, c);
        const answers = await Promise.all(Array.from({ length: RACE }, () => signedCall(s, raced, raced)));
        const won = answers.filter(ok).length;
        e.that(won === 1, `${c.op.id}, one signed request sent ${RACE} times at once: ${won} succeeded (${answers.map((r) => r.status).join(',')}), not exactly 1`);
      };
      // The system document's operations one after another (each finds what it needs), the others beside them.
      const system = (c: Concrete) => c.op.path.includes('/system/');
      await Promise.all([
        (async () => {
          for (const c of inOrder(ops.filter(system))) await judge(c);
        })(),
        ...ops.filter((c) => !system(c)).map(judge),
      ]);
    },
  });
}

function challengeOnceCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/once-challenge',
    title: `pickup, consume and events: a challenge answered again is refused 401, and of ${RACE} answers to one challenge sent at once exactly one succeeds; a pickup's challenge answered again is refused whether the identity key or a session key signed it, named in X-Svc-Challenge or not`,
    rules: ['ra.auth.challenge-single-use'],
    cells: ['replay', 'race'].flatMap((value) => INBOX_OPS.map((operation) => ({ rule: 'ra.auth.challenge-single-use' as const, facet: 'once', value, operation }))),
    run: async (s, e) => {
      const a = await s.identity();
      const answered = async () => {
        const r = await s.relay.challenge(a.identity);
        const b = safeJson(r);
        if (r.status !== 200 || !isObject(b) || typeof b.challenge !== 'string') throw new CheckFailure(`GET /auth/challenge answered ${said(r)}`);
        return challengeHeaders(s.profile, a.identity, b.challenge, a.seed);
      };
      // Every principal that answers a challenge, and both ways of answering it: single-use for each.
      const session = await registeredSession(s.relay, a);
      for (const [who, seed, sessionId] of [
        ['the identity key', a.seed, undefined],
        ['a session key', session.seed, session.sessionId],
      ] as const)
        for (const named of [true, false]) {
          const r = await s.relay.challenge(a.identity);
          const b = safeJson(r);
          if (r.status !== 200 || !isObject(b) || typeof b.challenge !== 'string') throw new CheckFailure(`GET /auth/challenge answered ${said(r)}`);
          const headers = challengeHeaders(s.profile, a.identity, b.challenge, seed, sessionId, named);
          const how = `a challenge ${named ? 'named in X-Svc-Challenge' : 'not named'} and signed by ${who}`;
          const first = await sendWith(s, 'pickup', a, headers);
          e.that(ok(first), `pickup, ${how}, first answered: ${first.text}, not a success`);
          const again = await sendWith(s, 'pickup', a, headers);
          e.that(again.status === 401, `pickup, ${how}, answered again: ${again.text}, not 401`);
        }
      await Promise.all(
        INBOX_OPS.map(async (op) => {
          const headers = await answered();
          const first = await sendWith(s, op, a, headers);
          e.that(ok(first), `${op}, a challenge's first answer: ${first.text}, not a success`);
          const again = await sendWith(s, op, a, headers);
          e.that(again.status === 401, `${op}, the same challenge answered again: ${again.text}, not 401`);
          const raced = await answered();
          const answers = await Promise.all(Array.from({ length: RACE }, () => sendWith(s, op, a, raced)));
          const won = answers.filter(ok).length;
          e.that(won === 1, `${op}, one challenge answered ${RACE} times at once: ${won} succeeded (${answers.map((r) => r.status).join(',')}), not exactly 1`);
        }),
      );
    },
  });
}

export function matrixOnceChecks(t: RelayTarget): Check[] {
  return [nonceOnceCheck(t), challengeOnceCheck(t)];
}
