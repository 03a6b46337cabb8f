// The `binding` facets of the relay's core (spec/facets/relay-core.yaml): every part a credential
// is bound to, swapped alone for another valid one. A signed request binds the identity, the
// session id, the key, the method, the path, the query, the body's hash, the timestamp and the
// nonce: on every operation spec/http/relay.openapi.yaml opens with a signed request, the request
// as signed succeeds and each swap is refused. A rotation binds the old key's signature and a new
// document signed by the new key that lists the old one: each swapped is refused and the identity
// keeps its key.
import type { Cell, Check } from '../../../run/model.ts';
import type { RuleId } from '../../../../schemas/ts/rules.ts';
import { ack, b64, challengeHeaders, newNonce, now, signingKey, type Envelope, type RelayIdentity } from '../../../actors/relay/index.ts';
import { mail } from './messaging.ts';
import { canonicalString } from '../../../../protocol/common/canonical.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { signDocument } from '../../../../protocol/common/document.ts';
import { publicKey, sign } from '../../../impl/noble.ts';
import { relayCheck } from '../check.ts';
import { CheckFailure, CheckSkip, isObject, pickupOf, safeJson, said, type RelayTarget, type Session } from '../driver.ts';
import { inboxCall, INBOX_OPS, pooled, randomSeed, refused4xx, session, signedCall, signedOperations, type Answer, type RequestParts, type SignedOp } from './matrix-ops.ts';

export const SIGNED_PARTS = ['identity', 'identity-header', 'session-id', 'key', 'method', 'path', 'query', 'body', 'timestamp', 'nonce'] as const;
type Part = (typeof SIGNED_PARTS)[number];

const SYSTEM_PATH = 'public/profile.json';
const profileDoc = (name: string) => JSON.stringify({ version: 1, display_name: name });

/** A signed operation made concrete for identity `a`: its path and a valid body, and what the body is when swapped. */
export interface Concrete {
  op: SignedOp;
  path: (who: RelayIdentity) => string;
  body: string;
  otherBody: string;
}

/** Fills each signed operation's parameters for `a`; an operation with a parameter this table cannot fill is left out. */
export async function concrete(s: Session, a: RelayIdentity): Promise<{ ops: Concrete[]; left: string[] }> {
  const device = await deviceOf(s, a);
  const bodies: Record<string, [string, string]> = {
    consume: [JSON.stringify({ through: '0', ack_through: '0' }), JSON.stringify({ through: '1', ack_through: '1' })],
    revokeDevice: [JSON.stringify({ device_id: device }), JSON.stringify({ device_id: `${device}0` })],
    systemPut: [profileDoc('Matrix'), profileDoc('Swapped')],
  };
  const ops: Concrete[] = [];
  const left: string[] = [];
  for (const op of signedOperations()) {
    const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    if (params.some((p) => p !== 'identity' && p !== 'path')) {
      left.push(op.id);
      continue;
    }
    const [body, otherBody] = bodies[op.id] ?? ['', '{}'];
    ops.push({ op, path: (who) => op.path.replace('{identity}', encodeURIComponent(who.identity)).replace('{path}', SYSTEM_PATH), body, otherBody });
  }
  return { ops, left };
}

/** The operations in an order where each finds what it needs: the system document written first, deleted last. */
export const inOrder = (ops: Concrete[]): Concrete[] => {
  const rank = (c: Concrete) => (c.op.id === 'systemPut' ? 0 : c.op.id === 'systemDelete' ? 2 : 1);
  return [...ops].sort((x, y) => rank(x) - rank(y));
};

/** The request each operation sends for `a`, as signed (a fresh nonce, now or `timestamp`). */
export const asSigned = (a: RelayIdentity, c: Concrete, o: Partial<RequestParts> = {}): RequestParts => ({
  identity: a.identity,
  seed: a.seed,
  method: c.op.method,
  path: c.path(a),
  body: c.body,
  timestamp: Math.floor(Date.now() / 1000),
  nonce: newNonce(18),
  ...o,
});

