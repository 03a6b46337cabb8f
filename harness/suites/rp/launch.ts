// `run --reference --suite rp`: starts the pieces the suite needs on loopback. An in-process test
// authority (harness actor), and N child processes of the reference RP, spawned from its bin
// (the harness never imports reference/), sharing one data directory (or one PostgreSQL database)
// and one origin, pointed at the authority's DNS server and CA. Two more RP instances serve one
// check each kind: one with an unreachable Redis nonce store (fail closed), one whose requests
// live REFERENCE_SHORT_WINDOW_S (expiry). Everything is stopped (also on SIGINT and at exit) and
// the temporary directories removed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Profile } from '../../../protocol/common/profile.ts';
import { limits } from '../../../schemas/ts/limits.ts';
import { closedPort, REFERENCE_RESOLVER_TIMEOUT_MS, spawnReference, stopChild, type ReferenceChild, type SpawnOptions } from '../../run/spawn.ts';
import { startAuthority, type Authority } from '../../actors/authority/index.ts';
import type { RpTarget } from './driver.ts';

export { REFERENCE_RESOLVER_TIMEOUT_MS };
/**
 * The reference's resume-code lifetime here (its default is 60 s): the expiry check waits past
 * the declared lifetime, so a short one keeps the whole run short. The check is the same.
 */
export const REFERENCE_RESUME_TTL_S = 5;
/**
 * The request window of the short-window instance: the expiry checks wait out a transaction's
 * window, and the reference's own is the document's most, 5 minutes.
 */
export const REFERENCE_SHORT_WINDOW_S = 3;

export interface ReferenceOptions {
  profile: Profile;
  /** sqlite (default), memory, or redis://HOST:PORT. */
  nonceStore?: string;
  /** postgres://USER:PASS@HOST:PORT/DB: the processes share it instead of a data directory. */
  database?: string;
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
export type RpChild = ReferenceChild;

export { closedPort };

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
    const store = [...(options.nonceStore ? ['--nonce-store', options.nonceStore] : []), ...(options.database ? ['--database', options.database] : [])];
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
    // Two more instances, each with its own data: the fail-closed one, with a Redis URL on a port
    // nobody listens on, and the short-window one, whose transactions expire in seconds.
    const [brokenDir, shortDir] = await Promise.all([mkdtemp(join(tmpdir(), 'svc-rp-broken-')), mkdtemp(join(tmpdir(), 'svc-rp-short-'))]);
    dirs.push(brokenDir, shortDir);
    const [broken, short] = await Promise.all([
      spawnRp(['--port', '0', '--data-dir', brokenDir, '--nonce-store', `redis://127.0.0.1:${await closedPort()}`, ...common], options.log),
      spawnRp(['--port', '0', '--data-dir', shortDir, '--request-window', String(REFERENCE_SHORT_WINDOW_S), ...common], options.log),
    ]);
    children.push(broken, short);
    const target: RpTarget = {
      profile: options.profile,
      origin: first.origin,
      startUrl: `${first.origin}/login`,
      loginPage: { url: `${first.origin}/login`, explicit: true },
      processes: [first.url, ...rest.map((c) => c.url)],
      authority,
      brokenStore: { origin: broken.origin, startUrl: `${broken.origin}/login` },
      shortWindow: { origin: short.origin, startUrl: `${short.origin}/login` },
      requestTimeoutMs: 20_000,
      declared: { resumeCodeLifetimeS: REFERENCE_RESUME_TTL_S, deliveryBodyMaxBytes: limits.rp_delivery_body_max_bytes },
    };
    return { target, authority, rp: children.map((c) => ({ origin: c.origin, url: c.url, pid: c.proc.pid ?? 0 })), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Spawns `svc-reference rp ARGS` (harness/run/spawn.ts). */
export const spawnReferenceRp = (args: string[], options: SpawnOptions = {}): Promise<RpChild> => spawnReference('rp', args, options);
