// A test that needs an outside program fails naming the Debian package, not with a spawn error.
import { describe, expect, it } from 'vitest';
import { need } from './needs.ts';

describe('need', () => {
  it('returns the path of a program that is there', () => {
    expect(need({ binary: process.execPath, package: 'nodejs' })).toBe(process.execPath);
  });

  it('names the package to install when the program is missing', () => {
    expect(() => need({ binary: '/nonexistent/redis-server', package: 'redis-server' })).toThrow(
      '/nonexistent/redis-server is missing: install the Debian package redis-server (apt-get install redis-server)',
    );
  });
});