/** A device row of `a`'s: a session registered with X-Svc-Device fills one; its id as GET /devices lists it. */
async function deviceOf(s: Session, a: RelayIdentity): Promise<string> {
  await session(s, a, 3600, { [s.profile.ids.header_device.toLowerCase()]: `matrix-${newNonce(6)}` });
  const r = await s.relay.get(`/devices/${encodeURIComponent(a.identity)}`, await s.relay.authHeaders(a, 'GET', `/devices/${encodeURIComponent(a.identity)}`, { mode: 'signed-request' }));
  const b = safeJson(r);
  const rows = isObject(b) ? Object.values(b).find(Array.isArray) : undefined;
  const first = Array.isArray(rows) ? rows.find((x) => isObject(x) && typeof x.id === 'string') : undefined;
  return isObject(first) ? String(first.id) : 'dev_none';
}

function signedRequestBindingCheck(t: RelayTarget): Check {
  const ops = signedOperations().map((o) => o.id);
  const cells: Array<Cell & { rule: RuleId }> = SIGNED_PARTS.flatMap((value) => ops.map((operation) => ({ rule: 'ra.signed-request' as const, facet: 'binding', value, operation })));
  return relayCheck(t, {
    id: 'relay/matrix/binding-signed-request',
    title:
      'on every operation the relay OpenAPI opens with a signed request: the request as signed succeeds; its identity, X-Svc-Identity alone, session id, key, method, path, query, body, timestamp or nonce swapped alone for another valid one is refused',
    rules: ['ra.signed-request'],
    // A few hundred requests on the check's own identity: in a lane of its own, beside the suite's other checks.
    lane: 'relay/matrix/signed',
    cells,
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const [s1, s2] = await Promise.all([session(s, a), session(s, a)]);
      const { ops, left } = await concrete(s, a);
      if (ops.length === 0) throw new CheckSkip('no signed operation of the OpenAPI file has parameters this check can fill');
      if (left.length > 0) s.note(`left out (parameters this check cannot fill): ${left.join(', ')}`);
      const ts = () => Math.floor(Date.now() / 1000);
      const parts = (c: Concrete, o: Partial<RequestParts> = {}): RequestParts => ({
        identity: a.identity,
        seed: a.seed,
        method: c.op.method,
        path: c.path(a),
        body: c.body,
        timestamp: ts(),
        nonce: newNonce(18),
        ...o,
      });
      // The system file exists before any cell, and is deleted only after them all: a swapped read, write or delete let through shows.
      const order = (c: Concrete) => (c.op.id === 'systemPut' ? 0 : c.op.id === 'systemDelete' ? 2 : 1);
      const controls = [...ops].sort((x, y) => order(x) - order(y));
      const first = controls.filter((c) => order(c) < 2);
      const control = new Map<string, Answer>();
      for (const c of first) {
        const p = parts(c);
        control.set(c.op.id, await signedCall(s, p, p));
      }
      const swaps = (c: Concrete): Array<[Part, RequestParts, RequestParts]> => {
        const base = parts(c);
        const other = c.op.method === 'GET' ? 'POST' : 'GET';
        const q = parts(c);
        // Another identity's request for this one's resource, signed and sent as its own.
        const theirs = parts(c, { identity: b.identity, seed: b.seed });
        return [
          ['identity', theirs, theirs],
          // This identity's own request, as signed, with X-Svc-Identity naming another.
          ['identity-header', base, { ...base, identity: b.identity }],
          ['session-id', { ...base, seed: s1.seed, sessionId: s1.sessionId }, { ...base, seed: s1.seed, sessionId: s2.sessionId }],
          ['key', { ...base, seed: b.seed }, base],
          ['method', { ...base, method: other }, base],
          ['path', { ...base, path: c.path(b) }, base],
          ['query', q, { ...q, path: `${q.path}?${c.op.id === 'pickup' ? 'since=0' : 'matrix=1'}` }],
          ['body', { ...base, body: c.otherBody }, base],
          ['timestamp', base, { ...base, timestamp: base.timestamp - 1 }],
          ['nonce', base, { ...base, nonce: newNonce(18) }],
        ];
      };
      const cellsToRun = ops.flatMap((c) => swaps(c).map(([part, signed, sent]) => ({ c, part, signed, sent })));
      const answers = await pooled(
        cellsToRun.map((x) => () => signedCall(s, x.signed, x.sent)),
        16,
      );
      cellsToRun.forEach((x, i) => {
        const r = answers[i]!;
        const inbox = (INBOX_OPS as readonly string[]).includes(x.c.op.id);
        e.that(inbox ? r.status === 401 : refused4xx(r), `${x.c.op.id} (${x.c.op.method} ${x.c.op.path}) with its ${x.part} swapped: ${r.text}, not ${inbox ? '401' : 'refused'}`);
      });
      for (const c of controls.filter((c) => order(c) === 2)) {
        const p = parts(c);
        control.set(c.op.id, await signedCall(s, p, p));
      }
      for (const c of ops) {
        const r = control.get(c.op.id)!;
        e.that(r.status >= 200 && r.status < 300, `${c.op.id} (${c.op.method} ${c.op.path}) as signed: ${r.text}, not a success`);
      }
    },
  });
}

