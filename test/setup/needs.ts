// The outside programs the tests use, each with the Debian package that provides it. A test that
// needs one calls `need(...)` first, so its absence fails the test with the package's name
// instead of an unhandled spawn error.
import { existsSync } from 'node:fs';

export interface Needed {
  binary: string;
  package: string;
}

export const REDIS_SERVER: Needed = { binary: '/usr/bin/redis-server', package: 'redis-server' };
export const CHROMIUM: Needed = { binary: '/usr/bin/chromium', package: 'chromium' };
/** PostgreSQL (the bridge's shared database); its clusters are managed with postgresql-common. */
export const POSTGRESQL: Needed = { binary: '/usr/bin/pg_ctlcluster', package: 'postgresql' };

/** Ceph's RADOS Gateway (S3) with a monitor and an OSD: drive chunks on object storage (test/setup/ceph.sh). */
export const RADOSGW: Needed = { binary: '/usr/bin/radosgw', package: 'radosgw' };
export const CEPH_MON: Needed = { binary: '/usr/bin/ceph-mon', package: 'ceph-mon' };
export const CEPH_OSD: Needed = { binary: '/usr/bin/ceph-osd', package: 'ceph-osd' };

export const PACKAGES: readonly Needed[] = [REDIS_SERVER, CHROMIUM, POSTGRESQL, RADOSGW, CEPH_MON, CEPH_OSD];

export const missing = (p: Needed): boolean => !existsSync(p.binary);

/** The binary's path, or an error naming the package to install. */
export function need(p: Needed): string {
  if (missing(p)) throw new Error(`${p.binary} is missing: install the Debian package ${p.package} (apt-get install ${p.package}); \`npm test\` installs it itself when run as root`);
  return p.binary;
}
