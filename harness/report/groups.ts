// Grouping shared by the reporters: results per suite, and per source within a suite.
import type { CheckResult } from '../run/model.ts';

/** The source a check came from: its id up to the last `#` (a vector file), or the whole id. */
export function groupKey(result: Pick<CheckResult, 'id'>): string {
  const hash = result.id.lastIndexOf('#');
  return hash === -1 ? result.id : result.id.slice(0, hash);
}

/** Groups in order of first appearance, so tables follow the order checks ran in. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

/** The first line of a detail, for one-line messages (JUnit message attribute, progress). */
export function firstLine(text: string): string {
  const nl = text.indexOf('\n');
  return nl === -1 ? text : text.slice(0, nl);
}
