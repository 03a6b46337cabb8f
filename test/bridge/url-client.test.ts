// The pure rules of URL client IDs (protocol/bridge/url-client.ts): fetchable client IDs, private
// addresses, the document's fields, the redirect rule and the cache clamp; and the reference's
// fetcher against documents a real test authority serves (DNS, HTTPS with its CA, two addresses).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthority, type Authority } from '../../harness/actors/authority/index.ts';
import { UrlClientError, UrlClients } from '../../reference/bridge/url-clients.ts';
import { ClientRegistry } from '../../reference/bridge/clients.ts';
import { clientIdUrl, privateAddress, urlClientCacheSeconds, urlClientDocument, urlClientRedirectAllowed, verifiedHost, URL_CLIENT_FETCH } from '../../protocol/bridge/url-client.ts';

const ID = 'https://app.example.com/client.json';

describe('URL client IDs', () => {
  it('fetches only https client IDs on dotted host names', () => {
    expect(clientIdUrl(ID).ok).toBe(true);
    for (const bad of ['http://app.example.com/c', 'https://localhost/c', 'https://127.0.0.1/c', 'https://[::1]/c', 'https://u:p@app.example.com/c', 'https://app.example.com/c#x', 'not a url']) {
      expect(clientIdUrl(bad).ok, bad).toBe(false);
    }
  });

  it('never connects to private addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.1.1', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', 'nonsense'])
      expect(privateAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '2606:2800:220:1::1', '172.32.0.1']) expect(privateAddress(a), a).toBe(false);
  });

  it('reads the document by the fields of document 2', () => {
    const ok = urlClientDocument(ID, {
      client_id: ID,
      client_name: 'App',
      redirect_uris: ['https://app.example.com/cb', 'http://127.0.0.1/cb', 'https://other.example/cb'],
      logo_uri: 'https://cdn.example/logo.png',
    });
    expect(ok).toMatchObject({ ok: true, value: { name: 'App', authMethod: 'none', redirectUris: ['https://app.example.com/cb', 'http://127.0.0.1/cb', 'https://other.example/cb'] } });
    expect(ok.ok && ok.value.logoUri).toBeUndefined();
    expect(urlClientDocument(ID, { client_id: `${ID}x` }).ok).toBe(false);
    expect(urlClientDocument(ID, { client_id: ID, token_endpoint_auth_method: 'client_secret_basic' })).toMatchObject({ ok: false, reason: expect.stringMatching(/refused/) });
    expect(urlClientDocument(ID, { client_id: ID, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://elsewhere.example/jwks' }).ok).toBe(false);
    expect(urlClientDocument(ID, { client_id: ID, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example.com/jwks' }).ok).toBe(true);
    expect(urlClientDocument(ID, { client_id: ID, redirect_uris: ['myapp://cb'] }).ok).toBe(false);
  });

  it('returns to a listed redirect, or to the client ID origin when no document is published; a foreign host is unverified', () => {
    const doc = urlClientDocument(ID, { client_id: ID, redirect_uris: ['https://other.example/cb'] });
    expect(doc.ok && urlClientRedirectAllowed(ID, doc.value, 'https://other.example/cb')).toBe(true);
    expect(doc.ok && urlClientRedirectAllowed(ID, doc.value, 'https://app.example.com/cb')).toBe(false);
    expect(urlClientRedirectAllowed(ID, undefined, 'https://app.example.com/anything')).toBe(true);
    expect(urlClientRedirectAllowed(ID, undefined, 'https://other.example/cb')).toBe(false);
    expect(verifiedHost(ID, 'https://app.example.com/cb')).toBe(true);
    expect(verifiedHost(ID, 'https://other.example/cb')).toBe(false);
  });

  it('caches per HTTP headers, clamped to 5 minutes .. 24 hours; fetches are capped at 16 KiB and 5 s without redirects', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(urlClientCacheSeconds({ cacheControl: 'max-age=60' }, now)).toBe(300);
    expect(urlClientCacheSeconds({ cacheControl: 'public, max-age=3600' }, now)).toBe(3600);
    expect(urlClientCacheSeconds({ cacheControl: 'max-age=999999' }, now)).toBe(86400);
    expect(urlClientCacheSeconds({ cacheControl: 'no-store' }, now)).toBe(300);
    expect(urlClientCacheSeconds({ expires: 'Thu, 01 Jan 2026 02:00:00 GMT', date: 'Thu, 01 Jan 2026 00:00:00 GMT' }, now)).toBe(7200);
    expect(urlClientCacheSeconds({}, now)).toBe(300);
    expect(URL_CLIENT_FETCH).toEqual({ maxBytes: 16384, timeoutMs: 5000, redirects: 0 });
  });
});

describe('the reference fetcher (reference/bridge/url-clients.ts) against documents on a test authority', () => {
  let authority: Authority;
  let fetcher: UrlClients;
  const url = (host: string, path = '/c.json') => `https://${host}${authority.httpsPort === 443 ? '' : `:${authority.httpsPort}`}${path}`;
  const refusal = async (clientId: string) => {
    try {
      await fetcher.get(clientId, true);
    } catch (error) {
      if (error instanceof UrlClientError) return error.rule;
      throw error;
    }
    return 'accepted';
  };
  beforeAll(async () => {
    authority = await startAuthority();
    fetcher = new UrlClients({ dnsServer: authority.dnsServer, caFile: authority.caFile, publicAddresses: [authority.address] });
  });
  afterAll(async () => {
    await fetcher?.close();
    await authority?.close();
  });

  it('reads a document into a client whose sector is the client_id host, and caches it', async () => {
    const id = url('ok.apps.test');
    await authority.serveFile({ url: id, body: { client_id: id, client_name: 'OK', redirect_uris: ['https://ok.apps.test/cb'] }, headers: { 'cache-control': 'max-age=0' } });
    const c = await fetcher.get(id, true);
    expect(c).toMatchObject({ name: 'OK', sector: 'ok.apps.test', authMethod: 'none', url: { published: true } });
    await fetcher.get(id, true);
    expect((await authority.file(id))?.fetches).toBe(1);
  });

  it('an authorization request fetches a document again once its cache time is up, not before (the registry too)', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const clocked = new UrlClients({ dnsServer: authority.dnsServer, caFile: authority.caFile, publicAddresses: [authority.address], now: () => now });
    const registry = new ClientRegistry([], clocked, true);
    try {
      const id = url('clocked.apps.test');
      await authority.serveFile({ url: id, body: { client_id: id, client_name: 'Clocked' }, headers: { 'cache-control': 'max-age=3600' } });
      await registry.resolve(id, true);
      now += 3599_000;
      await registry.resolve(id, true);
      await registry.resolve(id); // a transaction already begun: the cached client is enough
      expect((await authority.file(id))?.fetches).toBe(1);
      now += 2_000;
      await registry.resolve(id, true);
      expect((await authority.file(id))?.fetches).toBe(2);
    } finally {
      await clocked.close();
    }
  });

  it('a 404 is a client without a document', async () => {
    const id = url('none.apps.test');
    await authority.serveFile({ url: id, status: 404, body: {} });
    expect(await fetcher.get(id, true)).toMatchObject({ name: 'none.apps.test', redirectUris: [], url: { published: false } });
  });

  it('refuses redirects, private addresses, oversize documents, http and mismatched client_ids, each by its rule', async () => {
    const moved = url('moved.apps.test');
    await authority.serveFile({ url: moved, redirect: url('ok.apps.test') });
    expect(await refusal(moved)).toBe('ob.clients.url-fetch-no-redirect');
    const hidden = url('hidden.apps.test');
    await authority.serveFile({ url: hidden, body: { client_id: hidden }, otherAddress: true });
    expect(await refusal(hidden)).toBe('ob.clients.url-fetch-private');
    expect((await authority.file(hidden))?.fetches).toBe(0);
    const big = url('big.apps.test');
    await authority.serveFile({ url: big, body: { client_id: big }, padTo: URL_CLIENT_FETCH.maxBytes + 1 });
    expect(await refusal(big)).toBe('ob.clients.url-fetch-size');
    const exact = url('exact.apps.test');
    await authority.serveFile({ url: exact, body: { client_id: exact }, padTo: URL_CLIENT_FETCH.maxBytes });
    expect(await refusal(exact)).toBe('accepted');
    expect(await refusal(`http://plain.apps.test/c.json`)).toBe('ob.clients.url-fetch-https');
    const other = url('other.apps.test');
    await authority.serveFile({ url: other, body: { client_id: `${other}x` } });
    expect(await refusal(other)).toBe('ob.clients.url-document');
    await expect(fetcher.keySet('https://10.0.0.1/jwks.json')).rejects.toMatchObject({ rule: 'ob.clients.url-fetch-private' });
    await expect(fetcher.keySet('https://[::1]/jwks.json')).rejects.toMatchObject({ rule: 'ob.clients.url-fetch-private' });
    const secret = url('secret.apps.test');
    await authority.serveFile({ url: secret, body: { client_id: secret, token_endpoint_auth_method: 'client_secret_basic' } });
    expect(await refusal(secret)).toBe('ob.clients.url-client-secret-refused');
  });

  it('gives up after 5 seconds', async () => {
    const slow = url('slow.apps.test');
    await authority.serveFile({ url: slow, body: { client_id: slow }, delayMs: URL_CLIENT_FETCH.timeoutMs + 1000 });
    const started = Date.now();
    expect(await refusal(slow)).toBe('ob.clients.url-fetch-timeout');
    expect(Date.now() - started).toBeLessThan(URL_CLIENT_FETCH.timeoutMs + 900);
  }, 15_000);
});
