// The test identity authority: real DNS queries (node:dns pointed at it, and raw TCP), the signed
// document over HTTPS trusted only through its CA, rotation, drop, faults, and the admin client.
import { Resolver } from 'node:dns/promises';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, AuthorityClient, type Authority } from '../../harness/actors/authority/index.ts';
import { BodyTooLargeError, HttpClient, HttpError } from '../../harness/actors/http.ts';
import { verifyDocument } from '../../protocol/common/document.ts';
import { formatKey } from '../../protocol/common/keys.ts';
import { publicKeyFromSeed } from '../../protocol/common/ed25519.ts';
import { limits } from '../../schemas/ts/limits.ts';
import { ed25519 } from '@noble/curves/ed25519.js';
import { NON_CANONICAL_KEYS, SMALL_ORDER_KEY } from '../../harness/suites/rp/checks/subtle.ts';

let authority: Authority;
let trusted: HttpClient;
let untrusted: HttpClient;

function resolver(timeout = 2000): Resolver {
  const r = new Resolver({ timeout, tries: 1 });
  r.setServers([authority.dnsServer]);
  return r;
}

const docUrl = (id: string) => `https://${id}/.well-known/svc/id.json`;

beforeAll(async () => {
  authority = await startAuthority({});
  trusted = new HttpClient({ ca: authority.caPem, dnsServer: authority.dnsServer, timeoutMs: 3000 });
  untrusted = new HttpClient({ dnsServer: authority.dnsServer, timeoutMs: 3000 });
});

afterAll(async () => {
  await Promise.all([trusted?.close(), untrusted?.close()]);
  await authority?.close();
});

describe('authority DNS', () => {
  it('binds a random loopback address, never 127.0.0.1', () => {
    expect(authority.address).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(authority.address).not.toBe('127.0.0.1');
    expect(authority.dnsServer).toBe(`${authority.address}:53`);
  });

  it('answers TXT _svc.<id>, TXT _svc-enc.<id>, A <id>, NXDOMAIN and empty NOERROR', async () => {
    const { identity, seed } = await authority.newIdentity({ encryption: true });
    const r = resolver();
    const key = formatKey(publicKeyFromSeed(seed));
    expect(await r.resolveTxt(`_svc.${identity}`)).toEqual([[`svc-pubkey=${key}`]]);
    const enc = (await r.resolveTxt(`_svc-enc.${identity}`))[0]![0]!;
    expect(enc).toMatch(/^svc-enckey=x25519:[A-Za-z0-9_-]{43}$/);
    expect(await r.resolve4(identity)).toEqual([authority.address]);
    await expect(r.resolveTxt(`_svc.nobody.id.test`)).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(r.resolve6(identity)).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('answers over TCP with the 2-byte length prefix', async () => {
    const { identity } = await authority.newIdentity();
    const answer = await new Promise<dnsPacket.Packet>((resolve, reject) => {
      const socket = connect(53, authority.address, () =>
        socket.write(dnsPacket.streamEncode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'TXT', name: `_svc.${identity}` }] })),
      );
      let buf = Buffer.alloc(0);
      socket.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          socket.end();
          resolve(dnsPacket.streamDecode(buf));
        }
      });
      socket.on('error', reject);
    });
    expect(answer.id).toBe(7);
    expect(answer.answers?.[0]).toMatchObject({ type: 'TXT', ttl: 0 });
  });
});

