import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: keep test files from fighting over them.
    maxWorkers: 2,
  },
});
