// `npm run matrix`: writes docs/matrix.md, the rule matrix of spec/facets/ against every suite's
// checks (svc-conformance matrix --format md); `--check` fails when the committed page differs.
// Apart from `npm run generate` on purpose: the page needs the harness's checks, and the harness
// needs the schemas/ that generate writes, so generate must never wait on the harness.
import { matrixOutput, matrixSources } from '../harness/matrix/command.ts';
import { writeOrCheck } from './lib/outputs.ts';

const PAGE = 'docs/matrix.md';
const { text } = matrixOutput(await matrixSources(), { rule: [], format: 'md' });
process.exitCode = writeOrCheck([{ path: PAGE, content: text }], process.argv.includes('--check'), PAGE, 'npm run matrix');
