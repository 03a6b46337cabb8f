// Runs selected checks and assembles the RunReport. Every way a check can go wrong (throw,
// hang, bad outcome, unserialisable evidence) ends as a result, never as a crashed run.
import { setMaxListeners } from 'node:events';
import { inspect } from 'node:util';
import type { Attempt, Check, CheckContext, CheckResult, ErrorCause, FailureCode, Outcome, Reporter, RuleEntry, RunReport, SkippedInput } from './model.ts';
import { asOwner, faultsBetween, reportOwnFault, watchEnvironment, type EnvironmentFault } from './environment.ts';
import { EnvironmentError, withAttempt } from './verdict.ts';
import { computeCoverage, type MatrixInput } from './coverage.ts';
import { ConfigError } from './exit.ts';
import { applyExpectedFailures, type ExpectedFailures } from './expected.ts';
import { selectChecks, type Selection } from './select.ts';
import { countProfile, countResults } from './summary.ts';

export interface RunOptions {
  seed: number;
  /** Property runs per property check (default 100). */
  runs?: number;
  /** Requests per fuzz property (--fuzz-runs). */
  fuzzRuns?: number;
  /**
   * Checks in flight at once within one lane (default 1: a lane's side effects stay in order).
   * Lanes (a suite, or a check that only waits on state of its own) always run at once.
   */
  concurrency?: number;
  /** Per-check time limit (default 30 s); an expired check becomes an error. */
  timeoutMs?: number;
  /** Aborting it (SIGINT) stops the run; the report is marked interrupted. */
  signal?: AbortSignal;
  selection?: Selection;
  /** fast-check path to replay; requires a selection of exactly one check. */
  replay?: string;
  /** Command line quoted in replay hints. */
  commandLine?: string;
  expectedFailures?: ExpectedFailures;
  /** Named in stale-entry messages. */
  expectedFailuresSource?: string;
  /** The rule catalogue (schemas/ts/rules.ts) for coverage. */
  rules?: readonly RuleEntry[];
  /** Profile checks (project decisions) gate the run like document checks (`--profile`): all, or those of the named suites. */
  profileGates?: boolean | ReadonlySet<string>;
  /** Rules a broken variant proved (npm run sensitivity): the coverage table's "proven". */
  proven?: ReadonlySet<string>;
  /** The rules' facets and the variants' proofs: the coverage table's facets proven / observable. */
  matrix?: MatrixInput;
  /** Documents whose rules count for coverage (default: all in the catalogue). */
  coverageDocs?: number[];
  /** Inputs the suite could not turn into checks, with why. */
  skippedInputs?: SkippedInput[];
  reporters?: Reporter[];
  tool?: { name: string; version: string };
  config?: Record<string, unknown>;
  /** Receives check log lines as they happen (verbose output). */
  onLog?: (checkId: string, msg: string) => void;
  /** Receives notes about the run itself, e.g. a selection that matched nothing. */
  onWarning?: (msg: string) => void;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RUNS = 100;
const STACK_LINES = 5;

export async function runChecks(checks: readonly Check[], options: RunOptions): Promise<RunReport> {
  const startedAt = new Date();
  const t0 = performance.now();
  const runSignal = options.signal ?? new AbortController().signal;
  // Every lane's check and every request of a check listen on these: many at once is expected.
  setMaxListeners(0, runSignal);
  const selected = selectChecks(checks, options.selection ?? {});
  validate(checks, selected, options);
  if (selected.length === 0 && checks.length > 0) options.onWarning?.(`no check matched the selection (${checks.length} available)`);
  const reporters = options.reporters ?? [];
  const perSuite: Record<string, number> = {};
  for (const c of selected) perSuite[c.suite] = (perSuite[c.suite] ?? 0) + 1;
  for (const r of reporters) r.onStart?.(selected.length, perSuite);

  const unwatch = watchEnvironment();
  const slots = await runLanes(selected, options, runSignal, (result) => {
    for (const r of reporters) r.onResult?.(result);
  }).finally(unwatch);

  const interrupted = runSignal.aborted;
  let results = slots.filter((r): r is CheckResult => r !== undefined);
  if (options.expectedFailures && options.expectedFailures.size > 0) {
    // Stale entries become results of their own; they reach reporters through the report
    // only, since progress counts the checks that run.
    results = applyExpectedFailures(results, options.expectedFailures, new Set(checks.map((c) => c.id)), options.expectedFailuresSource);
  }
  const counts = countResults(results);
  const report: RunReport = {
    tool: options.tool ?? { name: 'svc-conformance', version: '0.0.0' },
    summary: {
      passed: counts.passed,
      failed: counts.failed,
      skipped: counts.skipped,
      errors: counts.errors,
      expectedFailures: counts.expected,
      total: counts.total,
      profile: countProfile(results, profileGated(results, options.profileGates)),
      durationMs: Math.round(performance.now() - t0),
      seed: options.seed,
      startedAt: startedAt.toISOString(),
      interrupted,
    },
    results,
    coverage: computeCoverage(options.rules ?? [], results, options.coverageDocs, options.proven, options.matrix),
    skipped_inputs: options.skippedInputs ?? [],
    config: options.config ?? {},
  };
  for (const r of reporters) await r.onEnd?.(report);
  return report;
}

/**
 * Runs the checks lane by lane. Suites run at once. Within a suite, its exclusive checks (a
 * restart of the target) run first, alone, then its lanes at once: a check's lane is the suite
 * unless it names one of its own (a check that mostly waits, on state no other check touches),
 * and the checks of a lane run one after another.
 */
async function runLanes(selected: readonly Check[], options: RunOptions, runSignal: AbortSignal, onResult: (r: CheckResult) => void): Promise<Array<CheckResult | undefined>> {
  const slots: Array<CheckResult | undefined> = new Array(selected.length);
  const suites = new Map<string, { exclusive: number[]; lanes: Map<string, number[]> }>();
  selected.forEach((check, index) => {
    const suite = suites.get(check.suite) ?? { exclusive: [], lanes: new Map<string, number[]>() };
    suites.set(check.suite, suite);
    if (check.exclusive) return void suite.exclusive.push(index);
    const lane = check.lane ?? check.suite;
    suite.lanes.set(lane, [...(suite.lanes.get(lane) ?? []), index]);
  });
  const drain = async (queue: readonly number[], width: number): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (!runSignal.aborted && next < queue.length) {
        const index = queue[next++]!;
        const result = await runOne(selected[index]!, options, runSignal);
        slots[index] = result;
        onResult(result);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(width, queue.length)) }, worker));
  };
  await Promise.all(
    [...suites.values()].map(async ({ exclusive, lanes }) => {
      await drain(exclusive, 1);
      await Promise.all([...lanes.values()].map((queue) => drain(queue, options.concurrency ?? 1)));
    }),
  );
  return slots;
}

