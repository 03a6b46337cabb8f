// Item 8 of the foundation issue, as fast-check properties of the protocol core.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createVerifier } from '../../protocol/signin/verifier.ts';
import { MemoryNonceStore } from '../../protocol/signin/nonce.ts';
import { StaticResolver } from '../../protocol/signin/resolver.ts';
import { signApproval } from '../../protocol/signin/signer.ts';
import { publicKeyFromSeed, signEd25519, verifyEd25519 } from '../../protocol/common/ed25519.ts';
import { encodeObject, decodeObject } from '../../protocol/common/codec.ts';
import { normalizeIdInput } from '../../protocol/bridge/id-input.ts';
import { normalizeScopes } from '../../protocol/signin/scopes.ts';
import { normalizeOrigin } from '../../protocol/common/url.ts';
import { normalizeShortCode } from '../../protocol/signin/reference.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import * as noble from '../../harness/impl/noble.ts';

const NOW = Date.parse('2026-01-15T09:30:00Z');
const ORIGIN = 'https://rp.example.com';
const runs = { numRuns: 200 };

const base = {
  svc_auth: '1',
  request_id: 'req',
  audience: ORIGIN,
  nonce: 'bm9uY2Utbm9uY2Utbm9uY2U',
  issued_at: '2026-01-15T09:29:00Z',
  expires_at: '2026-01-15T09:31:00Z',
  action: 'signin',
  statement: 'Sign in',
  scopes: ['messages:send', 'profile:read'],
};

// The rule that must refuse a change to each signed field (a well-formed change breaks the
// signature, rule 7; a change that breaks the field's own check is refused earlier).
const fieldRules: Record<string, number[]> = {
  svc_auth: [1],
  request_id: [1, 7],
  identity: [1, 6, 7],
  audience: [1, 2],
  nonce: [1, 7],
  issued_at: [1, 4, 7],
  expires_at: [1, 4, 7],
  action: [1, 3, 7],
  statement: [3, 7],
  scopes: [3, 7],
  key_id: [1, 7],
  signature: [1, 7],
};

describe('properties of the protocol core', () => {
  it('any single-field change to a signed approval is refused by the rule for that field', async () => {
    const seed = new Uint8Array(32).fill(5);
    const identity = 'alice.example.com';
    const response = signApproval(profile, base, { identity, seed });
    const field = fc.constantFrom(...Object.keys(fieldRules));
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('2026-01-15T09:29:30Z', 'link', 'https://evil.example', 'bob.example.org', '2'),
      fc.array(fc.constantFrom('messages:send', 'profile:read', 'x'), { maxLength: 3 }),
      fc.integer(),
      fc.constant(null),
    );
    await fc.assert(
      fc.asyncProperty(field, value, async (f, v) => {
        fc.pre(JSON.stringify(response[f]) !== JSON.stringify(v));
        const verify = createVerifier({ profile, origin: ORIGIN, resolver: new StaticResolver().set(identity, publicKeyFromSeed(seed)), nonces: new MemoryNonceStore(() => NOW), now: () => NOW });
        const verdict = await verify({ ...response, [f]: v });
        expect(verdict.ok).toBe(false);
        if (!verdict.ok) expect(fieldRules[f]).toContain(verdict.rule);
      }),
      runs,
    );
  });

  it('encode/decode round-trips, from every accepted form', () => {
    const json = fc.dictionary(fc.string({ maxLength: 12 }), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 3 })), { maxKeys: 8 });
    fc.assert(
      fc.property(json, (obj) => {
        const encoded = encodeObject(obj);
        expect(encoded).toMatch(/^[A-Za-z0-9_-]*$/);
        const padded = encoded + '='.repeat((4 - (encoded.length % 4)) % 4);
        const standard = padded.replaceAll('-', '+').replaceAll('_', '/');
        for (const form of [encoded, padded, standard, JSON.stringify(obj)]) {
          const decoded = decodeObject(form);
          expect(decoded.ok && decoded.value).toEqual(obj);
        }
      }),
      runs,
    );
  });

  it('normalization is idempotent (ID input, scopes, origins, short codes)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.domain(), fc.webUrl()), (input) => {
        const once = normalizeIdInput(input);
        if (once.ok) expect(normalizeIdInput(once.id)).toEqual(once);
        const origin = normalizeOrigin(input);
        if (origin !== undefined) expect(normalizeOrigin(origin)).toBe(origin);
        const code = normalizeShortCode(input);
        if (code !== undefined) expect(normalizeShortCode(code)).toBe(code);
      }),
      runs,
    );
    fc.assert(
      fc.property(fc.array(fc.string()), (scopes) => {
        expect(normalizeScopes(normalizeScopes(scopes))).toEqual(normalizeScopes(scopes));
      }),
      runs,
    );
  });

  it("the signer's scope order does not change the signature", () => {
    const seed = new Uint8Array(32).fill(6);
    fc.assert(
      fc.property(fc.shuffledSubarray(['messages:send', 'profile:read', 'messages:send']), (scopes) => {
        const a = signApproval(profile, { ...base, scopes }, { identity: 'a.example.com', seed });
        const b = signApproval(profile, { ...base, scopes: [...scopes].reverse() }, { identity: 'a.example.com', seed });
        expect(a.signature).toBe(b.signature);
      }),
      runs,
    );
  });

  it('node:crypto and noble agree on random and edge inputs', () => {
    const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });
    fc.assert(
      fc.property(bytes(32), fc.uint8Array({ maxLength: 100 }), bytes(32), bytes(64), (seed, msg, randomKey, randomSig) => {
        const pub = publicKeyFromSeed(seed);
        const sig = signEd25519(seed, msg);
        expect(sig).toEqual(noble.sign(seed, msg));
        expect(verifyEd25519(pub, msg, sig)).toBe(true);
        expect(noble.verify(pub, msg, sig)).toBe(true);
        for (const [k, s] of [
          [randomKey, sig],
          [pub, randomSig],
          [randomKey, randomSig],
        ] as const) {
          expect(verifyEd25519(k, msg, s)).toBe(noble.verify(k, msg, s));
        }
      }),
      runs,
    );
  });
});
