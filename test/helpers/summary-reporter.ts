import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends the run with the plain line CI tooling reads ("N passed, N failed, N skipped"), after vitest's own
 * summary. Skipped tests are listed by name, since a skip here means a missing system package.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0,
      failed = 0,
      skipped = 0;
    const skippedNames: string[] = [];
    for (const mod of modules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else {
          skipped++;
          skippedNames.push(`${mod.moduleId.replace(process.cwd() + "/", "")} > ${test.fullName}`);
        }
      }
    }
    if (skippedNames.length) console.log(`\nSkipped:\n${skippedNames.map((n) => `  - ${n}`).join("\n")}`);
    console.log(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
