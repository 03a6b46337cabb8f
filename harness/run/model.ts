// The run model: what a check is, what running it produces, and the report every reporter reads.
// Types only, so suites can depend on it without pulling in the runner.

export type Level = 'MUST' | 'SHOULD' | 'MAY';
export type Status = 'passed' | 'failed' | 'skipped' | 'error';

/**
 * Why a check failed, as a stable code (as jose's and oauth4webapi's errors carry codes), so CI
 * dashboards and expected-failures entries match on reasons rather than on text. Set where the
 * verdict is made (harness/run/verdict.ts): `status` a status other than the one required; `code`
 * another error code; `field` a member missing or with another value; `shape` an answer that does
 * not parse or has the wrong type; `timing` outside a time window or too slow; `state` a state the
 * sequence should not allow (a replay, a second use, a lost write); `crypto` a signature, key or
 * digest; `binding` a credential accepted with one of its bound parts changed; `access` the wrong
 * principal allowed or the right one refused; `limit` a size or count cap; `transport` no usable
 * HTTP answer; `stale` an expected-failures entry that no longer fails; `assertion` a check that
 * names no reason of its own.
 */
export type FailureCode = 'status' | 'code' | 'field' | 'shape' | 'timing' | 'state' | 'crypto' | 'binding' | 'access' | 'limit' | 'transport' | 'stale' | 'assertion';

/**
 * What made a check an error rather than a verdict on the target (harness/run/environment.ts,
 * runner.ts): `check-timeout` it ran past its time limit; `harness-stalled` the harness's own
 * process could not run for a while (CPU starved); `authority-late` the test authority the
 * harness runs failed to answer the target in time; `helper-unavailable` a helper (an authority
 * over its admin API, a reference process) did not answer the harness; `port-in-use` a port was
 * taken; `check-threw` the check itself threw (a bug in the check or an answer it could not
 * handle); `invalid-outcome` the check returned something that is not a verdict.
 */
export type ErrorCause = 'check-timeout' | 'harness-stalled' | 'authority-late' | 'outlived-window' | 'helper-unavailable' | 'port-in-use' | 'check-threw' | 'invalid-outcome';

/** An earlier attempt of a check, run again because the environment failed during it. */
export interface Attempt {
  status: Status;
  detail: string;
  code?: FailureCode;
  cause?: ErrorCause;
  /** What the environment did wrong during the attempt. */
  environment: string[];
}

/** What a check's run returns. `error` is never returned: the runner assigns it to throws and timeouts. */
export interface Outcome {
  status: Exclude<Status, 'error'>;
  detail?: string;
  /** Why a failed outcome failed (derived where the verdict was made). */
  code?: FailureCode;
  /** JSON-serialisable: inputs, HTTP exchange, counterexample. */
  evidence?: unknown;
}

export interface CheckContext {
  seed: number;
  /** Number of runs for property checks. */
  runs: number;
  /** Requests per fuzz property (--fuzz-runs); the fuzz's own default when unset. */
  fuzzRuns?: number;
  /** Aborted on SIGINT or when the check's timeout expires: stop network work when it fires. */
  signal: AbortSignal;
  log(msg: string): void;
  /** fast-check path of a failure to replay (only set when the run was started with --replay). */
  replayPath?: string;
  /** The command line to print in replay hints, without --seed/--replay/--check. */
  commandLine?: string;
  /**
   * Says the check is making progress (a property, after each run): its time limit then counts
   * from here, so a long property on a loaded machine finishes, and a run that hangs still ends.
   */
  progress?(): void;
}

/** What a facet of spec/facets/ constrains (spec/meta/facets.schema.json). */
export type FacetKind = 'who' | 'binding' | 'window' | 'limit' | 'once' | 'order' | 'normalization' | 'lifecycle';

/**
 * A cell of the rule matrix a check fills: one value of one facet of a rule, on one operation
 * (an OpenAPI operationId). `facet` is the facet entry's `name`, else its kind. Values per kind:
 * who: a principal; binding: a bound part; window: `inside` | `outside`; limit: `at` | `past` |
 * `other-scope`; once: `replay` | `race`; order: `both-faults`; normalization: a form or
 * `near-miss`; lifecycle: a use the event ends.
 */
export interface Cell {
  rule: string;
  facet: string;
  value: string;
  operation?: string;
}

