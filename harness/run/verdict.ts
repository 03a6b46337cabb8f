// How a check reaches its verdict: the problems it collects (Expect), each with the reason code
// of what was wrong (model.ts FailureCode), and the ways it stops early (CheckFailure: failed with
// what was collected; CheckSkip: skipped, with the reason; EnvironmentError: no verdict, the
// harness's own side failed).
//
// A problem's code is given where it is known: by the assertion (`e.that(ok, text, 'status')`),
// by the judging helper that compared the answer (refusedWith notes whether the status or the
// error code differed, through `noteMismatch`), or by the error thrown (HttpError: transport).
// Where none is, the runner falls back on the check's matrix cells (a window check fails on
// timing), then on `assertion`. Never parsed from the text.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ErrorCause, FailureCode } from './model.ts';

export class CheckFailure extends Error {
  override name = 'CheckFailure';
  constructor(
    message: string,
    readonly code?: FailureCode,
  ) {
    super(message);
  }
}

export class CheckSkip extends Error {
  override name = 'CheckSkip';
}

/**
 * The harness's own side failed (a helper did not answer, a port was taken): the check has no
 * verdict on the target. The runner reports it as an error naming `cause`.
 */
export class EnvironmentError extends Error {
  override name = 'EnvironmentError';
  constructor(
    readonly errorCause: ErrorCause,
    message: string,
  ) {
    super(message);
  }
}

/** The Expect of the check running in this async context, for helpers that judge an answer. */
const current = new AsyncLocalStorage<Expect>();

/**
 * Called by a judging helper when its comparison fails, with what differed: the next problem the
 * check records takes this code unless it names one itself.
 */
export function noteMismatch(code: FailureCode): void {
  const e = current.getStore();
  if (e) e.pending = code;
}

/**
 * Called by `said()` with the exchange whose answer a failure text quotes: when the next problem
 * is recorded, that exchange is marked `judged`, so the reports show it (and its curl line) as
 * the failing request rather than whatever the check sent last.
 */
export function noteAnswer(exchange: object | undefined): void {
  const e = current.getStore();
  if (e && exchange) e.said = exchange;
}

/** Problems collected by a check; none means passed. */
export class Expect {
  readonly problems: string[] = [];
  /** The code of each problem, in order (undefined: the check named none). */
  readonly codes: Array<FailureCode | undefined> = [];
  /** Set by noteMismatch since the last problem. */
  pending: FailureCode | undefined;
  /** Set by noteAnswer since the last verdict. */
  said: object | undefined;

  /** Runs `fn` with this Expect current, so judging helpers can note what differed. */
  scope<T>(fn: () => T): T {
    return current.run(this, fn);
  }

  that(condition: boolean, problem: string, code?: FailureCode): boolean {
    if (!condition) this.fail(problem, code);
    else this.pending = this.said = undefined;
    return condition;
  }

  fail(problem: string, code?: FailureCode): void {
    this.problems.push(problem);
    this.codes.push(code ?? this.pending);
    this.markJudged();
  }

  /** Stops the check here with what was collected plus `problem`. */
  stop(problem: string, code?: FailureCode): never {
    const pending = this.pending;
    this.markJudged();
    throw new CheckFailure(problem, code ?? pending);
  }

  /** Marks the answer the failure quoted (see noteAnswer) and starts afresh. */
  markJudged(): void {
    if (this.said) (this.said as { judged?: boolean }).judged = true;
    this.pending = this.said = undefined;
  }

  /** The code of the first problem that has one (the first problem is the one the check met first). */
  code(): FailureCode | undefined {
    return this.codes.find((c) => c !== undefined);
  }
}

/** The code an error thrown out of a check carries, if it is a verdict on the target. */
export function codeOfError(error: unknown): FailureCode | undefined {
  if (error instanceof CheckFailure) return error.code;
  const reason = (error as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' ? (reason as FailureCode) : undefined;
}

/** Which attempt of a check runs in this async context (1, or 2 when the environment failed the first). */
const attempt = new AsyncLocalStorage<number>();

export function withAttempt<T>(n: number, fn: () => T): T {
  return attempt.run(n, fn);
}

export function currentAttempt(): number {
  return attempt.getStore() ?? 1;
}
