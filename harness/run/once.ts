// The harness's one memo of an async step: a scenario judged by several checks, a target's published
// documents, the test authority a run connects to lazily.

/** Runs `fn` on the first call and gives every caller that same promise. */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}
