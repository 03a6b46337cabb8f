// A throwaway PostgreSQL database for a test: the system cluster (started if it is not running,
// made if there is none, as `.ci/run` does), a fresh role and database, dropped afterwards. Two
// test files (or two runs) may want the cluster at once: one at a time looks and starts it, under
// a lock of the machine, and a cluster someone else started meanwhile is taken as it is.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { need, POSTGRESQL } from '../setup/needs.ts';
import { withLockSync } from '../setup/lock.ts';

export interface ThrowawayDb {
  url: string;
  drop(): void;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const psql = (sql: string) => run('runuser', ['-u', 'postgres', '--', 'psql', '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql]);

/** `prefix` names the role and database (`<prefix>_<random>`), so a leftover shows whose it is. */
export function throwawayDatabase(prefix = 'svc_bridge'): ThrowawayDb {
  need(POSTGRESQL);
  const id = `${prefix}_${randomBytes(5).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  // CREATE DATABASE copies template1, and fails while another one is copying it: also one at a time.
  const port = withLockSync(
    'postgresql',
    () => {
      const port = onlineCluster();
      psql(`CREATE ROLE ${id} LOGIN PASSWORD '${password}'`);
      psql(`CREATE DATABASE ${id} OWNER ${id}`);
      return port;
    },
    'machine',
  );
  return {
    url: `postgres://${id}:${password}@127.0.0.1:${port}/${id}`,
    drop() {
      psql(`DROP DATABASE IF EXISTS ${id} WITH (FORCE)`);
      psql(`DROP ROLE IF EXISTS ${id}`);
    },
  };
}

/** The first cluster, made if there is none and started if it is down; its port. */
function onlineCluster(): string {
  const first = (): string[] => run('pg_lsclusters', ['-h']).trim().split('\n')[0]!.split(/\s+/);
  if (run('pg_lsclusters', ['-h']).trim() === '') {
    const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)) : [];
    run('pg_createcluster', [versions.at(-1)!, 'main']);
  }
  const [version, name, port, status] = first();
  if (status !== 'online') {
    try {
      run('pg_ctlcluster', [version!, name!, 'start']);
    } catch (error) {
      // Started by something that takes no lock (a run of an older checkout, .ci/run): fine if it is up now.
      if (first()[3] !== 'online') throw error;
    }
  }
  return port!;
}