function validate(all: readonly Check[], selected: readonly Check[], options: RunOptions): void {
  const seen = new Set<string>();
  for (const c of all) {
    if (seen.has(c.id)) throw new ConfigError(`two checks share the id "${c.id}": ids must be unique`);
    seen.add(c.id);
  }
  if (options.replay !== undefined && selected.length !== 1) {
    throw new ConfigError(`--replay needs a selection of exactly one check (use --check ID); ${selected.length} selected`);
  }
}

/**
 * Runs a check, and once more when the environment failed during a failed attempt (a stall of
 * the harness, an answer of the test authority the target gave up on): a verdict is only given
 * from an attempt during which the harness's own side answered in time. When every attempt met
 * such a fault, the result is an error naming it, never a failure of the target.
 */
async function runOne(check: Check, options: RunOptions, runSignal: AbortSignal): Promise<CheckResult> {
  const attempts: Attempt[] = [];
  let durationMs = 0;
  for (let n = 1; ; n++) {
    const start = performance.now();
    const owner = {};
    const result = await asOwner(owner, () => withAttempt(n, () => runAttempt(check, options, runSignal)));
    durationMs += result.durationMs;
    if (result.status !== 'failed' && result.status !== 'error') return withAttempts(result, attempts, durationMs);
    // A stall is noticed when the harness runs again: give its watch one tick to report.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const faults = faultsBetween(start, performance.now(), owner);
    if (faults.length === 0 || runSignal.aborted) return withAttempts(result, attempts, durationMs);
    const environment = summarise(faults);
    attempts.push({ status: result.status, detail: result.detail, ...(result.code ? { code: result.code } : {}), ...(result.cause ? { cause: result.cause } : {}), environment });
    if (n >= MAX_ATTEMPTS) {
      const cause = faults.find((f) => f.cause === 'authority-late')?.cause ?? faults[0]!.cause;
      const { code: _code, ...rest } = result;
      return withAttempts(
        {
          ...rest,
          status: 'error',
          cause,
          detail: `no verdict: the environment failed during each of ${n} attempts (${environment.join('; ')}); the last attempt said: ${result.detail}`,
        },
        attempts,
        durationMs,
      );
    }
  }
}

