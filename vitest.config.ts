import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "collector/**/*.test.ts", "test/**/*.test.ts"],
    // Two cores: files run in parallel two at a time; each builds its own app on its own temp database.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Builds the API descriptions once; test/helpers/app.ts holds every /api answer to them.
    globalSetup: ["./test/helpers/contract-setup.ts"],
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
  },
});
