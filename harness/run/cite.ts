// What a check's citations make of it: the strongest level among the rules it decides, and
// whether it judges the document or the project's profile. A rule id the catalogue lacks, or a
// check deciding both document rules and project decisions, is a bug in the suite: it throws
// when the suite loads, never mid-run.
import { rules as catalogue } from '../../schemas/ts/rules.ts';
import type { RuleId } from '../../schemas/ts/rules.ts';
import type { Level } from './model.ts';
import { strongest } from './select.ts';

const byId = new Map(catalogue.map((r) => [r.id, r]));

export interface Citation {
  rules: RuleId[];
  context?: RuleId[];
  level: Level;
  /** True when every decided rule is a project decision (`origin: project`). */
  profile: boolean;
}

export function cite(checkId: string, rules: readonly RuleId[], context: readonly RuleId[] = []): Citation {
  const decided = [...new Set(rules)];
  if (decided.length === 0) throw new Error(`${checkId} decides no rule`);
  for (const id of [...decided, ...context]) if (!byId.has(id)) throw new Error(`${checkId} cites unknown rule ${id}`);
  const entries = decided.map((id) => byId.get(id)!);
  const project = entries.filter((r) => r.origin === 'project');
  if (project.length > 0 && project.length < entries.length) {
    throw new Error(`${checkId} mixes document rules and project decisions (${project.map((r) => r.id).join(', ')}): split it into a document check and a profile check`);
  }
  const ctx = [...new Set(context)].filter((id) => !decided.includes(id));
  return {
    rules: decided,
    ...(ctx.length > 0 ? { context: ctx } : {}),
    level: strongest(entries.map((r) => r.level as Level)),
    profile: project.length > 0,
  };
}