const MAX_ATTEMPTS = 2;

function withAttempts(result: CheckResult, attempts: Attempt[], durationMs: number): CheckResult {
  return attempts.length === 0 ? result : { ...result, durationMs, attempts };
}

/** At most a few distinct lines: a long stall and the answers it made late say the same thing. */
function summarise(faults: readonly EnvironmentFault[]): string[] {
  const lines = [...new Set(faults.map((f) => f.detail))];
  return lines.length <= 3 ? lines : [...lines.slice(0, 3), `and ${lines.length - 3} more`];
}

async function runAttempt(check: Check, options: RunOptions, runSignal: AbortSignal): Promise<CheckResult> {
  const timeoutMs = Math.max(check.timeoutMs ?? 0, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const timeout = new AbortController();
  const signal = AbortSignal.any([runSignal, timeout.signal]);
  setMaxListeners(0, signal);
  const log: string[] = [];
  const ctx: CheckContext = {
    seed: options.seed,
    runs: options.runs ?? DEFAULT_RUNS,
    ...(options.fuzzRuns !== undefined ? { fuzzRuns: options.fuzzRuns } : {}),
    signal,
    log: (msg) => {
      log.push(msg);
      options.onLog?.(check.id, msg);
    },
    ...(options.replay !== undefined ? { replayPath: options.replay } : {}),
    ...(options.commandLine !== undefined ? { commandLine: options.commandLine } : {}),
  };
  const base: ResultBase = {
    id: check.id,
    title: check.title,
    suite: check.suite,
    rules: [...check.rules],
    ...(check.context && check.context.length > 0 ? { context: [...check.context] } : {}),
    ...(check.cells && check.cells.length > 0 ? { cells: check.cells.map((c) => ({ ...c })) } : {}),
    level: check.level,
    ...(check.profile ? { profile: true } : {}),
    gating: !check.profile || gatesProfile(options.profileGates, check.suite),
  };
  const start = performance.now();
  const elapsed = (): number => Math.round((performance.now() - start) * 1000) / 1000;

  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let progressed = false;
  try {
    const stopped = new Promise<'timeout' | 'interrupted'>((resolve) => {
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          timeout.abort(new Error(`timed out after ${timeoutMs} ms`));
          resolve('timeout');
        }, timeoutMs);
      };
      ctx.progress = () => {
        if (timeout.signal.aborted) return;
        progressed = true;
        arm();
      };
      arm();
      onAbort = () => resolve('interrupted');
      if (runSignal.aborted) onAbort();
      else runSignal.addEventListener('abort', onAbort, { once: true });
    });
    const running = Promise.resolve().then(() => check.run(ctx));
    running.catch(() => {}); // a check that rejects after its timeout must not crash the process
    const outcome = await Promise.race([running, stopped]);
    if (outcome === 'timeout') {
      const detail = progressed ? `made no progress for ${timeoutMs} ms (each completed run restarts that limit)` : `timed out after ${timeoutMs} ms`;
      return { ...base, status: 'error', cause: 'check-timeout', detail, durationMs: elapsed(), ...logOf(log) };
    }
    if (outcome === 'interrupted') return { ...base, status: 'skipped', detail: 'interrupted before this check finished', durationMs: elapsed() };
    return fromOutcome(base, check, outcome, elapsed(), log);
  } catch (e) {
    // The check found the environment at fault: a fault like any other, so the check runs again.
    if (e instanceof EnvironmentError) reportOwnFault(e.errorCause, e.message);
    return { ...base, status: 'error', cause: causeOf(e), detail: describeError(e), durationMs: elapsed(), ...logOf(log) };
  } finally {
    clearTimeout(timer);
    if (onAbort) runSignal.removeEventListener('abort', onAbort);
  }
}

