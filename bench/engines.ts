// The outside engines a scale-out row needs, started by the bench as the tests start them (a temp
// directory, a free port, stopped at the end) and each naming its version for the output. An
// engine that is not installed is a `Missing` naming the Debian package, so its row prints a skip
// line instead of failing the run.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Authority } from '../harness/actors/authority/index.ts';
import { closedPort, spawnReference, type ReferenceChild, type SpawnOptions } from '../harness/run/spawn.ts';
import { startCeph as startOneNodeCeph } from '../test/setup/ceph.ts';

export interface Missing {
  missing: string;
}

export interface Engine {
  version: string;
  /** The server's pid (a PostgreSQL postmaster: its backends are its children), for ./cpu.ts. */
  pid: number | undefined;
  stop(): Promise<void>;
}

const absent = (binary: string, pkg: string): Missing | undefined => (existsSync(binary) ? undefined : { missing: `${binary} is missing: install the Debian package ${pkg}` });

async function waitPort(port: number, proc: ChildProcess | undefined, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection({ port, host: '127.0.0.1' });
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline || (proc && proc.exitCode !== null)) throw new Error(`${what} did not start on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const killed = (proc: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });

/** redis-server without persistence (as --shared-state requires), on a free port. */
export async function startRedis(): Promise<(Engine & { url: string }) | Missing> {
  const no = absent('/usr/bin/redis-server', 'redis-server');
  if (no) return no;
  const port = await closedPort();
  const proc = spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await waitPort(port, proc, 'redis-server');
  const version = /v=(\S+)/.exec(execFileSync('/usr/bin/redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? '?';
  return { version: `Redis ${version}`, pid: proc.pid, url: `redis://127.0.0.1:${port}`, stop: () => killed(proc) };
}

/**
 * A private PostgreSQL cluster: initdb in a temp directory owned by the postgres user, on a free
 * port, default durability (fsync on, synchronous_commit on: a commit is on disk, as SQLite's
 * synchronous=FULL), trust on loopback; stopped with `pg_ctl stop -m immediate` and removed.
 */
export async function startPostgres(): Promise<(Engine & { url: string }) | Missing> {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)) : [];
  const bin = versions.length ? `/usr/lib/postgresql/${versions.at(-1)}/bin` : '';
  const no = absent(`${bin}/initdb`, 'postgresql');
  if (no) return no;
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-pg-'));
  chmodSync(dir, 0o700);
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
  chownSync(dir, uid, gid);
  const as = (cmd: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', `${bin}/${cmd}`, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const data = join(dir, 'data');
  as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await closedPort();
  as('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start']);
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  as('createdb', ['-h', dir, '-p', String(port), '-U', 'postgres', 'svc_bench']);
  const version = as('postgres', ['--version']).trim();
  return {
    version,
    pid,
    url: `postgres://postgres@127.0.0.1:${port}/svc_bench`,
    stop: async () => {
      as('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Ceph extends Engine {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  /** The OSD and the monitor, counted apart from the gateway (`pid`). */
  osdPid: number | undefined;
  monPid: number | undefined;
}

/** A one-node Ceph (test/setup/ceph.ts: a monitor, a memstore OSD, radosgw) in a temp directory. */
export async function startCeph(): Promise<Ceph | Missing> {
  const no = absent('/usr/bin/radosgw', 'radosgw') ?? absent('/usr/bin/ceph-mon', 'ceph-mon') ?? absent('/usr/bin/ceph-osd', 'ceph-osd');
  if (no) return no;
  const ceph = await startOneNodeCeph();
  const pidOf = (name: string) => {
    try {
      return Number(readFileSync(join(ceph.dir, 'run', `${name}.pid`), 'utf8'));
    } catch {
      return undefined;
    }
  };
  const version = /ceph version (\S+)/.exec(execFileSync('/usr/bin/radosgw', ['--version'], { encoding: 'utf8' }))?.[1] ?? '?';
  return {
    version: `Ceph ${version} (radosgw, memstore OSD)`,
    pid: pidOf('client.rgw'),
    osdPid: pidOf('osd.0'),
    monPid: pidOf('mon.a'),
    endpoint: ceph.endpoint,
    accessKey: ceph.accessKey,
    secretKey: ceph.secretKey,
    stop: async () => {
      await ceph.stop();
      rmSync(join(ceph.dir, '..'), { recursive: true, force: true });
    },
  };
}

/** A reference relay as the benches start it: a free port, resolving through `authority`, quiet; `args` add the rest. */
export function spawnBenchRelay(authority: Authority, args: string[], options: SpawnOptions = {}): Promise<ReferenceChild> {
  return spawnReference('relay', ['--port', '0', '--dns-server', authority.dnsServer, '--ca', authority.caFile, '--quiet', ...args], options);
}

export const isMissing = (e: object): e is Missing => 'missing' in e;
