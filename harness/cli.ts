// svc-conformance: the command line. `main` holds all the logic and returns the exit code, so
// tests run the CLI in-process; the process only exits when this module is the entry point.
import { randomBytes } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Level, Reporter, RuleEntry, SuiteLoad } from './run/model.ts';
import { ConfigError, EXIT_NO_VERDICT, EXIT_PASS, exitCodeFor } from './run/exit.ts';
import { loadExpectedFailures } from './run/expected.ts';
import { baseCommandLine } from './run/replay.ts';
import { runChecks } from './run/runner.ts';
import { describeSelection, parseLevel } from './run/select.ts';
import { consoleReporter, type Output } from './report/console.ts';
import { fileReporter, parseReportOption, type ReportTarget } from './report/index.ts';

export interface CliIO {
  stdout: Output;
  stderr: Output;
  /** Aborts the run like SIGINT does (tests); SIGINT and SIGTERM are always handled too. */
  signal?: AbortSignal;
  env?: Record<string, string | undefined>;
}

export interface VectorSuiteOptions {
  dirs: string[];
  serviceName: string;
}

/** What the CLI loads lazily; tests inject their own so they need neither suites nor generated files. */
export interface CliDeps {
  vectorSuite?: (options: VectorSuiteOptions) => Promise<SuiteLoad>;
  rules?: readonly RuleEntry[];
}

export interface RunFlags {
  report: ReportTarget[];
  seed?: number;
  runs: number;
  replay?: string;
  suite: string[];
  rule: string[];
  level?: Level;
  check: string[];
  expectedFailures?: string;
  concurrency: number;
  timeout: number;
  verbose?: boolean;
  quiet?: boolean;
}

const PROJECT_ROOT = new URL('../', import.meta.url);

const EXAMPLES = `
Exit codes:
  0  every selected check passed (expected failures allowed)
  1  a check failed or errored, or an expected-failures entry is stale
  2  nothing tested, bad configuration, or the run was interrupted

Examples:
  $ svc-conformance vectors
  $ svc-conformance vectors --dir ../interop/poweur --service-name poweur
  $ svc-conformance vectors --level MUST --report junit=reports/junit.xml --report json=reports/run.json
  $ svc-conformance vectors --rule ns.verify --verbose
  $ svc-conformance vectors --expected-failures known-failures.json
  $ svc-conformance vectors --seed 1234 --replay 7:0:1 --check 'vectors/poweur/properties#single-field-mutation'
  $ svc-conformance rules --doc 1
  $ svc-conformance rules --uncovered-from reports/run.json
`;

