/**
 * A database from the release before name keys (migrations up to 0006), holding names its ASCII-only index let
 * through but the Unicode folding rule calls the same: the upgrade keeps every row, gives the first its key,
 * the later one a key of its own, says so in the log, and from then on the rule holds.
 */
import { createClient } from "@libsql/client";
import { asc } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../test/helpers/app.ts";
import { databaseAtRelease } from "../../test/helpers/migrations.ts";
import { openDatabase } from "./client.ts";
import { migrateDatabase } from "../runtime/seed.ts";
import { devices, tags } from "./schema/index.ts";
import { loadBuiltinTemplates } from "../runtime/builtin-templates.ts";
import { systemClock } from "../kernel/clock.ts";

const RELEASED = "0006_search_pending";

let t: TestContext;
let admin: string;
const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];

beforeAll(async () => {
  const { dir, url } = await databaseAtRelease(RELEASED);
  const client = createClient({ url });
  const now = Date.now();
  for (const name of ["Çdup", "çdup", "plain-tag"]) {
    await client.execute({
      sql: "insert into tags (name, created_at, updated_at) values (?, ?, ?)",
      args: [name, now, now],
    });
  }
  for (const [name, ip] of [
    ["ÜBER-sw", "192.0.2.1"],
    ["über-sw", "192.0.2.2"],
  ]) {
    await client.execute({
      sql: "insert into devices (name, ip, created_at, updated_at) values (?, ?, ?, ?)",
      args: [name!, ip!, now, now],
    });
  }
  client.close();

  // Migrated once with a logger that keeps what it hears, as a launcher would; the test context's own start then finds nothing to do.
  const database = await openDatabase(url);
  const logger = {
    debug() {},
    info() {},
    error() {},
    warn: (msg: string, fields?: Record<string, unknown>) => void warnings.push({ msg, fields }),
  };
  await migrateDatabase(database.location, database.db, systemClock, loadBuiltinTemplates(), logger);
  database.client.close();
  t = await createTestContext({ storageDir: dir });
  admin = await t.token();
});
afterAll(() => t?.close());

describe("upgrading a database whose names clash under Unicode folding", () => {
  it("keeps every row and its name; the first keeps the key, the later one gets its own", async () => {
    const tagRows = await t.db
      .select({ id: tags.id, name: tags.name, nameKey: tags.nameKey })
      .from(tags)
      .orderBy(asc(tags.id));
    expect(tagRows.map((r) => r.name)).toEqual(["Çdup", "çdup", "plain-tag"]);
    expect(tagRows[0]!.nameKey).toBe("çdup");
    expect(tagRows[1]!.nameKey).toBe(`çdup\u0001${tagRows[1]!.id}`);
    expect(tagRows[2]!.nameKey).toBe("plain-tag");
    const deviceRows = await t.db
      .select({ name: devices.name, nameKey: devices.nameKey })
      .from(devices)
      .orderBy(asc(devices.id));
    expect(deviceRows.map((r) => r.name)).toEqual(["ÜBER-sw", "über-sw"]);
    expect(deviceRows[0]!.nameKey).toBe("über-sw");
  });

  it("logs one warning per clash, naming both rows", () => {
    const clashes = warnings.filter((w) => w.msg.includes("Unicode case folding"));
    expect(
      clashes.map((w) => [
        w.fields?.table,
        (w.fields?.first as { name: string }).name,
        (w.fields?.later as { name: string }).name,
      ]),
    ).toEqual([
      ["tags", "Çdup", "çdup"],
      ["devices", "ÜBER-sw", "über-sw"],
    ]);
  });

  it("fills every key, the seeded ones included, so no placeholder is left", async () => {
    const left = await t.client.execute(
      "select count(*) as n from tags where substr(name_key, 1, 1) = char(1) union all select count(*) from roles where substr(name_key, 1, 1) = char(1)",
    );
    expect(left.rows.map((r) => Number(r[0]))).toEqual([0, 0]);
  });

  it("from then on refuses a third spelling with 422, and both old rows stay reachable", async () => {
    const third = await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "ÇDUP" } });
    expect(third.status).toBe(422);
    expect(third.body.errors.name).toBeDefined();
    const list = await t.call("/api/v1/tags?sort=id", { token: admin });
    expect(list.body.data.map((r: { name: string }) => r.name)).toEqual(["Çdup", "çdup", "plain-tag"]);
    // Renaming the later row to something distinct gives it a plain key again.
    const later = list.body.data[1];
    expect(
      (await t.call(`/api/v1/tags/${later.id}`, { method: "PATCH", token: admin, body: { name: "cdup-renamed" } }))
        .status,
    ).toBe(200);
    expect(
      (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "CDUP-RENAMED" } })).status,
    ).toBe(422);
  });
});
