// `svc-reference rp --workers N`: N node:cluster workers, each a whole RP (./app.ts), sharing one
// port (the primary accepts and hands connections round-robin) and one --data-dir, so they form
// one RP exactly as separate processes started with the same --data-dir do: transactions,
// sessions and nonces are shared through SQLite, every state change a compare-and-set. One
// process saturates one core on deliveries (verify, HTTP, SQLite); workers use the others.
//
// The primary serves nothing: it forks the workers from the same bin with the same arguments,
// waits for each to report its bound address, prints the one listening line, forwards
// SIGINT/SIGTERM (its close()), and stops everything if a worker dies.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { ReferenceIO, RunningServer } from '../servers.ts';

const BIN = fileURLToPath(new URL('../../bin/svc-reference.js', import.meta.url));

interface Listening {
  svcRpListening: { origin: string; url: string };
}

const isListening = (m: unknown): m is Listening => typeof m === 'object' && m !== null && 'svcRpListening' in m;

/** True in a worker forked by `startWorkers`: it serves, reports, and prints no listening line. */
export const inWorker = (): boolean => cluster.isWorker;

/** In a worker: tells the primary where this RP listens. */
export function reportListening(origin: string, url: string): void {
  const message: Listening = { svcRpListening: { origin, url } };
  process.send?.(message);
}

export interface RunningCluster extends RunningServer {
  origin: string;
  url: string;
}

/**
 * Forks `n` workers running `svc-reference <args>` and resolves once all listen on one address,
 * or rejects (every worker stopped) when one exits first.
 */
export async function startWorkers(n: number, args: readonly string[], io: ReferenceIO): Promise<RunningCluster> {
  cluster.setupPrimary({ exec: BIN, args: [...args] });
  const workers: Worker[] = [];
  let closing = false;
  const exited = new Map<Worker, Promise<void>>();
  const stopAll = async (): Promise<void> => {
    closing = true;
    for (const w of workers) if (w.process.exitCode === null && w.process.signalCode === null) w.process.kill('SIGTERM');
    await Promise.all(exited.values());
  };
  let listening: { origin: string; url: string }[];
  try {
    listening = await Promise.all(
      Array.from({ length: n }, () => {
        const worker = cluster.fork();
        workers.push(worker);
        exited.set(worker, new Promise((resolve) => worker.once('exit', () => resolve())));
        return new Promise<{ origin: string; url: string }>((resolve, reject) => {
          const onMessage = (m: unknown) => {
            if (!isListening(m)) return;
            worker.off('message', onMessage);
            resolve(m.svcRpListening);
          };
          worker.on('message', onMessage);
          worker.once('exit', (code, signal) => reject(new Error(`a worker exited (${signal ?? code}) before listening`)));
        });
      }),
    );
  } catch (error) {
    await stopAll();
    throw error;
  }
  const [first] = listening;
  if (!first || listening.some((l) => l.origin !== first.origin || l.url !== first.url)) {
    await stopAll();
    throw new Error(`the workers disagree on their address: ${listening.map((l) => `${l.origin} (${l.url})`).join(', ')}`);
  }
  // A worker dying leaves an RP short of the capacity it was started with: stop, visibly.
  for (const w of workers) {
    w.once('exit', (code, signal) => {
      if (closing) return;
      io.stderr.write(`svc-reference rp: worker ${w.process.pid} exited (${signal ?? code}); stopping\n`);
      process.exitCode = 1;
      void stopAll();
    });
  }
  return { origin: first.origin, url: first.url, close: stopAll };
}
