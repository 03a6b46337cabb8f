import * as ed from '@noble/ed25519';
import { x25519 } from '@noble/curves/ed25519.js';
import { limits } from '../../schemas/ts/limits.ts';
import { DEFAULT_SERVICE_NAME, profileFor } from '../../protocol/common/profile.ts';
import { publicKeyFromSeed } from '../../protocol/common/ed25519.ts';
import { validServiceName } from '../../protocol/common/names.ts';
import { normalizeOrigin } from '../../protocol/common/url.ts';
import { x25519PublicKey } from '../../protocol/relay/seal.ts';
import { parseRfc3339, formatRfc3339 } from '../../protocol/common/time.ts';
import { VectorError, check, same, type Json, b64u, readJson, derived } from './check.ts';


export const profile = profileFor(DEFAULT_SERVICE_NAME);
export const NAME = profile.name;
export const AUTH = profile.ids.auth_field;

export interface EdKey {
  name: string;
  seed: Uint8Array;
  pub: Uint8Array;
  text: string;
}
export interface XKey {
  name: string;
  priv: Uint8Array;
  pub: Uint8Array;
  text: string;
}

export const keyFixtures = readJson('fixtures/keys.json');
export const edKeys = new Map<string, EdKey>();
export const xKeys = new Map<string, XKey>();
export const byteFixtures = new Map<string, Uint8Array>();
for (const [name, raw] of Object.entries(keyFixtures)) {
  if (name === 'description') continue;
  const entry = raw as Json;
  const label = entry.label as string;
  check(typeof label === 'string' && label.length > 0, `fixtures/keys.json ${name}: no label`);
  if (entry.type === 'ed25519') {
    const seed = derived(label);
    same(`fixtures/keys.json ${name}.seed (SHA-256 of "${label}")`, entry.seed, b64u(seed));
    const pub = publicKeyFromSeed(seed);
    same(`fixtures/keys.json ${name}.public_key`, entry.public_key, `ed25519:${b64u(pub)}`);
    same(`fixtures/keys.json ${name}.public_key (noble)`, b64u(ed.getPublicKey(seed)), b64u(pub));
    edKeys.set(name, { name, seed, pub, text: `ed25519:${b64u(pub)}` });
  } else if (entry.type === 'x25519') {
    const priv = derived(label);
    same(`fixtures/keys.json ${name}.private_key (SHA-256 of "${label}")`, entry.private_key, b64u(priv));
    const pub = x25519PublicKey(priv);
    same(`fixtures/keys.json ${name}.public_key`, entry.public_key, `x25519:${b64u(pub)}`);
    same(`fixtures/keys.json ${name}.public_key (noble)`, b64u(x25519.getPublicKey(priv)), b64u(pub));
    xKeys.set(name, { name, priv, pub, text: `x25519:${b64u(pub)}` });
  } else if (entry.type === 'bytes') {
    const value = derived(label, entry.length as number);
    same(`fixtures/keys.json ${name}.value (SHA-256 of "${label}", ${String(entry.length)} bytes)`, entry.value, b64u(value));
    byteFixtures.set(name, value);
  } else {
    throw new VectorError(`fixtures/keys.json ${name}: unknown type ${String(entry.type)}`);
  }
}
export const edKey = (name: string): EdKey => edKeys.get(name) ?? fail(`fixtures/keys.json has no ed25519 key ${name}`);
export const xKey = (name: string): XKey => xKeys.get(name) ?? fail(`fixtures/keys.json has no x25519 key ${name}`);
export const bytesOf = (name: string): Uint8Array => byteFixtures.get(name) ?? fail(`fixtures/keys.json has no bytes ${name}`);
export function fail(message: string): never {
  throw new VectorError(message);
}

export interface SessionFixture {
  key: string;
  public_key: string;
  issued_at: string;
  expires_at: string;
  nonce: string;
}
export interface IdentityFixture {
  resolvable: boolean;
  key: string;
  public_key: string;
  encryption_key?: string;
  encryption_public_key?: string;
  relay?: string;
  capabilities?: string[];
  updated_at?: string;
  previous_keys?: Array<{ key: string; public_key: string; valid_until: string }>;
  sessions?: Record<string, SessionFixture>;
}
export const identityFixtures = readJson('fixtures/identities.json');
export const identities = new Map<string, IdentityFixture>();
for (const [id, raw] of Object.entries(identityFixtures)) {
  if (id === 'description') continue;
  const entry = raw as IdentityFixture;
  same(`fixtures/identities.json ${id}: a valid service name`, validServiceName(id), id);
  same(`fixtures/identities.json ${id}.public_key`, entry.public_key, edKey(entry.key).text);
  if (entry.encryption_key) same(`fixtures/identities.json ${id}.encryption_public_key`, entry.encryption_public_key, xKey(entry.encryption_key).text);
  for (const p of entry.previous_keys ?? []) {
    same(`fixtures/identities.json ${id} previous key ${p.key}`, p.public_key, edKey(p.key).text);
    check(parseRfc3339(p.valid_until) !== undefined, `fixtures/identities.json ${id}: valid_until is not RFC 3339`);
  }
  for (const [sid, s] of Object.entries(entry.sessions ?? {})) {
    same(`fixtures/identities.json ${id} session ${sid}`, s.public_key, edKey(s.key).text);
    const span = parseRfc3339(s.expires_at)! - parseRfc3339(s.issued_at)!;
    check(span > 0 && span <= limits.session_ttl_max_seconds * 1000, `fixtures/identities.json ${id} session ${sid}: window outside the 24-hour cap`);
  }
  identities.set(id, entry);
}
export const identity = (id: string): IdentityFixture => identities.get(id) ?? fail(`fixtures/identities.json has no ${id}`);

export const clock = readJson('fixtures/clock.json');
export const NOW_TEXT = clock.now as string;
export const NOW = parseRfc3339(NOW_TEXT) ?? fail('fixtures/clock.json: now is not RFC 3339');
same('fixtures/clock.json now is in whole seconds, UTC', formatRfc3339(NOW), NOW_TEXT);
export const ORIGIN = clock.rp_origin as string;
same('fixtures/clock.json rp_origin is a normalized origin', normalizeOrigin(ORIGIN), ORIGIN);
/** RFC 3339 (UTC, whole seconds) `seconds` from the fixed `now`. */
export const at = (seconds: number): string => formatRfc3339(NOW + seconds * 1000);

export const ALICE = 'alice.example.com';
export const BOB = 'bob.example.org';
export const CAROL = 'carol.example.net';
export const alice = identity(ALICE);
export const aliceKey = edKey(alice.key);
export const bobKey = edKey(identity(BOB).key);
export const carol = identity(CAROL);
check(!carol.resolvable, 'fixtures/identities.json: carol.example.net must be unresolvable');
export const carolKey = edKey(carol.key);
export const alicePrevious = alice.previous_keys?.[0] ?? fail('alice.example.com needs a previous key');
export const previousKey = edKey(alicePrevious.key);
export const GRACE_END = parseRfc3339(alicePrevious.valid_until)!;
export const SESSION_ID = Object.keys(alice.sessions ?? {})[0] ?? fail('alice.example.com needs a session');
export const session = alice.sessions![SESSION_ID]!;
export const sessionKey = edKey(session.key);
export const recipient = xKey(alice.encryption_key ?? fail('alice.example.com needs an encryption key'));
export const ephemeral = xKey('ephemeral-x25519');
