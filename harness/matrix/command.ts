// `svc-conformance matrix`: the rule matrix of spec/facets/ against every suite's checks (listed
// without a server), as text, Markdown or JSON; with --strict, exit 1 on an EMPTY cell or an
// invalid claim.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ConfigError, EXIT_FAIL, EXIT_PASS } from '../run/exit.ts';
import type { Check, RuleEntry } from '../run/model.ts';
import { buildMatrix, isEmpty, type FacetLike, type Matrix, type MatrixFilter, type OneCaseLike } from './matrix.ts';
import { renderJson, renderMarkdown, renderText } from './render.ts';
import { ruleMatches } from '../run/select.ts';
import type { Output } from '../report/console.ts';

export interface MatrixFlags {
  doc?: number;
  rule: string[];
  empty?: boolean;
  format: 'text' | 'md' | 'json';
  strict?: boolean;
}

/** What the matrix reads; tests give their own. */
export interface MatrixSources {
  facets: readonly FacetLike[];
  rules: readonly RuleEntry[];
  checks: readonly Check[];
  oneCase?: readonly OneCaseLike[];
}

export async function matrixSources(): Promise<MatrixSources> {
  const [{ facets, oneCase }, { rules }, { listChecks }] = await Promise.all([import('../../schemas/ts/facets.ts'), import('../../schemas/ts/rules.ts'), import('./checks.ts')]);
  return { facets, oneCase, rules, checks: await listChecks() };
}

/** The matrix as the flags select it, and whether --strict fails it. */
export function matrixOutput(sources: MatrixSources, flags: MatrixFlags): { text: string; matrix: Matrix; code: number } {
  const filter: MatrixFilter = { ...(flags.doc !== undefined ? { doc: flags.doc } : {}), ...(flags.rule.length > 0 ? { rules: flags.rule } : {}) };
  if (filter.rules && !filter.rules.some((f) => sources.rules.some((r) => ruleMatches(f, r.id)))) {
    throw new ConfigError(`--rule ${filter.rules.join(', ')} matches no rule of the catalogue`);
  }
  const matrix = buildMatrix(sources.facets, sources.rules, sources.checks, filter, sources.oneCase);
  const empty = flags.empty === true;
  const text = flags.format === 'json' ? renderJson(matrix, empty) : flags.format === 'md' ? renderMarkdown(matrix, sources.rules, empty) : renderText(matrix, empty);
  const failed = flags.strict === true && (matrix.invalid.length > 0 || matrix.cells.some(isEmpty));
  return { text, matrix, code: failed ? EXIT_FAIL : EXIT_PASS };
}

const HELP = `
A cell is one value of one facet of a rule (spec/facets/) on one operation: a principal (who), a
bound part (binding), inside|outside (window), at|past|other-scope (limit), replay|race (once),
both-faults (order), a form or near-miss (normalization), a use the event ends (lifecycle). It is
filled by the checks that claim it (\`cells\` on a check), or unfilled with the facet's reason
(unobservable, not applicable), or EMPTY. A behaviour rule with nothing to spread over is named in
\`one_case\` with why, and counted apart from the rules without facets. A claim must name a facet of a rule the check decides,
one of its values and one of its operations; a claim that does not is listed as invalid.

Exit codes:
  0  printed (and with --strict: no EMPTY cell, no invalid claim)
  1  --strict, and an EMPTY cell or an invalid claim
  2  bad options

Examples:
  $ svc-conformance matrix
  $ svc-conformance matrix --doc 1 --empty
  $ svc-conformance matrix --rule ra.messages --format json
  $ svc-conformance matrix --strict
  $ npm run matrix            (writes docs/matrix.md)
`;

export function registerMatrixCommand(cmd: Command, ctx: { io: { stdout: Output }; setCode(code: number): void; sources?: () => Promise<MatrixSources> }): void {
  cmd
    .description('print the rule matrix: rule × facet × value × operation → the checks that fill each cell, its unfilled reason, or EMPTY')
    .option('--doc <n>', 'only the rules of document N (1 native sign-in, 2 OIDC bridge, 3 relay API)', (v: string) => {
      if (!/^[1-3]$/.test(v)) throw new InvalidArgumentError('must be 1, 2 or 3');
      return Number(v);
    })
    .option('--rule <id>', 'only this rule and its sub-ids (repeatable; `ra.messages` selects ra.messages.*)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--empty', 'only the cells nothing fills and nothing explains')
    .addOption(new Option('--format <format>', 'output').choices(['text', 'md', 'json']).default('text'))
    .option('--strict', 'exit 1 on any EMPTY cell or invalid claim')
    .addHelpText('after', HELP)
    .action(async (flags: MatrixFlags) => {
      const out = matrixOutput(await (ctx.sources ?? matrixSources)(), flags);
      ctx.io.stdout.write(out.text);
      ctx.setCode(out.code);
    });
}