const ROTATION_PARTS = ['rotation-key', 'document-key', 'document-identity', 'document-public-key', 'previous-keys'] as const;

function rotationBindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/binding-rotation',
    title:
      'a rotation whose old-key signature is by another key, whose new document is signed by another key than the new one, names another identity or key, or lists no previous key, is refused and the identity keeps its key; the rotation as bound is applied',
    rules: ['ra.identities.rotate'],
    context: ['ra.signing.identity-rotation'],
    cells: ROTATION_PARTS.map((value) => ({ rule: 'ra.identities.rotate' as const, facet: 'binding', value, operation: 'rotate' })),
    run: async (s, e) => {
      const [a, c] = await Promise.all([s.identity(), s.identity()]);
      if ((await s.facts()).relay.hostedDomains.length === 0) throw new CheckSkip('the relay hosts no domain: rotation of a hosted identity is not checked');
      const relay = (await s.facts()).relay.relayAddress;
      const newSeed = randomSeed();
      const oldKey = signingKey(a);
      const newKey = encodeBase64url(publicKey(newSeed));
      const fields = (o: Record<string, unknown> = {}) => ({
        version: 1,
        identity: a.identity,
        public_key: newKey,
        encryption_public_key: encodeBase64url(a.encryption.publicKey),
        relay,
        previous_keys: [{ public_key: oldKey, valid_until: now(3600) }],
        updated_at: now(),
        ...o,
      });
      const body = (o: { doc?: Record<string, unknown>; rotationSeed?: Uint8Array } = {}) => {
        const issued_at = now();
        const nonce = newNonce();
        const lines = canonicalString(s.profile, 'identity-rotation', { identity: a.identity, old_public_key: oldKey, new_public_key: newKey, issued_at, nonce });
        return { identity_document: o.doc ?? signDocument(fields(), newSeed), new_public_key: newKey, rotation_signature: b64(sign(o.rotationSeed ?? a.seed, lines)), issued_at, nonce };
      };
      const { previous_keys: _p, ...withoutPrevious } = fields();
      void _p;
      const swapped: Array<[string, (typeof ROTATION_PARTS)[number], Record<string, unknown>]> = [
        ['the rotation signed by the new key', 'rotation-key', body({ rotationSeed: newSeed })],
        ["the rotation signed by another identity's key", 'rotation-key', body({ rotationSeed: c.seed })],
        ['the new document signed by the old key', 'document-key', body({ doc: signDocument(fields(), a.seed) })],
        ["the new document signed by another identity's key", 'document-key', body({ doc: signDocument(fields({ public_key: signingKey(c) }), c.seed) })],
        ['the new document naming another identity', 'document-identity', body({ doc: signDocument(fields({ identity: c.identity }), newSeed) })],
        ['the new document carrying another key than new_public_key', 'document-public-key', body({ doc: signDocument(fields({ public_key: signingKey(c) }), c.seed) })],
        ['the new document listing no previous key', 'previous-keys', body({ doc: signDocument(withoutPrevious, newSeed) })],
      ];
      const path = `/identities/${encodeURIComponent(a.identity)}/rotate`;
      const answers = await pooled(
        swapped.map(
          ([, , b]) =>
            () =>
              s.relay.post(path, b),
        ),
      );
      swapped.forEach(([what], i) => e.that(answers[i]!.status >= 400 && answers[i]!.status < 500, `${what}: ${said(answers[i]!)}, not refused`));
      const keyNow = async () => {
        const g = safeJson(await s.relay.get(`/identities/${encodeURIComponent(a.identity)}`));
        return isObject(g) ? String(g.public_key).replace(/=+$/, '') : '?';
      };
      const kept = await keyNow();
      e.that(kept === oldKey, `after the refused rotations ${a.identity} is served with key ${kept}, not its own ${oldKey}`);
      const good = await s.relay.post(path, body());
      e.that(good.status >= 200 && good.status < 300, `the rotation as bound: ${said(good)}, not a success`);
      const rotated = await keyNow();
      e.that(rotated === newKey, `after the rotation ${a.identity} is served with key ${rotated}, not the new ${newKey}`);
      const byNewKey = await s.relay.pickup(a, { mode: 'signed-request', seed: newSeed }, '0');
      e.that(byNewKey.status === 200, `a pickup signed by the new key after the rotation: ${said(byNewKey)}, not 200`);
    },
  });
}

