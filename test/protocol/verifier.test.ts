// The native verifier, rule by rule: each rejection names its rule, the order is cheapest first,
// and the nonce cache is atomic and fails closed.
import { describe, expect, it, vi } from 'vitest';
import { createVerifier } from '../../protocol/signin/verifier.ts';
import { MemoryNonceStore, type NonceStore } from '../../protocol/signin/nonce.ts';
import { StaticResolver, ResolutionError, type Resolver } from '../../protocol/signin/resolver.ts';
import { signApproval, makeSessionProof } from '../../protocol/signin/signer.ts';
import { publicKeyFromSeed } from '../../protocol/common/ed25519.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';

const NOW = Date.parse('2026-01-15T09:30:00Z');
const ORIGIN = 'https://rp.example.com';
const seed = new Uint8Array(32).fill(1);
const identity = 'alice.example.com';
const request = {
  svc_auth: '1',
  request_id: 'req_1',
  audience: ORIGIN,
  nonce: 'bm9uY2Utbm9uY2Utbm9uY2U',
  issued_at: '2026-01-15T09:29:00Z',
  expires_at: '2026-01-15T09:31:00Z',
  action: 'signin',
  statement: 'Sign in to the test RP',
  scopes: ['profile:read', 'messages:send'],
};

function setup(overrides: { nonces?: NonceStore; resolver?: Resolver } = {}) {
  const resolver = overrides.resolver ?? new StaticResolver().set(identity, publicKeyFromSeed(seed));
  const nonces = overrides.nonces ?? new MemoryNonceStore(() => NOW);
  return createVerifier({ profile, origin: ORIGIN, resolver, nonces, now: () => NOW });
}

const approval = (over: Record<string, unknown> = {}) => signApproval(profile, { ...request, ...over }, { identity, seed });

