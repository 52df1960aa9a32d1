import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueDeviceJob, PRIORITY } from "../../platform/jobs/queue.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

/** A role scoped to some devices sees only their jobs in every queue figure: its devices' waiting jobs, no more. */

let t: TestContext;
let admin: string;
let scoped: string;

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  const device = async (name: string, tag: string) =>
    (
      await t.call("/api/v1/devices", {
        method: "POST",
        token: admin,
        body: { device_name: name, device_ip: "192.0.2.40", device_vendor: "Cisco", device_tags: [tag] },
      })
    ).body.data.id as number;
  const mine = await device("qs-mine", "qs-mine");
  const others = [await device("qs-other1", "qs-other"), await device("qs-other2", "qs-other")];
  for (const deviceId of [mine, ...others]) {
    await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "schedule", priority: PRIORITY.scheduled, maxAttempts: 2 },
      new Date(),
    );
  }
  await t.role({ name: "qs-scoped", tags: ["qs-mine"] });
  scoped = await t.token(undefined, { role: "qs-scoped" });
}, 30_000);
afterAll(async () => {
  await t.close();
});

describe("queue figures under a scoped role", () => {
  it("GET /dashboard/queue, /system/info (v1, v2) and /sysinfo count only the scope's jobs", async () => {
    const figures = async (token: string) => [
      (await t.call("/api/v1/dashboard/queue", { token })).body.data.queued,
      (await t.call("/api/v1/system/info", { token })).body.data.queue_depth,
      (await t.call("/api/v2/system/info", { token })).body.data.queue_depth,
      (await t.call("/api/v1/sysinfo", { token })).body.data.queue_depth,
    ];
    expect(await figures(admin)).toEqual([3, 3, 3, 3]);
    expect(await figures(scoped)).toEqual([1, 1, 1, 1]);
  });
});
