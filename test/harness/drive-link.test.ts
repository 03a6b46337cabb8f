// The link key (ra.drive.link-kdf): a link share's node key opens with the link string's secret,
// and for a password link only with the secret mixed with the password's KDF key.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';
import { newRelayIdentity } from '../../harness/actors/relay/index.ts';
import { nodeKeys, openShareKey, share } from '../../harness/actors/drive/objects.ts';
import { linkPrivateKey, linkSecrets } from '../../harness/impl/noble-drive.ts';

describe('the link key', () => {
  const owner = newRelayIdentity('alice.example.test');
  const node = nodeKeys();
  const link = randomBytes(16).toString('hex');

  it('is the link secret for a link without a password', () => {
    const made = share(profile, { drive: owner.identity, issuer: owner, node, role: 'read', link });
    const opened = openShareKey(profile, made.body.share as Record<string, unknown>, linkPrivateKey(profile, made.linkKey!));
    expect(Buffer.from(opened!).equals(Buffer.from(node.private))).toBe(true);
  });

  it('needs the password as well for a password link', async () => {
    const salt = new Uint8Array(randomBytes(16));
    const secrets = await linkSecrets('open sesame', salt);
    const made = share(profile, { drive: owner.identity, issuer: owner, node, role: 'read', link, password: { salt, verifierHash: secrets.verifierHash, key: secrets.key } });
    const s = made.body.share as Record<string, unknown>;
    expect(openShareKey(profile, s, made.linkKey!)).toBeUndefined();
    const wrong = await linkSecrets('guess', salt);
    expect(openShareKey(profile, s, linkPrivateKey(profile, made.linkKey!, wrong.key))).toBeUndefined();
    const opened = openShareKey(profile, s, linkPrivateKey(profile, made.linkKey!, secrets.key));
    expect(Buffer.from(opened!).equals(Buffer.from(node.private))).toBe(true);
  });
});
