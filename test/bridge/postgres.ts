// A throwaway PostgreSQL database for a test: the system cluster (started if it is not running,
// made if there is none, as `.ci/run` does), a fresh role and database, dropped afterwards.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { need, POSTGRESQL } from '../setup/needs.ts';

export interface ThrowawayDb {
  url: string;
  drop(): void;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const psql = (sql: string) => run('runuser', ['-u', 'postgres', '--', 'psql', '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql]);

/** `prefix` names the role and database (`<prefix>_<random>`), so a leftover shows whose it is. */
export function throwawayDatabase(prefix = 'svc_bridge'): ThrowawayDb {
  need(POSTGRESQL);
  let clusters = run('pg_lsclusters', ['-h']).trim();
  if (clusters === '') {
    const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)) : [];
    run('pg_createcluster', [versions.at(-1)!, 'main']);
    clusters = run('pg_lsclusters', ['-h']).trim();
  }
  const [version, name, port, status] = clusters.split('\n')[0]!.split(/\s+/);
  if (status !== 'online') run('pg_ctlcluster', [version!, name!, 'start']);
  const id = `${prefix}_${randomBytes(5).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  psql(`CREATE ROLE ${id} LOGIN PASSWORD '${password}'`);
  psql(`CREATE DATABASE ${id} OWNER ${id}`);
  return {
    url: `postgres://${id}:${password}@127.0.0.1:${port}/${id}`,
    drop() {
      psql(`DROP DATABASE IF EXISTS ${id} WITH (FORCE)`);
      psql(`DROP ROLE IF EXISTS ${id}`);
    },
  };
}