/** What a throw out of a check says about its cause: a helper's or a port's, else the check's own. */
export function causeOf(e: unknown): ErrorCause {
  for (let x: unknown = e, depth = 0; x instanceof Error && depth < 5; x = x.cause, depth++) {
    if (x instanceof EnvironmentError) return x.errorCause;
    if ((x as { code?: unknown }).code === 'EADDRINUSE') return 'port-in-use';
  }
  return 'check-threw';
}

/**
 * A failure's code when the check named none: the matrix facet it judges, when all its cells are
 * of one kind (a window check fails on timing), else `assertion`.
 */
export function fallbackCode(check: Pick<Check, 'cells'>): FailureCode {
  const kinds = new Set((check.cells ?? []).map((c) => FACET_CODES[facetKind(c.facet)]).filter((c) => c !== undefined));
  return kinds.size === 1 ? [...kinds][0]! : 'assertion';
}

/** Facet kinds (model.ts FacetKind) to the failure they reveal. */
const FACET_CODES: Record<string, FailureCode> = {
  who: 'access',
  binding: 'binding',
  window: 'timing',
  limit: 'limit',
  once: 'state',
  order: 'code',
  normalization: 'field',
  lifecycle: 'state',
};

/** A cell's facet is its entry's name or its kind; a named facet's kind is the name's first word (`window`, `window-skew`). */
function facetKind(facet: string): string {
  return facet.split(/[-_.]/)[0]!;
}

/** The summary's word: did the profile gate this run (every profile check that ran gated)? */
function profileGated(results: readonly CheckResult[], gates: RunOptions['profileGates']): boolean {
  const profile = results.filter((r) => r.profile);
  return profile.length > 0 ? profile.every((r) => r.gating) : gates === true;
}

function gatesProfile(gates: RunOptions['profileGates'], suite: string): boolean {
  return typeof gates === 'boolean' ? gates : (gates?.has(suite) ?? false);
}

type ResultBase = Pick<CheckResult, 'id' | 'title' | 'suite' | 'rules' | 'context' | 'cells' | 'level' | 'profile' | 'gating'>;

function fromOutcome(base: ResultBase, check: Check, outcome: Outcome, durationMs: number, log: string[]): CheckResult {
  const status = (outcome as Partial<Outcome> | null | undefined)?.status;
  if (status !== 'passed' && status !== 'failed' && status !== 'skipped') {
    return { ...base, status: 'error', cause: 'invalid-outcome', detail: `check returned an invalid outcome: ${inspect(outcome, { depth: 2 })}`, durationMs, ...logOf(log) };
  }
  const result: CheckResult = { ...base, status, detail: outcome.detail ?? '', ...(status === 'failed' ? { code: outcome.code ?? fallbackCode(check) } : {}), durationMs };
  if (outcome.evidence !== undefined) result.evidence = jsonSafe(outcome.evidence);
  return status === 'passed' || status === 'skipped' ? result : { ...result, ...logOf(log) };
}

function logOf(log: string[]): { log?: string[] } {
  return log.length > 0 ? { log } : {};
}

/** The message and the head of the stack: enough to find the throw without flooding the report. */
export function describeError(e: unknown): string {
  if (!(e instanceof Error)) return `thrown: ${inspect(e, { depth: 3 })}`;
  const frames = (e.stack ?? '')
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .slice(0, STACK_LINES);
  const cause = e.cause !== undefined ? `\ncaused by: ${e.cause instanceof Error ? e.cause.message : inspect(e.cause)}` : '';
  return [`${e.name}: ${e.message}${cause}`, ...frames.map((f) => f.trim())].join('\n  ');
}

/** Evidence ends up in a JSON report: convert what JSON cannot carry rather than lose the report. */
function jsonSafe(value: unknown): unknown {
  try {
    return JSON.parse(
      JSON.stringify(value, (_k, v: unknown) => {
        if (typeof v === 'bigint') return `${v}n`;
        if (v instanceof Uint8Array) return { bytes_base64url: Buffer.from(v).toString('base64url') };
        return v;
      }),
    );
  } catch (e) {
    return { unserialisable: (e as Error).message, inspected: inspect(value, { depth: 6 }) };
  }
}
