import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inventoryModels } from "../src/modules/templates/index.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";

/** What the docs tell a newcomer holds: the links the code gives lead somewhere, the steps run, the claims are true. */

const ROOT = join(import.meta.dirname, "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchors = (markdown: string) =>
  new Set(
    markdown
      .split("\n")
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) =>
        l
          .replace(/^#+ /, "")
          .toLowerCase()
          .replace(/[^\w\s-]/g, "")
          .replace(/\s/g, "-"),
      ),
  );

describe("docs", () => {
  it("every docs/<file>.md the code or the README names exists, with the heading it points to", () => {
    const problems: string[] = [];
    for (const file of [...sourceFiles("src"), ...sourceFiles("collector"), "README.md"]) {
      for (const [, doc, anchor] of read(file).matchAll(/\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
        let text: string;
        try {
          text = read(join("docs", doc!));
        } catch {
          problems.push(`${file}: docs/${doc} does not exist`);
          continue;
        }
        if (anchor && !anchors(text).has(anchor)) problems.push(`${file}: docs/${doc} has no heading #${anchor}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("operations.md's systemd steps create /etc/netkeep before writing into it", () => {
    const steps = read("docs/operations.md").split("## systemd")[1]!.split("\n## ")[0]!.split("\n");
    const writes = steps.findIndex((l) => /\/etc\/netkeep\/\S/.test(l) && /^sudo /.test(l));
    const creates = steps.findIndex((l) => /^sudo (install -d|mkdir)[^\n]* \/etc\/netkeep(\s|$)/.test(l));
    expect(writes).toBeGreaterThan(-1);
    expect(creates, "no step creates /etc/netkeep").toBeGreaterThan(-1);
    expect(creates).toBeLessThan(writes);
  });

  it("devices.md names no imported model as lacking a template that it has", () => {
    const text = read("docs/devices.md").replace(/\s+/g, " ");
    const claimed = [...text.matchAll(/no template for, such as ([^)]*)\)/g)].flatMap((m) =>
      [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!),
    );
    const models = inventoryModels(loadBuiltinTemplates()).oxidized;
    expect(claimed.filter((model) => models.has(model))).toEqual([]);
  });

  it("the README keeps to the quick start and concepts: no issue numbers, no history of how things were", () => {
    const prose = read("README.md").replace(/```[\s\S]*?```/g, "");
    expect(prose).not.toMatch(/\w#\d+\]|\/issues\/\d+/);
    expect(prose).not.toMatch(/\bBefore, |\bwhich had\b|\bused to\b/);
  });
});
