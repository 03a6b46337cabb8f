import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    // Two files at once on 2 cores (vitest's default leaves one core idle): most test time is
    // waiting on servers, lifetimes and TTLs, not CPU.
    maxWorkers: 2,
    // Installs redis-server and chromium from Debian when missing (root only), and gives the run
    // its own temporary directory, removed at the end: see the files.
    globalSetup: ['test/setup/provision.ts', 'test/setup/scratch.ts'],
  },
});
