// Strict RFC 3339 date-time (section 5.6): full date, `T`, full time with seconds, optional
// fraction, and `Z` or a numeric offset. Calendar ranges are checked; no leap second (60).
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1-12) of the proleptic Gregorian `year`: the calendar, without a Date per call (a verifier's hot path). */
function daysIn(year: number, month: number): number {
  return month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : DAYS[month - 1]!;
}

/** Milliseconds since the epoch, or undefined when `text` is not a strict RFC 3339 date-time. */
export function parseRfc3339(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  const hour = +m[4]!;
  const minute = +m[5]!;
  const second = +m[6]!;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (m[9]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (oh * 60 + om) * 60_000 * (m[9] === '-' ? -1 : 1);
  }
  const fraction = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  // Date.UTC reads years 0 to 99 as 1900 to 1999: such a year is counted 400 years (146097 days) on.
  if (year < 100) return Date.UTC(year + 400, month - 1, day, hour, minute, second, fraction) - 146097 * 86_400_000 - offset;
  return Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offset;
}

/** RFC 3339 in UTC with whole seconds, the form the documents' examples use. */
export function formatRfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