const CHALLENGE_PARTS = ['challenge', 'identity', 'key'] as const;

/**
 * A challenge answer binds the challenge (issued by GET /auth/challenge for this identity), the
 * identity and its key: another identity's challenge, a challenge never issued, another identity
 * answering its own challenge on this one's inbox, and this one's challenge signed by another key
 * are refused 401; this identity's own answer succeeds.
 */
function challengeBindingCheck(t: RelayTarget): Check {
  return relayCheck(t, {
    id: 'relay/matrix/binding-challenge',
    title:
      "pickup, consume and events by challenge: the owner's own answer succeeds; another identity's challenge, a challenge never issued, another identity answering its own, and the owner's challenge signed by another key are refused 401",
    rules: ['ra.pickup.auth'],
    cells: CHALLENGE_PARTS.flatMap((value) => INBOX_OPS.map((operation) => ({ rule: 'ra.pickup.auth' as const, facet: 'binding', value, operation }))),
    run: async (s, e) => {
      const [a, b] = await Promise.all([s.identity(), s.identity()]);
      const issue = async (id: RelayIdentity) => {
        const r = await s.relay.challenge(id.identity);
        const body = safeJson(r);
        if (r.status !== 200 || !isObject(body) || typeof body.challenge !== 'string') throw new CheckFailure(`GET /auth/challenge answered ${said(r)}`);
        return body.challenge;
      };
      const cases: Array<[string, (typeof CHALLENGE_PARTS)[number] | 'control', () => Promise<Record<string, string>>]> = [
        ["the owner's own challenge, signed by its key", 'control', async () => challengeHeaders(s.profile, a.identity, await issue(a), a.seed)],
        ["another identity's challenge, signed by the owner's key", 'challenge', async () => challengeHeaders(s.profile, a.identity, await issue(b), a.seed)],
        ["a challenge never issued, signed by the owner's key", 'challenge', async () => challengeHeaders(s.profile, a.identity, `never-issued-${newNonce(24)}`, a.seed)],
        ['another identity answering its own challenge as itself', 'identity', async () => challengeHeaders(s.profile, b.identity, await issue(b), b.seed)],
        ["the owner's challenge signed by another identity's key", 'key', async () => challengeHeaders(s.profile, a.identity, await issue(a), b.seed)],
      ];
      const calls = INBOX_OPS.flatMap((op) => cases.map(([what, part, headers]) => ({ op, what, part, headers })));
      const answers = await pooled(calls.map((x) => async () => inboxCall(s, x.op, a, { mode: 'headers', headers: await x.headers() })));
      calls.forEach((x, i) => {
        const r = answers[i]!;
        if (x.part === 'control') e.that(r.status >= 200 && r.status < 300, `${x.op}, ${x.what}: ${r.text}, not a success`);
        else e.that(r.status === 401, `${x.op}, ${x.what}: ${r.text}, not 401`);
      });
    },
  });
}

