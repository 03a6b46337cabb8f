// Selection of checks by suite, rule, level and id pattern. Within one kind of filter the
// values are alternatives (OR); different kinds narrow together (AND).
import type { Check, Level } from './model.ts';
import { ConfigError } from './exit.ts';

export interface Selection {
  suites?: string[];
  rules?: string[];
  level?: Level;
  checks?: string[];
}

const STRENGTH: Record<Level, number> = { MUST: 3, SHOULD: 2, MAY: 1 };

export const LEVELS: readonly Level[] = ['MUST', 'SHOULD', 'MAY'];

export function parseLevel(value: string): Level {
  const upper = value.toUpperCase();
  if ((LEVELS as readonly string[]).includes(upper)) return upper as Level;
  throw new ConfigError(`level must be one of ${LEVELS.join(', ')}; got "${value}"`);
}

/** True when `level` is `min` or stronger (MUST > SHOULD > MAY). */
export function atLeast(level: Level, min: Level): boolean {
  return STRENGTH[level] >= STRENGTH[min];
}

/** The strongest of some levels; MAY for none. */
export function strongest(levels: Iterable<Level>): Level {
  let best: Level = 'MAY';
  for (const l of levels) if (STRENGTH[l] > STRENGTH[best]) best = l;
  return best;
}

/**
 * A rule filter matches the id itself or its sub-ids on a dot boundary, so `ns.verify` selects
 * `ns.verify.2` but `ns.verify.1` does not select `ns.verify.10`. A trailing `*` or `.` asks
 * for a plain prefix match.
 */
export function ruleMatches(filter: string, id: string): boolean {
  if (filter.endsWith('*')) return id.startsWith(filter.slice(0, -1));
  if (filter.endsWith('.')) return id.startsWith(filter);
  return id === filter || id.startsWith(`${filter}.`);
}

/** A pattern with `*` or `?` is a glob over the whole id (`*` crosses `/` and `#`); otherwise a substring. */
export function idMatches(pattern: string, id: string): boolean {
  if (!/[*?]/.test(pattern)) return id.includes(pattern);
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.+()|[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`).test(id);
}

export function selectChecks(checks: readonly Check[], sel: Selection): Check[] {
  const nonEmpty = (xs?: string[]): xs is string[] => xs !== undefined && xs.length > 0;
  // A pattern that is exactly some check's id selects that check alone (as replay hints need),
  // even where it is also a substring of other ids.
  const ids = new Set(checks.map((c) => c.id));
  const matches = (p: string, id: string): boolean => (ids.has(p) ? p === id : idMatches(p, id));
  return checks.filter(
    (c) =>
      (!nonEmpty(sel.suites) || sel.suites.includes(c.suite)) &&
      (!nonEmpty(sel.rules) || sel.rules.some((f) => c.rules.some((r) => ruleMatches(f, r)))) &&
      (sel.level === undefined || atLeast(c.level, sel.level)) &&
      (!nonEmpty(sel.checks) || sel.checks.some((p) => matches(p, c.id))),
  );
}

/** Says which filters matched nothing, for the "nothing tested" message. */
export function describeSelection(sel: Selection): string {
  const parts: string[] = [];
  if (sel.suites?.length) parts.push(`--suite ${sel.suites.join(',')}`);
  if (sel.rules?.length) parts.push(`--rule ${sel.rules.join(',')}`);
  if (sel.level) parts.push(`--level ${sel.level}`);
  if (sel.checks?.length) parts.push(`--check ${sel.checks.join(',')}`);
  return parts.join(' ');
}
