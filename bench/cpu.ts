// What bounds a row, measured rather than guessed: the CPU time each process of the row spent
// during the timed load (utime + stime from /proc/<pid>/stat, its live descendants included, so
// a PostgreSQL server counts its backends), as cores used over the wall time, next to the
// machine's busy and iowait share (/proc/stat; other agents on the machine show up there too).
import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const HZ = 100;

/** utime + stime of `pid` in seconds (of its main thread alone with `main`), or 0 once it is gone. */
function ownSeconds(pid: number, main = false): number {
  try {
    const stat = readFileSync(main ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start at the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / HZ;
  } catch {
    return 0;
  }
}

/** Parent pid of every process now, for descendants. */
function parents(): Map<number, number> {
  const m = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      m.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return m;
}

/** CPU seconds of each pid with its live descendants. */
function treeSeconds(pids: readonly number[]): number[] {
  const ppid = parents();
  return pids.map((root) => {
    let sum = 0;
    for (const [pid] of ppid) {
      for (let p: number | undefined = pid; p !== undefined && p > 1; p = ppid.get(p)) {
        if (p === root) {
          sum += ownSeconds(pid);
          break;
        }
      }
    }
    return sum;
  });
}

/** Jiffies of the machine: busy (everything but idle and iowait), iowait, total. */
function machine(): { busy: number; iowait: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, iowait: f[4]!, total };
}

export interface CpuReport {
  /** Cores each named process used over the wall time (1.0 = one core all along). */
  cores: Record<string, number>;
  /** The same for each one's main thread alone (node's event loop; redis-server's one thread). */
  main: Record<string, number>;
  /** The machine's share busy and in iowait, of all its cores. */
  machineBusy: number;
  machineIowait: number;
  seconds: number;
}

/** Starts a measure of the named processes (`self` is this process, the load generator). */
export function cpuWatch(named: Record<string, number | undefined>): () => CpuReport {
  const entries = Object.entries(named).filter((e): e is [string, number] => e[1] !== undefined);
  const before = treeSeconds(entries.map((e) => e[1]));
  const main0 = entries.map((e) => ownSeconds(e[1], true));
  const self0 = process.cpuUsage();
  const m0 = machine();
  const t0 = performance.now();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const after = treeSeconds(entries.map((e) => e[1]));
    const main: Record<string, number> = {};
    entries.forEach(([name, pid], i) => (main[name] = (ownSeconds(pid, true) - main0[i]!) / seconds));
    const self = process.cpuUsage(self0);
    const m1 = machine();
    const cores: Record<string, number> = { 'load generator': (self.user + self.system) / 1e6 / seconds };
    entries.forEach(([name], i) => (cores[name] = (after[i]! - before[i]!) / seconds));
    const total = m1.total - m0.total || 1;
    return { cores, main, machineBusy: (m1.busy - m0.busy) / total, machineIowait: (m1.iowait - m0.iowait) / total, seconds };
  };
}

/**
 * `relay 0.97, redis 0.21, load generator 0.55 cores; others 0.20; machine 93% busy, 1% iowait of
 * 2 cores`: `others` is the machine's busy time the row's processes do not account for (other
 * work on the machine, which takes cores from the row).
 */
export function describeCpu(r: CpuReport): string {
  const parts = Object.entries(r.cores)
    .sort((a, b) => b[1] - a[1])
    .map(([name, c]) => `${name} ${c.toFixed(2)}${r.main[name] !== undefined && c - r.main[name] >= 0.05 ? ` (main thread ${r.main[name].toFixed(2)})` : ''}`);
  const ours = Object.values(r.cores).reduce((a, b) => a + b, 0);
  const others = Math.max(0, r.machineBusy * cpus().length - ours);
  return `${parts.join(', ')} cores; others ${others.toFixed(2)}; machine ${Math.round(r.machineBusy * 100)}% busy, ${Math.round(r.machineIowait * 100)}% iowait of ${cpus().length} cores`;
}

/**
 * What bounds a row, from its CPU figures: the main thread of a process that works on one
 * (`threads1`: node's event loop, redis-server) near one core; else the machine's cores all busy; else waiting (fsync,
 * round trips), which more cores would not shorten.
 */
export function verdict(r: CpuReport, threads1: readonly string[]): string {
  const n = cpus().length;
  const ours = Object.values(r.cores).reduce((a, b) => a + b, 0);
  const hot = Object.entries(r.main)
    .filter(([name]) => threads1.some((t) => name.startsWith(t)))
    .sort((a, b) => b[1] - a[1])[0];
  if (hot && hot[1] >= 0.85) return `bound: ${hot[0]}'s main thread (${hot[1].toFixed(2)} core); more cores help only as more processes`;
  if (r.machineBusy >= 0.9) return `bound: the ${n} cores (the row's processes ${ours.toFixed(2)}, other work ${Math.max(0, r.machineBusy * n - ours).toFixed(2)}); more cores: faster`;
  if (r.machineIowait >= 0.1) return `bound: the disk (iowait ${Math.round(r.machineIowait * 100)}%); more cores: no change`;
  return `bound: waiting (round trips, fsync), ${ours.toFixed(2)} of ${n} cores used; more cores: no change, more concurrency might`;
}
