// Push to the app (document 2, Authentication 7), judged from where the user's app sees it: the
// harness registers the user at the users' relay (bridge.push.user_relay), trusts the push
// identity the transaction view names (ob.contract.push), presses Send to my app, and opens what
// reaches the inbox. A bridge that shows no `push` does not push: the checks skip (it is a MAY).
import { readFileSync } from 'node:fs';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Check } from '../../../run/model.ts';
import type { HttpResponse } from '../../../actors/http.ts';
import { Browser } from '../../../actors/signer/index.ts';
import { newRelayIdentity, RelayClient, type RelayIdentity } from '../../../actors/relay/index.ts';
import { openMessage } from '../../../impl/noble.ts';
import { newPkce } from '../../../actors/oidc/client.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { makeAjv } from '../../../../protocol/common/schema.ts';
import { parseRfc3339 } from '../../../../protocol/common/time.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import { bridgeCheck } from '../check.ts';
import { CheckFailure, CheckSkip, said, type BridgeSession, type BridgeTarget, type User } from '../driver.ts';
import { failOnServerError } from '../../../run/answers.ts';

const PROMPT = vocabulary.message_types.auth_request;
const LANE = 'bridge/push';
const POLICY = 'relay/inbox-policy.json';
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A user homed at the users' relay, whose inbox the harness reads as the user's app. */
export interface PushUser extends User {
  mailbox: RelayIdentity;
  relay: RelayClient;
}

/** One prompt as the app received it: the envelope, and its opened plaintext. */
interface Prompt {
  envelope: Record<string, unknown>;
  text: string;
  body: unknown;
}

/** A sign-in waiting for its signature, with the bridge's push identity trusted by the user. */
interface Waiting {
  user: PushUser;
  txUrl: string;
  view: Record<string, unknown>;
  from: string;
}

export async function pushUser(s: BridgeSession): Promise<PushUser> {
  const push = s.target.push;
  if (!push) throw new CheckSkip("no users' relay given (bridge.push.user_relay): push to the app is not checked");
  const relay = new RelayClient(s.target.profile, push.userRelay, s.http, s.signal);
  const answer = await relay.banner();
  failOnServerError(answer, `the users' relay's banner (GET ${push.userRelay}/)`);
  const banner = answer.json() as { relay_address?: string; hosted_domains?: string[] };
  const domain = banner.hosted_domains?.[0];
  if (!domain) throw new CheckSkip(`the users' relay ${push.userRelay} hosts no domain to register push users in`);
  const address = banner.relay_address ?? new URL(push.userRelay).host;
  const mailbox = newRelayIdentity(`p${Math.random().toString(36).slice(2, 10)}.${domain}`);
  await s.target.authority.publish({ identity: mailbox.identity, seed: mailbox.seed, encryptionPublicKey: `x25519:${encodeBase64url(mailbox.encryption.publicKey)}`, relay: address });
  const r = await relay.register(mailbox, address);
  if (r.status !== 201) throw new CheckFailure(`registering the push user at the users' relay ${push.userRelay} answered ${said(r)}`);
  return { key: { identity: mailbox.identity, seed: mailbox.seed }, browser: new Browser({ http: s.client(true), profile: s.target.profile }), mailbox, relay };
}

