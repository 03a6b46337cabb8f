// parseRfc3339 reads by position; RFC 3339 section 5.6's grammar, written as a regular
// expression with the calendar's ranges, is the oracle it must agree with on any string.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseRfc3339 } from '../../protocol/common/time.ts';

const GRAMMAR = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function oracle(text: string): number | undefined {
  const m = GRAMMAR.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : DAYS[month - 1]!)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const oh = m[9] ? Number(m[10]) : 0;
  const om = m[9] ? Number(m[11]) : 0;
  if (oh > 23 || om > 59) return undefined;
  const offset = (oh * 60 + om) * 60_000 * (m[9] === '-' ? -1 : 1);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0);
  return date.getTime() - offset;
}

const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
/** Strings shaped like date-times, each part sometimes out of range or one character off. */
const nearDateTime = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
      fc.string({ maxLength: 5 }),
    ),
    two(13),
    two(32),
    fc.constantFrom('T', 't', ' ', 'x'),
    two(25),
    two(61),
    two(61),
    fc.oneof(fc.constant(''), fc.stringMatching(/^\.\d{0,12}$/), fc.constant('.')),
    fc.oneof(
      fc.constantFrom('Z', 'z', '', 'ZZ', '+'),
      fc.tuple(fc.constantFrom('+', '-', '~'), two(25), fc.constantFrom(':', '', ';'), two(61)).map((p) => p.join('')),
    ),
  )
  .map(([y, mo, d, t, h, mi, s, f, z]) => `${y}-${mo}-${d}${t}${h}:${mi}:${s}${f}${z}`);

describe('parseRfc3339 (RFC 3339 section 5.6)', () => {
  it('agrees with the grammar on strings shaped like date-times', () => {
    fc.assert(
      fc.property(nearDateTime, (text) => {
        expect(parseRfc3339(text)).toBe(oracle(text));
      }),
      { numRuns: 20_000 },
    );
  });
  it('agrees with the grammar on any string', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        expect(parseRfc3339(text)).toBe(oracle(text));
      }),
      { numRuns: 5_000 },
    );
  });
  it('reads fractions, offsets and leap days', () => {
    expect(parseRfc3339('2024-02-29T23:59:59.9999+23:59')).toBe(Date.parse('2024-02-29T00:00:59.999Z'));
    expect(parseRfc3339('0099-01-01T00:00:00Z')).toBe(Date.UTC(2099, 0, 1) - 146097 * 86_400_000 * 5);
    for (const bad of ['2023-02-29T00:00:00Z', '2026-01-15T09:30:00.Z', '2026-01-15T09:30:00+0100', '２026-01-15T09:30:00Z', '2026-01-15T09:30:00Z ']) expect(parseRfc3339(bad)).toBeUndefined();
  });
});
