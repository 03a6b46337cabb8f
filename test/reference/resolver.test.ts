// The network resolver against the harness's test identity authority: real DNS queries (node:dns
// pointed at the authority's server) and real HTTPS with the authority's CA.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { NetworkResolver } from '../../reference/resolve/network.ts';
import { ResolutionError } from '../../protocol/signin/resolver.ts';
import { defaultProfile } from '../../protocol/common/profile.ts';
import { formatKey } from '../../protocol/common/keys.ts';
import { publicKeyFromSeed } from '../../protocol/common/ed25519.ts';
import { randomBytes } from 'node:crypto';

let authority: Authority;
let resolver: NetworkResolver;

beforeAll(async () => {
  authority = await startAuthority({ profile: defaultProfile });
  resolver = new NetworkResolver({ profile: defaultProfile, dnsServer: authority.dnsServer, caPem: authority.caPem, timeoutMs: 1500 });
});
afterAll(async () => {
  await resolver?.close();
  await authority?.close();
});

async function failure(identity: string): Promise<ResolutionError> {
  const error = await resolver.resolve(identity).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ResolutionError);
  return error as ResolutionError;
}

describe('NetworkResolver (ns.resolve.chain)', () => {
  it('reads the signed document over HTTPS and the TXT record over DNS; both agree', async () => {
    const { identity, seed } = await authority.newIdentity();
    const resolved = await resolver.resolve(identity);
    expect(resolved.source).toBe('https');
    expect(formatKey(resolved.publicKey)).toBe(formatKey(publicKeyFromSeed(seed)));
  });

  it('falls back to DNS TXT when there is no document, and to the document when there is no TXT', async () => {
    const a = await authority.newIdentity();
    await authority.drop(a.identity, 'https');
    expect((await resolver.resolve(a.identity)).source).toBe('dns');
    const b = await authority.newIdentity();
    await authority.drop(b.identity, 'dns');
    expect((await resolver.resolve(b.identity)).source).toBe('https');
  });

  it('sees a rotation at once and honours previous_keys', async () => {
    const { identity, seed } = await authority.newIdentity();
    const next = randomBytes(32);
    await authority.rotate(identity, next, { graceSeconds: 600 });
    const resolved = await resolver.resolve(identity);
    expect(formatKey(resolved.publicKey)).toBe(formatKey(publicKeyFromSeed(next)));
    expect(resolved.previousKeys.map((k) => formatKey(k.publicKey))).toEqual([formatKey(publicKeyFromSeed(seed))]);
    expect(resolved.previousKeys[0]!.validUntil).toBeGreaterThan(Date.now());
  });

  it('fails closed when DNS and HTTPS disagree', async () => {
    const { identity } = await authority.newIdentity();
    await authority.fault(identity, { dnsKey: true });
    expect((await failure(identity)).code).toBe('key_mismatch');
  });

  it('refuses a bad document signature, a redirect and an oversized document', async () => {
    for (const fault of [{ badSignature: true }, { redirect: true as const }, { oversize: true as const }]) {
      const { identity } = await authority.newIdentity();
      await authority.fault(identity, fault);
      expect((await failure(identity)).code, JSON.stringify(fault)).toBe('invalid_document');
    }
  });

  it('reports an unknown identity as not_found and a hanging host as unreachable within the timeout', async () => {
    expect((await failure('nobody.id.test')).code).toBe('not_found');
    const { identity } = await authority.newIdentity();
    await authority.fault(identity, { timeout: 'https' });
    const t0 = Date.now();
    expect((await failure(identity)).code).toBe('unreachable');
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('a 5xx from the well-known host fails closed', async () => {
    const { identity } = await authority.newIdentity();
    await authority.fault(identity, { httpsStatus: 503 });
    expect((await failure(identity)).code).toBe('unreachable');
  });
});