/**
 * An envelope's signature binds its fields: each swapped alone, after signing, for another valid
 * value (another id, another local recipient, another time, another sealed payload; for an ack
 * another message id) is refused 401 and never delivered. The lines signed are the interop set's
 * (ra.signing.message, ra.signing.ack); document 3 says the id is bound into them.
 */
function envelopeBindingCheck(t: RelayTarget): Check {
  const messageParts = ['id', 'recipient', 'timestamp', 'payload'] as const;
  const ackParts = ['id', 'message-id', 'recipient', 'timestamp'] as const;
  return relayCheck(t, {
    id: 'relay/matrix/binding-envelope',
    title: "a message's id, recipient, timestamp or payload, or an ack's id, message id, recipient or timestamp, swapped after signing for another valid one: refused 401 and never delivered",
    rules: ['ra.messages.signature', 'ra.acks.signature'],
    context: ['ra.signing.message', 'ra.signing.ack'],
    cells: [
      ...messageParts.map((value) => ({ rule: 'ra.messages.signature' as const, facet: 'binding', value, operation: 'postMessage' })),
      ...ackParts.map((value) => ({ rule: 'ra.acks.signature' as const, facet: 'binding', value, operation: 'postAck' })),
    ],
    run: async (s, e) => {
      const [a, b, c] = await Promise.all([s.identity(), s.identity(), s.identity()]);
      const m = mail(s, a, b, 'as signed');
      const other = mail(s, a, b, 'another payload');
      // A second after each envelope's own timestamp (the ack may be made a second after the message).
      const later = (env: Envelope) => new Date(Date.parse(String(env.timestamp)) + 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const k = ack(s.profile, a, b.identity, 'm_acked');
      const swapped: Array<[string, 'message' | 'ack', Envelope]> = [
        ['a message with another id', 'message', { ...m, id: `${String(m.id)}x` }],
        ['a message to another local recipient', 'message', { ...m, recipient: c.identity }],
        ['a message with another timestamp', 'message', { ...m, timestamp: later(m) }],
        ['a message with another sealed payload', 'message', { ...m, payload: other.payload, encryption: other.encryption }],
        ['an ack with another id', 'ack', { ...k, id: `${String(k.id)}x` }],
        ['an ack of another message', 'ack', { ...k, message_id: 'm_other' }],
        ['an ack to another local recipient', 'ack', { ...k, recipient: c.identity }],
        ['an ack with another timestamp', 'ack', { ...k, timestamp: later(k) }],
      ];
      // The genuine envelopes first: a relay that remembers a verified signature must still bind it to every field.
      const genuine = await Promise.all([s.relay.send(m), s.relay.ack(k)]);
      e.that(genuine[0].status === 202 && genuine[1].status === 202, `the envelopes as signed: ${genuine.map(said).join('; ')}, not 202`);
      const answers = await pooled(
        swapped.map(
          ([, kind, env]) =>
            () =>
              kind === 'message' ? s.relay.send(env) : s.relay.ack(env),
        ),
      );
      swapped.forEach(([what], i) => e.that(answers[i]!.status === 401, `${what} than signed: ${said(answers[i]!)}, not 401`));
      const expected = new Set([String(m.id), String(k.id)]);
      for (const who of [b, c]) {
        const p = pickupOf(await s.relay.pickup(who, { mode: 'signed-request' }));
        if (typeof p === 'string') return e.fail(p);
        const altered = [...p.messages, ...p.acks].filter((x) => who === c || !expected.has(String(x.id)) || JSON.stringify(x) !== JSON.stringify(x.id === m.id ? m : k));
        e.that(altered.length === 0, `${who.identity} received envelopes altered after signing: ${JSON.stringify(altered.map((x) => x.id))}`);
      }
    },
  });
}

export function matrixBindingChecks(t: RelayTarget): Check[] {
  return [signedRequestBindingCheck(t), rotationBindingCheck(t), challengeBindingCheck(t), envelopeBindingCheck(t)];
}
