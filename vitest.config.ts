import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    // Installs redis-server and chromium from Debian when missing (root only): see the file.
    globalSetup: ['test/setup/provision.ts'],
  },
});
