import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asc, eq } from "drizzle-orm";
import { svc } from "../../../test/helpers/svc.ts";
import { TEST_APP_KEY } from "../../../test/helpers/app.ts";
import { openDatabase, type Database } from "../../db/client.ts";
import { configSearchDocs, configs, devices } from "../../db/schema/index.ts";
import { storeConfig } from "../../modules/configs/storage/store.ts";
import { setRetentionPolicy } from "../../modules/configs/storage/retention.ts";
import { nameKey } from "../../db/name-key.ts";

let root: string;
let env: Record<string, string>;
let database: Database;
let deviceId: number;
const longAgo = (day: number) => new Date(Date.UTC(2020, 0, day));

const versions = async () =>
  (
    await database.db
      .select({ version: configs.version })
      .from(configs)
      .where(eq(configs.deviceId, deviceId))
      .orderBy(asc(configs.version))
  ).map((r) => r.version);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "netkeep-purge-"));
  env = { STORAGE_DIR: join(root, "storage"), APP_KEY: TEST_APP_KEY };
  const migrate = await svc(["migrate"], env);
  expect(migrate.code, migrate.stderr).toBe(0);
  database = await openDatabase(`file:${join(root, "storage", "netkeep.db")}`);
  const [row] = await database.db
    .insert(devices)
    .values({
      name: "purge-cli-rtr",
      nameKey: nameKey("purge-cli-rtr"),
      ip: "192.0.2.1",
      createdAt: longAgo(1),
      updatedAt: longAgo(1),
    })
    .returning({ id: devices.id });
  deviceId = row!.id;
  for (let n = 1; n <= 3; n++) {
    await storeConfig(database.db, {
      deviceId,
      command: "show running-config",
      text: `hostname purge-cli-rtr\n vlan ${n}\nend\n`,
      significant: (s) => s,
      trigger: "cli",
      jobId: null,
      now: longAgo(n),
    });
  }
});
afterAll(() => {
  database.client.close();
  rmSync(root, { recursive: true, force: true });
});

describe("svc configs:purge", () => {
  it("says there is nothing to do while no policy is set", async () => {
    const run = await svc(["configs:purge"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/No retention policy is set/);
    expect(await versions()).toEqual([1, 2, 3]);
  });

  it("with --dry-run lists the versions it would delete and deletes nothing", async () => {
    await setRetentionPolicy(database.db, { keepDays: 30, keepVersions: null }, new Date());
    const run = await svc(["configs:purge", "--dry-run"], env);
    expect(run.code, run.stderr).toBe(0);
    const listed = [...run.stdout.matchAll(/purge-cli-rtr\s+show running-config\s+(\d+)\s+2020-01-0\dT00:00:00Z/g)];
    expect(listed.map((m) => m[1])).toEqual(["1", "2"]);
    expect(run.stdout).toMatch(/Would delete 2 configuration versions \(2 change rows\), 2 stored texts/);
    expect(await versions()).toEqual([1, 2, 3]);
  });

  it("deletes what the dry run listed and keeps the latest version", async () => {
    const run = await svc(["configs:purge"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Deleted 2 configuration versions \(2 change rows\), 2 stored texts/);
    expect(await versions()).toEqual([3]);
  });

  it("rejects flags it does not know", async () => {
    const run = await svc(["configs:purge", "--keep-days", "3"], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^svc: .*keep-days/);
  });
});

describe("svc configs:reindex", () => {
  it("indexes versions stored before the index existed", async () => {
    await database.db.delete(configSearchDocs);
    const run = await svc(["configs:reindex"], env);
    expect(run.code, run.stderr).toBe(0);
    // How far the rebuild is, as it goes (a large index takes minutes), then the summary.
    expect(run.stdout).toMatch(
      /search index: rebuilt 1 of 1 device commands\n(.*\n)*Indexed 1 versions of 1 device commands/,
    );
    expect(await database.db.select({ deviceId: configSearchDocs.deviceId }).from(configSearchDocs)).toEqual([
      { deviceId },
    ]);
  });
});
