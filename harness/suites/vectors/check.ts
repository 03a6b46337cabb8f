// Building blocks for vector checks: a check from a vector, its level from the rules it cites,
// and comparisons whose failure text says what differed.
import { rules as catalogue, type RuleId } from '../../../schemas/ts/rules.ts';
import type { Check, Level, Outcome } from '../../run/model.ts';
import { strongest as strongestLevel } from '../../run/select.ts';
import type { Profile } from '../../../protocol/common/profile.ts';
import type { Core } from './core.ts';

const levels = new Map(catalogue.map((r) => [r.id, r.level as Level]));

/** The strongest level among the rules a check cites; an unknown rule id is a bug in the suite. */
export function strongest(rules: readonly string[]): Level {
  return strongestLevel(
    rules.map((id) => {
      const level = levels.get(id);
      if (level === undefined) throw new Error(`vector check cites unknown rule ${id}`);
      return level;
    }),
  );
}

export interface KindContext {
  profile: Profile;
  /** "<dir label>/<file name>", the group of every check from this file. */
  source: string;
  core: Core;
  file: unknown;
}

/** Mismatches collected by a check; empty means passed. */
export class Expect {
  readonly problems: string[] = [];

  equal(label: string, actual: unknown, expected: unknown): this {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    if (a !== e) this.problems.push(`${label}: expected ${e}, got ${a}`);
    return this;
  }

  that(condition: boolean, problem: string): this {
    if (!condition) this.problems.push(problem);
    return this;
  }

  /** The core and the noble implementation must agree, and match the vector when it says. */
  agree(label: string, core: boolean, noble: boolean, expected?: boolean): this {
    if (core !== noble) this.problems.push(`${label}: core says ${core}, noble says ${noble} (implementations disagree)`);
    else if (expected !== undefined && core !== expected) this.problems.push(`${label}: expected ${expected}, both implementations say ${core}`);
    return this;
  }

  outcome(evidence?: unknown): Outcome {
    return this.problems.length === 0 ? { status: 'passed' } : { status: 'failed', detail: this.problems.join('\n'), evidence };
  }
}

const KNOWN = new Set<string>(catalogue.map((r) => r.id));

/**
 * Rule ids read from data (a vector's `rules`, spec/signing.yaml): checked against the catalogue,
 * so a vector citing a rule that does not exist fails at load instead of passing unnoticed.
 */
export function ruleIds(raw: unknown): RuleId[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new TypeError(`rules must be a list of rule ids, not ${JSON.stringify(raw)}`);
  for (const id of raw) if (typeof id !== 'string' || !KNOWN.has(id)) throw new TypeError(`unknown rule id ${JSON.stringify(id)}`);
  return raw as RuleId[];
}

export function vectorCheck(kc: KindContext, name: string, rules: RuleId[], run: (expect: Expect) => void | Promise<void>, evidence?: unknown): Check {
  const unique = [...new Set(rules)];
  return {
    id: `vectors/${kc.source}#${name}`,
    title: `${kc.source} ${name}`,
    suite: 'vectors',
    rules: unique,
    level: strongest(unique),
    async run() {
      const expect = new Expect();
      await run(expect);
      return expect.outcome(evidence);
    },
  };
}

/** Vector lists come as a top-level array (interop) or under `vectors` (project files). */
export function listOf(file: unknown, key = 'vectors'): Record<string, unknown>[] {
  if (Array.isArray(file)) return file as Record<string, unknown>[];
  const list = (file as Record<string, unknown> | null)?.[key];
  return Array.isArray(list) ? (list as Record<string, unknown>[]) : [];
}

/** A stable name for a vector without one. */
export function nameOf(v: Record<string, unknown>, index: number, field = 'input'): string {
  // `#` separates a check's source from its name, so it is escaped inside names.
  if (typeof v.name === 'string') return v.name.replaceAll('#', '%23');
  const label = JSON.stringify(v[field] ?? '').slice(0, 48);
  return `${index}:${label}`.replaceAll('#', '%23');
}

