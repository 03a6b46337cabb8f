// `npm run bench`: figures as ratios measured in one run, never absolute thresholds in tests.
import { benchVerifier } from './verifier.ts';

const results = [await benchVerifier()];
const rows = results.flat();
const w = Math.max(...rows.map((r) => r.name.length));
process.stdout.write(`${'benchmark'.padEnd(w)}  ${'ops/s'.padStart(10)}  ${'ratio'.padStart(6)}  target\n`);
for (const r of rows) {
  const mark = r.target === undefined ? '' : r.ratio! >= r.target ? `>= ${r.target} ok` : `>= ${r.target} BELOW TARGET`;
  process.stdout.write(`${r.name.padEnd(w)}  ${Math.round(r.opsPerSecond).toString().padStart(10)}  ${r.ratio === undefined ? '      ' : r.ratio.toFixed(3).padStart(6)}  ${mark}\n`);
}
if (process.argv.includes('--strict') && rows.some((r) => r.target !== undefined && r.ratio! < r.target)) process.exitCode = 1;
