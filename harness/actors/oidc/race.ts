// Concurrency for the matrix checks of document 2: races for the single-use secrets (codes, resume
// codes), the same request sent `n` ways at once; and a cap on the independent cells in flight.

/** `n` calls of `fn` released together (one microtask turn apart at most): for races. */
export async function together<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const runs = Array.from({ length: n }, (_, i) => gate.then(() => fn(i)));
  release();
  return Promise.all(runs);
}

/**
 * At most `width` calls of the returned runner in flight: a check's independent cells share the
 * target without a burst of sign-ins (each resolves an identity) outrunning its resolver.
 */
export function limiter(width: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    while (active >= width) await new Promise<void>((r) => waiting.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
