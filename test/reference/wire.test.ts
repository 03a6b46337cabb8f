// A wire variant sees every request and passes it on re-readable: the app behind it must still get
// the body. (The copy once kept node's spent request, so under any wire variant every POST arrived
// empty and was refused as "not JSON": checks failed for that reason, not for the broken rule.)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnReference } from '../../harness/run/spawn.ts';

describe('wire variants', () => {
  it('pass the request body on to the app', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-wire-'));
    const relay = await spawnReference('relay', ['--port', '0', '--data-dir', dir, '--hosted-domains', 'w.relay.test', '--quiet'], {
      env: { SVC_REFERENCE_ALLOW_BREAKAGE: '1', SVC_REFERENCE_WIRE: 'relay/inbox-open' },
    });
    try {
      const r = await fetch(`${relay.url}/identities`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ identity: 'not a name' }) });
      expect(await r.json()).toMatchObject({ rule: 'ra.names.valid' });
    } finally {
      await relay.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
