import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { svc } from "../../../test/helpers/svc.ts";
import { TEST_APP_KEY } from "../../../test/helpers/app.ts";

let root: string;
let env: Record<string, string>;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "netkeep-render-"));
  env = { STORAGE_DIR: join(root, "storage"), APP_KEY: TEST_APP_KEY };
  const migrate = await svc(["migrate"], env);
  expect(migrate.code, migrate.stderr).toBe(0);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("svc template:render", () => {
  it("prints what the template would store, then each masked span and its rule", async () => {
    const file = join(root, "r1.cfg");
    writeFileSync(
      file,
      "hostname r1\r\nusername ops privilege 15 nohangup password 0 Ops-Pw-3\r\nsnmp-server community Comm-7 RO\r\n",
    );
    const run = await svc(["template:render", "cisco-ios", file], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain("Ops-Pw-3");
    expect(run.stdout).not.toContain("Comm-7");
    const lines = run.stdout.split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "hostname r1",
      "username ops privilege 15 nohangup password 0 <secret hidden>",
      "snmp-server community <secret hidden> RO",
    ]);
    expect(run.stdout).toMatch(/# 2 values masked by template cisco-ios \(id \d+\); 0 lines dropped/);
    expect(run.stdout).toContain("# line 2 column 47: generic password");
    expect(run.stdout).toMatch(/# line 3 column 23: template secrets\[0\] \//);
  });

  it("names the template it cannot find and the file it cannot read", async () => {
    const unknown = await svc(["template:render", "no-such-template", join(root, "x")], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("no template has the id or name 'no-such-template'");
    const missing = await svc(["template:render", "cisco-ios", join(root, "missing.cfg")], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("cannot read");
  });
});
