// Vitest global setup: the Debian packages the tests drive as real servers and browsers. On a
// fresh machine (root, apt-get) the missing ones are installed before any test runs, so
// `npm ci && npm test` is the whole set-up; where that is not allowed (not root, no apt-get, or
// SVC_TEST_NO_INSTALL=1) the tests that need them fail naming the package (test/setup/needs.ts).
import { spawnSync } from 'node:child_process';
import { PACKAGES, missing } from './needs.ts';

export default function provision(): void {
  const absent = PACKAGES.filter(missing);
  if (absent.length === 0) return;
  const names = absent.map((p) => p.package);
  const why = cannotInstall();
  if (why !== undefined) {
    process.stderr.write(`test set-up: ${names.join(', ')} missing and not installed (${why}); the tests that need them will fail. Install with: apt-get install ${names.join(' ')}\n`);
    return;
  }
  process.stderr.write(`test set-up: installing ${names.join(', ')} from Debian (apt-get; SVC_TEST_NO_INSTALL=1 skips this)...\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...names],
  ]) {
    const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (r.status !== 0) {
      process.stderr.write(`test set-up: apt-get ${args[0]} failed (${r.status ?? r.signal}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}\n`);
      return;
    }
  }
  const still = absent.filter(missing).map((p) => p.package);
  process.stderr.write(still.length === 0 ? `test set-up: installed ${names.join(', ')}\n` : `test set-up: still missing after apt-get: ${still.join(', ')}\n`);
}

function cannotInstall(): string | undefined {
  if (process.env.SVC_TEST_NO_INSTALL === '1') return 'SVC_TEST_NO_INSTALL=1';
  if (process.getuid?.() !== 0) return 'not root';
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return 'no apt-get';
  return undefined;
}
