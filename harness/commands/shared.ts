// What every run command shares: its options, and running a suite's checks through the runner to
// the reporters and an exit code. Commands sit above run/ (the engine) and report/ (its output),
// so neither of those imports the other's caller.
import { randomBytes } from 'node:crypto';
import { type Command, InvalidArgumentError } from 'commander';
import type { Level, Reporter, RuleEntry, SuiteLoad } from '../run/model.ts';
import { ConfigError, EXIT_NO_VERDICT, exitCodeFor } from '../run/exit.ts';
import { loadExpectedFailures, type ExpectedFailures } from '../run/expected.ts';
import { baseCommandLine } from '../run/replay.ts';
import { loadProofs, provenRules } from '../run/proofs.ts';
import { runChecks } from '../run/runner.ts';
import { describeSelection, parseLevel } from '../run/select.ts';
import { consoleReporter, type Output } from '../report/console.ts';
import { fileReporter, parseReportOption, type ReportTarget } from '../report/index.ts';
import type { MatrixSources } from '../matrix/command.ts';
import type { FacetLike } from '../matrix/matrix.ts';

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
  /** What `matrix` reads (facets, rules, every suite's checks); tests give their own. */
  matrixSources?: () => Promise<MatrixSources>;
  /** The rules' facets (schemas/ts/facets.ts) for the coverage table; tests give their own. */
  facets?: readonly FacetLike[];
}

export interface RunFlags {
  report: ReportTarget[];
  seed?: number;
  runs: number;
  fuzzRuns?: number;
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
  /** Profile checks (project decisions) gate the run. */
  profile?: boolean;
}

/** The options every run command shares. */
export function addRunOptions(cmd: Command): Command {
  return cmd
    .option(
      '--report <format=file>',
      'also write a report: json=FILE, junit=FILE, md=FILE or html=FILE (one self-contained page with every failing exchange and a curl line to replay it; repeatable)',
      (v: string, prev: ReportTarget[]) => [...prev, asArgument(() => parseReportOption(v))],
      [],
    )
    .option('--seed <n>', 'seed for property checks (default: random, printed at start and in reports)', parseSeed)
    .option('--runs <n>', 'runs per property check', parsePositive, 100)
    .option('--fuzz-runs <n>', 'requests per fuzz property (every operation, valid and singly mutated past its authentication; default 60)', parsePositive)
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
  /** Profile checks gate (--profile, a targets file's `profile`, or --reference): all, or the named suites'. */
  profileGates?: boolean | ReadonlySet<string>;
  /** Expected failures from a targets file, merged with --expected-failures. */
  expectedFailures?: ExpectedFailures;
  /** Per-check time limit (ms) when the target sets one; default --timeout. */
  checkTimeoutMs?: number;
}

export async function runCommand(input: RunCommandInput): Promise<number> {
  const { flags, io } = input;
  if (flags.verbose && flags.quiet) throw new ConfigError('--verbose and --quiet exclude each other');
  const seed = flags.seed ?? randomBytes(4).readUInt32BE(0);
  io.stderr.write(`${input.tool.name} ${input.tool.version} ${input.command}: seed ${seed}, ${flags.runs} runs per property\n`);
  const fromFile = flags.expectedFailures !== undefined ? await loadExpectedFailures(flags.expectedFailures) : undefined;
  const expectedFailures = fromFile || input.expectedFailures ? new Map([...(input.expectedFailures ?? []), ...(fromFile ?? [])]) : undefined;
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
    ...flags.report.map((target) => fileReporter(target, { rules })),
  ];
  const selection = { suites: flags.suite, rules: flags.rule, checks: flags.check, ...(flags.level ? { level: flags.level } : {}) };
  try {
    const report = await runChecks(suite.checks, {
      seed,
      runs: flags.runs,
      ...(flags.fuzzRuns !== undefined ? { fuzzRuns: flags.fuzzRuns } : {}),
      concurrency: flags.concurrency,
      timeoutMs: input.checkTimeoutMs ?? flags.timeout * 1000,
      profileGates: input.profileGates ?? false,
      signal,
      selection,
      ...(flags.replay !== undefined ? { replay: flags.replay } : {}),
      commandLine: baseCommandLine(input.argv.slice(2)),
      ...(expectedFailures ? { expectedFailures, expectedFailuresSource: flags.expectedFailures ?? 'the targets file' } : {}),
      rules,
      coverageDocs: suite.coverageDocs,
      proven: provenRules(),
      matrix: { facets: await facetCatalogue(input.deps), proofs: loadProofs() },
      skippedInputs: suite.skipped,
      reporters,
      tool: input.tool,
      config: {
        command: input.command,
        ...input.config,
        seed,
        runs: flags.runs,
        fuzz_runs: flags.fuzzRuns ?? null,
        replay: flags.replay ?? null,
        selection,
        expected_failures: flags.expectedFailures ?? null,
        concurrency: flags.concurrency,
        timeout_s: (input.checkTimeoutMs ?? flags.timeout * 1000) / 1000,
        profile_gates: input.profileGates instanceof Set ? [...input.profileGates] : (input.profileGates ?? false),
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

/** The rule catalogue; a run without it still runs (without coverage), `rules` cannot. */
export async function catalogue(deps: CliDeps, required: boolean, io: CliIO): Promise<readonly RuleEntry[]> {
  if (deps.rules) return deps.rules;
  try {
    return (await import('../../schemas/ts/rules.ts')).rules;
  } catch (e) {
    const message = `the rule catalogue schemas/ts/rules.ts cannot be loaded (run \`npm run generate\`): ${(e as Error).message}`;
    if (required) throw new ConfigError(message);
    io.stderr.write(`svc-conformance: ${message}; coverage is not computed\n`);
    return [];
  }
}

/** The rules' facets; none (the coverage table shows no facet figures) when schemas/ts/facets.ts is missing. */
async function facetCatalogue(deps: CliDeps): Promise<readonly FacetLike[]> {
  if (deps.facets) return deps.facets;
  try {
    return (await import('../../schemas/ts/facets.ts')).facets;
  } catch {
    return [];
  }
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Turns our ConfigError into commander's argument error, so the message names the option. */
export function asArgument<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

export function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer');
  return Number(value);
}

export function parsePositive(value: string): number {
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
