// Exit codes are the harness's contract with CI: 0 pass, 1 a failure, 2 no verdict.
import type { RunSummary } from './model.ts';

export const EXIT_PASS = 0;
export const EXIT_FAIL = 1;
/** Nothing tested, bad configuration, or interrupted: the run gives no verdict. */
export const EXIT_NO_VERDICT = 2;

/** Bad input from the user (options, files): reported without a stack, exit code 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * An interrupted run yields 2 even when failures were seen: it never passes, and "incomplete"
 * is the more useful verdict for a run someone stopped.
 */
export function exitCodeFor(summary: RunSummary): number {
  if (summary.interrupted) return EXIT_NO_VERDICT;
  if (summary.failed > 0 || summary.errors > 0) return EXIT_FAIL;
  if (summary.passed === 0) return EXIT_NO_VERDICT;
  return EXIT_PASS;
}