/** Opens a sign-in for a push user up to awaiting_signature, and trusts the identity the view names. */
async function waiting(s: BridgeSession, trust = true, given?: PushUser): Promise<Waiting> {
  // `given`: the same user in the same browser again (a later sign-in of theirs).
  const user = given ?? (await pushUser(s));
  const res = await s.openAuthorize(user.browser, s.params('basic', newPkce(), 'st', 'n'));
  if (!res.location) throw new CheckFailure(`/authorize: ${said(res)}`);
  const txUrl = new URL(res.location, s.target.issuer).href.split('?')[0]!;
  const { view } = await s.post(user.browser, `${txUrl}/identify`, { id: user.key.identity });
  if (view.state !== 'awaiting_signature') throw new CheckFailure(`entering the push user's ID led to ${JSON.stringify(view).slice(0, 300)}`);
  // Prompts come seconds apart: the sign-in is kept open as the tab keeps it while an ID is made
  // (document 2's /t/{id}/creating), so a short transaction lifetime a target declares cannot end it first.
  const creating = await user.browser.http.post(`${txUrl}/creating`, '', { headers: { accept: 'application/json' } });
  if (creating.status >= 300) throw new CheckFailure(`POST /t/{id}/creating answered ${said(creating)}`);
  const push = view.push;
  if (!isObject(push) || typeof push.identity !== 'string') {
    // A bridge that does not push answers the button 404 (ob.contract.push); one that does shows `push`.
    const pressed = await user.browser.http.post(`${txUrl}/push`, '', { headers: { accept: 'application/json' } });
    if (pressed.status !== 404) throw new CheckFailure(`the waiting view shows no \`push\`, yet POST /t/{id}/push answered ${said(pressed)}, not 404 (ob.contract.push)`);
    throw new CheckSkip('the transaction view shows no `push` and POST /t/{id}/push answers 404: this bridge does not push to apps (ob.contract.push)');
  }
  const policy = JSON.stringify({ version: 1, mode: 'open', trusted_auth_services: trust ? [push.identity] : [] });
  const put = await user.relay.systemFile(user.mailbox, 'PUT', POLICY, policy);
  if (put.status < 200 || put.status >= 300) throw new CheckFailure(`trusting ${push.identity} at the users' relay (PUT ${POLICY}) answered ${said(put)}`);
  return { user, txUrl, view, from: push.identity };
}

const press = (w: Waiting): Promise<HttpResponse> => w.user.browser.http.post(`${w.txUrl}/push`, '', { headers: { accept: 'application/json' } });

/** Drains the user's inbox: the prompts from `from`, opened with the user's key. */
export async function prompts(w: Pick<Waiting, 'user' | 'from'>): Promise<Prompt[]> {
  const r = await w.user.relay.pickup(w.user.mailbox);
  if (r.status !== 200) throw new CheckFailure(`the push user's pickup at the users' relay answered ${said(r)}`);
  const messages = ((r.json() as { messages?: unknown[] }).messages ?? []).filter(isObject);
  return messages
    .filter((m) => m.sender === w.from)
    .map((envelope) => {
      const enc = isObject(envelope.encryption) ? envelope.encryption : {};
      const opened = openMessage(
        w.user.relay.profile.ids.message_seal_domain,
        w.user.mailbox.encryption.privateKey,
        Buffer.from(String(enc.ephemeral_public_key), 'base64url'),
        Buffer.from(String(enc.nonce), 'base64url'),
        Buffer.from(String(envelope.payload), 'base64url'),
      );
      const text = opened ? new TextDecoder().decode(opened) : '';
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { envelope, text, body };
    });
}

/** The prompts that arrive within `ms` (polled; at least one pickup). */
async function arriving(w: Waiting, ms: number, enough = 1): Promise<Prompt[]> {
  const got: Prompt[] = [];
  const until = Date.now() + ms;
  do {
    got.push(...(await prompts(w)));
    if (got.length >= enough) break;
    await sleep(300);
  } while (Date.now() < until);
  return got;
}

/** Where a JSON value carries the match code: a field named for it, or a value equal to it. */
function carriesMatch(v: unknown, match: string, at = '$'): string | undefined {
  if (typeof v === 'string' || typeof v === 'number') return String(v) === match ? at : undefined;
  if (Array.isArray(v)) return v.map((x, i) => carriesMatch(x, match, `${at}[${i}]`)).find((x) => x !== undefined);
  if (!isObject(v)) return undefined;
  for (const [k, x] of Object.entries(v)) {
    if (/match/i.test(k)) return `${at}.${k}`;
    const found = carriesMatch(x, match, `${at}.${k}`);
    if (found) return found;
  }
  return undefined;
}

function promptCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/push/prompt',
    lane: LANE,
    title: `Send to my app delivers an encrypted ${PROMPT} from the bridge's own ID carrying the request the QR code shows and the application's host, never the match code; the app approves with the match code`,
    rules: ['ob.push.message', 'ob.push.no-match-code', 'ob.push.trusted', 'ob.transaction.callback'],
    cells: [{ rule: 'ob.push.trusted', facet: 'who', value: 'trusted-bridge', operation: 'push' }],
    context: ['ob.contract.push', 'ob.transaction.creating'],
    run: async (s, e) => {
      const w = await waiting(s);
      const r = await press(w);
      if (r.status >= 300) throw new CheckFailure(`POST /t/{id}/push answered ${said(r)}`);
      const [p] = await arriving(w, 10_000);
      if (!e.that(p !== undefined, `no message from ${w.from} reached the user's relay within 10 s of Send to my app`) || !p) return;
      e.that(p.envelope.type === PROMPT, `the prompt's signed type is ${JSON.stringify(p.envelope.type)}, not ${PROMPT}`);
      if (!e.that(isObject(p.body), `the prompt does not open to a JSON object with the user's key: ${JSON.stringify(p.text.slice(0, 200))}`) || !isObject(p.body)) return;
      const carried = [p.body.request_uri === w.view.request_uri, p.body.request === w.view.request];
      e.that(carried.some(Boolean), `the prompt carries neither the short link ${String(w.view.request_uri)} nor the request the QR code shows: ${p.text.slice(0, 300)}`);
      const host = new URL(s.credentials('basic').redirect_uri).host;
      e.that(p.text.includes(host), `the prompt does not name the application's host ${host}: ${p.text.slice(0, 300)}`);
      const match = String(w.view.match_code);
      // The code is two digits: judged as a field or a value, not as a substring of the text.
      const leak = carriesMatch(p.body, match);
      e.that(leak === undefined, `the prompt carries the match code ${match} (${leak}): ${p.text.slice(0, 300)}`);
      // The app: the request by its link, approved with the match code the waiting screen shows.
      const input = typeof p.body.request_uri === 'string' ? p.body.request_uri : String(p.body.request);
      const approved = await s.signer.approve(input, { key: w.user.key, match });
      e.that(approved.receipt?.status === 'ok', `approving the pushed request with the match code gave ${JSON.stringify(approved.receipt)}`);
      const after = await s.view(w.user.browser, w.txUrl);
      e.that(after.view.state === 'consent', `after the app approved, the waiting browser's transaction is ${JSON.stringify(after.view.state)}, not consent`);
    },
  });
}

function untrustedCheck(t: BridgeTarget): Check {
  return bridgeCheck(t, {
    id: 'bridge/push/untrusted-dropped',
    lane: LANE,
    title: "a user who does not list the bridge in trusted_auth_services never receives its prompt (the user's relay drops it)",
    rules: ['ob.push.trusted'],
    cells: [{ rule: 'ob.push.trusted', facet: 'who', value: 'untrusted-bridge', operation: 'push' }],
    context: ['ob.contract.push', 'ob.transaction.creating'],
    run: async (s, e) => {
      const w = await waiting(s, false);
      const r = await press(w);
      e.that(r.status < 500, `POST /t/{id}/push answered ${said(r)}`);
      const got = await arriving(w, 3000, Number.MAX_SAFE_INTEGER);
      e.that(got.length === 0, `${got.length} prompt(s) from ${w.from} reached a user who does not trust it`);
    },
  });
}

function limitsCheck(t: BridgeTarget): Check {
  const intervalS = t.declared?.pushIntervalS ?? limits.push_prompt_interval_seconds;
  const max = limits.push_prompts_max;
  return bridgeCheck(t, {
    id: 'bridge/push/limits',
    lane: `${LANE}/limits`,
    title: `Send to my app pressed twice at once, again within ${intervalS} s, then every ${intervalS} s (the document's 15 s, or what the target declares) sends at most ${max} prompts, never two closer than that; the same user's next sign-in sends its own`,
    rules: ['ob.push.limits'],
    cells: [
      { rule: 'ob.push.limits', facet: 'limit', value: 'at', operation: 'push' },
      { rule: 'ob.push.limits', facet: 'limit', value: 'past', operation: 'push' },
      { rule: 'ob.push.limits', facet: 'limit', value: 'other-scope', operation: 'push' },
    ],
    context: ['ob.contract.push', 'ob.transaction.creating'],
    timeoutMs: (intervalS * 4 + 60) * 1000,
    run: async (s, e) => {
      const w = await waiting(s);
      const counted: number[] = [];
      const settle = async (expectSome: boolean) => counted.push((await arriving(w, expectSome ? 8000 : 1500, expectSome ? 1 : Number.MAX_SAFE_INTEGER)).length);
      const started = Date.now();
      await Promise.all([press(w), press(w)]);
      await settle(true);
      e.that(counted[0]! <= 1, `two presses at the same moment sent ${counted[0]} prompts (at most one per ${intervalS} s)`);
      // Within the window: nothing may go.
      if (Date.now() - started < (intervalS * 1000) / 2) await sleep((intervalS * 1000) / 2 - (Date.now() - started));
      if (Date.now() - started < intervalS * 1000 - 300) {
        await press(w);
        await settle(false);
        e.that(counted[1] === 0, `a press ${((Date.now() - started) / 1000).toFixed(1)} s after the first sent ${counted[1]} prompt(s) (${intervalS} s apart)`);
      }
      for (let i = 0; i < max; i++) {
        await sleep(intervalS * 1000 + 300);
        await press(w);
        await settle(i < max - 1);
      }
      const total = counted.reduce((a, b) => a + b, 0);
      e.that(total <= max, `the app received ${total} prompts for one sign-in (per press: ${counted.join(', ')}), at most ${max} allowed`);
      // The cap is the sign-in's: the same user's next sign-in, in the same browser, sends its own.
      const next = await waiting(s, true, w.user);
      const pressed = await press(next);
      const got = await arriving(next, 8000);
      e.that(got.length >= 1, `after one sign-in used its ${max} prompts, the user's next sign-in in the same browser sent none: ${said(pressed)}`);
    },
  });
}

