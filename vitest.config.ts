import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/setup.ts'],
    // Generous: the crash, model and compaction suites run child processes and worker threads
    // on a 2-core machine that may be shared; a hang still fails, just later.
    testTimeout: 180_000,
    hookTimeout: 60_000,
    // Two cores: keep test files from fighting over them.
    maxWorkers: 2,
    // Each test file in a child process of its own (vitest 4's default, pinned): tests that count
    // the process's threads (test/db/worker-prestart.test.ts) see their own alone.
    pool: 'forks',
    isolate: true,
  },
});