describe('native verifier (document 1, Authentication 3)', () => {
  it('accepts a valid identity-signed approval, scopes normalized by the signer', async () => {
    const verdict = await setup()(approval());
    expect(verdict).toMatchObject({ ok: true, identity, delegated: false, scopes: ['messages:send', 'profile:read'] });
  });

  it('accepts a session-delegated approval and reports it', async () => {
    const sessionSeed = new Uint8Array(32).fill(2);
    const proof = makeSessionProof(profile, identity, seed, sessionSeed, { issued_at: '2026-01-15T08:00:00Z', expires_at: '2026-01-15T20:00:00Z', nonce: 'c2Vzcw' });
    const response = signApproval(profile, request, { identity, seed, session: { sessionId: 's1', seed: sessionSeed, proof } });
    expect(await setup()(response)).toMatchObject({ ok: true, delegated: true, keyId: 'session:s1' });
  });

  it.each([
    ['wrong version', { svc_auth: '2' }, 1, 'unsupported_version'],
    ['invalid identity', { identity: 'nodots' }, 1, 'invalid_identity'],
    ['another audience', { audience: 'https://evil.example' }, 2, 'audience_mismatch'],
    ['unknown action', { action: 'delete' }, 3, 'unknown_action'],
    ['statement over 300 bytes', { statement: 'é'.repeat(151) }, 3, 'invalid_statement'],
    ['C1 control character in statement', { statement: 'a\u0085b' }, 3, 'invalid_statement'],
    ['line separator in statement', { statement: 'a\u2028b' }, 3, 'invalid_statement'],
    ['missing audience (a required field)', { audience: undefined }, 1, 'missing_field'],
    ['missing key_id (a required field)', { key_id: '' }, 1, 'missing_field'],
    ['unsorted scopes', { scopes: ['profile:read', 'messages:send'] }, 3, 'scopes_not_canonical'],
    ['scope outside the namespace', { scopes: ['dav:rw:apps/x'] }, 3, 'scope_not_allowed'],
    ['window over 5 minutes', { expires_at: '2026-01-15T09:34:01Z' }, 4, 'window_too_long'],
    ['issued more than 2 minutes ahead', { issued_at: '2026-01-15T09:32:01Z', expires_at: '2026-01-15T09:33:00Z' }, 4, 'issued_in_future'],
    ['expired', { issued_at: '2026-01-15T09:20:00Z', expires_at: '2026-01-15T09:25:00Z' }, 4, 'expired'],
    ['not RFC 3339', { issued_at: '2026-01-15 09:29:00' }, 4, 'invalid_timestamp'],
    ['statement edited after signing', { statement: 'Transfer everything' }, 7, 'signature_invalid'],
  ])('%s is refused by rule %#', async (_name, change, rule, code) => {
    // Sign the original, then apply the change (a field change after signing), unless the
    // change is to the rule-1..4 shape, which must be refused whatever the signature.
    const response = { ...approval(), ...change };
    const verdict = await setup()(response);
    expect(verdict).toMatchObject({ ok: false, rule, ruleId: `ns.verify.${rule}`, code });
  });

  it('spends a nonce once (rule 5) and gives it back when a later rule fails', async () => {
    const verify = setup();
    const response = approval();
    expect((await verify({ ...response, signature: response.signature === 'x' ? 'y' : `${String(response.signature).slice(0, -2)}AA` })).ok).toBe(false);
    expect((await verify(response)).ok).toBe(true);
    expect(await verify(response)).toMatchObject({ ok: false, rule: 5, code: 'nonce_replayed' });
  });

  it('fails closed when the nonce cache cannot be reached', async () => {
    const down: NonceStore = {
      claim: async () => {
        throw new Error('connection refused');
      },
      release: async () => undefined,
    };
    expect(await setup({ nonces: down })(approval())).toMatchObject({ ok: false, rule: 5, code: 'nonce_cache_unavailable' });
  });

  it('costs no resolution for a replayed or misaddressed approval (cheapest first)', async () => {
    const resolve = vi.fn(async () => {
      throw new ResolutionError('unreachable', 'should not be asked');
    });
    const verify = setup({ resolver: { resolve } });
    await verify(approval({ audience: 'https://evil.example' }));
    expect(resolve).not.toHaveBeenCalled();
  });

  it('reports a resolution failure and a DNS/HTTPS key mismatch as rule 6', async () => {
    const mismatch: Resolver = {
      resolve: async () => {
        throw new ResolutionError('key_mismatch', 'DNS and HTTPS disagree');
      },
    };
    expect(await setup({ resolver: mismatch })(approval())).toMatchObject({ ok: false, rule: 6, code: 'key_mismatch' });
    expect(await setup({ resolver: new StaticResolver() })(approval())).toMatchObject({ ok: false, rule: 6, code: 'resolution_failed' });
  });

  it('refuses a session key_id without proof and a proof with key_id identity (rule 7)', async () => {
    const response = approval();
    expect(await setup()({ ...response, key_id: 'session:abc' })).toMatchObject({ ok: false, rule: 7, code: 'session_proof_mismatch' });
    expect(await setup()({ ...response, session_proof: { session_public_key: 'x' } })).toMatchObject({ ok: false, rule: 7, code: 'session_proof_mismatch' });
  });

  it('honours a previous key inside its grace window at issued_at, not after', async () => {
    const old = new Uint8Array(32).fill(9);
    const current = publicKeyFromSeed(new Uint8Array(32).fill(8));
    const grace = (until: string) => new StaticResolver().set(identity, current, [{ publicKey: publicKeyFromSeed(old), validUntil: Date.parse(until) }]);
    const signed = signApproval(profile, request, { identity, seed: old });
    expect((await setup({ resolver: grace('2026-01-15T09:29:00Z') })(signed)).ok).toBe(true);
    expect(await setup({ resolver: grace('2026-01-15T09:28:59Z') })(signed)).toMatchObject({ ok: false, rule: 7 });
  });

  it('never throws on hostile input', async () => {
    const verify = setup();
    for (const input of [
      null,
      1,
      'x',
      [],
      {},
      { svc_auth: '1', request_id: {}, nonce: [], signature: 1, identity: null },
      { ...approval(), scopes: 'profile:read' },
      { ...approval(), session_proof: 'x', key_id: 'session:1' },
    ]) {
      expect((await verify(input)).ok).toBe(false);
    }
  });
});
