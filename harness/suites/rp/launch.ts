// `run --reference --suite rp`: starts the pieces the suite needs on loopback. An in-process test
// authority (harness actor), and N child processes of the reference RP, spawned from its bin
// (the harness never imports reference/), sharing one data directory and one origin, pointed at
// the authority's DNS server and CA. One more RP instance with an unreachable Redis nonce store
// serves the fail-closed check. Everything is stopped (also on SIGINT and at exit) and the
// temporary directory removed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Profile } from '../../../protocol/common/profile.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { ConfigError } from '../../run/exit.ts';
import { startAuthority, type Authority } from '../../actors/authority/index.ts';
import type { RpTarget } from './driver.ts';

const BIN = fileURLToPath(new URL('../../../bin/svc-reference.js', import.meta.url));
const LISTENING = /svc-reference rp listening on (\S+) \((\S+)\)/;
const START_TIMEOUT_MS = 30_000;
/** The reference RP's per-lookup timeout here: short, so the authority-timeout check is quick. */
export const REFERENCE_RESOLVER_TIMEOUT_MS = 1500;
/**
 * The reference's resume-code lifetime here (its default is 60 s): the expiry check waits past
 * the declared lifetime, so a short one keeps the whole run short. The check is the same.
 */
export const REFERENCE_RESUME_TTL_S = 5;

export interface ReferenceOptions {
  profile: Profile;
  /** sqlite (default), memory, or redis://HOST:PORT. */
  nonceStore?: string;
  processes?: number;
  /** Write child output here (verbose). */
  log?: (line: string) => void;
}

export interface ReferenceRun {
  target: RpTarget;
  authority: Authority;
  /** The RP processes: origin and bound URLs. */
  rp: Array<{ origin: string; url: string; pid: number }>;
  stop(): Promise<void>;
}

/** A running `svc-reference rp` child process. */
export interface RpChild {
  proc: ChildProcess;
  origin: string;
  /** The bound URL, no trailing slash. */
  url: string;
  /** Its stdout and stderr lines so far. */
  output: string[];
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export async function startReference(options: ReferenceOptions): Promise<ReferenceRun> {
  const n = options.processes ?? 1;
  const children: RpChild[] = [];
  const dirs: string[] = [];
  let authority: Authority | undefined;
  const killAll = (): void => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM');
  };
  process.once('exit', killAll);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(children.map((c) => stopChild(c)));
    process.off('exit', killAll);
    await authority?.close().catch(() => undefined);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  };
  try {
    authority = await startAuthority({ profile: options.profile });
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-rp-'));
    dirs.push(dataDir);
    const common = [
      '--dns-server',
      authority.dnsServer,
      '--ca',
      authority.caFile,
      '--service-name',
      options.profile.name,
      '--resolver-timeout',
      String(REFERENCE_RESOLVER_TIMEOUT_MS),
      '--resume-ttl',
      String(REFERENCE_RESUME_TTL_S),
    ];
    const store = options.nonceStore ? ['--nonce-store', options.nonceStore] : [];
    const spawnRp = (args: string[], log?: (line: string) => void) =>
      spawnReferenceRp(args, { ...(log ? { log } : {}), onSpawn: (c) => children.push(c) }).then((c) => {
        // Keep it in `children` once (onSpawn pushed it at spawn).
        children.splice(children.indexOf(c), 1);
        return c;
      });
    const first = await spawnRp(['--port', '0', '--data-dir', dataDir, ...store, ...common], options.log);
    children.push(first);
    const rest = await Promise.all(Array.from({ length: n - 1 }, () => spawnRp(['--port', '0', '--data-dir', dataDir, '--origin', first.origin, ...store, ...common], options.log)));
    children.push(...rest);
    // The fail-closed instance: its own data, a Redis URL on a port nobody listens on.
    const brokenDir = await mkdtemp(join(tmpdir(), 'svc-rp-broken-'));
    dirs.push(brokenDir);
    const broken = await spawnRp(['--port', '0', '--data-dir', brokenDir, '--nonce-store', `redis://127.0.0.1:${await closedPort()}`, ...common], options.log);
    children.push(broken);
    const target: RpTarget = {
      profile: options.profile,
      origin: first.origin,
      startUrl: `${first.origin}/login`,
      loginPage: { url: `${first.origin}/login`, explicit: true },
      processes: [first.url, ...rest.map((c) => c.url)],
      authority,
      brokenStore: { origin: broken.origin, startUrl: `${broken.origin}/login` },
      requestTimeoutMs: 20_000,
      declared: { resumeCodeLifetimeS: REFERENCE_RESUME_TTL_S, deliveryBodyMaxBytes: limits.rp_delivery_body_max_bytes },
    };
    return { target, authority, rp: children.map((c) => ({ origin: c.origin, url: c.url, pid: c.proc.pid ?? 0 })), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Spawns `svc-reference rp ARGS` from its bin, as a user starts it, and resolves once it prints
 * its listening line. `onSpawn` sees the child at once, so a caller can stop it if startup fails.
 */
export function spawnReferenceRp(args: string[], options: { log?: (line: string) => void; onSpawn?: (child: RpChild) => void } = {}): Promise<RpChild> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, 'rp', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } });
    const child: RpChild = { proc, origin: '', url: '', output: [], stop: () => stopChild(child) };
    options.onSpawn?.(child);
    let settled = false;
    const timer = setTimeout(() => fail(`did not print its listening line within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new ConfigError(`the reference RP (svc-reference rp ${args.join(' ')}) ${why}\n${child.output.slice(-20).join('\n')}`));
    };
    const onLine = (line: string) => {
      child.output.push(line);
      options.log?.(`[rp ${proc.pid}] ${line}`);
      const m = LISTENING.exec(line);
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

async function stopChild(c: Pick<RpChild, 'proc'>): Promise<void> {
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
