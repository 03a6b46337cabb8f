// The harness's one memo of an async step: a scenario judged by several checks, a target's published
// documents, the test authority a run connects to lazily.
import { currentAttempt } from './verdict.ts';

/**
 * Runs `fn` on the first call and gives every caller that same promise. A check run again because
 * the environment spoiled its first attempt (runner.ts) gets a fresh run, not the spoiled one.
 */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  const runs = new Map<number, Promise<T>>();
  return () => {
    const n = currentAttempt();
    let p = runs.get(n);
    if (p === undefined) runs.set(n, (p = fn()));
    return p;
  };
}
