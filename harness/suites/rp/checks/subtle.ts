// Behaviours the rest of the suite cannot see: a previous key judged at `issued_at` (not at
// delivery), keys no Ed25519 signature can prove control of, the match code checked before the
// signature, the resume code's lifetime, the statement limit at the start contract, and the
// delivery body cap probed just above what the target declares. Document checks accept any
// refusal (4xx) and observe completion through the poll; the project's exact answers are the
// profile checks (rp/profile/*).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { decodeBase64Any, encodeBase64url } from '../../../../protocol/common/base64.ts';
import { parseRfc3339 } from '../../../../protocol/common/time.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { rpCheck, type Expect } from '../check.ts';
import { accepted, StartRefused, errorCode, isObject, isoShift, otherMatchCode, refused, safeJson, said, Session, sign, type RpTarget, type Started } from '../driver.ts';
import { isCode } from '../../../run/answers.ts';

/** Driving an RP at all: the start contract and the poll exchange (test contracts, not judged here). */
const DRIVE: RuleId[] = ['ns.start.contract', 'ns.transport.poll-shape'];

// Encodings of the identity point (order 1): the canonical one, y = p + 1 (y out of range), and
// x = 0 with the sign bit set. RFC 8032 (5.1.3) refuses to decode the last two; the first decodes
// but has small order, which only strict verification refuses (ns.ed25519.strict).
const IDENTITY_POINT = Uint8Array.from([1, ...new Array<number>(31).fill(0)]);
export const NON_CANONICAL_KEYS: ReadonlyArray<[string, Uint8Array]> = [
  ['y = p + 1', Uint8Array.from([0xee, ...new Array<number>(30).fill(0xff), 0x7f])],
  ['x = 0 with the sign bit set', Uint8Array.from([1, ...new Array<number>(30).fill(0), 0x80])],
];
export const SMALL_ORDER_KEY = IDENTITY_POINT;
/** R = the identity point, S = 0: it satisfies the cofactorless equation for the identity key and any message. */
export const FORGED_SIGNATURE = encodeBase64url(Uint8Array.from([...IDENTITY_POINT, ...new Array<number>(32).fill(0)]));

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (ms <= 0) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      },
      { once: true },
    );
  });

/** A delivery that must not sign anybody in: refused (4xx), and if a resume_uri came back anyway, resuming it completes nothing. */
async function neverSignsIn(s: Session, e: Expect, t: Started, delivered: HttpResponse, what: string): Promise<void> {
  e.that(refused(delivered), `${what} answered ${said(delivered)}, expected a refusal (4xx)`);
  const receipt = accepted(delivered) ? safeJson(delivered) : undefined;
  if (isObject(receipt) && typeof receipt.resume_uri === 'string') await s.resume(receipt.resume_uri, t.browser);
  e.that(!(await s.completed(t)), `${what}: the login completed`);
}

/** An approval for `identity` with the forged signature (fields as a signer would send them). */
async function forgedApproval(s: Session, t: Started, key: Uint8Array): Promise<Record<string, unknown>> {
  const { identity } = await s.identity();
  // The authority serves the key verbatim over DNS only: no document can be signed for it.
  await s.target.authority.publish({ identity, publicKey: key, https: false });
  return { ...sign(s.profile, t.request, { identity, seed: new Uint8Array(randomBytes(32)) }), signature: FORGED_SIGNATURE };
}

function flipByte(signature: string, index: number): string {
  const bytes = Uint8Array.from(decodeBase64Any(signature)!);
  bytes[index]! ^= 0x01;
  return encodeBase64url(bytes);
}

/** The delivery body cap probe: `bytes` of junk as a bare delivery (an unanswered request fails the check). */
async function junk(s: Session, e: Expect, t: Started, bytes: number): Promise<HttpResponse | undefined> {
  try {
    return await s.signer.post(await s.responseUri(t.request), 'A'.repeat(bytes), { headers: { 'content-type': 'text/plain', accept: 'application/json' }, ...(s.signal ? { signal: s.signal } : {}) });
  } catch (error) {
    e.fail(`a ${bytes}-byte delivery was not answered: ${(error as Error).message}`);
    return undefined;
  }
}

// ---- the resume code's lifetime, waited for from the moment the suite loads ----

/** How long past the declared lifetime the harness waits before resuming (clock granularity, slow RPs). */
export function resumeWaitMs(lifetimeS: number): number {
  return lifetimeS * 1000 + Math.max(2000, lifetimeS * 100);
}

function verifyRule7PreviousKeyAtIssuedAtCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/verify/rule-7/previous-key-at-issued-at',
    title: "an approval signed with a key rotated out after the request's issued_at but before the delivery completes: the key is judged at issued_at",
    rules: ['ns.verify.7'],
    context: [...DRIVE, 'ns.identity-document.previous-keys', 'ns.resolve.chain'],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      const approval = sign(s.profile, t.request, who);
      // The old key stays valid one second past issued_at, and has expired when the approval arrives.
      const validUntil = isoShift(t.request.issued_at, 1);
      await s.target.authority.rotate(who.identity, new Uint8Array(randomBytes(32)), { validUntil });
      await sleep(parseRfc3339(validUntil)! + 1000 - Date.now(), s.signal);
      const done = await s.completeSameDevice(t, approval);
      e.that(done.ok, `signed at issued_at ${String(t.request.issued_at)} by a previous key valid until ${validUntil}, delivered after that: ${done.problem}`);
    },
  });
}

function profilePreviousKeyBoundaryCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/profile/previous-key-boundary',
    title: "a previous key whose valid_until equals the request's issued_at still verifies its approval (valid_until is inclusive)",
    rules: ['ns.identity-document.previous-keys'],
    context: [...DRIVE, 'ns.verify.7'],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      const approval = sign(s.profile, t.request, who);
      await s.target.authority.rotate(who.identity, new Uint8Array(randomBytes(32)), { validUntil: String(t.request.issued_at) });
      const done = await s.completeSameDevice(t, approval);
      e.that(done.ok, `signed by a previous key valid until exactly issued_at (${String(t.request.issued_at)}): ${done.problem}`);
    },
  });
}

function verifyRule7NonCanonicalKeyCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/verify/rule-7/non-canonical-key',
    title: 'an identity whose published key is a non-canonical encoding (y >= p, or x = 0 with the sign bit) never signs in, even with the signature (R = identity, S = 0) a lax decoder accepts',
    // Ed25519 (RFC 8032 5.1.3, the rule's `reads`) fails to decode such a key, so no signature under it is valid.
    rules: ['ns.verify.7'],
    context: [...DRIVE, 'ns.verify.6', 'ns.ed25519.strict'],
    run: async (s, e) => {
      for (const [label, key] of NON_CANONICAL_KEYS) {
        const t = await s.start();
        await neverSignsIn(s, e, t, await s.deliver(t.request, await forgedApproval(s, t, key)), `the forged approval under a key with ${label}`);
      }
    },
  });
}

function profileSmallOrderKeyCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/profile/small-order-key',
    title: 'an identity whose published key is the identity point (small order, canonical) never signs in with the signature R = identity, S = 0 (strict Ed25519)',
    // RFC 8032 accepts this signature; only the project's strict verification refuses it.
    rules: ['ns.ed25519.strict'],
    context: [...DRIVE, 'ns.verify.7'],
    run: async (s, e) => {
      const t = await s.start();
      await neverSignsIn(s, e, t, await s.deliver(t.request, await forgedApproval(s, t, SMALL_ORDER_KEY)), 'the forged approval under the small-order key');
    },
  });
}

function transactionMatchBeforeSignatureCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/match-before-signature',
    title:
      "a wrong match code ends the transaction even when the approval's signature is also bad (the match code is checked first): the genuine approval with the right code afterwards does not complete",
    rules: ['ns.transaction.cross-device', 'ns.transaction.match-wrong'],
    context: [...DRIVE, 'ns.verify.7'],
    run: async (s, e) => {
      const t = await s.start();
      const genuine = sign(s.profile, t.request, await s.identity());
      const wrongCode = otherMatchCode(t.matchCode);
      const bad = await s.deliver(t.request, { ...genuine, signature: flipByte(genuine.signature as string, 40) }, { match: wrongCode });
      e.that(refused(bad), `a bad signature with a wrong match code answered ${said(bad)}`);
      const right = await s.deliver(t.request, genuine, { match: t.matchCode });
      e.that(refused(right), `the genuine approval with the right code after a wrong code (and a bad signature) answered ${said(right)}: the wrong code must have ended the transaction`);
      e.that(!(await s.completed(t)), 'the transaction completed after a wrong match code');
    },
  });
}

function requestStatementOverMaxCheck(target: RpTarget): Check {
  const max = limits.statement_max_bytes;
  return rpCheck(target, {
    id: 'rp/request/statement-over-max',
    title: `asked for a ${max + 1}-byte statement (${Math.floor(max / 2) + 1} characters), the start contract refuses (4xx) or issues a request whose statement is at most ${max} bytes`,
    rules: ['ns.request.statement', 'ns.limits.statement'],
    context: ['ns.start.contract', 'ns.start.options'],
    run: async (s, e) => {
      // Two-byte characters: a limit counted in characters lets it through.
      const long = 'é'.repeat(Math.floor(max / 2)) + 'x'.repeat(max + 1 - 2 * Math.floor(max / 2));
      let t: Started;
      try {
        t = await s.start({ statement: long });
      } catch (error) {
        // The title's first branch: refusing to start (4xx) never issues the statement.
        if (!(error instanceof StartRefused) || error.response.status < 400 || error.response.status >= 500) throw error;
        return s.note(`the start contract refused the statement: ${said(error.response)}`);
      }
      const statement = t.request.statement;
      const bytes = typeof statement === 'string' ? Buffer.byteLength(statement) : 0;
      e.that(bytes <= max, `the RP issued a request with a ${bytes}-byte statement`);
    },
  });
}

