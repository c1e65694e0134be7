import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // every skipped test named with its reason at the end of a run (.ci/run adds it to its own reporters too)
    reporters: ['default', './test/support/skipped-reporter.ts'],
  },
});
