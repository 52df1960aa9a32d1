import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { svc } from "../../../test/helpers/svc.ts";
import { TEST_APP_KEY } from "../../../test/helpers/app.ts";
import { openDatabase, type Database } from "../../db/client.ts";
import { activityLog, configs, devices } from "../../db/schema/index.ts";
import { readBlob, storeConfig } from "../../modules/configs/storage/store.ts";
import { nameKey } from "../../db/name-key.ts";
import { eq } from "drizzle-orm";

let root: string;
let env: Record<string, string>;
let database: Database;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "netkeep-remask-"));
  env = { STORAGE_DIR: join(root, "storage"), APP_KEY: TEST_APP_KEY };
  const migrate = await svc(["migrate"], env);
  expect(migrate.code, migrate.stderr).toBe(0);
  database = await openDatabase(`file:${join(root, "storage", "netkeep.db")}`);
  const now = new Date(Date.UTC(2025, 0, 1));
  // no template: the generic layer alone decides
  const [row] = await database.db
    .insert(devices)
    .values({
      name: "remask-cli-rtr",
      nameKey: nameKey("remask-cli-rtr"),
      ip: "192.0.2.1",
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: devices.id });
  await storeConfig(database.db, {
    deviceId: row!.id,
    command: "show running-config",
    text: "hostname remask-cli-rtr\nip ftp password Ftp-Clear-5\nend\n",
    significant: (s) => s,
    trigger: "cli",
    jobId: null,
    now,
  });
});
afterAll(() => {
  database.client.close();
  rmSync(root, { recursive: true, force: true });
});

describe("svc configs:scan-secrets and configs:remask", () => {
  it("scan names the version (not the value) and fails; remask masks it and records it; scan then passes", async () => {
    const found = await svc(["configs:scan-secrets"], env);
    expect(found.code).toBe(1);
    expect(found.stdout).toMatch(
      /remask-cli-rtr \(device \d+\) show running-config v1 \(config \d+\): 1 value \(password\)/,
    );
    expect(found.stdout + found.stderr).not.toContain("Ftp-Clear-5");
    expect(found.stderr).toContain("svc configs:remask masks them");

    const dry = await svc(["configs:remask", "--dry-run"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("Would rewrite 1 of 1 versions in 1 device commands.");

    const run = await svc(["configs:remask"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("rewrote 1 version of remask-cli-rtr show running-config");
    const [config] = await database.db.select().from(configs);
    expect(await readBlob(database.db, config!.blobHash)).toBe(
      "hostname remask-cli-rtr\nip ftp password <secret hidden>\nend\n",
    );
    const logged = await database.db.select().from(activityLog).where(eq(activityLog.action, "config.remask"));
    expect(logged.map((l) => [l.subjectId, l.username])).toEqual([[config!.id, "svc configs:remask"]]);

    const clean = await svc(["configs:scan-secrets"], env);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toContain("Scanned 1 versions: 0 hold a value in clear.");
  });
});
