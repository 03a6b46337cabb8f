// protocol/common/trust.ts: one secure context per set of extra CAs, made once (a `ca` list would
// make one per connection, parsing every root again); nothing extra, nothing changed.
import { describe, expect, it } from 'vitest';
import { startAuthority } from '../../harness/actors/authority/index.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { trusting } from '../../protocol/common/trust.ts';
import { readFileSync } from 'node:fs';

describe('trusting', () => {
  it('adds nothing without an extra CA, and makes one context per set of CAs', async () => {
    expect(trusting(undefined)).toEqual({});
    expect(trusting([])).toEqual({});
    const authority = await startAuthority({ profile });
    try {
      const pem = readFileSync(authority.caFile, 'utf8');
      const once = trusting(pem).secureContext;
      expect(once).toBeDefined();
      expect(trusting([pem]).secureContext).toBe(once);
      expect(trusting([pem, pem]).secureContext).not.toBe(once);
    } finally {
      await authority.close();
    }
  });
});
