// Refusals of the drive's formats (protocol/relay/drive) that the vectors pin less directly.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { profileFor } from '../../protocol/common/profile.ts';
import { driveContext, ContextError } from '../../protocol/relay/drive/context.ts';
import { sealChunk, openChunk, validChunkSize } from '../../protocol/relay/drive/chunk.ts';
import { sealTo, openSeal } from '../../protocol/relay/drive/seal.ts';
import { normalizeName } from '../../protocol/relay/drive/names.ts';
import { clampPowBits, checkPow, solvePow } from '../../protocol/relay/drive/pow.ts';
import { guestAuthor, guestKey } from '../../protocol/relay/drive/guest.ts';
import { manifestProblems } from '../../protocol/relay/drive/manifest.ts';
import { recordProblems, chainProblem } from '../../protocol/relay/drive/record.ts';
import { shareProblems } from '../../protocol/relay/drive/share.ts';
import { x25519PublicKey } from '../../protocol/relay/seal.ts';
import * as nd from '../../harness/impl/noble-drive.ts';

const profile = profileFor('svc');
const ctx = driveContext('alice.example.com', '0123456789abcdef0123456789abcdef', 'content', 1);
const key = new Uint8Array(32).fill(1);

/** A chunk whose padded plaintext is `padded` exactly, so the opener's own checks are reached. */
function rawChunk(padded: Uint8Array): Uint8Array {
  const nonce = new Uint8Array(24).fill(2);
  const aad = new Uint8Array([...Buffer.from('svc/drive/chunk/v1\n'), ...ctx]);
  return new Uint8Array([...nonce, ...xchacha20poly1305(key, nonce, aad).encrypt(padded)]);
}

describe('chunks (ra.drive.chunk, ra.drive.context)', () => {
  it('round-trips and refuses another context, key or a tampered byte', () => {
    const chunk = sealChunk(profile, key, Buffer.from('hello'), ctx);
    expect(Buffer.from(openChunk(profile, key, chunk, ctx)!).toString()).toBe('hello');
    expect(openChunk(profile, key, chunk, driveContext('alice.example.com', 'other', 'content', 1))).toBeUndefined();
    expect(openChunk(profile, new Uint8Array(32), chunk, ctx)).toBeUndefined();
    chunk[30]! ^= 1;
    expect(openChunk(profile, key, chunk, ctx)).toBeUndefined();
  });

  it('refuses a length prefix off the padded size and non-zero padding, as noble does', () => {
    const tooLong = new Uint8Array(4096);
    new DataView(tooLong.buffer).setUint32(0, 4093);
    const dirty = new Uint8Array(4096);
    new DataView(dirty.buffer).setUint32(0, 3);
    dirty[100] = 1;
    const spare = new Uint8Array(8192);
    new DataView(spare.buffer).setUint32(0, 3);
    for (const padded of [tooLong, dirty, spare]) {
      expect(openChunk(profile, key, rawChunk(padded), ctx)).toBeUndefined();
      expect(nd.openChunk(profile, key, rawChunk(padded), ctx)).toBeUndefined();
    }
  });

  it('accepts only sizes on the bucket grid', () => {
    expect([4136, 8232, 4135, 4137, 40].map(validChunkSize)).toEqual([true, true, false, false, false]);
  });

  it('refuses an empty, oversized or NUL context field', () => {
    expect(() => driveContext('', 'n', 'content', 1)).toThrow(ContextError);
    expect(() => driveContext('a'.repeat(1025), 'n', 'content', 1)).toThrow(ContextError);
    expect(() => driveContext('a\u0000b', 'n', 'content', 1)).toThrow(ContextError);
  });
});

describe('seals (ra.drive.seal)', () => {
  const priv = randomBytes(32);
  const pub = x25519PublicKey(priv);
  it('binds the context and requires one on drive domains', () => {
    const sealed = sealTo(profile, 'key', pub, Buffer.from('k'), ctx);
    expect(openSeal(profile, 'key', priv, sealed, ctx)).toBeDefined();
    expect(openSeal(profile, 'name', priv, sealed, ctx)).toBeUndefined();
    expect(openSeal(profile, 'key', priv, sealed, new Uint8Array())).toBeUndefined();
    expect(() => sealTo(profile, 'key', pub, Buffer.from('k'), new Uint8Array())).toThrow(/requires/);
    expect(() => sealTo(profile, 'message', pub, Buffer.from('k'), ctx)).toThrow(/takes no/);
  });
});

