// `svc-conformance run --suite rp`: checks a live relying party over the network.
//
//   run --suite rp --rp ORIGIN [--rp-start URL] [--rp-process URL ...] --authority ADMIN_URL
//   run --reference [--suite rp] [--nonce-store sqlite|memory|redis://H:P] [--rp-processes N]
//
// Without --reference, the RP under test must resolve identities through a running test
// authority (`svc-conformance authority`), whose admin URL is --authority. With --reference, the
// harness starts an in-process authority and the reference RP (child processes of
// bin/svc-reference.js) itself, runs the suite and stops them.
import { Command, InvalidArgumentError } from 'commander';
import type { CliDeps, CliIO, RunCommandInput, RunFlags } from '../cli.ts';
import { ConfigError } from '../run/exit.ts';
import { profileFor, ProfileError, type Profile } from '../../protocol/common/profile.ts';
import { normalizeOrigin, urlOrigin } from '../../protocol/common/url.ts';
import type { RpTarget } from '../suites/rp/driver.ts';

export interface RunCommandContext {
  argv: string[];
  io: CliIO;
  deps: CliDeps;
  tool: { name: string; version: string };
  /** cli.ts's runCommand (passed in: a static import back into cli.ts would be a cycle). */
  runCommand(input: RunCommandInput): Promise<number>;
  setCode(code: number): void;
}

interface RpFlags extends RunFlags {
  rp?: string;
  rpStart?: string;
  rpProcess: string[];
  rpBrokenStore?: string;
  authority?: string;
  serviceName: string;
  reference?: boolean;
  nonceStore?: string;
  rpProcesses?: number;
}

const SUITES = ['rp'];

const HOW_TO_AUTHORITY = `start a test authority and point the RP at it:
  sudo svc-conformance authority                 # DNS on 127.0.88.1:53, HTTPS on :443, admin on :8055
  start your RP with its resolver's DNS server at 127.0.88.1:53 and the authority's CA
  (printed by the authority; GET <admin>/ca.pem) trusted, e.g. for the reference RP:
  svc-reference rp --dns-server 127.0.88.1:53 --ca <ca.pem>
then: svc-conformance run --suite rp --rp <origin> --authority http://127.0.88.1:8055
or let the harness start the reference RP and an authority itself: svc-conformance run --reference --suite rp`;

const EXAMPLES = `
Examples:
  $ svc-conformance run --reference --report json=reports/rp.json --report junit=reports/rp.xml --report md=reports/rp.md
  $ svc-conformance run --reference --suite rp --rp-processes 2 --nonce-store redis://127.0.0.1:6379
  $ svc-conformance run --suite rp --rp https://rp.example.test --authority http://127.0.88.1:8055
  $ svc-conformance run --suite rp --rp http://127.0.0.1:8080 --rp-process http://127.0.0.1:8081 --authority http://127.0.88.1:8055
`;

export function registerRunCommand(cmd: Command, ctx: RunCommandContext): void {
  cmd
    .description('run a conformance suite against a live implementation (rp: a relying party of document 1)')
    .option('--rp <origin>', 'origin of the RP under test (the audience of its requests)')
    .option('--rp-start <url>', 'its start contract URL (POST, Accept: application/json; default ORIGIN/login)')
    .option('--rp-process <url>', 'base URL of another process of the same RP (same origin, shared stores; repeatable): the replay race spreads over them', collect, [])
    .option('--rp-broken-store <origin>', 'origin of an instance of the same RP whose nonce store is unreachable (enables the fail-closed check)')
    .option('--authority <admin-url>', 'admin URL of a running test authority (svc-conformance authority) the RP resolves identities through')
    .option('--service-name <name>', 'the profile name the RP was built for', 'svc')
    .option('--reference', 'start the reference RP and a test authority on loopback and run against them')
    .option('--nonce-store <store>', 'with --reference: sqlite (default), memory or redis://HOST:PORT')
    .option('--rp-processes <n>', 'with --reference: RP processes sharing one data directory (default 2, so sharing is checked)', positive)
    .addHelpText('after', EXAMPLES)
    .action(async (flags: RpFlags) => {
      ctx.setCode(await runRun(flags, ctx));
    });
}

async function runRun(flags: RpFlags, ctx: RunCommandContext): Promise<number> {
  // No --suite: every live suite there is (today: rp).
  if (flags.suite.length === 0) flags.suite = [...SUITES];
  const unknown = flags.suite.filter((s) => !SUITES.includes(s));
  if (unknown.length > 0) throw new ConfigError(`run knows the suites ${SUITES.join(', ')}; not ${unknown.join(', ')}`);
  let profile: Profile;
  try {
    profile = profileFor(flags.serviceName);
  } catch (error) {
    if (error instanceof ProfileError) throw new ConfigError(error.message);
    throw error;
  }
  if (flags.reference) return runReference(flags, ctx, profile);
  return runExternal(flags, ctx, profile);
}

