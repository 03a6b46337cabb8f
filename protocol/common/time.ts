// Strict RFC 3339 date-time (section 5.6): full date, `T`, full time with seconds, optional
// fraction, and `Z` or a numeric offset. Calendar ranges are checked; no leap second (60). Read
// by position, without a regular expression or a Date per call: a verifier parses two per
// approval (test/protocol/time.test.ts holds it to the section's grammar as a regex).

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1-12) of the proleptic Gregorian `year`. */
function daysIn(year: number, month: number): number {
  return month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : DAYS[month - 1]!;
}

/** The number written by the ASCII digits at [from, to), or -1 when one is not a digit. */
function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Milliseconds since the epoch, or undefined when `text` is not a strict RFC 3339 date-time. */
export function parseRfc3339(text: unknown): number | undefined {
  if (typeof text !== 'string' || text.length < 20) return undefined;
  if (text[4] !== '-' || text[7] !== '-' || (text[10] !== 'T' && text[10] !== 't') || text[13] !== ':' || text[16] !== ':') return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  let i = 19;
  let fraction = 0;
  if (text[i] === '.') {
    let end = i + 1;
    while (end < text.length && digits(text, end, end + 1) >= 0) end++;
    if (end === i + 1) return undefined;
    fraction = Math.floor(Number(`0${text.slice(i, end)}`) * 1000);
    i = end;
  }
  let offset = 0;
  if (i === text.length - 1 && (text[i] === 'Z' || text[i] === 'z')) offset = 0;
  else if (i === text.length - 6 && (text[i] === '+' || text[i] === '-') && text[i + 3] === ':') {
    const oh = digits(text, i + 1, i + 3);
    const om = digits(text, i + 4, i + 6);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return undefined;
    offset = (oh * 60 + om) * 60_000 * (text[i] === '-' ? -1 : 1);
  } else return undefined;
  // Date.UTC reads years 0 to 99 as 1900 to 1999: such a year is counted 400 years (146097 days) on.
  if (year < 100) return Date.UTC(year + 400, month - 1, day, hour, minute, second, fraction) - 146097 * 86_400_000 - offset;
  return Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offset;
}

/** RFC 3339 in UTC with whole seconds, the form the documents' examples use. */
export function formatRfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
