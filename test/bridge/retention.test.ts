// Retention (ob.retention) in the bridge's store: the hourly sweep deletes audit events after 90
// days and transactions, sessions, codes and tokens a day after they expired; what is still live stays.
import { describe, expect, it } from 'vitest';
import { limits } from '../../schemas/ts/limits.ts';
import { openDatabase } from '../../reference/stores/sqlite.ts';
import { SqliteSql } from '../../reference/stores/sql.ts';
import { BridgeStore } from '../../reference/bridge/store.ts';

const DAY = 86_400_000;

describe('the bridge store sweep', () => {
  it('deletes old audit events and long-expired records, and keeps live ones', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const store = await BridgeStore.open(new SqliteSql(openDatabase(':memory:', 'bridge.sqlite'), true), () => now);
    const tx = (id: string) => ({
      id,
      clientId: 'c',
      redirectUri: 'https://a.example/cb',
      state: 's',
      nonce: null,
      challenge: 'x',
      scopes: ['openid'],
      prompt: null,
      maxAge: null,
      bindingHash: 'h',
      browser: 'Firefox',
    });
    await store.audit('signin.succeeded', 'alice.id.test', { client_id: 'c', delegated: false, browser: 'Firefox' });
    await store.createTx(tx('old-transaction-0000001'));
    await store.createSession('old-session', { identity: 'alice.id.test', authTime: now, delegated: false, keyFingerprint: null, expiresAt: now + limits.session_cookie_ttl_seconds * 1000 });
    now += limits.audit_retention_seconds * 1000 - DAY;
    await store.audit('signin.succeeded', 'alice.id.test', { client_id: 'c', delegated: false, browser: 'Chrome' });
    await store.createTx(tx('new-transaction-0000001'));
    expect(await store.sweep()).toBe(2); // the old transaction and session; the first audit event is 89 days old
    expect(await store.tx('old-transaction-0000001')).toBeUndefined();
    expect(await store.tx('new-transaction-0000001')).toBeDefined();
    now += 2 * DAY;
    expect(await store.sweep()).toBe(2); // the first audit event, now past 90 days, and the second transaction, expired a day ago
    expect((await store.recentSignins('alice.id.test')).map((s) => s.browser)).toEqual(['Chrome']);
  });
});
