// The relay client's sealing is the interop set's message-seal-v1: the deployed system's vector
// opens with the harness's noble implementation, and what the client seals (under the same service
// name) opens with the protocol core's node:crypto implementation and with noble alike.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { message, newRelayIdentity } from '../../harness/actors/relay/index.ts';
import { openMessage as nobleOpen } from '../../harness/impl/noble.ts';
import { profileFor } from '../../protocol/common/profile.ts';
import { openMessage } from '../../protocol/relay/seal.ts';

const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64url'));
const vector = JSON.parse(readFileSync(new URL('../../../shared/interop/poweur/message-seal-v1.json', import.meta.url), 'utf8')) as Record<string, string>;
const poweur = profileFor('poweur');

describe('message-seal-v1, as the relay client seals', () => {
  it("opens the interop vector with the harness's noble implementation", () => {
    const opened = nobleOpen(poweur.ids.message_seal_domain, b64(vector.recipient_private_key!), b64(vector.ephemeral_public_key!), b64(vector.nonce!), b64(vector.ciphertext!));
    expect(opened && Buffer.from(opened).toString('base64url')).toBe(vector.plaintext);
  });

  it('seals messages that both implementations open, and only with the recipient key', () => {
    const alice = newRelayIdentity('alice.example.net');
    const bob = newRelayIdentity('bob.example.net');
    const m = message(poweur, alice, bob.identity, bob.encryption.publicKey, 'hello from the harness');
    const enc = m.encryption as Record<string, string>;
    expect(enc.alg).toBe(vector.alg);
    const sealed = { ciphertext: b64(m.payload as string), ephemeralPublicKey: b64(enc.ephemeral_public_key!), nonce: b64(enc.nonce!) };
    expect(Buffer.from(openMessage(poweur, bob.encryption.privateKey, sealed)!).toString()).toBe('hello from the harness');
    expect(Buffer.from(nobleOpen(poweur.ids.message_seal_domain, bob.encryption.privateKey, sealed.ephemeralPublicKey, sealed.nonce, sealed.ciphertext)!).toString()).toBe('hello from the harness');
    expect(openMessage(poweur, alice.encryption.privateKey, sealed)).toBeUndefined();
    expect(openMessage(profileFor('svc'), bob.encryption.privateKey, sealed)).toBeUndefined();
  });
});
