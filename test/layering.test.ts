import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The layering rule (.dependency-cruiser.cjs, docs/architecture.md) fails on a new violation: probe files that
 * break it, written into the tree for the test's length, are each reported by the rule they break.
 */
const root = join(import.meta.dirname, "..");
const probes = [
  join(root, "src/platform", `layering-probe-${process.pid}`),
  join(root, "src/kernel", `layering-probe-${process.pid}`),
  join(root, "src/adapters", `layering-probe-${process.pid}`),
  join(root, "src/adapters/web", `layering-probe-${process.pid}`),
];
const [platformProbe, kernelProbe, adapterProbe, webProbe] = probes as [string, string, string, string];
const rel = (path: string) => path.slice(root.length + 1);

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** depcruise on `path`; `followed` levels of imports past it (the probes' neighbours, not the whole app). */
async function cruise(path: string, followed = 1): Promise<{ code: number; out: string }> {
  const bin = join(root, "node_modules/.bin/depcruise");
  const args = [
    "--config",
    ".dependency-cruiser.cjs",
    "--max-depth",
    String(followed),
    "--output-type",
    "err",
    rel(path),
  ];
  try {
    const { stdout, stderr } = await promisify(execFile)(bin, args, { cwd: root });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

afterAll(() => {
  for (const dir of probes) {
    rmSync(dir, { recursive: true, force: true });
    rmdirIfEmpty(join(dir, ".."));
  }
});

function rmdirIfEmpty(dir: string) {
  if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
}

describe("the layering rule", () => {
  it("passes a kernel file that imports nothing of the app", async () => {
    write(join(kernelProbe, "clean.ts"), "export const clean = 1;\n");
    const result = await cruise(join(kernelProbe, "clean.ts"));
    expect(result.out).not.toMatch(/error/);
    expect(result.code).toBe(0);
  });

  it("fails on an upward import: the platform reaching into a domain module", async () => {
    write(join(platformProbe, "upward.ts"), 'export { tagsResource } from "../../modules/tags/resource.ts";\n');
    const result = await cruise(join(platformProbe, "upward.ts"));
    expect(result.code).not.toBe(0);
    expect(result.out).toContain(`platform-below-modules: ${rel(platformProbe)}/upward.ts → src/modules/tags/`);
  });

  it("fails on an adapter importing a module's file past its index.ts", async () => {
    write(join(adapterProbe, "deep.ts"), 'export { tagsResource } from "../../modules/tags/resource.ts";\n');
    const result = await cruise(join(adapterProbe, "deep.ts"));
    expect(result.code).not.toBe(0);
    expect(result.out).toContain(`outside-through-index: ${rel(adapterProbe)}/deep.ts → src/modules/tags/resource.ts`);
  });

  it("fails on an import cycle", async () => {
    write(join(kernelProbe, "a.ts"), 'import { b } from "./b.ts";\nexport const a = () => b;\n');
    write(join(kernelProbe, "b.ts"), 'import { a } from "./a.ts";\nexport const b = () => a;\n');
    const result = await cruise(kernelProbe, 2);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain(`no-cycles: ${rel(kernelProbe)}/a.ts`);
  });

  it("fails on a cycle made only of type imports", async () => {
    const dir = join(kernelProbe, "types");
    write(join(dir, "a.ts"), 'import type { B } from "./b.ts";\nexport type A = { b?: B };\n');
    write(join(dir, "b.ts"), 'import type { A } from "./a.ts";\nexport type B = { a?: A };\n');
    const result = await cruise(dir, 2);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain(`no-cycles: ${rel(dir)}/a.ts`);
  });

  it("fails on a web page that queries the database instead of a module's service", async () => {
    write(join(webProbe, "page.ts"), 'export { devices } from "../../../db/schema/index.ts";\n');
    const result = await cruise(join(webProbe, "page.ts"));
    expect(result.code).not.toBe(0);
    expect(result.out).toContain(`web-through-services: ${rel(webProbe)}/page.ts → src/db/schema/index.ts`);
  });
});
