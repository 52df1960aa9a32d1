import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Builds the production bundles (scripts/build.js, what `npm ci` runs) from the source as it is now, into a
 * folder of the test's own inside the checkout (the bundles find node_modules and the data folders from there),
 * so a test starts exactly what `npm start` would and never a dist/ left from an older build. Returns the folder
 * and a function that removes it.
 */
export function buildBundles(): { dir: string; remove: () => void } {
  const parent = join(root, ".vitest-tmp");
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, "dist-"));
  execFileSync(process.execPath, [join(root, "scripts", "build.js"), dir], { cwd: root, stdio: "pipe" });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Builds dist/ itself, as `npm ci` and `npm run build` do, for a test that runs `npm start` (whose script
 * names dist/main.js). Only test/main.test.ts does: no two test files write it at once.
 */
export function buildDist(): void {
  execFileSync(process.execPath, [join(root, "scripts", "build.js")], { cwd: root, stdio: "pipe" });
}