let ajv: Ajv2020 | undefined;
function validPrompt(body: unknown): string | undefined {
  ajv ??= makeAjv();
  const schema = JSON.parse(readFileSync(new URL('../../../../schemas/json/objects/auth-request.schema.json', import.meta.url), 'utf8')) as { $id: string };
  const validate = ajv.getSchema(schema.$id) ?? ajv.compile(schema);
  return validate(body) ? undefined : ajv.errorsText(validate.errors);
}

function profilePushCheck(t: BridgeTarget): Check {
  const intervalS = t.declared?.pushIntervalS ?? limits.push_prompt_interval_seconds;
  return bridgeCheck(t, {
    id: 'bridge/profile/push',
    lane: LANE,
    title:
      'POST /t/{id}/push answers the view with push.sent and remaining, 429 invalid_request to a second press at the same moment, 409 before an ID is entered; the prompt is an auth-request object expiring with the request',
    rules: ['ob.contract.push'],
    context: ['ob.transaction.creating'],
    run: async (s, e) => {
      const w = await waiting(s);
      // Two presses at once: one sends (200 with the view), the other finds none due (429).
      const started = Date.now();
      const answers = await Promise.all([press(w), press(w)]);
      const took = Date.now() - started;
      const first = answers.find((r) => r.status === 200) ?? answers[0]!;
      const again = answers.find((r) => r !== first)!;
      const view = (first.status === 200 ? first.json() : {}) as Record<string, unknown>;
      const push = isObject(view.push) ? view.push : {};
      e.that(first.status === 200 && push.sent === 1 && push.remaining === limits.push_prompts_max - 1 && push.last === 'sent', `the press that sent answered ${said(first)}`);
      // next_at is due only while the interval runs: a slow send may outlast it.
      if (took < intervalS * 1000 - 500) e.that(typeof push.next_at === 'string' && parseRfc3339(push.next_at) !== undefined, `the view after a press shows no next_at: ${JSON.stringify(push)}`);
      e.that(again.status === 429 && (again.json() as { error?: unknown }).error === 'invalid_request', `the other press at the same moment answered ${said(again)}, expected 429 invalid_request`);
      const [p] = await arriving(w, 10_000);
      if (e.that(p !== undefined, 'the first press delivered no prompt') && p) {
        const problem = validPrompt(p.body);
        e.that(problem === undefined, `the prompt is not an auth-request object (spec/objects/auth-request.schema.json): ${problem}; ${p.text.slice(0, 300)}`);
        const body = isObject(p.body) ? p.body : {};
        e.that(
          body.expires_at === w.view.request_expires_at && p.envelope.expires_at === body.expires_at,
          `the prompt expires at ${String(body.expires_at)} (envelope ${String(p.envelope.expires_at)}), the request at ${String(w.view.request_expires_at)}`,
        );
      }
      const early = await s.startSignIn();
      const before = await early.user.browser.http.post(`${early.txUrl}/push`, '', { headers: { accept: 'application/json' } });
      e.that(before.status === 409, `a press before an ID was entered answered ${said(before)}, expected 409`);
    },
  });
}

export function pushChecks(t: BridgeTarget): Check[] {
  return [promptCheck(t), untrustedCheck(t), limitsCheck(t), profilePushCheck(t)];
}
