import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { configBlobs, configChanges, configs, devices } from "../../db/schema/index.ts";
import { readBlob, storeConfig } from "./store.ts";
import { normalizeConfigText } from "./text.ts";

let t: TestContext;
let deviceA: number;
let deviceB: number;
const day = (n: number) => new Date(Date.UTC(2026, 5, n));
const volatile = [/^! Last configuration change at /, /^ntp clock-period /];
const significant = (text: string) => text.split("\n").filter((l) => !volatile.some((re) => re.test(l))).join("\n");

const base = [
  "! Last configuration change at 10:00:00 UTC Mon Jun 1 2026",
  "hostname core-rtr-01",
  "interface Gi0/1",
  " description uplink",
  "ntp clock-period 17179869",
  "end",
].join("\n");

const store = (deviceId: number, text: string, n: number) =>
  storeConfig(t.db, { deviceId, command: "show running-config", text, significant, trigger: "schedule", jobId: null, now: day(n) });

beforeAll(async () => {
  t = await createTestContext();
  const rows = await t.db.insert(devices).values([
    { name: "store-dev-a", ip: "192.0.2.1", createdAt: day(1), updatedAt: day(1) },
    { name: "store-dev-b", ip: "192.0.2.2", createdAt: day(1), updatedAt: day(1) },
  ]).returning({ id: devices.id });
  [deviceA, deviceB] = rows.map((r) => r.id) as [number, number];
});
afterAll(() => t.close());

describe("storing configurations", () => {
  it("the same text twice is one version seen twice", async () => {
    const first = await store(deviceA, base, 1);
    const second = await store(deviceA, "\r\n\r\n" + base + "\r\n\r\n", 2);
    expect(first).toMatchObject({ version: 1, changed: true });
    expect(second).toEqual({ configId: first.configId, version: 1, changed: false });
    const [row] = await t.db.select().from(configs).where(eq(configs.id, first.configId));
    expect(row).toMatchObject({ seenCount: 2, firstSeenAt: day(1), lastSeenAt: day(2), lines: 6 });
  });

  it("a first version's change row counts its lines but stores no diff: the text is in its blob already", async () => {
    const [change] = await t.db.select().from(configChanges).where(eq(configChanges.deviceId, deviceA));
    expect(change).toMatchObject({ previousConfigId: null, linesAdded: 6, linesRemoved: 0, diff: "" });
  });

  it("a change in volatile lines only makes no new version", async () => {
    const churned = base.replace("10:00:00", "11:30:00").replace("17179869", "17179870");
    expect(await store(deviceA, churned, 3)).toMatchObject({ version: 1, changed: false });
  });

  it("a real change makes the next version and a change row with its unified diff", async () => {
    const changed = base.replace(" description uplink", " description uplink to core-2\n shutdown");
    const res = await store(deviceA, changed, 4);
    expect(res).toMatchObject({ version: 2, changed: true });
    const [change] = await t.db.select().from(configChanges).where(eq(configChanges.configId, res.configId));
    expect(change).toMatchObject({ linesAdded: 2, linesRemoved: 1, trigger: "schedule" });
    const body = change!.diff.split("\n");
    expect(body).toContain("- description uplink");
    expect(body).toContain("+ description uplink to core-2");
    expect(body).toContain("+ shutdown");
    expect(body.some((l) => l.startsWith("@@ -"))).toBe(true);
    expect(await readBlob(t.db, (await t.db.select().from(configs).where(eq(configs.id, res.configId)))[0]!.blobHash)).toBe(normalizeConfigText(changed));
  });

  it("stores identical text once, whatever refers to it", async () => {
    const text = "hostname shared\nend\n";
    await store(deviceA, text, 5);
    await store(deviceB, text, 5);
    const rows = await t.db.select().from(configs).where(eq(configs.blobHash, (await t.db.select().from(configs).where(eq(configs.deviceId, deviceB)))[0]!.blobHash));
    expect(rows).toHaveLength(2);
    const blobs = await t.db.select().from(configBlobs).where(eq(configBlobs.hash, rows[0]!.blobHash));
    expect(blobs).toHaveLength(1);
    expect(blobs[0]!.content.byteLength).toBeGreaterThan(0);
  });
});
