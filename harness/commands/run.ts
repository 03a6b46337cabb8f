// `svc-conformance run`: the suites of the registry against live implementations.
//
//   run --targets FILE [--suite NAME ...]          every role the file describes (flags override it)
//   run --suite rp --rp ORIGIN --authority URL     a role given by flags alone
//   run --reference [--suite NAME ...]             the reference implementations, started on loopback
//   run --reference --cluster --cluster-database URL --cluster-redis URL --cluster-s3 URL
//                                                  the same, each server as several processes on those engines
//
// An outside implementation resolves test identities through a running test authority
// (`svc-conformance authority`); the run first checks that it serves the service name under
// test. Project-profile checks gate the run only with --profile (or `profile: true` in the
// file); the reference always runs with them on.
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_SERVICE_NAME, profileFor, ProfileError, type Profile } from '../../protocol/common/profile.ts';
import { urlOrigin } from '../../protocol/common/url.ts';
import type { AuthorityControl } from '../actors/authority/types.ts';
import { runCommand, type CliDeps, type CliIO, type RunFlags } from './shared.ts';
import { clusterOf } from '../run/cluster.ts';
import { ConfigError } from '../run/exit.ts';
import { once } from '../run/once.ts';
import type { SuiteLoad } from '../run/model.ts';
import { SUITES, suiteNamed, type PreparedSuite } from '../suites/registry.ts';
import { readTargets, type Targets } from '../targets/file.ts';

export interface RunCommandContext {
  argv: string[];
  io: CliIO;
  deps: CliDeps;
  tool: { name: string; version: string };
  setCode(code: number): void;
}

interface Flags extends RunFlags {
  targets?: string;
  reference?: boolean;
  authority?: string;
  serviceName?: string;
  requestTimeout?: number;
  [flag: string]: unknown;
}

const HOW_TO_AUTHORITY = `start a test authority and point the implementation at it:
  sudo svc-conformance authority                 # DNS on 127.0.88.1:53, HTTPS on :443, admin on :8055
  start your implementation with its resolver's DNS server at 127.0.88.1:53 and the authority's CA
  (printed by the authority; GET <admin>/ca.pem) trusted, e.g. for the reference RP:
  svc-reference rp --dns-server 127.0.88.1:53 --ca <ca.pem>
then: svc-conformance run --rp <origin> --authority http://127.0.88.1:8055
or let the harness start the reference and an authority itself: svc-conformance run --reference`;

const EXAMPLES = `
Suites: ${SUITES.map((s) => `${s.name} (${s.title})`).join('; ')}.

Examples:
  $ svc-conformance run --reference --report json=reports/rp.json --report junit=reports/rp.xml --report md=reports/rp.md
  $ svc-conformance init targets.json && svc-conformance run --targets targets.json
  $ svc-conformance run --targets targets.json --profile --expected-failures known.json
  $ svc-conformance run --rp https://rp.example.test --rp-start https://rp.example.test/test/start --authority http://127.0.88.1:8055
  $ svc-conformance run --reference --suite rp --rp-processes 2 --nonce-store redis://127.0.0.1:6379
  $ DRIVE_S3_ACCESS_KEY=... DRIVE_S3_SECRET_KEY=... svc-conformance run --reference --cluster \
      --cluster-database postgres://svc:pw@127.0.0.1:5432/svc --cluster-redis redis://127.0.0.1:6379 \
      --cluster-s3 http://127.0.0.1:7480/svc-drive
    (two processes of each server on shared engines, the relay's behind a round-robin front;
     docs/servers/scale-out.md)
`;

