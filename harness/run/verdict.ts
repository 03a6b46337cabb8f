// How a check reaches its verdict: the problems it collects (Expect), and the two ways it stops
// early (CheckFailure: failed with what was collected; CheckSkip: skipped, with the reason).

export class CheckFailure extends Error {
  override name = 'CheckFailure';
}

export class CheckSkip extends Error {
  override name = 'CheckSkip';
}

/** Problems collected by a check; none means passed. */
export class Expect {
  readonly problems: string[] = [];

  that(condition: boolean, problem: string): boolean {
    if (!condition) this.problems.push(problem);
    return condition;
  }

  fail(problem: string): void {
    this.problems.push(problem);
  }

  /** Stops the check here with what was collected plus `problem`. */
  stop(problem: string): never {
    throw new CheckFailure(problem);
  }
}
