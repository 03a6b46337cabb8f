// The `who` facets of the relay's core (spec/facets/relay-core.yaml): every principal document 3
// tells apart, on every operation that takes it. On the inbox (pickup, consume, events) the owner
// and its sessions succeed, by challenge and by signed request; another identity's key, another
// identity's session (its key and its id), a session id paired with another identity's session
// key, a revoked session and a stranger are refused 401, and none of them drains or consumes the
// owner's mail. Envelopes and the owner's admin calls (sessions, export) are judged the same way.
import type { Cell, Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { ack, adminEnvelope, sessionProof, sessionRegistration, signEnvelope, type OwnerAuth, type RelayIdentity } from '../../../actors/relay/index.ts';
import { relayCheck, type Expect } from '../check.ts';
import { isObject, pickupOf, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import { mail } from './messaging.ts';
import { by, inboxCall, INBOX_OPS, MODES, ok, pooled, randomSeed, revokedSession, session, type Answer, type InboxOp, type Mode, type Sess } from './matrix-ops.ts';

const cells = (rule: RuleId, facet: string, values: readonly string[], operations: readonly string[]): Array<Cell & { rule: RuleId }> =>
  values.flatMap((value) => operations.map((operation) => ({ rule, facet, value, operation })));

/** The cursor the owner's cursor read answers (its name is the project's; `0` when absent). */
async function ownerCursor(s: Session, a: RelayIdentity): Promise<string> {
  const b = safeJson(await s.relay.pickup(a, { mode: 'signed-request' }, '0'));
  return isObject(b) && typeof b.cursor === 'string' ? b.cursor : '0';
}

/** The refused call, in its form that would forget mail were it let through: a drain, or a consume through the owner's cursor. */
async function destructive(s: Session, op: InboxOp, a: RelayIdentity, auth: OwnerAuth, cursor: string): Promise<Answer> {
  if (op === 'pickup') {
    const r = await s.relay.pickup(a, auth);
    return { status: r.status, text: said(r) };
  }
  if (op === 'consume') {
    const r = await s.relay.consume(a, { through: cursor, ack_through: cursor }, auth);
    return { status: r.status, text: said(r) };
  }
  return inboxCall(s, op, a, auth);
}

function whoInboxCheck(t: RelayTarget): Check {
  const refusedPrincipals = ['other-identity', 'other-identity-session', 'revoked-session', 'stranger'];
  return relayCheck(t, {
    id: 'relay/matrix/who-inbox',
    title:
      "pickup, consume and events, by challenge and by signed request: the owner and its session succeed; another identity's key or session, a session id with another identity's session key, a revoked session and a stranger are refused 401 and forget nothing",
    rules: ['ra.pickup.auth', 'ra.auth.session-key'],
    cells: [...cells('ra.pickup.auth', 'who', ['owner', 'own-session', ...refusedPrincipals], INBOX_OPS), ...cells('ra.auth.session-key', 'binding', ['session-id', 'key'], INBOX_OPS)],
    run: async (s, e) => {
      const [a, b, c] = await Promise.all([s.identity(), s.identity(), s.identity()]);
      const [mine, theirs, revoked] = await Promise.all([session(s, a), session(s, b), revokedSession(s, a)]);
      const m = mail(s, c, a, 'waiting through the refused calls');
      e.that((await s.relay.send(m)).status === 202, 'the message waiting in the inbox was not accepted');
      const cursor = await ownerCursor(s, a);
      const refused: Array<[string, (mode: Mode) => OwnerAuth]> = [
        ["another identity's key", (mode) => by(mode, { seed: b.seed })],
        ["another identity's session (its key and its id)", (mode) => by(mode, { seed: theirs.seed, sessionId: theirs.sessionId })],
        ["the owner's session id signed by another identity's session key", (mode) => by(mode, { seed: theirs.seed, sessionId: mine.sessionId })],
        ["another identity's session id signed by the owner's session key", (mode) => by(mode, { seed: mine.seed, sessionId: theirs.sessionId })],
        ['a revoked session', (mode) => by(mode, { seed: revoked.seed, sessionId: revoked.sessionId })],
        ['a stranger (no authentication)', () => ({ mode: 'none' })],
      ];
      const attempts = INBOX_OPS.flatMap((op) => MODES.flatMap((mode) => refused.map(([who, auth]) => ({ op, mode, who, auth: auth(mode) }))));
      // The allowed calls forget nothing (cursor reads, a consume of nothing): they run beside the refused ones.
      const [answers] = await Promise.all([
        pooled(
          attempts.map((x) => () => destructive(s, x.op, a, x.auth, cursor)),
          12,
        ),
        allowed(s, e, a, mine),
      ]);
      attempts.forEach((x, i) => e.that(answers[i]!.status === 401, `${x.op} by ${x.mode}, ${x.who}: ${answers[i]!.text}, not 401`));
      await expectDrained(s, e, a, String(m.id));
    },
  });
}

/** The owner and its session on every inbox operation and mode: each succeeds. */
async function allowed(s: Session, e: Expect, a: RelayIdentity, mine: Sess): Promise<void> {
  const calls = INBOX_OPS.flatMap((op) =>
    MODES.flatMap((mode) => [
      { op, mode, who: 'the owner', auth: by(mode) },
      { op, mode, who: "the owner's session", auth: by(mode, { seed: mine.seed, sessionId: mine.sessionId }) },
    ]),
  );
  const answers = await pooled(calls.map((x) => () => inboxCall(s, x.op, a, x.auth)));
  calls.forEach((x, i) => e.that(ok(answers[i]!), `${x.op} by ${x.mode}, ${x.who}: ${answers[i]!.text}, not a success`));
}

/** A drain by the owner hands the waiting message over: no refused call forgot it. */
async function expectDrained(s: Session, e: Expect, a: RelayIdentity, id: string): Promise<void> {
  const p = pickupOf(await s.relay.pickup(a, { mode: 'signed-request' }));
  e.that(
    typeof p !== 'string' && p.messages.some((x) => x.id === id),
    `after the refused calls the owner's drain lacks the waiting message ${id}: ${typeof p === 'string' ? p : JSON.stringify(p.messages.map((x) => x.id))}`,
  );
}

/**
 * Envelopes: a message or ack signed by its sender's key, its session (by id) or a session proof is
 * accepted; one signed by another identity's key, another identity's session, the sender's session
 * id with another key, a revoked session, or unsigned, is refused and never delivered.
 */
function whoEnvelopesCheck(t: RelayTarget): Check {
  const ops = ['postMessage', 'postAck'];
  return relayCheck(t, {
    id: 'relay/matrix/who-envelopes',
    title:
      "messages and acks signed by the sender's key, its session or a session proof are accepted; by another identity's key or session, the sender's session id with another key, a revoked session, or unsigned: refused 401 and never delivered",
    rules: ['ra.messages.signature', 'ra.messages.session-expired', 'ra.messages.session-proof', 'ra.acks.signature'],
    cells: [
      ...cells('ra.messages.signature', 'who', ['owner', 'own-session', 'own-session-proof', 'other-identity', 'other-identity-session', 'revoked-session', 'stranger'], ['postMessage']),
      ...cells('ra.acks.signature', 'who', ['owner', 'own-session', 'own-session-proof', 'other-identity', 'other-identity-session', 'revoked-session', 'stranger'], ['postAck']),
      ...cells('ra.messages.session-expired', 'binding', ['session-id', 'key'], ops),
    ],
    run: async (s, e) => {
      const [a, b, c] = await Promise.all([s.identity(), s.identity(), s.identity()]);
      const [mine, theirs, revoked] = await Promise.all([session(s, a), session(s, c), revokedSession(s, a)]);
      const proofKey = randomSeed();
      const proof = { seed: proofKey, proof: sessionProof(s.profile, a, proofKey) };
      const signers: Array<[string, boolean, { seed?: Uint8Array; session?: { seed: Uint8Array; sessionId?: string; proof?: Record<string, string> } }]> = [
        ["the sender's key", true, {}],
        ["the sender's session", true, { session: mine }],
        ["a session proof of the sender's", true, { session: proof }],
        ["another identity's key", false, { seed: c.seed }],
        ["another identity's session (its key and its id)", false, { session: theirs }],
        ["the sender's session id signed by another identity's session key", false, { session: { seed: theirs.seed, sessionId: mine.sessionId } }],
        ['a revoked session', false, { session: revoked }],
        ['no signature', false, {}],
      ];
      const sent = signers.flatMap(([who, accept, how], i) => {
        const signedBy = (env: Record<string, unknown>) => (how.seed ? signEnvelope(s.profile, env.type === 'ack' ? 'ack' : 'message', env, how.seed) : env);
        const m = signedBy(mail(s, a, b, `who ${i}`, how.session ? { session: how.session } : {}));
        const k = signedBy(ack(s.profile, a, b.identity, `m_who_${i}`, how.session ? { session: how.session } : {}));
        const strip = (env: Record<string, unknown>) => (who === 'no signature' ? Object.fromEntries(Object.entries(env).filter(([f]) => f !== 'signature')) : env);
        return [
          { kind: 'message' as const, who, accept, env: strip(m) },
          { kind: 'ack' as const, who, accept, env: strip(k) },
        ];
      });
      const answers = await pooled(sent.map((x) => () => (x.kind === 'message' ? s.relay.send(x.env) : s.relay.ack(x.env))));
      sent.forEach((x, i) => {
        const r = answers[i]!;
        if (x.accept) e.that(r.status === 202, `${x.kind === 'ack' ? 'an' : 'a'} ${x.kind} signed by ${x.who}: ${said(r)}, not 202`);
        else if (x.who === 'no signature') e.that(r.status === 400 || r.status === 401, `${x.kind === 'ack' ? 'an' : 'a'} ${x.kind} with no signature: ${said(r)}, not refused 400 or 401`);
        else e.that(r.status === 401, `${x.kind === 'ack' ? 'an' : 'a'} ${x.kind} signed by ${x.who}: ${said(r)}, not 401`);
      });
      const p = pickupOf(await s.relay.pickup(b, { mode: 'signed-request' }));
      if (typeof p === 'string') return e.fail(p);
      const expected = new Set(sent.filter((x, i) => x.accept && answers[i]!.status === 202).map((x) => String(x.env.id)));
      const got = [...p.messages, ...p.acks].map((x) => String(x.id));
      for (const id of got) e.that(expected.has(id), `the recipient received ${id}, an envelope that was refused (or never accepted)`);
      for (const id of expected) e.that(got.includes(id), `the recipient lacks ${id}, an envelope answered 202`);
    },
  });
}

/**
 * The owner's admin calls: registering a session, revoking one and exporting. The owner's identity
 * key is accepted; another identity's key, a session key of the owner's (the calls are
 * identity-signed), and no envelope are refused, and a refused revocation leaves the session live.
 */
function whoAdminCheck(t: RelayTarget): Check {
  const refusedPrincipals = ['other-identity', 'own-session', 'stranger'];
  return relayCheck(t, {
    id: 'relay/matrix/who-admin',
    title: "POST /sessions, DELETE /sessions/:id and export: the identity's key is accepted; another identity's key, the owner's session key and no envelope are refused, and change nothing",
    rules: ['ra.sessions.register', 'ra.sessions.revoke', 'ra.identities.export'],
    cells: [
      ...cells('ra.sessions.register', 'who', ['owner', ...refusedPrincipals], ['registerSession']),
      ...cells('ra.sessions.revoke', 'who', ['owner', ...refusedPrincipals, 'other-identity-as-itself'], ['revokeSession']),
      ...cells('ra.identities.export', 'who', ['owner', ...refusedPrincipals], ['export']),
    ],
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const live = await session(s, a);
      const keys: Array<[string, Uint8Array | undefined]> = [
        ["another identity's key", b.seed],
        ["the owner's session key", live.seed],
        ['no envelope', undefined],
      ];
      const tasks = keys.flatMap(([who, seed]) => [
        async () => {
          // Signed by `seed` on a's behalf, or with no envelope at all.
          const { issued_at, nonce, identity_signature, ...bare } = sessionRegistration(s.profile, { ...a, seed: seed ?? a.seed }, randomSeed());
          const body = seed ? { ...bare, issued_at, nonce, identity_signature } : bare;
          const r = await s.relay.post('/sessions', body);
          e.that(r.status >= 400 && r.status < 500 && !/sess_/.test(r.text()), `POST /sessions for ${a.identity} signed by ${who}: ${said(r)}, not refused`);
        },
        async () => {
          const body = { identity: a.identity, ...(seed ? adminEnvelope(s.profile, 'session-revocation', { identity: a.identity, session_id: live.sessionId }, seed) : {}) };
          const r = await s.relay.post(`/sessions/${encodeURIComponent(live.sessionId)}`, body, {}, 'DELETE');
          e.that(r.status >= 400 && r.status < 500, `DELETE /sessions/:id of ${a.identity}'s session signed by ${who}: ${said(r)}, not refused`);
        },
        async () => {
          const body = { identity: a.identity, ...(seed ? adminEnvelope(s.profile, 'identity-export', { identity: a.identity }, seed) : {}) };
          const r = await s.relay.post(`/identities/${encodeURIComponent(a.identity)}/export`, body);
          e.that(r.status >= 400 && r.status < 500, `export of ${a.identity} signed by ${who}: ${r.status} ${r.headers['content-type'] ?? ''}, not refused`);
        },
      ]);
      tasks.push(async () => {
        const r = await s.relay.revokeSession(b, live.sessionId);
        e.that(r.status === 401, `another identity revoking ${a.identity}'s session with its own key: ${said(r)}, not 401`);
      });
      await pooled(tasks);
      const still = await s.relay.pickup(a, { mode: 'signed-request', seed: live.seed, sessionId: live.sessionId }, '0');
      e.that(still.status === 200, `after the refused revocations ${a.identity}'s session no longer opens a pickup: ${said(still)}`);
      const reg = await s.relay.registerSession(a, randomSeed());
      e.that(reg.status === 201, `POST /sessions signed by the identity's key: ${said(reg)}, not 201`);
      const exp = await s.relay.post(`/identities/${encodeURIComponent(a.identity)}/export`, {
        identity: a.identity,
        ...adminEnvelope(s.profile, 'identity-export', { identity: a.identity }, a.seed),
      });
      e.that(exp.status === 200, `export signed by the identity's key: ${exp.status}, not 200`);
      const rev = await s.relay.revokeSession(a, live.sessionId);
      e.that(rev.status === 204, `DELETE /sessions/:id signed by the identity's key: ${said(rev)}, not 204`);
    },
  });
}

export function matrixWhoChecks(t: RelayTarget): Check[] {
  return [whoInboxCheck(t), whoEnvelopesCheck(t), whoAdminCheck(t)];
}