export function registerRunCommand(cmd: Command, ctx: RunCommandContext): void {
  cmd
    .description('run conformance suites against live implementations described by a targets file or flags, or against the reference')
    .option('--targets <file>', 'the implementation under test: a JSON targets file (spec/harness/targets.schema.json; `svc-conformance init` writes an example)')
    .option('--reference', 'start the reference implementations and a test authority on loopback and run against them (the profile gates)')
    .option('--authority <admin-url>', 'admin URL of the running test authority the implementation resolves identities through')
    .option('--service-name <name>', "the profile name the implementation was built for (default svc, or the targets file's)")
    .option('--profile', 'project-profile checks (statuses, codes and fields the documents leave open) gate the run')
    .option('--request-timeout <seconds>', 'time limit of one HTTP request to the implementation (default 20)', positive)
    .option('--cluster', 'with --reference: each server as several processes on the engines below, as an operator scales out (docs/servers/scale-out.md)')
    .option('--cluster-database <url>', 'with --cluster: postgres://USER:PASS@HOST:PORT/DB the RP and bridge processes share')
    .option('--cluster-redis <url>', 'with --cluster: redis://HOST:PORT (no persistence) the relay processes share their state in')
    .option('--cluster-s3 <url>', "with --cluster: http://HOST:PORT/BUCKET for the relays' drive chunks (keys in DRIVE_S3_ACCESS_KEY, DRIVE_S3_SECRET_KEY)");
  for (const suite of SUITES) suite.options(cmd);
  cmd.addHelpText('after', EXAMPLES).action(async (flags: Flags) => {
    ctx.setCode(await run(flags, ctx));
  });
}

async function run(flags: Flags, ctx: RunCommandContext): Promise<number> {
  const unknown = flags.suite.filter((s) => suiteNamed(s) === undefined);
  if (unknown.length > 0) throw new ConfigError(`run knows the suites ${SUITES.map((s) => s.name).join(', ')}; not ${unknown.join(', ')}`);
  const file: Targets = flags.targets !== undefined ? await readTargets(flags.targets) : {};
  const profile = profileNamed(flags.serviceName ?? file.service_name ?? DEFAULT_SERVICE_NAME);
  const prepared = flags.reference ? await prepareReference(flags, file, profile, ctx) : await prepareExternal(flags, file, profile);
  try {
    if (ctx.io.signal?.aborted) throw new ConfigError('interrupted while starting');
    for (const p of prepared) if (p.banner) ctx.io.stderr.write(`${p.banner}\n`);
    const gates = new Set(prepared.filter((p) => p.profileGates).map((p) => p.suite));
    const expected = new Map(prepared.flatMap((p) => [...(p.expectedFailures ?? [])]));
    const timeouts = prepared.flatMap((p) => (p.checkTimeoutMs !== undefined ? [p.checkTimeoutMs] : []));
    return await runCommand({
      command: 'run',
      flags,
      argv: ctx.argv,
      io: ctx.io,
      deps: ctx.deps,
      tool: ctx.tool,
      config: { suites: prepared.map((p) => p.config), service_name: profile.name, targets: flags.targets ?? null },
      load: () => loadAll(prepared),
      profileGates: gates,
      ...(expected.size > 0 ? { expectedFailures: expected } : {}),
      ...(timeouts.length > 0 ? { checkTimeoutMs: Math.max(...timeouts) } : {}),
    });
  } finally {
    await Promise.all(prepared.map((p) => p.stop().catch(() => undefined)));
  }
}

async function loadAll(prepared: PreparedSuite[]): Promise<SuiteLoad> {
  const loads = await Promise.all(prepared.map((p) => p.load()));
  return { checks: loads.flatMap((l) => l.checks), skipped: loads.flatMap((l) => l.skipped), coverageDocs: [...new Set(loads.flatMap((l) => l.coverageDocs))] };
}

/** Every suite whose role the flags or the file describe (or those --suite names, which must be described). */
async function prepareExternal(flags: Flags, file: Targets, profile: Profile): Promise<PreparedSuite[]> {
  clusterOf(flags);
  for (const suite of SUITES) {
    const stray = suite.referenceFlags.filter((k) => flags[k] !== undefined);
    if (stray.length > 0) throw new ConfigError(`${stray.map(flagName).join(', ')} configure the reference: use them with --reference`);
  }
  const authority = once(() => connectAuthority(flags.authority ?? file.authority, profile));
  const prepared: PreparedSuite[] = [];
  const wanted = flags.suite.length > 0 ? flags.suite : SUITES.map((s) => s.name);
  for (const name of wanted) {
    const suite = suiteNamed(name)!;
    const p = await suite.external({ flags, file, profile, authority });
    if (p === undefined) {
      if (flags.suite.includes(name)) throw new ConfigError(`run --suite ${name} needs its target: the --${name} option or a "${name}" entry in a targets file (svc-conformance init writes one)`);
      continue;
    }
    prepared.push(p);
  }
  if (prepared.length === 0) {
    throw new ConfigError('nothing to test: describe the implementation with --targets FILE (`svc-conformance init` writes an example) or flags such as --rp ORIGIN, or use --reference');
  }
  return prepared;
}

