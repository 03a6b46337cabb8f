// WAL checkpoints beside the event loop. SQLite's automatic checkpoint runs inside the commit that
// crosses the threshold, on the serving thread, and copies pages back into the database file
// there; under load that is a fifth of a delivery's cost. Here a worker thread with its own
// connection checkpoints (PASSIVE: it never blocks a writer or a reader) every few milliseconds,
// on another core, and the serving connection's own threshold is raised to a backstop that only
// bites if the worker cannot keep up or has died. Durability is unchanged: a commit is in the
// WAL either way; a checkpoint only moves it into the main file.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Frames in the WAL before the serving connection checkpoints itself (the backstop). */
export const BACKSTOP_FRAMES = 20_000;
const INTERVAL_MS = 50;

// CommonJS source run with `eval`, so the worker needs no TypeScript loader.
const SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const checkpoint = () => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} };
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.once('message', () => { clearInterval(timer); checkpoint(); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  stop(): void;
}

export function startCheckpointer(file: string): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(SOURCE, { eval: true, workerData: { module, file, intervalMs: INTERVAL_MS } });
  worker.unref();
  // A failed worker only means the backstop checkpoints instead: nothing to surface.
  worker.on('error', () => undefined);
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      worker.postMessage('stop');
    },
  };
}
