// The command Stryker runs once per mutant (scripts/mutation/areas.ts): the area's checks against
// a fresh reference, exiting as they do (non-zero kills). It also appends to LOG which checks
// failed under the active mutant, document checks apart from profile checks, so the figures can
// tell a mutant killed by the document from one only a project decision kills (the reference run
// gates on both). Plain JavaScript: it starts once per mutant.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [log, ...args] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'svc-kill-'));
const report = join(dir, 'report.json');
const run = spawnSync(process.execPath, ['bin/svc-conformance.js', ...args, '--report', `json=${report}`], { stdio: 'inherit' });
let failed = [];
try {
  const results = JSON.parse(readFileSync(report, 'utf8')).results ?? [];
  failed = results.filter((r) => (r.status === 'failed' || r.status === 'error') && r.gating !== false && r.expected === undefined);
} catch {
  // No report: the run did not get that far (the mutant broke the start); the exit code says it.
}
const mutant = process.env.__STRYKER_ACTIVE_MUTANT__;
if (log && mutant !== undefined) {
  const ids = (profile) => failed.filter((r) => Boolean(r.profile) === profile).map((r) => r.id);
  appendFileSync(log, `${JSON.stringify({ mutant, exit: run.status, document: ids(false), profile: ids(true) })}\n`);
}
rmSync(dir, { recursive: true, force: true });
process.exit(run.status ?? 1);