export async function main(argv: string[], io: Partial<CliIO> = {}, deps: CliDeps = {}): Promise<number> {
  const out: CliIO = { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr, ...(io.signal ? { signal: io.signal } : {}), env: io.env ?? process.env };
  const tool = readTool();
  let code = EXIT_PASS;
  const program = new Command('svc-conformance')
    .description('Check an implementation of the svc identity protocols against the specification.')
    .version(tool.version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXAMPLES);
  // Commander must report, not exit: main decides the exit code.
  const configure = (cmd: Command): Command =>
    cmd.exitOverride().configureOutput({ writeOut: (s) => void out.stdout.write(s), writeErr: (s) => void out.stderr.write(s) });
  configure(program);

  const vectors = addRunOptions(configure(program.command('vectors')))
    .description('run the vector files (valid and invalid protocol objects) through the verifier rules')
    .option('--dir <dir>', 'a directory of vector files (repeatable; default: the project\'s vectors/)', collect, [])
    .option('--service-name <name>', 'the profile name the vectors were made for (e.g. poweur)', 'svc')
    .addHelpText('after', EXAMPLES);
  vectors.action(async (flags: RunFlags & { dir: string[]; serviceName: string }) => {
    const dirs = flags.dir.length > 0 ? flags.dir : [fileURLToPath(new URL('vectors/', PROJECT_ROOT))];
    const load = deps.vectorSuite ?? (await import('./suites/vectors/index.ts')).vectorSuite;
    code = await runCommand({ command: 'vectors', flags, argv, io: out, deps, tool, config: { dirs, serviceName: flags.serviceName }, load: () => load({ dirs, serviceName: flags.serviceName }) });
  });

  configure(program.command('rules'))
    .description('print the rule catalogue (id, level, doc, section, title), or the rules a report left uncovered')
    .option('--doc <n>', 'only the rules of document N (1 native sign-in, 2 OIDC bridge, 3 relay API)', parseInteger)
    .option('--uncovered-from <report.json>', 'only the rules a JSON report (--report json=FILE) lists as uncovered')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: { doc?: number; uncoveredFrom?: string }) => {
      code = await rulesCommand(flags, out, await catalogue(deps, true, out));
    });

  const { registerRunCommand } = await import('./commands/run.ts');
  registerRunCommand(addRunOptions(configure(program.command('run'))), { argv, io: out, deps, tool, runCommand, setCode: (c) => void (code = c) });

  (await import('./commands/signer.ts')).registerSignerCommands(program, { io: out, configure, setCode: (c) => void (code = c) });
  (await import('./commands/authority.ts')).registerAuthorityCommand(program, { io: out, configure, setCode: (c) => void (code = c) });

  try {
    await program.parseAsync(argv);
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0; usage errors (and help shown for want of a command) are bad configuration.
      return e.exitCode === 0 ? EXIT_PASS : EXIT_NO_VERDICT;
    }
    if (e instanceof ConfigError) {
      out.stderr.write(`svc-conformance: ${e.message}\n`);
      return EXIT_NO_VERDICT;
    }
    // A suite that cannot even load its checks tested nothing.
    out.stderr.write(`svc-conformance: could not run: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT_NO_VERDICT;
  }
}

/** The options every run command shares. */
export function addRunOptions(cmd: Command): Command {
  return cmd
    .option('--report <format=file>', 'also write a report: json=FILE, junit=FILE or md=FILE (repeatable)', (v: string, prev: ReportTarget[]) => [...prev, asArgument(() => parseReportOption(v))], [])
    .option('--seed <n>', 'seed for property checks (default: random, printed at start and in reports)', parseSeed)
    .option('--runs <n>', 'runs per property check', parsePositive, 100)
    .option('--replay <path>', 'replay one property failure: its path, with its --seed and --check')
    .option('--suite <name>', 'only checks of this suite (repeatable)', collect, [])
    .option('--rule <id>', 'only checks citing this rule or its sub-rules: ns.verify selects ns.verify.2 (repeatable)', collect, [])
    .option('--level <level>', 'only checks at this level or stronger: MUST, SHOULD or MAY', (v: string) => asArgument(() => parseLevel(v)))
    .option('--check <pattern>', 'only checks whose id contains PATTERN, or matches it as a glob with * and ? (repeatable)', collect, [])
    .option('--expected-failures <file>', 'JSON {"<check id>": "reason"}: listed failures do not fail the run; stale entries do')
    .option('--concurrency <n>', 'checks run at once', parsePositive, 1)
    .option('--timeout <seconds>', 'time limit per check, after which it is an error', parsePositive, 30)
    .option('--verbose', 'list uncovered rules, check logs and expected-failure details')
    .option('--quiet', 'no progress and no table: failures and the final line only');
}

export interface RunCommandInput {
  command: string;
  flags: RunFlags;
  argv: string[];
  io: CliIO;
  deps: CliDeps;
  tool: { name: string; version: string };
  config: Record<string, unknown>;
  load: () => Promise<SuiteLoad>;
}

export async function runCommand(input: RunCommandInput): Promise<number> {
  const { flags, io } = input;
  if (flags.verbose && flags.quiet) throw new ConfigError('--verbose and --quiet exclude each other');
  const seed = flags.seed ?? randomBytes(4).readUInt32BE(0);
  io.stderr.write(`${input.tool.name} ${input.tool.version} ${input.command}: seed ${seed}, ${flags.runs} runs per property\n`);
  const expectedFailures = flags.expectedFailures !== undefined ? await loadExpectedFailures(flags.expectedFailures) : undefined;
  const rules = await catalogue(input.deps, false, io);
  const suite = await input.load();

  const stop = new AbortController();
  const signal = io.signal ? AbortSignal.any([io.signal, stop.signal]) : stop.signal;
  const onSignal = (name: string) => (): void => {
    // The second signal means "now": skip the reports.
    if (stop.signal.aborted) process.exit(EXIT_NO_VERDICT);
    io.stderr.write(`\n${name}: stopping; reports will be marked interrupted (again to quit at once)\n`);
    stop.abort();
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);

  const reporters: Reporter[] = [
    consoleReporter({ stdout: io.stdout, stderr: io.stderr, verbose: flags.verbose ?? false, quiet: flags.quiet ?? false, rules, ...(io.env ? { env: io.env } : {}) }),
    ...flags.report.map(fileReporter),
  ];
  const selection = { suites: flags.suite, rules: flags.rule, checks: flags.check, ...(flags.level ? { level: flags.level } : {}) };
  try {
    const report = await runChecks(suite.checks, {
      seed,
      runs: flags.runs,
      concurrency: flags.concurrency,
      timeoutMs: flags.timeout * 1000,
      signal,
      selection,
      ...(flags.replay !== undefined ? { replay: flags.replay } : {}),
      commandLine: baseCommandLine(input.argv.slice(2)),
      ...(expectedFailures ? { expectedFailures, expectedFailuresSource: flags.expectedFailures } : {}),
      rules,
      coverageDocs: suite.coverageDocs,
      skippedInputs: suite.skipped,
      reporters,
      tool: input.tool,
      config: {
        command: input.command,
        ...input.config,
        seed,
        runs: flags.runs,
        replay: flags.replay ?? null,
        selection,
        expected_failures: flags.expectedFailures ?? null,
        concurrency: flags.concurrency,
        timeout_s: flags.timeout,
        reports: flags.report,
      },
      ...(flags.verbose ? { onLog: (id: string, msg: string) => void io.stderr.write(`  [${id}] ${msg}\n`) } : {}),
      onWarning: (msg) => void io.stderr.write(`svc-conformance: ${msg}${describeSelection(selection) ? `: ${describeSelection(selection)}` : ''}\n`),
    });
    return exitCodeFor(report.summary);
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

async function rulesCommand(flags: { doc?: number; uncoveredFrom?: string }, io: CliIO, rules: readonly RuleEntry[]): Promise<number> {
  let selected = flags.doc === undefined ? [...rules] : rules.filter((r) => r.doc === flags.doc);
  if (flags.uncoveredFrom !== undefined) {
    const uncovered = await readUncovered(flags.uncoveredFrom);
    const known = new Map(selected.map((r) => [r.id, r]));
    selected = uncovered.map((id) => known.get(id)).filter((r): r is RuleEntry => r !== undefined);
    const missing = uncovered.filter((id) => !rules.some((r) => r.id === id));
    if (missing.length > 0) io.stderr.write(`svc-conformance: not in the current catalogue (report older than the spec?): ${missing.join(', ')}\n`);
  }
  const width = Math.max(2, ...selected.map((r) => r.id.length));
  for (const r of selected) io.stdout.write(`${r.id.padEnd(width)}  ${r.level.padEnd(6)}  doc ${r.doc}  ${r.section} — ${r.title}\n`);
  io.stdout.write(`${selected.length} rule${selected.length === 1 ? '' : 's'}${flags.uncoveredFrom !== undefined ? ' uncovered' : ''}\n`);
  return EXIT_PASS;
}

async function readUncovered(file: string): Promise<string[]> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read report ${file}: ${(e as Error).message}`);
  }
  const uncovered = (data as { coverage?: { uncovered?: unknown } } | null)?.coverage?.uncovered;
  if (!Array.isArray(uncovered) || !uncovered.every((x) => typeof x === 'string')) {
    throw new ConfigError(`${file} is not a svc-conformance JSON report (no coverage.uncovered list)`);
  }
  return uncovered;
}

