// `npm run matrix`: writes docs/matrix.md, the rule matrix of spec/facets/ against every suite's
// checks (svc-conformance matrix --format md); `--check` fails when the committed page differs, or
// when a check claims a cell no facet has (a claim that names nothing is a bug, EMPTY cells are not).
// Apart from `npm run generate` on purpose: the page needs the harness's checks, and the harness
// needs the schemas/ that generate writes, so generate must never wait on the harness.
import { matrixOutput, matrixSources } from '../harness/matrix/command.ts';
import { writeOrCheck } from './lib/outputs.ts';

const PAGE = 'docs/matrix.md';
const { text, matrix } = matrixOutput(await matrixSources(), { rule: [], format: 'md' });
const check = process.argv.includes('--check');
process.exitCode = writeOrCheck([{ path: PAGE, content: text }], check, PAGE, 'npm run matrix');
if (check && matrix.invalid.length > 0) {
  console.error(`${matrix.invalid.length} invalid cell claims (svc-conformance matrix lists them)`);
  process.exitCode = 1;
}
