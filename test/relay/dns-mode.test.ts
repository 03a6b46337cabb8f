// DNS mode of POST /identities: the reference relay writes the identity's records through the two
// providers it supports (Cloudflare API v4, deSEC). Their HTTP APIs are third-party services that
// cannot run here, so they are mocked with msw (the one place for mocks); the relay runs in this
// process so msw sees its requests. A failed write answers 502 dns_write_failed with detail.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { newRelayIdentity, registration } from '../../harness/actors/relay/index.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { startRelay, type RunningRelay } from '../../reference/relay/app.ts';

interface Written {
  provider: string;
  auth: string | null;
  body: unknown;
}
const written: Written[] = [];
let failing = false;

const mock = setupServer(
  http.get('https://api.cloudflare.com/client/v4/zones', ({ request }) => {
    const name = new URL(request.url).searchParams.get('name');
    return HttpResponse.json({ result: name === 'example.net' ? [{ id: 'zone-1' }] : [] });
  }),
  http.post('https://api.cloudflare.com/client/v4/zones/zone-1/dns_records', async ({ request }) => {
    if (failing) return HttpResponse.json({ success: false, errors: [{ message: 'token lacks DNS:Edit' }] }, { status: 403 });
    written.push({ provider: 'cloudflare', auth: request.headers.get('authorization'), body: await request.json() });
    return HttpResponse.json({ success: true, result: {} });
  }),
  http.get('https://desec.io/api/v1/domains/:domain/', ({ params }) =>
    params.domain === 'example.org' ? HttpResponse.json({ name: 'example.org' }) : HttpResponse.json({ detail: 'Not found.' }, { status: 404 }),
  ),
  http.put('https://desec.io/api/v1/domains/example.org/rrsets/', async ({ request }) => {
    written.push({ provider: 'desec', auth: request.headers.get('authorization'), body: await request.json() });
    return HttpResponse.json([]);
  }),
);

let relay: RunningRelay;
beforeAll(async () => {
  mock.listen({ onUnhandledRequest: 'bypass' });
  relay = await startRelay({
    host: '127.0.0.1',
    port: 0,
    log: () => undefined,
    resolver: { timeoutMs: 500 },
    config: {
      profile,
      dataDir: ':memory:',
      dataConfigured: false,
      relayAddress: '192.0.2.10:443',
      hostedDomains: [],
      registrationGate: 'open',
      inviteCodes: [],
      spoolTtlSeconds: 3600,
      challengeTtlSeconds: 60,
      maxStreams: 4,
      rate: { sender: 100, global: 1000, ip: 100, windowSeconds: 60 },
      breakages: new Set(),
      documentOnly: false,
      version: '0.1.0',
      buildTime: null,
      versionHash: null,
    },
  });
});
afterEach(() => {
  written.length = 0;
  failing = false;
});
afterAll(async () => {
  await relay?.close();
  mock.close();
});

const post = (body: unknown) => fetch(`${relay.url}/identities`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('POST /identities in DNS mode', () => {
  it('writes the TXT records and the A record through Cloudflare with the scoped token', async () => {
    const id = newRelayIdentity('alice.example.net');
    const r = await post(registration(profile, id, '192.0.2.10:443', { dns_provider: 'cloudflare', dns_token: 'cf-token' }));
    expect(r.status, await r.clone().text()).toBe(201);
    expect(written.map((w) => (w.body as { type: string; name: string }).type + ' ' + (w.body as { name: string }).name)).toEqual([
      'TXT _svc.alice.example.net',
      'TXT _svc-enc.alice.example.net',
      'A alice.example.net',
    ]);
    expect(written.every((w) => w.auth === 'Bearer cf-token')).toBe(true);
    expect((written[0]!.body as { content: string }).content).toMatch(/^svc-pubkey=ed25519:[A-Za-z0-9_-]{43}$/);
  });

  it('writes the same records as rrsets through deSEC', async () => {
    const id = newRelayIdentity('bob.example.org');
    const r = await post(registration(profile, id, '192.0.2.10:443', { dns_provider: 'desec', dns_token: 'desec-token' }));
    expect(r.status, await r.clone().text()).toBe(201);
    const rrsets = written[0]!.body as Array<{ subname: string; type: string }>;
    expect(rrsets.map((x) => `${x.type} ${x.subname}`)).toEqual(['TXT _svc.bob', 'TXT _svc-enc.bob', 'A bob']);
    expect(written[0]!.auth).toBe('Token desec-token');
  });

  it("answers 502 dns_write_failed with the provider's reason when the write fails, and registers nothing", async () => {
    failing = true;
    const id = newRelayIdentity('carol.example.net');
    const r = await post(registration(profile, id, '192.0.2.10:443', { dns_provider: 'cloudflare', dns_token: 'weak' }));
    expect(r.status).toBe(502);
    const body = (await r.json()) as { error: string; detail: string };
    expect(body.error).toBe('dns_write_failed');
    expect(body.detail).toMatch(/403/);
    expect((await fetch(`${relay.url}/identities/carol.example.net`)).status).toBe(404);
  });

  it('refuses an unsupported provider with 400', async () => {
    const id = newRelayIdentity('dave.example.net');
    const r = await post(registration(profile, id, '192.0.2.10:443', { dns_provider: 'route53', dns_token: 't' }));
    expect(r.status).toBe(400);
  });
});
