// Unit checks of the RP's small parts: the SQLite nonce store shared by two connections (as two
// processes share rp.sqlite), content negotiation, the coarse browser label, and the start options.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, SqliteNonceStore } from '../../reference/stores/sqlite.ts';
import { parseNonceStoreSpec } from '../../reference/stores/index.ts';
import { prefersJson } from '../../reference/shared/http.ts';
import { browserLabel } from '../../reference/rp/browser.ts';
import { parseDelivery } from '../../reference/rp/delivery.ts';
import { HttpError } from '../../reference/shared/errors.ts';
import { encodeObject } from '../../protocol/common/codec.ts';
import { batchFor } from '../../reference/stores/batch.ts';
import { bindingOf } from '../../reference/rp/transactions.ts';

describe('SqliteNonceStore', () => {
  it('is atomic across two connections to one file, and an expired claim can be taken again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-nonce-'));
    let t = 1_000_000;
    const a = new SqliteNonceStore(openDatabase(dir), () => t);
    const b = new SqliteNonceStore(openDatabase(dir), () => t);
    expect(await a.claim('k', t + 1000)).toBe(true);
    expect(await b.claim('k', t + 1000)).toBe(false);
    expect(await a.claim('k', t + 1000)).toBe(false);
    t += 1001;
    expect(await b.claim('k', t + 1000)).toBe(true);
    await a.release('k');
    expect(await b.claim('k', t + 1000)).toBe(true);
  });

  it('parses --nonce-store values', () => {
    expect(parseNonceStoreSpec('sqlite')).toBe('sqlite');
    expect(parseNonceStoreSpec('memory')).toBe('memory');
    expect(String(parseNonceStoreSpec('redis://127.0.0.1:6379'))).toBe('redis://127.0.0.1:6379');
    expect(() => parseNonceStoreSpec('postgres://x')).toThrow(/--nonce-store/);
  });
});

describe('group commit across connections', () => {
  it('waits for a write lock held elsewhere without blocking, then commits; fails once the busy timeout passes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-batch-'));
    const a = openDatabase(dir);
    const b = openDatabase(dir);
    a.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const insert = a.prepare('INSERT INTO t (k) VALUES (?)');
    b.exec('BEGIN IMMEDIATE'); // another process holds the write lock
    let settled = false;
    const first = batchFor(a)
      .run(() => insert.run('x').changes)
      .finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false); // still queued, and this event loop kept turning meanwhile
    b.exec('COMMIT');
    expect(await first).toBe(1);

    const short = openDatabase(dir);
    short.pragma('busy_timeout = 50');
    const insertShort = short.prepare('INSERT INTO t (k) VALUES (?)');
    b.exec('BEGIN IMMEDIATE');
    await expect(batchFor(short).run(() => insertShort.run('y'))).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    b.exec('ROLLBACK');
    expect(await batchFor(short).run(() => insertShort.run('y').changes)).toBe(1);
  });
});

describe('request binding string', () => {
  it('tells absent from null, and differs whenever a copied field differs', () => {
    const base = { request_id: 'r', audience: 'https://a', nonce: 'n', issued_at: 'i', expires_at: 'e', action: 'signin', scopes: ['a:b'] };
    expect(bindingOf(base)).toBe(bindingOf({ ...base, extra: 1 }));
    expect(bindingOf(base)).not.toBe(bindingOf({ ...base, statement: null }));
    expect(bindingOf({ ...base, statement: '' })).not.toBe(bindingOf(base));
    expect(bindingOf(base)).not.toBe(bindingOf({ ...base, scopes: ['a:b', 'c:d'] }));
    expect(bindingOf(base)).not.toBe(bindingOf({ ...base, nonce: 'n\naudience' }));
  });
});

describe('content negotiation and labels', () => {
  const req = (accept?: string) => new Request('http://x/', accept === undefined ? {} : { headers: { accept } });
  it.each([
    [undefined, false],
    ['application/json', true],
    ['text/html', false],
    ['*/*', false],
    ['application/json, text/html', true],
    ['text/html, application/json', false],
    ['text/html;q=0.5, application/json', true],
    ['application/json;q=0', false],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
  ])('Accept %s -> JSON %s', (accept, expected) => expect(prefersJson(req(accept))).toBe(expected));

  it('labels browsers coarsely', () => {
    expect(browserLabel('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on Linux');
    expect(browserLabel('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15')).toBe('Safari on macOS');
    expect(browserLabel(null)).toBe('Unknown browser');
  });
});

describe('delivery body forms (ns.delivery.body)', () => {
  const approval = { svc_auth: '1', request_id: 'r' };
  const bytes = (s: string) => new TextEncoder().encode(s);
  it('reads the bare encoded approval, raw JSON and the delivery object', () => {
    expect(parseDelivery(bytes(encodeObject(approval)))).toEqual({ approval });
    expect(parseDelivery(bytes(JSON.stringify(approval)))).toEqual({ approval });
    expect(parseDelivery(bytes(JSON.stringify({ response: encodeObject(approval), match: '07' })))).toEqual({ approval, match: '07' });
  });
  it('refuses malformed bodies with 400 malformed_delivery', () => {
    for (const body of [new Uint8Array([0xff, 0xfe]), bytes(''), bytes('{"response":1}'), bytes('{"response":"eyJ9","match":"7"}'), bytes('%%%')]) {
      expect(() => parseDelivery(body)).toThrow(HttpError);
      try {
        parseDelivery(body);
      } catch (error) {
        expect((error as HttpError).envelope()).toMatchObject({ error: 'malformed_delivery', rule: 'ns.delivery.body' });
      }
    }
  });
});