/** The rule catalogue; a run without it still runs (without coverage), `rules` cannot. */
async function catalogue(deps: CliDeps, required: boolean, io: CliIO): Promise<readonly RuleEntry[]> {
  if (deps.rules) return deps.rules;
  try {
    return (await import('../schemas/ts/rules.ts')).rules;
  } catch (e) {
    const message = `the rule catalogue schemas/ts/rules.ts cannot be loaded (run \`npm run generate\`): ${(e as Error).message}`;
    if (required) throw new ConfigError(message);
    io.stderr.write(`svc-conformance: ${message}; coverage is not computed\n`);
    return [];
  }
}

function readTool(): { name: string; version: string } {
  try {
    const pkg = JSON.parse(readFileSync(new URL('package.json', PROJECT_ROOT), 'utf8')) as { version?: string };
    return { name: 'svc-conformance', version: pkg.version ?? '0.0.0' };
  } catch {
    return { name: 'svc-conformance', version: '0.0.0' };
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Turns our ConfigError into commander's argument error, so the message names the option. */
function asArgument<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer');
  return Number(value);
}

function parsePositive(value: string): number {
  const n = parseInteger(value);
  if (n < 1) throw new InvalidArgumentError('must be at least 1');
  return n;
}

/** fast-check seeds are 32-bit: accept both the signed and the unsigned reading. */
function parseSeed(value: string): number {
  const n = parseInteger(value);
  if (n < -(2 ** 31) || n >= 2 ** 32) throw new InvalidArgumentError('must be a 32-bit integer');
  return n;
}

/** Entry point either as `tsx harness/cli.ts` or through bin/svc-conformance.js (maybe symlinked). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    const real = realpathSync(script);
    const entries = [fileURLToPath(import.meta.url), fileURLToPath(new URL('bin/svc-conformance.js', PROJECT_ROOT))];
    return entries.some((e) => realpathSync(e) === real);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const code = await main(process.argv);
  // Exit only once both streams are flushed, or piped output can be cut short.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}