async function prepareReference(flags: Flags, file: Targets, profile: Profile, ctx: RunCommandContext): Promise<PreparedSuite[]> {
  if (flags.targets !== undefined || flags.authority !== undefined) throw new ConfigError('--reference starts its own implementations and authority: drop --targets and --authority');
  const stray = Object.keys(flags).filter(
    (k) =>
      flags[k] !== undefined &&
      SUITES.some((s) => k.startsWith(s.name) && k.length > s.name.length && !s.referenceFlags.includes(k)) &&
      !(Array.isArray(flags[k]) && (flags[k] as unknown[]).length === 0),
  );
  if (stray.length > 0) throw new ConfigError(`--reference starts its own implementations: drop ${stray.map(flagName).join(', ')}`);
  void file;
  const wanted = flags.suite.length > 0 ? flags.suite : SUITES.map((s) => s.name);
  // --cluster: every engine the wanted suites need is named before anything starts.
  clusterOf(flags, [...new Set(wanted.flatMap((name) => suiteNamed(name)!.clusterEngines ?? []))]);
  // Stop what started when interrupted during startup, before the run's own handler is in place.
  const prepared: PreparedSuite[] = [];
  let interrupted = false;
  const early = (): void => void (interrupted = true);
  process.once('SIGINT', early);
  process.once('SIGTERM', early);
  // The suites' references start at once (each its own servers and authority).
  ctx.io.stderr.write(`starting the reference for the ${wanted.join(', ')} suite${wanted.length > 1 ? 's' : ''}...\n`);
  const log = flags.verbose ? { log: (l: string) => void ctx.io.stderr.write(`${l}\n`) } : {};
  const started = await Promise.allSettled(wanted.map((name) => suiteNamed(name)!.reference({ flags, profile, ...log })));
  for (const s of started) if (s.status === 'fulfilled') prepared.push(s.value);
  try {
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    if (interrupted) throw new ConfigError('interrupted while starting the reference');
    return prepared;
  } catch (error) {
    await Promise.all(prepared.map((p) => p.stop().catch(() => undefined)));
    throw error;
  } finally {
    process.off('SIGINT', early);
    process.off('SIGTERM', early);
  }
}

/** The authority must answer and serve the service name under test, or nothing the run reports would mean anything. */
async function connectAuthority(url: string | undefined, profile: Profile): Promise<AuthorityControl> {
  if (url === undefined)
    throw new ConfigError(
      `the admin URL of a test authority is required (--authority or "authority" in the targets file): the suites publish, rotate and break test identities the implementation must resolve.\n${HOW_TO_AUTHORITY}`,
    );
  if (urlOrigin(url) === undefined) throw new ConfigError(`--authority ${url} is not an http(s) URL`);
  const { AuthorityClient } = await import('../actors/authority/client.ts');
  const client = new AuthorityClient(url);
  let served: string;
  try {
    served = (await client.info()).name;
  } catch (error) {
    throw new ConfigError(`the test authority at ${url} cannot be reached: ${(error as Error).message}\n${HOW_TO_AUTHORITY}`);
  }
  if (served !== profile.name) {
    throw new ConfigError(
      `the test authority at ${url} serves the service name "${served}", but the run tests "${profile.name}": its DNS labels (_${served}.) and documents would not be the ones the implementation looks up. Start the authority with --service-name ${profile.name}, or run with --service-name ${served}.`,
    );
  }
  return client;
}

function profileNamed(name: string): Profile {
  try {
    return profileFor(name);
  } catch (error) {
    if (error instanceof ProfileError) throw new ConfigError(error.message);
    throw error;
  }
}

function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function positive(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || Number(value) <= 0) throw new InvalidArgumentError('must be a positive number');
  return Number(value);
}