export interface Check {
  /** Stable, e.g. "vectors/poweur/signin.json#valid-identity". */
  id: string;
  title: string;
  /** e.g. "vectors". */
  suite: string;
  /** Rule ids from spec/rules/ whose assertions this check decides: only these count as coverage. */
  rules: string[];
  /** Rules the check touches without deciding them (setup, the way there): shown, never coverage. */
  context?: string[];
  /** The strongest level among its rules. */
  level: Level;
  /**
   * A check of the project profile: every rule it decides is a project decision (`origin:
   * project`), such as a status, error code or envelope field the documents leave open. Its
   * failures are reported apart and fail a run only when the profile gates (`--profile`).
   */
  profile?: boolean;
  /** Its own time limit, when it must wait longer than the run's per-check limit (e.g. past an expiry). */
  timeoutMs?: number;
  /**
   * The lane it runs in (default: its suite). Lanes run at once, a lane's checks one after
   * another: a check that mostly waits, on state no other check touches, takes a lane of its own.
   */
  lane?: string;
  /** It disturbs the other checks of its suite (it restarts the target): it runs first, with nothing else of its suite in flight. */
  exclusive?: boolean;
  /** The matrix cells it fills (spec/facets/): each cell's rule is one it decides. */
  cells?: Cell[];
  run(ctx: CheckContext): Promise<Outcome> | Outcome;
}

export interface CheckResult {
  id: string;
  title: string;
  suite: string;
  rules: string[];
  context?: string[];
  /** The matrix cells the check fills. */
  cells?: Cell[];
  level: Level;
  /** Set on checks of the project profile. */
  profile?: boolean;
  /** False for a profile check while the profile does not gate: its failure does not fail the run. */
  gating: boolean;
  status: Status;
  detail: string;
  /** On a failed result: why it failed, a stable code. */
  code?: FailureCode;
  /** On an error: what caused it (never the target failing a rule). */
  cause?: ErrorCause;
  /** Earlier attempts, when the environment failed during one and the check ran again. */
  attempts?: Attempt[];
  durationMs: number;
  evidence?: unknown;
  /** Set when a failure matched an expected-failures entry: it does not fail the run. */
  expected?: 'failure';
  /** The reason given in the expected-failures file. */
  expectedReason?: string;
  /** Messages the check logged, kept for failed and errored checks only. */
  log?: string[];
}

export interface RunSummary {
  passed: number;
  /** Failed gating results, not counting expected failures. */
  failed: number;
  skipped: number;
  errors: number;
  expectedFailures: number;
  total: number;
  /** Checks of the project profile, counted apart (also included in the counts above when gating). */
  profile: { gating: boolean; passed: number; failed: number; skipped: number };
  durationMs: number;
  seed: number;
  startedAt: string;
  interrupted: boolean;
}

/** One entry of the rule catalogue (schemas/ts/rules.ts); structural so the generated module fits. */
export interface RuleEntry {
  id: string;
  level: Level;
  doc: number;
  section: string;
  title: string;
  text?: string;
  origin?: 'project';
  unobservable?: string;
  code?: string;
}

export interface RuleCoverage {
  id: string;
  level: Level;
  doc: number;
  origin?: 'project';
  covered_by: string[];
  /** Why no check over the wire can decide it (spec/rules/). */
  unobservable?: string;
}

/** One document's rules (project decisions apart): decided by a check, unobservable, or neither. */
export interface DocumentCoverage {
  covered: string[];
  /** Covered rules a broken variant proved: it failed a check citing them (npm run sensitivity), and, for a rule with facets, one claiming a cell of each observable facet. */
  proven: string[];
  /** The facets (`rule/facet`, spec/facets/) of its document rules with a cell not marked unfilled, and those a variant proved. */
  facets?: { observable: string[]; proven: string[] };
  unobservable: Array<{ id: string; reason: string }>;
  uncovered: string[];
  /** The project's decisions about this document, judged by profile checks. */
  profile: { covered: string[]; uncovered: string[] };
}

export interface Coverage {
  /** Documents whose rules count. */
  docs: number[];
  rules: RuleCoverage[];
  /** Per document ("1", "2", "3"). */
  documents: Record<string, DocumentCoverage>;
  /** Document rules (not project decisions, not unobservable) of every document in scope. */
  covered: string[];
  uncovered: string[];
  /** Rule ids cited by checks that the catalogue does not know: a bug in the check or the spec. */
  unknown: string[];
}

export interface SkippedInput {
  source: string;
  reason: string;
}

export interface RunReport {
  tool: { name: string; version: string };
  summary: RunSummary;
  results: CheckResult[];
  coverage: Coverage;
  skipped_inputs: SkippedInput[];
  config: Record<string, unknown>;
}

/** Receives progress while a run goes; onEnd may write files, so it may be async. */
export interface Reporter {
  /** The number of selected checks, in all and per suite. */
  onStart?(total: number, perSuite: Readonly<Record<string, number>>): void;
  onResult?(result: CheckResult): void;
  onEnd?(report: RunReport): void | Promise<void>;
}

/** What a suite hands the runner: its checks, the inputs it could not use, and the documents it speaks for. */
export interface SuiteLoad {
  checks: Check[];
  skipped: SkippedInput[];
  coverageDocs: number[];
}
