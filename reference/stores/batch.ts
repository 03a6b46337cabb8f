// Group commit: the SQLite writes queued during one event-loop turn run in one IMMEDIATE
// transaction at the end of the turn (setImmediate), instead of one commit each. Every queued
// write is still one statement (a compare-and-set or an insert-unless-present), so each stays
// atomic on its own, and BEGIN IMMEDIATE takes the database's write lock, so processes sharing
// the data dir still serialize: of racing claims exactly one changes a row. Results are handed
// out only after COMMIT; if the transaction fails, every write of the batch fails.
import type { Db } from './sqlite.ts';

interface Pending { op: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }

export class WriteBatch {
  #queue: Pending[] = [];
  #scheduled = false;
  readonly #commit: (ops: Pending[]) => { ok: boolean; value: unknown }[];

  constructor(db: Db) {
    const all = db.transaction((ops: Pending[]) =>
      ops.map((p) => {
        try {
          return { ok: true, value: p.op() };
        } catch (error) {
          return { ok: false, value: error };
        }
      }),
    );
    this.#commit = (ops) => all.immediate(ops);
  }

  /** Runs `op` (one statement) in this turn's transaction; resolves after the commit. */
  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const ops = this.#queue;
    this.#queue = [];
    let results: { ok: boolean; value: unknown }[];
    try {
      results = this.#commit(ops);
    } catch (error) {
      for (const p of ops) p.reject(error);
      return;
    }
    for (let i = 0; i < ops.length; i++) {
      const r = results[i]!;
      if (r.ok) ops[i]!.resolve(r.value);
      else ops[i]!.reject(r.value);
    }
  }
}

const batches = new WeakMap<Db, WriteBatch>();

/** The one batch of a database handle, shared by every store on it (one commit per turn). */
export function batchFor(db: Db): WriteBatch {
  let batch = batches.get(db);
  if (!batch) batches.set(db, (batch = new WriteBatch(db)));
  return batch;
}
