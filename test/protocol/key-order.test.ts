// Keys are sorted in code-point order (the order of their UTF-8 bytes), never UTF-16 code units:
// the two differ for keys outside the BMP, which a sender chooses in message metadata.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, compareCodePoints } from '../../protocol/common/json.ts';
import { canonicalString } from '../../protocol/common/canonical.ts';
import { defaultProfile as profile } from '../../protocol/common/profile.ts';

const utf8Order = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

describe('key order', () => {
  it('agrees with UTF-8 byte order on any well-formed strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => Math.sign(compareCodePoints(a, b)) === utf8Order(a, b)),
      { numRuns: 2000 },
    );
  });

  it('puts a key outside the BMP after U+E000..U+FFFF, where UTF-16 order puts it first', () => {
    const keys = ['\u{1F600}', '\uFFFD', '\uE000', 'z'];
    expect([...keys].sort()).toEqual(['z', '\u{1F600}', '\uE000', '\uFFFD']);
    expect([...keys].sort(compareCodePoints)).toEqual(['z', '\uE000', '\uFFFD', '\u{1F600}']);
  });

  it('sorts canonical JSON members and message metadata lines by code point', () => {
    expect(canonicalJson({ '\u{1F600}': 1, '\uFFFD': 2 })).toBe('{"\uFFFD":2,"\u{1F600}":1}');
    const signed = canonicalString(profile, 'message', {
      sender: 'a.example',
      recipient: 'b.example',
      timestamp: '2026-01-15T09:30:00Z',
      payload: 'eA',
      metadata: { '\u{1F600}': 'x', '\uFFFD': 'y' },
    });
    expect(signed.split('\n').slice(-2)).toEqual(['meta:\uFFFD:y', 'meta:\u{1F600}:x']);
  });
});