describe('names (ra.drive.name-hash)', () => {
  it.each([['.'], ['..'], ['a/b'], ['a\u0000b'], [''], ['x'.repeat(256)], ['\ud800']])('refuses %j', (name) => {
    expect(normalizeName(name)).toBeUndefined();
    expect(nd.validName(name)).toBeUndefined();
  });
  it('counts bytes after NFC: 255 bytes pass', () => {
    expect(normalizeName('é'.repeat(127) + 'x')).toBeDefined();
  });
});

describe('proof of work (ra.drive.pow)', () => {
  it('clamps and solves', () => {
    expect([Number.NaN, 0, 7, 31].map(clampPowBits)).toEqual([16, 16, 8, 30]);
    const solution = solvePow('t', 10);
    expect(checkPow('t', solution, 10)).toBe(true);
    expect(nd.powValid('t', solution, 10)).toBe(true);
  });
});

describe('guest authors (ra.drive.guest)', () => {
  it('reads the key back and refuses non-canonical names', () => {
    const pub = randomBytes(32);
    const author = guestAuthor(pub);
    expect(Buffer.from(guestKey(author)!)).toEqual(pub);
    expect(guestKey(author.toUpperCase())).toBeUndefined();
    expect(guestKey(author.replace('.guest.invalid', '.example'))).toBeUndefined();
    expect(guestKey(`g${'a'.repeat(51)}.guest.invalid`)).toBeUndefined();
  });
});

describe('object shapes', () => {
  const id = (c: string) => c.repeat(32);
  const sealed = { ciphertext: 'x', ephemeral_public_key: 'y', nonce: 'z' };
  const file = {
    format: 1,
    drive: 'a.example',
    node: id('a'),
    version: id('b'),
    parent: '',
    author: 'a.example',
    generation: 1,
    kind: 'file',
    mode: 'replace',
    folder: id('c'),
    name: sealed,
    name_hash: id('dd'),
    node_key: sealed,
    content_key: sealed,
    count: 0,
    pages: [],
  };
  it('manifests: operations and public nodes (ra.drive.manifest-shape)', () => {
    expect(manifestProblems({ ...file, operation: 'create' })).toEqual([]);
    expect(manifestProblems({ ...file, operation: 'create', content_key: undefined })).not.toEqual([]);
    expect(manifestProblems({ ...file, operation: 'replace', parent: id('e') })).not.toEqual([]);
    expect(manifestProblems({ ...file, operation: 'create', name: undefined })).toContain('a name and its name_hash go together');
    const open = { ...file, operation: 'create', name: undefined, node_key: undefined, content_key: undefined, public: true, plain_name: 'a.txt', plain_key: 'k' };
    expect(manifestProblems(open)).toEqual([]);
    expect(manifestProblems({ ...open, plain_name: 'cafe\u0301' })).toContain('plain_name is not a valid NFC name');
    expect(manifestProblems({ ...open, public: undefined })).not.toEqual([]);
    expect(manifestProblems({ ...file, operation: 'create', count: 5, pages: [] })).toContain('the page list does not match the chunk count');
  });
  it('records: chunks xor sealed, and the chain (ra.drive.record)', () => {
    expect(recordProblems({ sequence: 1, previous: '', chunks: [], sealed })).toEqual([]);
    expect(recordProblems({ sequence: 1, previous: '', chunks: [{}], sealed })).not.toEqual([]);
    expect(recordProblems({ sequence: 2, previous: '', chunks: [{}] })).not.toEqual([]);
    expect(chainProblem({ sequence: 3, previous: 'h' }, 1, 'h')).toMatch(/gap/);
    expect(chainProblem({ sequence: 1, previous: '' }, 1, 'h')).toMatch(/duplicate/);
    expect(chainProblem({ sequence: 2, previous: 'x' }, 1, 'h')).toMatch(/mismatch/);
  });
  it('shares: member xor link, key-bearing roles, link passwords (ra.drive.share)', () => {
    const share = { member: 'b.example', role: 'read', node_key: sealed };
    expect(shareProblems(share)).toEqual([]);
    expect(shareProblems({ ...share, link: id('f') })).not.toEqual([]);
    expect(shareProblems({ ...share, role: 'append' })).not.toEqual([]);
    expect(shareProblems({ ...share, kdf: 'argon2id-m65536-t3-p1', salt: 'BwcHBwcHBwcHBwcHBwcHBw', verifier_hash: id('ab') })).toContain('invalid link password parameters');
    expect(shareProblems({ link: id('f'), role: 'admin', node_key: sealed })).toContain('links cannot administer');
    expect(shareProblems({ ...share, pow: 31 })).toContain('proof-of-work difficulty above the maximum');
  });
});
