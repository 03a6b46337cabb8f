// Document 1's transaction table, row by row, plus the poll secret, the approval-in-URL ban and
// the replay of a spent approval. Every check starts its own transaction. The document names no
// statuses here, so a refusal is any 4xx and a resume that continues is any answer below 400; the
// project's statuses, codes and poll vocabulary are judged apart (rp/codes/*, rp/profile/*).
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { encodeObject } from '../../../../protocol/common/codec.ts';
import { sameOrigin } from '../../../../protocol/common/url.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { rpCheck, type Expect } from '../check.ts';
import { accepted, envelopeOf, isObject, otherMatchCode, refused, safeJson, said, secretBits, sign, type RpTarget, type Session, type Started } from '../driver.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { isCode } from '../../../run/answers.ts';

const TOKEN_FIELDS = /token|grant|access|refresh|bearer|jwt/i;
/** The project's answer to a refused delivery: status, code, envelope. */
const CODES: RuleId[] = ['ns.delivery.reject-status', 'ns.errors.codes', 'ns.errors.envelope'];
/** Driving an RP at all: the start contract and the poll exchange (test contracts, not judged here). */
const DRIVE: RuleId[] = ['ns.start.contract', 'ns.transport.poll-shape'];

/** The project's status and code for an answer (profile checks). */
function expectCode(e: Expect, r: HttpResponse, what: string, status: number, codes: string[]): void {
  e.that(r.status === status, `${what}: expected status ${status}, got ${said(r)}`, 'status');
  const env = envelopeOf(r);
  if (typeof env === 'string') e.fail(`${what}: ${env}`, 'shape');
  else e.that(codes.includes(env.error), `${what}: expected error ${codes.join(' or ')}, got ${said(r)}`, 'code');
}

/** A wrong match code (one attempt), then the right one: the answers. */
async function wrongThenRight(s: Session): Promise<{ t: Started; wrong: HttpResponse; right: HttpResponse; approval: Record<string, unknown> }> {
  const t = await s.start();
  const approval = sign(s.profile, t.request, await s.identity());
  const code = otherMatchCode(t.matchCode);
  const wrong = await s.deliver(t.request, approval, { match: code });
  const right = await s.deliver(t.request, approval, { match: t.matchCode });
  return { t, wrong, right, approval };
}

/** A same-device approval, then a second valid one by another identity. */
async function twoApprovals(s: Session): Promise<{ t: Started; first: HttpResponse; second: HttpResponse }> {
  const t = await s.start();
  const [a, b] = [await s.identity(), await s.identity()];
  const first = await s.deliver(t.request, sign(s.profile, t.request, a));
  const second = await s.deliver(t.request, sign(s.profile, t.request, b), { match: t.matchCode });
  return { t, first, second };
}

function transactionCreateCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/create',
    title: 'starting a transaction sets the binding cookie and hands the page a poll secret and a two-digit match code; nothing is completed yet',
    rules: ['ns.transaction.create', 'ns.limits.match-code', 'ns.auth.6'],
    context: DRIVE,
    // The starter polls before any completion secret was delivered: nothing completes.
    cells: [{ rule: 'ns.auth.6', facet: 'who', value: 'starter-without-completion-secret', operation: 'pollTransaction' }],
    run: async (s, e) => {
      const t = await s.start();
      e.that(t.response.setCookies.length > 0, 'the start answer sets no cookie (the binding cookie arrives in Set-Cookie)');
      e.that(new RegExp(`^[0-9]{${limits.match_code_digits}}$`).test(t.matchCode), `match_code ${JSON.stringify(t.matchCode)} is not ${limits.match_code_digits} digits`);
      e.that(t.pollSecret.length > 0, 'poll_secret is empty');
      const p = await s.pollStatus(t.pollSecret);
      e.that(p.status !== 'completed' && p.identity === undefined, `a new transaction polls ${said(p.response)}`);
    },
  });
}

function transactionSecretsCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/secrets',
    title: `poll secret (>= ${limits.poll_secret_min_bits} bits, never the request_id) and binding cookie (>= ${limits.binding_cookie_min_bits} bits) are high-entropy and fresh per transaction`,
    rules: ['ns.auth.6.poll-secret', 'ns.auth.6'],
    context: DRIVE,
    cells: [
      { rule: 'ns.auth.6', facet: 'who', value: 'request-holder', operation: 'pollTransaction' },
      { rule: 'ns.auth.6.poll-secret', facet: 'who', value: 'request-id-holder', operation: 'pollTransaction' },
      { rule: 'ns.auth.6.poll-secret', facet: 'who', value: 'guesser', operation: 'pollTransaction' },
    ],
    run: async (s, e) => {
      const [a, b] = [await s.start(), await s.start()];
      for (const t of [a, b]) {
        e.that(secretBits(t.pollSecret) >= limits.poll_secret_min_bits, `poll secret ${t.pollSecret.length} chars carries < ${limits.poll_secret_min_bits} bits`);
        e.that(t.pollSecret !== t.request.request_id, 'the poll secret is the request_id');
        const cookies = t.response.setCookies.map((x) => x.split(';')[0]!.split('=').slice(1).join('='));
        e.that(
          cookies.some((v) => secretBits(v) >= limits.binding_cookie_min_bits),
          `no cookie value carries >= ${limits.binding_cookie_min_bits} bits`,
        );
      }
      e.that(a.pollSecret !== b.pollSecret, 'two transactions got the same poll secret');
      const byRequestId = await s.pollStatus(String(a.request.request_id));
      e.that(byRequestId.status === '', `polling with the request_id reports a state: ${said(byRequestId.response)}`);
      const random = await s.pollStatus(encodeBase64url(randomBytes(32)));
      e.that(random.status === '', `polling with an unknown secret reports a state: ${said(random.response)}`);
    },
  });
}

function transactionSameDeviceCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/same-device',
    title: 'same device: a delivery without match is approved, the receipt carries a same-origin resume_uri with a strong code, and resuming with the binding cookie completes',
    rules: [
      'ns.transaction.same-device',
      'ns.transaction.resume',
      'ns.transport.same-device-return',
      'ns.transport.resume',
      'ns.transport.delivery',
      'ns.delivery.receipt',
      'ns.auth.6.resume-same-origin',
      'ns.limits.resume-code',
      'ns.auth.6',
    ],
    context: [...DRIVE, 'ns.delivery.body'],
    cells: [
      // Resumed at once, well inside the code's lifetime.
      { rule: 'ns.limits.resume-code', facet: 'window', value: 'inside', operation: 'resumeLogin' },
      { rule: 'ns.auth.6', facet: 'who', value: 'starter-with-completion-secret', operation: 'resumeLogin' },
    ],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      const d = await s.deliver(t.request, sign(s.profile, t.request, who));
      if (!e.that(accepted(d), `the delivery answered ${said(d)}`)) return;
      const receipt = safeJson(d);
      if (!isObject(receipt)) return e.fail(`the receipt is not a JSON object: ${said(d)}`);
      e.that(receipt.status === 'ok', `receipt status ${JSON.stringify(receipt.status)}, expected "ok"`);
      const uri = receipt.resume_uri;
      if (!e.that(typeof uri === 'string', 'the same-device receipt has no resume_uri')) return;
      e.that(sameOrigin(String(t.request.audience), uri as string), `resume_uri ${uri} is not same-origin with the audience`);
      const code = new URL(uri as string).searchParams.get('code') ?? '';
      e.that(secretBits(code) >= limits.resume_code_min_bits, `the resume code (${code.length} chars) carries < ${limits.resume_code_min_bits} bits`);
      const r = await s.resume(uri as string, t.browser);
      e.that(r.status < 400, `resume with the binding cookie answered ${said(r)}`, 'status');
      const p = await s.pollStatus(t.pollSecret);
      e.that(p.status === 'completed', `after resume the poll answered ${said(p.response)}, expected "completed"`);
      e.that(p.identity === who.identity, `the completed poll names ${JSON.stringify(p.identity)}, expected ${who.identity}`);
    },
  });
}

function transactionRefusedStaysPendingCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/refused-stays-pending',
    title: 'a refused delivery (another audience) leaves the transaction pending: the genuine approval still completes it',
    rules: ['ns.transaction.same-device'],
    context: [...DRIVE, 'ns.verify.2'],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      // Rule 2 refuses before any nonce is looked at, so only the transaction can be lost here.
      const wrong = await s.deliver(t.request, sign(s.profile, { ...t.request, audience: 'https://rp.attacker.example' }, who));
      e.that(refused(wrong), `the approval for another audience answered ${said(wrong)}`);
      const done = await s.completeSameDevice(t, sign(s.profile, t.request, who));
      e.that(done.ok, `after a refused delivery the genuine approval did not complete: ${done.problem}`);
    },
  });
}

function transactionResumeWithoutCookieCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/resume-without-cookie',
    title: 'resume without the binding cookie does not complete, and the code cannot be used afterwards by the right browser either',
    rules: ['ns.transaction.resume-refused', 'ns.transport.resume', 'ns.auth.6'],
    context: DRIVE,
    cells: [
      { rule: 'ns.transaction.resume-refused', facet: 'who', value: 'no-binding-cookie', operation: 'resumeLogin' },
      { rule: 'ns.auth.6', facet: 'who', value: 'other-browser', operation: 'resumeLogin' },
    ],
    run: async (s, e) => {
      const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
      if (!e.that(uri !== undefined, `the delivery answered ${said(d)}, without resume_uri`)) return;
      const r = await s.resume(uri as string, s.client(true));
      e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', `the login completed after a resume without the cookie (resume answered ${said(r)})`);
      const again = await s.resume(uri as string, t.browser);
      e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', `the code spent on the cookieless resume still completed the login in the right browser (${said(again)})`);
    },
  });
}

function transactionResumeWrongCodeCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/resume-wrong-code',
    title: 'resume with the binding cookie but a wrong or missing code does not complete',
    rules: ['ns.transaction.resume-refused', 'ns.auth.6'],
    context: DRIVE,
    cells: [
      { rule: 'ns.transaction.resume-refused', facet: 'who', value: 'wrong-code', operation: 'resumeLogin' },
      { rule: 'ns.auth.6', facet: 'who', value: 'starter-without-completion-secret', operation: 'resumeLogin' },
    ],
    run: async (s, e) => {
      const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
      if (!e.that(uri !== undefined, `the delivery answered ${said(d)}, without resume_uri`)) return;
      const wrong = new URL(uri as string);
      wrong.searchParams.set('code', encodeBase64url(randomBytes(32)));
      const r = await s.resume(wrong.toString(), t.browser);
      const missing = new URL(uri as string);
      missing.searchParams.delete('code');
      const r2 = await s.resume(missing.toString(), t.browser);
      e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', `the login completed after a wrong (${said(r)}) or missing (${said(r2)}) resume code`);
    },
  });
}

function transactionResumeUsedCodeCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/resume-used-code',
    title: 'a resume code completes once; used again (same browser or another) it signs nobody in',
    rules: ['ns.transaction.resume-refused', 'ns.limits.resume-code'],
    context: [...DRIVE, 'ns.transaction.resume'],
    cells: [
      { rule: 'ns.limits.resume-code', facet: 'once', value: 'replay', operation: 'resumeLogin' },
      { rule: 'ns.transaction.resume-refused', facet: 'who', value: 'used-code', operation: 'resumeLogin' },
    ],
    run: async (s, e) => {
      const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
      if (!e.that(uri !== undefined, `the delivery answered ${said(d)}, without resume_uri`)) return;
      const first = await s.resume(uri as string, t.browser);
      e.that(first.status < 400, `the first resume answered ${said(first)}`);
      // A sign-in shows as a session cookie; a refusal may be any status, or a page without one.
      const stolen = await s.resume(uri as string, s.client(true));
      e.that(stolen.status >= 400 || stolen.setCookies.length === 0, `the used code in another browser answered ${said(stolen)} and set a cookie`);
    },
  });
}

/** How many resumes of one code race (the matrix's race cell: "raced 20 ways"). */
export const RESUME_RACE = 20;

function transactionResumeRaceCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/resume-race',
    title: `${RESUME_RACE} concurrent resumes of one code by the starting browser: exactly one signs it in`,
    rules: ['ns.limits.resume-code', 'ns.transaction.resume-refused'],
    context: [...DRIVE, 'ns.transaction.resume'],
    cells: [{ rule: 'ns.limits.resume-code', facet: 'once', value: 'race', operation: 'resumeLogin' }],
    run: async (s, e) => {
      const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
      if (!e.that(uri !== undefined, `the delivery answered ${said(d)}, without resume_uri`)) return;
      // Each with the binding cookie, so only the code's single use can refuse all but one. A
      // sign-in shows as a session cookie; a refusal may be any status, or a page without one.
      const answers = await Promise.all(Array.from({ length: RESUME_RACE }, () => s.resume(uri as string, t.browser)));
      const won = answers.filter((a) => a.status < 400 && a.setCookies.length > 0);
      e.that(won.length === 1, `${won.length} of ${RESUME_RACE} concurrent resumes of one code signed the browser in, expected exactly 1 (statuses ${answers.map((a) => a.status).join(',')})`);
    },
  });
}

function transactionCrossDeviceCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/cross-device',
    title: 'cross device: a delivery with the right match code is approved without resume_uri, and the poll with the poll secret completes',
    rules: [
      'ns.transaction.cross-device',
      'ns.transaction.poll',
      'ns.transport.cross-device-poll',
      'ns.transport.poll',
      'ns.delivery.receipt',
      'ns.auth.6',
      'ns.auth.6.poll-secret',
      'ns.limits.match-code',
    ],
    context: [...DRIVE, 'ns.delivery.body'],
    cells: [
      { rule: 'ns.transaction.poll', facet: 'who', value: 'poll-secret-holder', operation: 'pollTransaction' },
      { rule: 'ns.transaction.poll', facet: 'who', value: 'stranger', operation: 'pollTransaction' },
      { rule: 'ns.auth.6', facet: 'who', value: 'starter-with-completion-secret', operation: 'pollTransaction' },
      { rule: 'ns.auth.6.poll-secret', facet: 'who', value: 'poll-secret-holder', operation: 'pollTransaction' },
      // The first attempt at the match code, the right one, approves.
      { rule: 'ns.limits.match-code', facet: 'attempts', value: 'at', operation: 'postDelivery' },
    ],
    run: async (s, e) => {
      const t = await s.start();
      const who = await s.identity();
      const d = await s.deliver(t.request, sign(s.profile, t.request, who), { match: t.matchCode });
      if (!e.that(accepted(d), `the delivery with the right match code answered ${said(d)}`)) return;
      const receipt = safeJson(d);
      e.that(isObject(receipt) && receipt.status === 'ok' && receipt.resume_uri === undefined, `the cross-device receipt is not {status: "ok"} without resume_uri: ${said(d)}`);
      const stranger = await s.pollStatus(encodeBase64url(randomBytes(32)));
      e.that(stranger.status !== 'completed', 'a poll with a random secret completed the login');
      const p = await s.pollStatus(t.pollSecret);
      e.that(p.status === 'completed' && p.identity === who.identity, `the poll answered ${said(p.response)}, expected "completed" ${who.identity}`);
    },
  });
}

function transactionMatchWrongCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/match-wrong',
    title: "a wrong match code is refused and ends the transaction; the right code afterwards does not revive it, and another transaction's attempt is its own",
    rules: ['ns.transaction.match-wrong', 'ns.limits.match-code'],
    context: DRIVE,
    cells: [
      { rule: 'ns.transaction.match-wrong', facet: 'lifecycle', value: 'approval', operation: 'postDelivery' },
      { rule: 'ns.limits.match-code', facet: 'attempts', value: 'past', operation: 'postDelivery' },
      { rule: 'ns.limits.match-code', facet: 'attempts', value: 'other-scope', operation: 'postDelivery' },
    ],
    run: async (s, e) => {
      // Started first, so the wrong attempt below is made while this one is pending.
      const other = await s.start();
      const { t, wrong, right, approval } = await wrongThenRight(s);
      e.that(refused(wrong), `a wrong match code answered ${said(wrong)}`);
      e.that(refused(right), `the right code after a wrong one answered ${said(right)}`);
      const bare = await s.deliver(t.request, approval);
      e.that(refused(bare), `a same-device delivery after a wrong code answered ${said(bare)}`);
      e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'the ended transaction completed');
      const elsewhere = await s.deliver(other.request, sign(s.profile, other.request, await s.identity()), { match: other.matchCode });
      e.that(accepted(elsewhere), `another pending transaction's right match code, after this one's wrong code, answered ${said(elsewhere)}`);
    },
  });
}

function codesTransactionMatchWrongCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/codes/transaction/match-wrong',
    title: 'a wrong match code answers 403 match_mismatch, and the right one afterwards 409, in the envelope',
    rules: CODES,
    context: ['ns.transaction.match-wrong', ...DRIVE],
    run: async (s, e) => {
      const { wrong, right } = await wrongThenRight(s);
      expectCode(e, wrong, 'the wrong match code', 403, ['match_mismatch']);
      expectCode(e, right, 'the right code afterwards', 409, ['already_approved', 'transaction_ended']);
    },
  });
}

function transactionPollBeforeResumeCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/poll-before-resume',
    title: 'a poll after a same-device approval but before resume reports approved and hands out nothing; resume still completes',
    rules: ['ns.transaction.poll-before-resume'],
    context: DRIVE,
    run: async (s, e) => {
      const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
      if (!e.that(uri !== undefined, `the delivery answered ${said(d)}, without resume_uri`)) return;
      const p = await s.pollStatus(t.pollSecret, t.browser);
      e.that(p.status === 'approved', `the poll answered ${said(p.response)}, expected "approved"`);
      e.that(p.identity === undefined, 'the poll before resume hands out the identity');
      e.that(p.response.setCookies.length === 0, 'the poll before resume sets a cookie');
      const r = await s.resume(uri as string, t.browser);
      e.that(r.status < 400, `resume after the poll answered ${said(r)} (the poll must change nothing)`);
      e.that((await s.pollStatus(t.pollSecret)).status === 'completed', 'the login did not complete after resume');
    },
  });
}

function transactionOneApprovalCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/transaction/one-approval',
    title: 'one approval per transaction: a second, valid approval by another identity is refused',
    rules: ['ns.transaction.one-approval'],
    context: DRIVE,
    cells: [{ rule: 'ns.transaction.one-approval', facet: 'once', value: 'replay', operation: 'postDelivery' }],
    run: async (s, e) => {
      const { t, first, second } = await twoApprovals(s);
      e.that(accepted(first), `the first approval answered ${said(first)}`);
      e.that(refused(second), `a second approval answered ${said(second)}`);
      e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'the second approval completed the login');
    },
  });
}

function codesTransactionOneApprovalCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/codes/transaction/one-approval',
    title: 'a second approval of one transaction answers 409 already_approved in the envelope',
    rules: CODES,
    context: ['ns.transaction.one-approval', ...DRIVE],
    run: async (s, e) => {
      const { second } = await twoApprovals(s);
      expectCode(e, second, 'the second approval', 409, ['already_approved']);
    },
  });
}

function nonceReplayCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/nonce/replay',
    title: 'a spent approval delivered again (before resume and after completion) is refused, and the first login stays the only one',
    rules: ['ns.nonce.single-use', 'ns.verify.5', 'ns.nonce.spend-on-success'],
    context: DRIVE,
    cells: [
      { rule: 'ns.verify.5', facet: 'once', value: 'replay', operation: 'postDelivery' },
      { rule: 'ns.nonce.single-use', facet: 'once', value: 'replay', operation: 'postDelivery' },
      // The verified delivery spent the nonce: its replays are refused.
      { rule: 'ns.nonce.spend-on-success', facet: 'who', value: 'verified-delivery', operation: 'postDelivery' },
    ],
    run: async (s, e) => {
      const t = await s.start();
      const approval = sign(s.profile, t.request, await s.identity());
      const first = await s.deliver(t.request, approval);
      const uri = (safeJson(first) as Record<string, unknown> | undefined)?.resume_uri;
      if (!e.that(accepted(first) && typeof uri === 'string', `the genuine approval answered ${said(first)}`)) return;
      const replay = async (when: string) => {
        for (const match of [undefined, t.matchCode]) {
          const again = await s.deliver(t.request, approval, match === undefined ? {} : { match });
          e.that(refused(again), `the replay ${when}${match ? ' with the match code' : ''} answered ${said(again)}`);
        }
      };
      await replay('before resume');
      const r = await s.resume(uri as string, t.browser);
      e.that(r.status < 400 && (await s.completed(t)), `the genuine login did not complete after the refused replays (resume ${said(r)})`);
      await replay('after completion');
    },
  });
}

function codesNonceReplayCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/codes/nonce/replay',
    title: 'a replayed approval answers 409 nonce_replayed (or already_approved) in the envelope',
    rules: CODES,
    context: ['ns.nonce.single-use', ...DRIVE],
    run: async (s, e) => {
      const t = await s.start();
      const approval = sign(s.profile, t.request, await s.identity());
      const first = await s.deliver(t.request, approval, { match: t.matchCode });
      if (!e.that(accepted(first), `the genuine approval answered ${said(first)}`)) return;
      expectCode(e, await s.deliver(t.request, approval, { match: t.matchCode }), 'the replay', 409, ['nonce_replayed', 'already_approved']);
    },
  });
}

function codesTransactionResumeRefusedCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/codes/transaction/resume-refused',
    title: 'a refused resume (no cookie, wrong code) asked for JSON answers a 4xx resume_refused in the envelope',
    rules: ['ns.errors.codes', 'ns.errors.envelope'],
    context: ['ns.transaction.resume-refused', ...DRIVE],
    run: async (s, e) => {
      const { delivered: d, resumeUri: uri, started: t } = await s.approveSameDevice();
      if (!e.that(uri !== undefined, `the delivery answered ${said(d)}, without resume_uri`)) return;
      const wrong = new URL(uri as string);
      wrong.searchParams.set('code', encodeBase64url(randomBytes(32)));
      for (const [what, r] of [
        ['a wrong code', await s.resume(wrong.toString(), t.browser)],
        ['no cookie', await s.resume(uri as string, s.client(true))],
      ] as const) {
        e.that(refused(r), `resume with ${what} answered ${said(r)}, expected a 4xx`);
        const env = envelopeOf(r);
        if (typeof env === 'string') e.fail(`resume with ${what}: ${env}`);
        else e.that(isCode(env.error, 'resume_refused'), `resume with ${what}: expected error resume_refused, got ${said(r)}`);
      }
    },
  });
}

function profilePollReplyCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/profile/poll-reply',
    title:
      "the poll exchange: 200 {status} with the project's state names (pending, approved, completed with identity, ended after a wrong match code or a resume elsewhere), a 4xx to an unknown secret, no other fields",
    rules: ['ns.transport.poll-shape', 'ns.transaction.states'],
    context: ['ns.start.contract', 'ns.transport.poll'],
    run: async (s, e) => {
      const shape = (r: HttpResponse, status: string, identity?: string) => {
        const b = safeJson(r);
        const expected = { status, ...(identity !== undefined ? { identity } : {}) };
        e.that(r.status === 200 && JSON.stringify(b) === JSON.stringify(expected), `expected 200 ${JSON.stringify(expected)}, got ${said(r)}`);
      };
      const t = await s.start();
      shape((await s.pollStatus(t.pollSecret)).response, 'pending');
      const unknown = await s.poll(encodeBase64url(randomBytes(32)));
      e.that(refused(unknown), `an unknown poll secret answered ${said(unknown)}, expected a 4xx`);
      const who = await s.identity();
      const d = await s.deliver(t.request, sign(s.profile, t.request, who), { match: t.matchCode });
      if (!e.that(accepted(d), `the delivery answered ${said(d)}`)) return;
      shape((await s.pollStatus(t.pollSecret)).response, 'completed', who.identity);
      const { t: ended } = await wrongThenRight(s);
      shape((await s.pollStatus(ended.pollSecret)).response, 'ended');
      // A same-device approval resumed in another browser is left unfinished, which polls as ended.
      const { started: u, resumeUri } = await s.approveSameDevice();
      if (!e.that(resumeUri !== undefined, 'the same-device approval carries no resume_uri')) return;
      await s.resume(resumeUri!, s.client(true));
      shape((await s.pollStatus(u.pollSecret)).response, 'ended');
    },
  });
}

function authNoApprovalInUrlCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/auth/no-approval-in-url',
    title: 'an approval in the URL is never accepted (query of the response_uri, POST or GET)',
    rules: ['ns.auth.6.no-approval-in-url'],
    context: DRIVE,
    run: async (s, e) => {
      const t = await s.start();
      const approval = sign(s.profile, t.request, await s.identity());
      const url = new URL(await s.responseUri(t.request));
      url.searchParams.set('response', encodeObject(approval));
      const post = await s.signer.post(url.toString(), '', { headers: { accept: 'application/json', 'content-type': 'text/plain' } });
      e.that(refused(post), `POST with the approval in the query answered ${said(post)}`);
      const get = await s.signer.get(url.toString(), { headers: { accept: 'application/json' } });
      e.that(refused(get), `GET with the approval in the query answered ${said(get)}`);
      e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'the login completed from an approval in the URL');
      const done = await s.completeSameDevice(t, approval);
      e.that(done.ok, `the genuine approval did not complete afterwards: ${done.problem}`);
    },
  });
}

function codesApprovalInUrlCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/codes/auth/approval-in-url',
    title: 'a delivery with the approval in its query answers 400 approval_in_url, even when the body carries it too, and completes nothing',
    rules: CODES,
    context: ['ns.auth.6.no-approval-in-url', ...DRIVE],
    run: async (s, e) => {
      const t = await s.start();
      const approval = sign(s.profile, t.request, await s.identity());
      const url = new URL(await s.responseUri(t.request));
      url.searchParams.set('response', encodeObject(approval));
      const d = await s.deliver(t.request, approval, { url: url.toString(), match: t.matchCode });
      expectCode(e, d, 'the approval in the query and the body', 400, ['approval_in_url']);
      e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'the login completed from a delivery with the approval in its URL');
    },
  });
}

function flowNoTokenCheck(target: RpTarget): Check {
  return rpCheck(target, {
    id: 'rp/flow/no-token',
    title: 'no token is issued: receipt and completed poll carry no token or grant',
    rules: ['ns.flow.stateless', 'ns.version.resource-grant-removed'],
    context: [...DRIVE, 'ns.request.scopes-login-only'],
    run: async (s, e) => {
      const t = await s.startWith({ scopes: [] });
      const d = await s.deliver(t.request, sign(s.profile, t.request, await s.identity()), { match: t.matchCode });
      const p = await s.poll(t.pollSecret);
      for (const [label, r] of [
        ['receipt', d],
        ['poll reply', p],
      ] as const) {
        const body = safeJson(r);
        if (isObject(body)) e.that(!Object.keys(body).some((k) => TOKEN_FIELDS.test(k)), `the ${label} carries a token-like field: ${Object.keys(body).join(', ')}`);
      }
      e.that((safeJson(p) as Record<string, unknown> | undefined)?.status === 'completed', `the login did not complete: ${said(p)}`);
    },
  });
}

export function transactionChecks(target: RpTarget): Check[] {
  return [
    transactionCreateCheck(target),
    transactionSecretsCheck(target),
    transactionSameDeviceCheck(target),
    transactionRefusedStaysPendingCheck(target),
    transactionResumeWithoutCookieCheck(target),
    transactionResumeWrongCodeCheck(target),
    transactionResumeUsedCodeCheck(target),
    transactionResumeRaceCheck(target),
    transactionCrossDeviceCheck(target),
    transactionMatchWrongCheck(target),
    codesTransactionMatchWrongCheck(target),
    transactionPollBeforeResumeCheck(target),
    transactionOneApprovalCheck(target),
    codesTransactionOneApprovalCheck(target),
    nonceReplayCheck(target),
    codesNonceReplayCheck(target),
    codesTransactionResumeRefusedCheck(target),
    profilePollReplyCheck(target),
    authNoApprovalInUrlCheck(target),
    codesApprovalInUrlCheck(target),
    flowNoTokenCheck(target),
  ];
}
