// Property checks over the wire (fast-check through harness/run/property.ts: --seed, --runs and
// --replay apply). Valid requests with random options, signed by random fresh identities with the
// identity key or a session key, delivered bare or as an object, same or cross device, complete;
// random single changes to an approval are refused without completing, and the genuine approval
// completes afterwards (bad input loses nothing).
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { Check } from '../../../run/model.ts';
import type { PropertyVerdict } from '../../../run/property.ts';
import { encodeBase64url } from '../../../../protocol/common/base64.ts';
import { vocabulary } from '../../../../schemas/ts/vocabulary.ts';
import { limits } from '../../../../schemas/ts/limits.ts';
import { rpProperty } from '../check.ts';
import { Session, said, sessionFor, sign, type RpTarget } from '../driver.ts';
import { nonCanonicalS } from './verification/index.ts';

const statement = fc.oneof(
  fc.constant(undefined),
  fc.stringMatching(/^[A-Za-z0-9 .,!?'-]{1,80}$/),
  fc.string({ unit: 'grapheme', maxLength: 60 }).filter((x) => x.length > 0 && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(x) && Buffer.byteLength(x) <= limits.statement_max_bytes),
);

const validLogin = fc.record({
  action: fc.constantFrom(...vocabulary.actions.values),
  scopes: fc.subarray([...vocabulary.scopes.values]),
  statement,
  key: fc.constantFrom('identity', 'session'),
  form: fc.constantFrom('bare', 'object'),
  device: fc.constantFrom('same', 'cross'),
});

type ValidLogin = typeof validLogin extends fc.Arbitrary<infer T> ? T : never;

// Single changes to an approval: field -> candidate values (functions of the approval).
type Mutator = (a: Record<string, unknown>, auth: string) => Record<string, unknown>;
const set =
  (field: string, value: unknown): Mutator =>
  (a) => ({ ...a, [field]: value });
const drop =
  (field: string): Mutator =>
  (a) => {
    const out = { ...a };
    delete out[field];
    return out;
  };
const MUTATORS: Record<string, Mutator[]> = {
  auth: [(a, auth) => ({ ...a, [auth]: '2' }), (a, auth) => ({ ...a, [auth]: 1 }), (a, auth) => ({ ...a, [auth]: null })],
  request_id: [set('request_id', 'x'), set('request_id', ''), set('request_id', 7), drop('request_id')],
  identity: [set('identity', 'mallory.example.org'), set('identity', 'nodots'), set('identity', ''), drop('identity')],
  audience: [set('audience', 'https://evil.example'), set('audience', 'not a url'), set('audience', '')],
  nonce: [set('nonce', encodeBase64url(randomBytes(16))), set('nonce', ''), drop('nonce')],
  issued_at: [set('issued_at', '2026-01-15T09:29:59Z'), set('issued_at', 'yesterday'), set('issued_at', '')],
  expires_at: [set('expires_at', '2099-01-16T09:31:00Z'), set('expires_at', '2026-01-15 09:31:00'), set('expires_at', '2000-01-01T00:00:00Z')],
  action: [(a) => ({ ...a, action: a.action === 'link' ? 'signin' : 'link' }), set('action', 'delete'), set('action', null)],
  statement: [set('statement', 'edited'), set('statement', 'line\nbreak'), set('statement', 'x'.repeat(limits.statement_max_bytes + 1))],
  scopes: [
    (a) => ({ ...a, scopes: Array.isArray(a.scopes) && a.scopes.length > 0 ? [] : [vocabulary.scopes.values[0]] }),
    set('scopes', [...vocabulary.scopes.values].sort().reverse()),
    set('scopes', ['dav:rw:apps']),
    set('scopes', 'profile:read'),
  ],
  key_id: [set('key_id', 'session:abc'), set('key_id', 'other'), set('key_id', '')],
  signature: [set('signature', 'AAAA'), set('signature', 'not base64!'), (a) => ({ ...a, signature: nonCanonicalS(a.signature as string) }), drop('signature')],
  session_proof: [(a) => ({ ...a, session_proof: { session_public_key: 'x', issued_at: 'y', expires_at: 'z', nonce: 'n', identity_signature: 's' } })],
};

export function propertyChecks(target: RpTarget): Check[] {
  const profile = target.profile;
  const valid = rpProperty<ValidLogin>({
    id: 'rp/property/valid-logins',
    // Its own lane: fresh transactions and identities only, so it overlaps the suite's other checks
    // (sharing the cores with them, so it gets more than the default 30 s).
    lane: 'rp/property/valid-logins',
    timeoutMs: 120_000,
    title: 'valid requests (random action, scopes, statement) signed by random fresh identities, by identity or session key, bare or object, same or cross device, complete',
    rules: ['ns.auth.2', 'ns.transaction.same-device', 'ns.transaction.cross-device', 'ns.delivery.body', 'ns.canonical.lines', 'ns.canonical.scopes-joined', 'ns.canonical.statement-empty'],
    context: ['ns.start.contract', 'ns.start.options', 'ns.transport.poll-shape', 'ns.auth.2.same-scope-window'],
    arbitrary: validLogin,
    predicate: async (v, ctx): Promise<PropertyVerdict> => {
      const s = new Session(target, ctx.signal);
      try {
        const options: { action: string; scopes: string[]; statement?: string } = { action: v.action, scopes: v.scopes };
        if (v.statement !== undefined) options.statement = v.statement;
        const t = await s.startWith(options);
        const who = await s.identity();
        const approval = sign(profile, t.request, who, v.key === 'session' ? sessionFor(profile, who) : undefined);
        const done = v.device === 'cross' ? await s.completeCrossDevice(t, approval) : await s.completeSameDevice(t, approval, { form: v.form });
        if (!done.ok) return { ok: false, detail: done.problem ?? 'did not complete', evidence: s.evidence() };
        if (done.identity !== undefined && done.identity !== who.identity) return { ok: false, detail: `completed as ${done.identity}, expected ${who.identity}`, evidence: s.evidence() };
        return true;
      } finally {
        await s.close();
      }
    },
  });

  const fields = Object.keys(MUTATORS);
  const mutation = rpProperty<[string, number, 'identity' | 'session', boolean]>({
    id: 'rp/property/single-mutation',
    lane: 'rp/property/single-mutation',
    timeoutMs: 120_000,
    title: 'any single change to a valid approval is refused without completing the login, and the genuine approval completes afterwards',
    // Every change breaks the signature (rule 7) if no earlier rule refuses it; refused, it spends no nonce.
    rules: ['ns.verify.1', 'ns.verify.2', 'ns.verify.3', 'ns.verify.4', 'ns.verify.7', 'ns.nonce.spend-on-success'],
    context: ['ns.start.contract', 'ns.transport.poll-shape', 'ns.auth.3', 'ns.delivery.request-binding'],
    arbitrary: fc.tuple(fc.constantFrom(...fields), fc.nat(), fc.constantFrom('identity' as const, 'session' as const), fc.boolean()),
    predicate: async ([field, pick, key, cross], ctx): Promise<PropertyVerdict> => {
      const s = new Session(target, ctx.signal);
      try {
        const t = await s.startWith({ scopes: [vocabulary.scopes.values[0]!], statement: 'Sign in to the conformance test' });
        const who = await s.identity();
        const genuine = sign(profile, t.request, who, key === 'session' ? sessionFor(profile, who) : undefined);
        const list = MUTATORS[field]!;
        const mutated = list[pick % list.length]!(genuine, profile.ids.auth_field);
        if (JSON.stringify(mutated) === JSON.stringify(genuine)) return true;
        const refused = await s.deliver(t.request, mutated, cross ? { match: t.matchCode } : {});
        if (refused.status < 400 || refused.status >= 500) return { ok: false, detail: `changing ${field} answered ${said(refused)}, expected a 4xx refusal`, evidence: s.evidence() };
        if (await s.completed(t)) return { ok: false, detail: `the login completed after changing ${field}`, evidence: s.evidence() };
        // A refused cross-device delivery may only be refused after the match code was checked, and
        // the match code has one attempt: the genuine one then goes same device (a fresh start if ended).
        let follow = t;
        if (cross && (await s.pollStatus(t.pollSecret)).status === 'ended') {
          follow = await s.startWith({ scopes: [vocabulary.scopes.values[0]!], statement: 'Sign in to the conformance test' });
        }
        const again = follow === t ? genuine : sign(profile, follow.request, who);
        const done = cross && follow === t ? await s.completeCrossDevice(t, again) : await s.completeSameDevice(follow, again);
        if (!done.ok) return { ok: false, detail: `after the refused change to ${field}, the genuine approval did not complete: ${done.problem}`, evidence: s.evidence() };
        return true;
      } finally {
        await s.close();
      }
    },
  });
  return [valid, mutation];
}