async function runExternal(flags: RpFlags, ctx: RunCommandContext, profile: Profile): Promise<number> {
  if (flags.nonceStore !== undefined || flags.rpProcesses !== undefined) throw new ConfigError('--nonce-store and --rp-processes configure the reference RP: use them with --reference');
  if (!flags.rp) throw new ConfigError('run --suite rp needs --rp ORIGIN (the RP under test), or --reference to test the reference RP');
  const origin = normalizeOrigin(flags.rp);
  if (origin === undefined) throw new ConfigError(`--rp ${flags.rp} is not an origin (scheme://host[:port], no path)`);
  if (!flags.authority) throw new ConfigError(`--authority ADMIN_URL is required: the suite publishes, rotates and breaks test identities the RP must resolve.\n${HOW_TO_AUTHORITY}`);
  if (urlOrigin(flags.authority) === undefined) throw new ConfigError(`--authority ${flags.authority} is not an http(s) URL`);
  const startUrl = flags.rpStart ?? `${origin}/login`;
  for (const p of flags.rpProcess) if (urlOrigin(p) === undefined) throw new ConfigError(`--rp-process ${p} is not an http(s) URL`);
  const { AuthorityClient } = await import('../actors/authority/index.ts');
  const authority = new AuthorityClient(flags.authority);
  const target: RpTarget = {
    profile,
    origin,
    startUrl,
    processes: flags.rpProcess.length > 0 ? [origin, ...flags.rpProcess] : [origin],
    authority,
    ...(flags.rpBrokenStore ? { brokenStore: { origin: brokenOrigin(flags.rpBrokenStore), startUrl: `${brokenOrigin(flags.rpBrokenStore)}/login` } } : {}),
  };
  return runRpSuite(flags, ctx, target, { rp: origin, rp_start: startUrl, authority: flags.authority, reference: false });
}

/** Runs the rp suite against `target` through the shared run machinery; `config` goes into the report. */
async function runRpSuite(flags: RpFlags, ctx: RunCommandContext, target: RpTarget, config: Record<string, unknown>): Promise<number> {
  const { rpSuite } = await import('../suites/rp/index.ts');
  return ctx.runCommand({
    command: 'run',
    flags,
    argv: ctx.argv,
    io: ctx.io,
    deps: ctx.deps,
    tool: ctx.tool,
    config: { suite: 'rp', ...config, rp_processes: target.processes, service_name: target.profile.name },
    load: () => rpSuite(target),
  });
}

function brokenOrigin(v: string): string {
  const o = normalizeOrigin(v);
  if (o === undefined) throw new ConfigError(`--rp-broken-store ${v} is not an origin`);
  return o;
}

async function runReference(flags: RpFlags, ctx: RunCommandContext, profile: Profile): Promise<number> {
  if (flags.rp || flags.authority || flags.rpProcess.length > 0 || flags.rpStart || flags.rpBrokenStore) {
    throw new ConfigError('--reference starts its own RP and authority: drop --rp, --rp-start, --rp-process, --rp-broken-store and --authority');
  }
  const store = flags.nonceStore ?? 'sqlite';
  const processes = flags.rpProcesses ?? (store === 'memory' ? 1 : 2);
  if (!/^(sqlite|memory|redis:\/\/[^\s/]+:\d+\/?)$/.test(store)) throw new ConfigError(`--nonce-store ${store}: use sqlite, memory or redis://HOST:PORT`);
  if (store === 'memory' && processes > 1) throw new ConfigError('--nonce-store memory cannot be shared between processes: use sqlite or redis with --rp-processes');
  const { startReference } = await import('../suites/rp/launch.ts');
  // Stop the children on SIGINT/SIGTERM even while they are still starting.
  let interrupted = false;
  const early = (): void => {
    interrupted = true;
  };
  process.once('SIGINT', early);
  process.once('SIGTERM', early);
  ctx.io.stderr.write(`starting the reference RP (${processes} process${processes > 1 ? 'es' : ''}, nonce store ${store}) and a test authority...\n`);
  let run;
  try {
    run = await startReference({ profile, nonceStore: store, processes, ...(flags.verbose ? { log: (l: string) => void ctx.io.stderr.write(`${l}\n`) } : {}) });
  } finally {
    process.off('SIGINT', early);
    process.off('SIGTERM', early);
  }
  try {
    if (interrupted || ctx.io.signal?.aborted) throw new ConfigError('interrupted while starting the reference RP');
    ctx.io.stderr.write(`reference RP at ${run.target.origin} (${run.rp.map((p) => p.url).join(', ')}), authority ${run.authority.adminUrl} (DNS ${run.authority.dnsServer})\n`);
    return await runRpSuite(flags, ctx, run.target, { reference: true, rp: run.target.origin, nonce_store: store, authority: run.authority.adminUrl });
  } finally {
    await run.stop();
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positive(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}
