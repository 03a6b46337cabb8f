// `npm run stability -- N [--load K] [-- RUN ARGS...]`: runs the main job (`svc-conformance run
// --reference`, or with RUN ARGS appended, e.g. `-- --suite rp`) N times one after another while K
// busy processes (default twice the cores) load the CPU beside it, as other jobs do on a shared
// CI runner. It prints each run's counts and its failures and errors (with their codes and
// causes), and every check whose verdict changed between runs. Exit 0 when every run passed with
// the same verdicts, 1 otherwise. Each run writes its JSON report under a temporary directory,
// kept when a run was not clean.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunReport } from '../harness/run/model.ts';
import { compareRuns, renderStability, runLine, type RunLine } from './lib/verdict-changes.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const BIN = join(root, 'bin/svc-conformance.js');

interface Args {
  runs: number;
  load: number;
  extra: string[];
}

function parse(argv: string[]): Args {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const extra = dash === -1 ? [] : argv.slice(dash + 1);
  let runs = 20;
  let load = availableParallelism() * 2;
  for (let i = 0; i < own.length; i++) {
    const a = own[i]!;
    if (a === '--load') load = count(own[++i], '--load');
    else if (/^\d+$/.test(a)) runs = count(a, 'N');
    else throw new Error(`usage: npm run stability -- N [--load K] [-- RUN ARGS...]; unknown argument ${a}`);
  }
  return { runs, load, extra };
}

function count(v: string | undefined, what: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a whole number, not ${v}`);
  return n;
}

/** A process that only burns CPU until killed. */
function busy(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

function runOnce(report: string, extra: string[]): Promise<{ exit: number; seconds: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'run', '--reference', '--quiet', '--report', `json=${report}`, ...extra], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('exit', (code, signal) => resolve({ exit: code ?? (signal ? 128 : 1), seconds: (performance.now() - t0) / 1000 }));
  });
}

function readReport(file: string): RunReport | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as RunReport;
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const args = parse(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'svc-stability-'));
  const load = Array.from({ length: args.load }, busy);
  const stopLoad = (): void => {
    for (const p of load) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  };
  process.once('exit', stopLoad);
  process.once('SIGINT', () => process.exit(130));
  const reports: Array<RunReport | undefined> = [];
  const lines: RunLine[] = [];
  try {
    for (let i = 1; i <= args.runs; i++) {
      const file = join(dir, `run-${i}.json`);
      process.stderr.write(`stability: run ${i} of ${args.runs} (svc-conformance run --reference ${args.extra.join(' ')}) beside ${args.load} busy process(es)...\n`);
      const { exit, seconds } = await runOnce(file, args.extra);
      const report = readReport(file);
      reports.push(report);
      lines.push(runLine(i, exit, seconds, report));
      process.stderr.write(`stability: run ${i}: exit ${exit}, ${seconds.toFixed(0)} s\n`);
    }
  } finally {
    stopLoad();
  }
  const result = compareRuns(reports, lines);
  process.stdout.write(renderStability(result, args.load));
  if (result.stable) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`the runs' JSON reports: ${dir}\n`);
  return result.stable ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: Error) => {
    process.stderr.write(`stability: ${error.message}\n`);
    process.exitCode = 2;
  },
);
