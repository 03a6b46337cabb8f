// Waiting on a condition instead of a fixed sleep: the check goes on as soon as what it waits for
// holds, and a deadline bounds the wait.

/** Asks `holds` every `everyMs` until it is true (then true) or `withinMs` have passed (then false). */
export async function waitUntil(holds: () => boolean | Promise<boolean>, withinMs: number, options: { everyMs?: number; signal?: AbortSignal } = {}): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  const every = options.everyMs ?? 100;
  for (;;) {
    if (await holds()) return true;
    const left = deadline - Date.now();
    if (left <= 0 || options.signal?.aborted) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(every, left)));
  }
}
