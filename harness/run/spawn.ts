// Reference servers as child processes, spawned from the `svc-reference` bin exactly as a user
// starts them (the harness never imports reference/): each prints
// `svc-reference <server> listening on <origin> (<url>)` once it accepts connections.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ConfigError } from './exit.ts';

const BIN = fileURLToPath(new URL('../../bin/svc-reference.js', import.meta.url));
/**
 * How long a server may take to print its listening line. A start that fails exits and is reported
 * at once; this only bounds one that hangs. A loaded runner (load average 30 here, with other jobs)
 * took over 30 s to load and compile the TypeScript of a start, so the bound is generous.
 */
const START_TIMEOUT_MS = 120_000;

/**
 * The resolver timeout (per DNS query or HTTPS fetch of the test authority) the harness gives the
 * reference servers it starts. Their default, limits.resolution_timeout_seconds, suits a quiet
 * machine; on a loaded CI runner the reference and the harness (which runs the authority) share
 * starved cores, and a lookup the authority answers in a few ms may take seconds to be read.
 * Long enough that a loaded machine does not time out, short enough that the checks of an
 * authority that hangs on purpose (which wait it out) stay quick.
 */
export const REFERENCE_RESOLVER_TIMEOUT_MS = 5000;

export type ReferenceServer = 'rp' | 'bridge' | 'relay';

/** A running `svc-reference <server>` child process. */
export interface ReferenceChild {
  server: ReferenceServer;
  proc: ChildProcess;
  origin: string;
  /** The bound URL, no trailing slash. */
  url: string;
  /** Its stdout and stderr lines so far. */
  output: string[];
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  log?: (line: string) => void;
  /** Sees the child at once, so a caller can stop it if startup fails. */
  onSpawn?: (child: ReferenceChild) => void;
  env?: NodeJS.ProcessEnv;
}

/** Spawns `svc-reference SERVER ARGS` and resolves once it prints its listening line. */
export function spawnReference(server: ReferenceServer, args: string[], options: SpawnOptions = {}): Promise<ReferenceChild> {
  const listening = new RegExp(`svc-reference ${server} listening on (\\S+) \\((\\S+)\\)`);
  return new Promise((resolve, reject) => {
    // SVC_CHILD_PROF=<dir>: each server writes a V8 CPU profile there when it stops (bench work).
    const profiling = process.env.SVC_CHILD_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SVC_CHILD_PROF}`] : [];
    const proc = spawn(process.execPath, [...profiling, BIN, server, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    const child: ReferenceChild = { server, proc, origin: '', url: '', output: [], stop: () => stopChild(child) };
    options.onSpawn?.(child);
    let settled = false;
    const timer = setTimeout(() => fail(`did not print its listening line within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new ConfigError(`the reference ${server} (svc-reference ${server} ${args.join(' ')}) ${why}\n${child.output.slice(-20).join('\n')}`));
    };
    const onLine = (line: string) => {
      child.output.push(line);
      options.log?.(`[${server} ${proc.pid}] ${line}`);
      const m = listening.exec(line);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        child.origin = m[1]!;
        child.url = m[2]!.replace(/\/$/, '');
        resolve(child);
      }
    };
    lines(proc.stdout!, onLine);
    lines(proc.stderr!, onLine);
    proc.once('error', (e) => fail(`could not start: ${e.message}`));
    proc.once('exit', (code, signal) => fail(`exited (${signal ?? code}) before listening`));
  });
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    let i;
    while ((i = buffer.indexOf('\n')) !== -1) {
      onLine(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
    }
  });
}

/** SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
export async function stopChild(c: Pick<ReferenceChild, 'proc'>): Promise<void> {
  const p = c.proc;
  if (p.exitCode !== null || p.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      resolve();
    }, 5000);
    p.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    p.kill('SIGTERM');
  });
}

/** A loopback port nothing listens on (bound, then released). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
