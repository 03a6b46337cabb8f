// Races for the single-use secrets of document 2 (codes, resume codes): the same request sent
// `n` ways at once, released together so they overlap at the target.

/** `n` calls of `fn` released together (one microtask turn apart at most): for races. */
export async function together<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const runs = Array.from({ length: n }, (_, i) => gate.then(() => fn(i)));
  release();
  return Promise.all(runs);
}
