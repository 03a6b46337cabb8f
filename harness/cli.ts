// svc-conformance: the command line. `main` holds all the logic and returns the exit code, so
// tests run the CLI in-process; the process only exits when this module is the entry point.
import { readFileSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { RuleEntry } from './run/model.ts';
import { ConfigError, EXIT_NO_VERDICT, EXIT_PASS } from './run/exit.ts';
import { causeOf } from './run/runner.ts';
import { addRunOptions, catalogue, collect, runCommand, type CliDeps, type CliIO, type RunFlags } from './commands/shared.ts';
import { DEFAULT_SERVICE_NAME } from '../protocol/common/profile.ts';

export type { CliDeps, CliIO, RunFlags, VectorSuiteOptions } from './commands/shared.ts';

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
  $ svc-conformance matrix --doc 1 --empty
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
  const configure = (cmd: Command): Command => cmd.exitOverride().configureOutput({ writeOut: (s) => void out.stdout.write(s), writeErr: (s) => void out.stderr.write(s) });
  configure(program);

  const vectors = addRunOptions(configure(program.command('vectors')))
    .description('run the vector files (valid and invalid protocol objects) through the verifier rules')
    .option('--dir <dir>', "a directory of vector files (repeatable; default: the project's vectors/)", collect, [])
    .option('--service-name <name>', 'the profile name the vectors were made for (e.g. poweur)', DEFAULT_SERVICE_NAME)
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

  (await import('./matrix/command.ts')).registerMatrixCommand(configure(program.command('matrix')), {
    io: out,
    setCode: (c) => void (code = c),
    ...(deps.matrixSources ? { sources: deps.matrixSources } : {}),
  });

  const { registerRunCommand } = await import('./commands/run.ts');
  registerRunCommand(addRunOptions(configure(program.command('run'))), { argv, io: out, deps, tool, setCode: (c) => void (code = c) });
  (await import('./commands/init.ts')).registerInitCommand(configure(program.command('init')), { io: out, setCode: (c) => void (code = c) });

  (await import('./commands/signer.ts')).registerSignerCommands(program, { io: out, configure, setCode: (c) => void (code = c) });
  (await import('./commands/authority.ts')).registerAuthorityCommand(program, { io: out, configure, setCode: (c) => void (code = c) });
  (await import('./commands/relay.ts')).registerRelayCommands(program, { io: out, configure, setCode: (c) => void (code = c) });
  (await import('./commands/drive.ts')).registerDriveCommands(program, { io: out, configure, setCode: (c) => void (code = c) });

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
    // A suite that cannot even load its checks tested nothing. A port or a helper of the
    // environment is named as such: nothing was said about the implementation.
    const cause = causeOf(e);
    const why =
      cause === 'port-in-use' ? 'a port it needs is in use (the environment: another run or server holds it), ' : cause === 'helper-unavailable' ? 'a helper did not answer (the environment), ' : '';
    out.stderr.write(`svc-conformance: could not run: ${why}${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT_NO_VERDICT;
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

function readTool(): { name: string; version: string } {
  try {
    const pkg = JSON.parse(readFileSync(new URL('package.json', PROJECT_ROOT), 'utf8')) as { version?: string };
    return { name: 'svc-conformance', version: pkg.version ?? '0.0.0' };
  } catch {
    return { name: 'svc-conformance', version: '0.0.0' };
  }
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

function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer');
  return Number(value);
}
