// Document 1's transaction table, row by row, plus the start contract, the poll secret, the
// approval-in-URL ban and the replay of a spent approval. Every check starts its own transaction.
import { randomBytes } from 'node:crypto';
import type { Check } from '../../../run/model.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { sameOrigin } from '../../../../protocol/common/url.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { rpCheck } from '../check.ts';
import { envelopeOf, errorText, isObject, safeJson, secretBits, sign, type RpTarget } from '../driver.ts';

const TOKEN_FIELDS = /token|grant|access|refresh|bearer|jwt/i;

export function transactionChecks(target: RpTarget): Check[] {
  const c = (spec: Parameters<typeof rpCheck>[1]) => rpCheck(target, spec);
  return [
    c({
      id: 'rp/transaction/create',
      title: 'starting a transaction sets the binding cookie and hands the page a poll secret and a match code; the poll says pending',
      rules: ['ns.start.contract', 'ns.transaction.create', 'ns.transaction.record', 'ns.transaction.states', 'ns.transport.poll', 'ns.transport.poll-shape', 'ns.limits.match-code'],
      run: async (s, e) => {
        const t = await s.start();
        e.that(t.response.setCookies.length > 0, 'the start answer sets no cookie (the binding cookie arrives in Set-Cookie)');
        e.that(new RegExp(`^[0-9]{${limits.match_code_digits}}$`).test(t.matchCode), `match_code ${JSON.stringify(t.matchCode)} is not ${limits.match_code_digits} digits`);
        e.that(t.pollSecret.length > 0, 'poll_secret is empty');
        const p = await s.pollStatus(t.pollSecret);
        e.that(p.response.status === 200, `the poll answered ${p.response.status}, expected 200`);
        e.that(p.status === 'pending', `a new transaction polls ${JSON.stringify(p.status)}, expected "pending"`);
        e.that(p.identity === undefined, 'a pending poll reply carries an identity');
      },
    }),
    c({
      id: 'rp/transaction/secrets',
      title: `poll secret (>= ${limits.poll_secret_min_bits} bits, never the request_id) and binding cookie (>= ${limits.binding_cookie_min_bits} bits) are high-entropy and fresh per transaction`,
      rules: ['ns.auth.6.poll-secret', 'ns.transaction.record'],
      run: async (s, e) => {
        const [a, b] = [await s.start(), await s.start()];
        for (const t of [a, b]) {
          e.that(secretBits(t.pollSecret) >= limits.poll_secret_min_bits, `poll secret ${t.pollSecret.length} chars carries < ${limits.poll_secret_min_bits} bits`);
          e.that(t.pollSecret !== t.request.request_id, 'the poll secret is the request_id');
          const cookies = t.response.setCookies.map((x) => x.split(';')[0]!.split('=').slice(1).join('='));
          e.that(cookies.some((v) => secretBits(v) >= limits.binding_cookie_min_bits), `no cookie value carries >= ${limits.binding_cookie_min_bits} bits`);
        }
        e.that(a.pollSecret !== b.pollSecret, 'two transactions got the same poll secret');
        const byRequestId = await s.poll(String(a.request.request_id));
        e.that(byRequestId.status === 404 || byRequestId.status === 400, `polling with the request_id answered ${byRequestId.status}, expected 404 (no transaction)`);
        const random = await s.pollStatus(encodeBase64url(randomBytes(32)));
        e.that(random.status === '' && random.response.status >= 400 && random.response.status < 500, `polling with an unknown secret answered ${random.response.status} ${random.status}`);
      },
    }),
    c({
      id: 'rp/transaction/same-device',
      title: 'same device: a delivery without match is approved, the receipt carries a same-origin resume_uri, and resuming with the binding cookie completes',
      rules: ['ns.transaction.same-device', 'ns.transaction.resume', 'ns.transport.same-device-return', 'ns.transport.resume', 'ns.transport.delivery', 'ns.delivery.receipt', 'ns.auth.6', 'ns.auth.6.resume-same-origin', 'ns.delivery.content-type', 'ns.delivery.body', 'ns.limits.resume-code'],
      run: async (s, e) => {
        const t = await s.start();
        const who = await s.identity();
        const d = await s.deliver(t.request, sign(s.profile, t.request, who));
        if (!e.that(d.status === 200, `the delivery answered ${d.status}${errorText(d)}`)) return;
        const receipt = safeJson(d);
        if (!isObject(receipt)) return e.fail('the receipt is not JSON');
        e.that(receipt.status === 'ok', `receipt status ${JSON.stringify(receipt.status)}, expected "ok"`);
        const uri = receipt.resume_uri;
        if (!e.that(typeof uri === 'string', 'the same-device receipt has no resume_uri')) return;
        e.that(sameOrigin(String(t.request.audience), uri as string), `resume_uri ${uri} is not same-origin with the audience`);
        const code = new URL(uri as string).searchParams.get('code') ?? '';
        e.that(secretBits(code) >= limits.resume_code_min_bits, `the resume code (${code.length} chars) carries < ${limits.resume_code_min_bits} bits`);
        const r = await s.resume(uri as string, t.browser);
        e.that(r.status === 303, `resume with the binding cookie answered ${r.status}, expected 303${errorText(r)}`);
        const p = await s.pollStatus(t.pollSecret);
        e.that(p.status === 'completed', `after resume the poll says ${JSON.stringify(p.status)}, expected "completed"`);
        e.that(p.identity === who.identity, `the completed poll names ${JSON.stringify(p.identity)}, expected ${who.identity}`);
      },
    }),
    c({
      id: 'rp/transaction/resume-without-cookie',
      title: 'resume without the binding cookie does not complete, and the code cannot be used afterwards by the right browser either',
      rules: ['ns.transaction.resume-refused', 'ns.auth.6', 'ns.transport.resume'],
      run: async (s, e) => {
        const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
        if (!e.that(uri !== undefined, `the delivery answered ${d.status} without resume_uri${errorText(d)}`)) return;
        const stranger = s.client(true);
        const r = await s.resume(uri as string, stranger);
        e.that(r.status >= 400 && r.status < 500, `resume without the cookie answered ${r.status}, expected a 4xx refusal`);
        e.that(r.setCookies.length === 0, 'resume without the cookie set a cookie (a session?)');
        e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'the login completed after a resume without the cookie');
        const again = await s.resume(uri as string, t.browser);
        e.that(again.status !== 303 && !(again.status >= 200 && again.status < 300), `the code spent on the cookieless resume still completed in the right browser (${again.status})`);
        e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'the login completed after a refused resume');
      },
    }),
    c({
      id: 'rp/transaction/resume-wrong-code',
      title: 'resume with the binding cookie but a wrong code does not complete',
      rules: ['ns.transaction.resume-refused', 'ns.auth.6', 'ns.limits.resume-code'],
      run: async (s, e) => {
        const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
        if (!e.that(uri !== undefined, `the delivery answered ${d.status} without resume_uri${errorText(d)}`)) return;
        const wrong = new URL(uri as string);
        wrong.searchParams.set('code', encodeBase64url(randomBytes(32)));
        const r = await s.resume(wrong.toString(), t.browser);
        e.that(r.status >= 400 && r.status < 500, `resume with a wrong code answered ${r.status}, expected a 4xx refusal`);
        const missing = new URL(uri as string);
        missing.searchParams.delete('code');
        const r2 = await s.resume(missing.toString(), t.browser);
        e.that(r2.status >= 400 && r2.status < 500, `resume without a code answered ${r2.status}, expected a 4xx refusal`);
        e.that((await s.pollStatus(t.pollSecret)).status !== 'completed', 'the login completed after a wrong resume code');
      },
    }),
    c({
      id: 'rp/transaction/resume-used-code',
      title: 'a resume code completes once; used again (same browser or another) it does not sign anyone in',
      rules: ['ns.transaction.resume-refused', 'ns.limits.resume-code', 'ns.transaction.resume'],
      run: async (s, e) => {
        const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
        if (!e.that(uri !== undefined, `the delivery answered ${d.status} without resume_uri${errorText(d)}`)) return;
        const first = await s.resume(uri as string, t.browser);
        e.that(first.status === 303, `the first resume answered ${first.status}, expected 303`);
        const again = await s.resume(uri as string, t.browser);
        e.that(again.status >= 400 && again.status < 500, `the used code answered ${again.status}, expected a 4xx refusal`);
        const other = s.client(true);
        const stolen = await s.resume(uri as string, other);
        e.that(stolen.status >= 400 && stolen.status < 500 && stolen.setCookies.length === 0, `the used code in another browser answered ${stolen.status}${stolen.setCookies.length ? ' and set a cookie' : ''}`);
      },
    }),
    c({
      id: 'rp/transaction/cross-device',
      title: 'cross device: a delivery with the right match code is approved without resume_uri, and the poll with the poll secret completes',
      rules: ['ns.transaction.cross-device', 'ns.transaction.poll', 'ns.transport.cross-device-poll', 'ns.transport.poll', 'ns.delivery.receipt', 'ns.delivery.body', 'ns.delivery.content-type', 'ns.auth.6'],
      run: async (s, e) => {
        const t = await s.start();
        const who = await s.identity();
        const d = await s.deliver(t.request, sign(s.profile, t.request, who), { match: t.matchCode });
        if (!e.that(d.status === 200, `the delivery with the right match code answered ${d.status}${errorText(d)}`)) return;
        const receipt = safeJson(d);
        e.that(isObject(receipt) && receipt.status === 'ok' && receipt.resume_uri === undefined, `the cross-device receipt is not {status: "ok"} without resume_uri: ${d.text().slice(0, 200)}`);
        const stranger = await s.pollStatus(encodeBase64url(randomBytes(32)));
        e.that(stranger.status !== 'completed', 'a poll with a random secret completed the login');
        const p = await s.pollStatus(t.pollSecret);
        e.that(p.status === 'completed' && p.identity === who.identity, `the poll says ${JSON.stringify(p.status)} ${p.identity ?? ''}, expected "completed" ${who.identity}`);
      },
    }),
    c({
      id: 'rp/transaction/match-wrong',
      title: 'a wrong match code ends the transaction; the right code afterwards does not revive it',
      rules: ['ns.transaction.match-wrong', 'ns.limits.match-code', 'ns.transaction.states'],
      run: async (s, e) => {
        const t = await s.start();
        const who = await s.identity();
        const approval = sign(s.profile, t.request, who);
        const wrong = String((Number(t.matchCode) + 1) % 100).padStart(2, '0');
        const d = await s.deliver(t.request, approval, { match: wrong });
        e.that(d.status >= 400 && d.status < 500, `a wrong match code answered ${d.status}, expected a 4xx refusal`);
        const env = envelopeOf(d);
        if (typeof env === 'object') e.that(d.status === 403 && env.error === 'match_mismatch', `expected 403 match_mismatch (project codes), got ${d.status} ${env.error}`);
        const right = await s.deliver(t.request, approval, { match: t.matchCode });
        e.that(right.status >= 400 && right.status < 500, `the right code after a wrong one answered ${right.status}, expected a refusal`);
        const bare = await s.deliver(t.request, approval);
        e.that(bare.status >= 400 && bare.status < 500, `a same-device delivery after a wrong code answered ${bare.status}, expected a refusal`);
        const p = await s.pollStatus(t.pollSecret);
        e.that(p.status !== 'completed', 'the ended transaction completed');
        e.that(p.status === 'ended', `the poll says ${JSON.stringify(p.status)}, expected "ended"`);
      },
    }),
    c({
      id: 'rp/transaction/poll-before-resume',
      title: 'a poll after a same-device approval but before resume answers approved and hands out nothing',
      rules: ['ns.transaction.poll-before-resume', 'ns.transport.poll-shape', 'ns.transaction.states'],
      run: async (s, e) => {
        const { started: t, delivered: d, resumeUri: uri } = await s.approveSameDevice();
        if (!e.that(uri !== undefined, `the delivery answered ${d.status} without resume_uri${errorText(d)}`)) return;
        const p = await s.pollStatus(t.pollSecret, t.browser);
        e.that(p.status === 'approved', `the poll says ${JSON.stringify(p.status)}, expected "approved"`);
        e.that(p.identity === undefined, 'the poll before resume hands out the identity');
        e.that(p.response.setCookies.length === 0, 'the poll before resume sets a cookie');
        const r = await s.resume(uri as string, t.browser);
        e.that(r.status === 303, `resume after the poll answered ${r.status}, expected 303 (the poll changed nothing)`);
        e.that((await s.pollStatus(t.pollSecret)).status === 'completed', 'the login did not complete after resume');
      },
    }),
    c({
      id: 'rp/transaction/one-approval',
      title: 'one approval per transaction: a second, valid approval by another identity is refused',
      rules: ['ns.transaction.one-approval'],
      run: async (s, e) => {
        const t = await s.start();
        const [a, b] = [await s.identity(), await s.identity()];
        const first = await s.deliver(t.request, sign(s.profile, t.request, a));
        e.that(first.status === 200, `the first approval answered ${first.status}`);
        const second = await s.deliver(t.request, sign(s.profile, t.request, b), { match: t.matchCode });
        e.that(second.status >= 400 && second.status < 500, `a second approval answered ${second.status}, expected a refusal`);
        const env = envelopeOf(second);
        if (typeof env === 'object') e.that(second.status === 409 && env.error === 'already_approved', `expected 409 already_approved (project codes), got ${second.status} ${env.error}`);
        const p = await s.pollStatus(t.pollSecret);
        e.that(p.status !== 'completed', 'the second approval completed the login');
      },
    }),
    c({
      id: 'rp/nonce/replay',
      title: 'a spent approval delivered again is refused (409), and the first login stays the only one',
      rules: ['ns.nonce.single-use', 'ns.verify.5', 'ns.nonce.spend-on-success', 'ns.nonce.memory', 'ns.limits.nonce-memory'],
      run: async (s, e) => {
        const t = await s.start();
        const who = await s.identity();
        const approval = sign(s.profile, t.request, who);
        const replay = async (when: string) => {
          for (const match of [undefined, t.matchCode]) {
            const again = await s.deliver(t.request, approval, match === undefined ? {} : { match });
            e.that(again.status === 409, `the replay ${when}${match ? ' with the match code' : ''} answered ${again.status}${errorText(again)}, expected 409`);
            const env = envelopeOf(again);
            if (typeof env === 'object') e.that(['nonce_replayed', 'already_approved'].includes(env.error), `the replay's code is ${env.error}, expected nonce_replayed or already_approved`);
          }
        };
        const first = await s.deliver(t.request, approval);
        const uri = (safeJson(first) as Record<string, unknown> | undefined)?.resume_uri;
        if (!e.that(first.status === 200 && typeof uri === 'string', `the genuine approval answered ${first.status}${errorText(first)}`)) return;
        await replay('before resume');
        const r = await s.resume(uri as string, t.browser);
        e.that(r.status === 303 && (await s.completed(t)), `the genuine login did not complete after the refused replays (resume ${r.status})`);
        await replay('after completion');
      },
    }),
    c({
      id: 'rp/auth/no-approval-in-url',
      title: 'an approval in the URL is never accepted (query of the response_uri, POST or GET)',
      rules: ['ns.auth.6.no-approval-in-url'],
      run: async (s, e) => {
        const t = await s.start();
        const who = await s.identity();
        const approval = sign(s.profile, t.request, who);
        const { encodeObject } = await import('../../../../protocol/common/codec.ts');
        const url = new URL(s.responseUri(t.request));
        url.searchParams.set('response', encodeObject(approval));
        const post = await s.signer.post(url.toString(), '', { headers: { accept: 'application/json', 'content-type': 'text/plain' } });
        e.that(post.status >= 400 && post.status < 500, `POST with the approval in the query answered ${post.status}, expected a refusal`);
        const get = await s.signer.get(url.toString(), { headers: { accept: 'application/json' } });
        e.that(get.status >= 400 && get.status < 500, `GET with the approval in the query answered ${get.status}, expected a refusal`);
        e.that((await s.pollStatus(t.pollSecret)).status === 'pending', 'the transaction moved after an approval in the URL');
        const done = await s.completeSameDevice(t, approval);
        e.that(done.ok, `the genuine approval did not complete afterwards: ${done.problem}`);
      },
    }),
    c({
      id: 'rp/flow/no-token',
      title: 'no token is issued: receipt, completed poll and resume carry no token or grant',
      rules: ['ns.flow.stateless', 'ns.version.resource-grant-removed', 'ns.request.scopes-login-only'],
      run: async (s, e) => {
        const t = await s.start({ scopes: [] });
        const who = await s.identity();
        const d = await s.deliver(t.request, sign(s.profile, t.request, who), { match: t.matchCode });
        const p = await s.poll(t.pollSecret);
        for (const [label, r] of [['receipt', d], ['poll reply', p]] as const) {
          const body = safeJson(r);
          if (isObject(body)) e.that(!Object.keys(body).some((k) => TOKEN_FIELDS.test(k)), `the ${label} carries a token-like field: ${Object.keys(body).join(', ')}`);
        }
        e.that((safeJson(p) as Record<string, unknown> | undefined)?.status === 'completed', 'the login did not complete');
      },
    }),
  ];
}
