/**
 * A database from the release before zones (migrations up to 0022): its devices land in the local zone, which the
 * upgrade creates, and the built-in collector keeps claiming their jobs.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { databaseAtRelease } from "../../../test/helpers/migrations.ts";
import { claimNextJob, enqueueDeviceJob, PRIORITY } from "../../platform/jobs/queue.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  const { dir, url } = await databaseAtRelease("0022_oidc_client_secret");
  const client = createClient({ url });
  const now = Date.now();
  for (const [name, ip] of [
    ["old-rtr-01", "192.0.2.1"],
    ["old-rtr-02", "192.0.2.2"],
  ])
    await client.execute({
      sql: "insert into devices (name, name_key, ip, created_at, updated_at) values (?, ?, ?, ?, ?)",
      args: [name!, name!, ip!, now, now],
    });
  client.close();
  t = await createTestContext({ storageDir: dir });
  admin = await t.token();
});
afterAll(() => t?.close());

describe("upgrading a database from before zones", () => {
  it("puts every existing device in the local zone, whose jobs the built-in collector still claims", async () => {
    const local = await t.call("/api/v1/zones/1", { token: admin });
    expect(local.body.data).toMatchObject({ name: "local", mode: "local", devices_count: 2 });
    const listed = (await t.call("/api/v1/devices", { token: admin })).body.data as { id: number; zone_id: number }[];
    expect(listed.map((d) => d.zone_id)).toEqual([1, 1]);
    const now = t.clock.now();
    await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: listed[0]!.id, trigger: "api", priority: PRIORITY.api, maxAttempts: 1 },
      now,
    );
    expect((await claimNextJob(t.db, "builtin", now, 60_000))?.deviceId).toBe(listed[0]!.id);
  });
});