describe('authority HTTPS', () => {
  it('serves the signed identity document, trusted through its CA only', async () => {
    const { identity, seed } = await authority.newIdentity();
    const res = await trusted.get(docUrl(identity));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const doc = res.json() as Record<string, unknown>;
    expect(doc).toMatchObject({ version: 1, identity, public_key: formatKey(publicKeyFromSeed(seed)) });
    expect(verifyDocument(doc)).toEqual({ ok: true });
    await expect(untrusted.get(docUrl(identity))).rejects.toThrow(/certificate/);
  });

  it('rotates: new key in DNS and the document, old key in previous_keys with its grace', async () => {
    const { identity, seed } = await authority.newIdentity();
    const next = new Uint8Array(32).fill(9);
    const before = Date.now();
    await authority.rotate(identity, next, { graceSeconds: 600 });
    expect(await resolver().resolveTxt(`_svc.${identity}`)).toEqual([[`svc-pubkey=${formatKey(publicKeyFromSeed(next))}`]]);
    const doc = (await trusted.get(docUrl(identity))).json() as { public_key: string; previous_keys: { public_key: string; valid_until: string }[] };
    expect(verifyDocument(doc)).toEqual({ ok: true });
    expect(doc.public_key).toBe(formatKey(publicKeyFromSeed(next)));
    expect(doc.previous_keys[0]!.public_key).toBe(formatKey(publicKeyFromSeed(seed)));
    const until = Date.parse(doc.previous_keys[0]!.valid_until);
    expect(until).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 599_000);
  });

  it('rotates with the old key valid until a precise instant (validUntil), also over the admin API', async () => {
    const { identity } = await authority.newIdentity();
    const validUntil = '2026-01-15T09:30:01Z';
    const info = await authority.rotate(identity, new Uint8Array(32).fill(5), { validUntil, graceSeconds: 600 });
    expect(info.previous_keys[0]!.valid_until).toBe(validUntil);
    const doc = (await trusted.get(docUrl(identity))).json() as { previous_keys: { valid_until: string }[] };
    expect(doc.previous_keys[0]!.valid_until).toBe(validUntil);
    const client = new AuthorityClient(authority.adminUrl);
    try {
      const again = await client.rotate(identity, new Uint8Array(32).fill(6), { validUntil: '2026-01-15T09:31:00Z' });
      expect(again.previous_keys.map((k) => k.valid_until)).toEqual(['2026-01-15T09:31:00Z', validUntil]);
      await expect(client.rotate(identity, new Uint8Array(32).fill(7), { validUntil: 'soon' })).rejects.toThrow(/400 validUntil must be RFC 3339/);
    } finally {
      await client.close();
    }
  });

  it('publishes any 32-byte key verbatim over DNS: small-order and non-canonical encodings (no document)', async () => {
    const { identity } = await authority.newIdentity();
    const client = new AuthorityClient(authority.adminUrl);
    try {
      for (const key of [SMALL_ORDER_KEY, ...NON_CANONICAL_KEYS.map(([, k]) => k)]) {
        // Noble's strict decoding refuses the non-canonical ones: the authority does not judge keys.
        const info = await client.publish({ identity, publicKey: key, https: false });
        expect(info.public_key).toBe(formatKey(key));
        expect(await resolver().resolveTxt(`_svc.${identity}`)).toEqual([[`svc-pubkey=${formatKey(key)}`]]);
        expect((await trusted.get(docUrl(identity))).status).toBe(404);
      }
      for (const [, key] of NON_CANONICAL_KEYS) expect(() => ed25519.Point.fromBytes(key)).toThrow();
      expect(ed25519.Point.fromBytes(SMALL_ORDER_KEY).isSmallOrder()).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('drops DNS or HTTPS', async () => {
    const a = await authority.newIdentity();
    await authority.drop(a.identity, 'dns');
    await expect(resolver().resolveTxt(`_svc.${a.identity}`)).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect((await trusted.get(docUrl(a.identity))).status).toBe(200);
    const b = await authority.newIdentity();
    await authority.drop(b.identity, 'https');
    expect((await trusted.get(docUrl(b.identity))).status).toBe(404);
    expect((await resolver().resolveTxt(`_svc.${b.identity}`)).length).toBe(1);
  });

  it('makes DNS and HTTPS disagree, and clears faults', async () => {
    const { identity } = await authority.newIdentity();
    await authority.fault(identity, { dnsKey: true });
    const txt = (await resolver().resolveTxt(`_svc.${identity}`))[0]![0]!;
    const doc = (await trusted.get(docUrl(identity))).json() as { public_key: string };
    expect(txt).not.toBe(`svc-pubkey=${doc.public_key}`);
    await authority.clearFaults(identity);
    expect((await resolver().resolveTxt(`_svc.${identity}`))[0]![0]).toBe(`svc-pubkey=${doc.public_key}`);
  });

  it('delays and times out DNS and HTTPS', async () => {
    const { identity } = await authority.newIdentity();
    await authority.fault(identity, { delayMs: { dns: 300, https: 300 } });
    let t = Date.now();
    await resolver().resolveTxt(`_svc.${identity}`);
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
    t = Date.now();
    expect((await trusted.get(docUrl(identity))).status).toBe(200);
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
    await authority.fault(identity, { delayMs: {}, timeout: 'dns' });
    await expect(resolver(300).resolveTxt(`_svc.${identity}`)).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await authority.fault(identity, { timeout: 'https' });
    const direct = new HttpClient({ ca: authority.caPem, hosts: { [identity]: authority.address }, timeoutMs: 400 });
    await expect(direct.get(docUrl(identity))).rejects.toThrow(/timed out/);
    await direct.close();
    await authority.clearFaults(identity);
  });

  it('answers a status, a redirect, an oversize body or a bad signature on request', async () => {
    const { identity } = await authority.newIdentity();
    await authority.fault(identity, { httpsStatus: 503 });
    expect((await trusted.get(docUrl(identity))).status).toBe(503);
    await authority.clearFaults(identity);
    await authority.fault(identity, { redirect: 'https://elsewhere.test/id.json' });
    const r = await trusted.get(docUrl(identity));
    expect([r.status, r.location]).toEqual([302, 'https://elsewhere.test/id.json']);
    await authority.clearFaults(identity);
    await authority.fault(identity, { oversize: true });
    await expect(trusted.get(docUrl(identity), { maxBodyBytes: limits.metadata_body_max_bytes })).rejects.toBeInstanceOf(BodyTooLargeError);
    await authority.clearFaults(identity);
    await authority.fault(identity, { badSignature: true });
    expect(verifyDocument((await trusted.get(docUrl(identity))).json() as Record<string, unknown>).ok).toBe(false);
  });
});

describe('authority admin API', () => {
  it('AuthorityClient drives the same operations', async () => {
    const client = new AuthorityClient(authority.adminUrl);
    const info = await client.info();
    expect(info).toMatchObject({ address: authority.address, dnsServer: authority.dnsServer, caFile: authority.caFile });
    const { identity, seed } = await client.newIdentity({ label: 'bob' });
    expect(identity).toBe('bob.id.test');
    expect((await resolver().resolveTxt(`_svc.${identity}`))[0]![0]).toBe(`svc-pubkey=${formatKey(publicKeyFromSeed(seed))}`);
    const carol = new Uint8Array(32).fill(3);
    const published = await client.publish({ identity: 'carol.example.test', seed: carol });
    expect(published.public_key).toBe(formatKey(publicKeyFromSeed(carol)));
    expect(verifyDocument((await trusted.get(docUrl('carol.example.test'))).json() as Record<string, unknown>)).toEqual({ ok: true });
    const rotated = await client.rotate('carol.example.test', new Uint8Array(32).fill(4), { graceSeconds: 60 });
    expect(rotated.previous_keys).toHaveLength(1);
    const faulted = await client.fault('carol.example.test', { dnsKey: true, delayMs: { dns: 10 } });
    expect(faulted.faults.dnsKey).toMatch(/^ed25519:/);
    expect((await client.clearFaults('carol.example.test')).faults).toEqual({});
    expect((await client.drop('carol.example.test', 'both')).dns).toBe(false);
    expect(await client.identity('nobody.id.test')).toBeUndefined();
    await expect(client.publish({ identity: 'not a name' })).rejects.toThrow(/400/);
    await client.close();
  });

  it('keeps its CA in dir across restarts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authority-test-'));
    try {
      const one = await startAuthority({ dir, dnsPort: 0, httpsPort: 0, adminPort: 0 });
      const pem = one.caPem;
      expect(one.caFile).toBe(join(dir, 'ca.pem'));
      await one.close();
      const two = await startAuthority({ dir, dnsPort: 0, httpsPort: 0, adminPort: 0 });
      expect(two.caPem).toBe(pem);
      const { identity } = await two.newIdentity();
      const http = new HttpClient({ ca: pem, hosts: { [identity]: two.address } });
      expect((await http.get(`https://${identity}:${two.httpsPort}/.well-known/svc/id.json`)).status).toBe(200);
      await http.close();
      await two.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('HttpError carries the exchange', async () => {
    const http = new HttpClient({ timeoutMs: 500 });
    const err = await http.get(`http://${authority.address}:1/`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).exchange?.error).toBeTruthy();
    await http.close();
  });
});