function robustDeliveryOverDeclaredCapCheck(target: RpTarget): Check {
  const cap = target.declared.deliveryBodyMaxBytes;
  return rpCheck(target, {
    id: 'rp/robust/delivery-over-declared-cap',
    title: `a junk delivery just over the declared body cap (${cap + 1} bytes) is refused (4xx), completes nothing, and the genuine approval still completes`,
    rules: ['ns.delivery.body'],
    context: [...DRIVE, 'ns.delivery.body-cap'],
    run: async (s, e) => {
      const t = await s.start();
      const r = await junk(s, e, t, cap + 1);
      if (r) e.that(refused(r), `${cap + 1} bytes of junk answered ${said(r)}, expected a refusal (4xx)`);
      e.that(!(await s.completed(t)), `the login completed after ${cap + 1} bytes of junk`);
      const done = await s.completeSameDevice(t, sign(s.profile, t.request, await s.identity()));
      e.that(done.ok, `the genuine approval did not complete afterwards: ${done.problem}`);
    },
  });
}

function profileDeliveryBodyCapEdgeCheck(target: RpTarget): Check {
  const cap = target.declared.deliveryBodyMaxBytes;
  return rpCheck(target, {
    id: 'rp/profile/delivery-body-cap-edge',
    title: `the declared delivery body cap is exact: ${cap} bytes are read (no 413), ${cap + 1} bytes answer 413 body_too_large`,
    rules: ['ns.delivery.body-cap'],
    context: ['ns.start.contract'],
    run: async (s, e) => {
      const t = await s.start();
      const at = await junk(s, e, t, cap);
      if (at) e.that(at.status !== 413, `${cap} bytes (the declared cap) answered ${said(at)}`);
      const over = await junk(s, e, t, cap + 1);
      if (over) e.that(over.status === 413 && isCode(errorCode(over), 'body_too_large'), `${cap + 1} bytes answered ${said(over)}, expected 413 body_too_large`);
    },
  });
}

function transactionResumeCodeExpiresCheck(target: RpTarget): Check {
  const lifetime = target.declared.resumeCodeLifetimeS;
  return rpCheck(target, {
    id: 'rp/transaction/resume-code-expires',
    // Mostly a wait on a transaction of its own: its own lane, beside the suite's other checks.
    lane: 'rp/transaction/resume-code-expires',
    title: `a resume code used after its declared lifetime (${lifetime} s, plus a margin) does not complete the login, even in the starting browser`,
    rules: ['ns.limits.resume-code'],
    context: [...DRIVE, 'ns.transaction.resume-refused', 'ns.transaction.same-device'],
    cells: [{ rule: 'ns.limits.resume-code', facet: 'window', value: 'outside', operation: 'resumeLogin' }],
    timeoutMs: resumeWaitMs(lifetime) + 60_000,
    run: async (s, e) => {
      const { started: t, resumeUri, delivered } = await s.approveSameDevice();
      if (resumeUri === undefined) return e.fail(`the same-device approval answered ${said(delivered)}, without resume_uri`);
      await sleep(resumeWaitMs(lifetime), s.signal);
      const r = await s.resume(resumeUri, t.browser);
      const completed = await s.completed(t);
      e.that(!completed, `resumed ${Math.round(resumeWaitMs(lifetime) / 1000)} s after approval (declared lifetime ${lifetime} s), the login completed (resume answered ${said(r)})`);
    },
  });
}

export function subtleChecks(target: RpTarget): Check[] {
  return [
    verifyRule7PreviousKeyAtIssuedAtCheck(target),
    profilePreviousKeyBoundaryCheck(target),
    verifyRule7NonCanonicalKeyCheck(target),
    profileSmallOrderKeyCheck(target),
    transactionMatchBeforeSignatureCheck(target),
    requestStatementOverMaxCheck(target),
    robustDeliveryOverDeclaredCapCheck(target),
    profileDeliveryBodyCapEdgeCheck(target),
    transactionResumeCodeExpiresCheck(target),
  ];
}

// The suite registers both from here (one import line in index.ts).
export { modelChecks } from './model.ts';
