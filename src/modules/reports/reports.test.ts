import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { eq } from "drizzle-orm";
import { jobs, tags } from "../../db/schema/index.ts";
import { createDevice, day, storeVersion } from "../configs/test-fixtures.ts";
import { dayRange } from "./range.ts";
import { backupSummary, changesPerDay } from "./service.ts";

let t: TestContext;
let admin: string;
const clock = manualClock(day(10));
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
  ids.r1 = await createDevice(t, admin, {
    device_name: "rep-r1",
    device_vendor: "Cisco",
    device_model: "ISR4331",
    device_tags: ["core", "ams"],
  });
  ids.r2 = await createDevice(t, admin, {
    device_name: "rep-r2",
    device_vendor: "Cisco",
    device_model: "ISR4331",
    device_tags: ["core"],
  });
  ids.r3 = await createDevice(t, admin, {
    device_name: "rep-r3",
    device_vendor: "Juniper",
    device_model: "MX204",
    device_tags: ["ams"],
  });
  ids.r4 = await createDevice(t, admin, { device_name: "rep-r4", device_vendor: "Juniper", device_tags: ["lab"] });
  // r1: three versions (two on June 2nd, one on the 3rd); r3: one on the 3rd; r2 and r4 never change.
  await storeVersion(t, { deviceId: ids.r1!, text: "hostname r1\n", at: day(2, 1) });
  await storeVersion(t, { deviceId: ids.r1!, text: "hostname r1\nntp server 1\n", at: day(2, 5) });
  await storeVersion(t, { deviceId: ids.r1!, text: "hostname r1\nntp server 2\n", at: day(3, 5) });
  await storeVersion(t, { deviceId: ids.r3!, text: "hostname r3\n", at: day(3, 6) });
  // r2: one success and three failures in June; one failure in May (outside the range below); one cancelled.
  const finished = (
    deviceId: number,
    outcome: "success" | "unchanged" | "timeout" | "auth_failed" | "cancelled",
    at: Date,
  ) => ({
    type: "download" as const,
    deviceId,
    state: "finished" as const,
    outcome,
    trigger: "schedule" as const,
    runAfter: at,
    createdAt: at,
    startedAt: at,
    finishedAt: at,
  });
  await t.db
    .insert(jobs)
    .values([
      finished(ids.r2!, "unchanged", day(4)),
      finished(ids.r2!, "timeout", day(5)),
      finished(ids.r2!, "auth_failed", day(6)),
      finished(ids.r2!, "timeout", day(7)),
      finished(ids.r2!, "timeout", new Date(Date.UTC(2026, 4, 20))),
      finished(ids.r2!, "cancelled", day(8)),
    ]);
});
afterAll(() => t.close());

const byValue = (rows: { value: string; devices: number }[]) =>
  Object.fromEntries(rows.map((r) => [r.value, r.devices]));

describe("reports", () => {
  it('counts devices per OS version as SNMP last read it, "" for devices never read', async () => {
    // In May, before the ranges the other reports use: r1 read twice (the newer version counts), r3 once.
    const read = (deviceId: number, at: Date, softwareVersion?: string) => ({
      type: "download" as const,
      deviceId,
      state: "finished" as const,
      outcome: "success" as const,
      trigger: "schedule" as const,
      runAfter: at,
      createdAt: at,
      startedAt: at,
      finishedAt: at,
      result: softwareVersion ? { snmp: { software_version: softwareVersion } } : { duration_ms: 1 },
    });
    const may = (d: number) => new Date(Date.UTC(2026, 4, d));
    await t.db
      .insert(jobs)
      .values([
        read(ids.r1!, may(1), "15.2(7)E7"),
        read(ids.r1!, may(2), "15.2(7)E8"),
        read(ids.r1!, may(3)),
        read(ids.r3!, may(2), "21.4R3-S2"),
      ]);
    expect(byValue((await t.call("/api/v1/reports/devices?group_by=os_version", { token: admin })).body.data)).toEqual({
      "15.2(7)E8": 1,
      "21.4R3-S2": 1,
      "": 2,
    });
  });

  it("counts devices per vendor, model and tag", async () => {
    expect(byValue((await t.call("/api/v1/reports/devices?group_by=vendor", { token: admin })).body.data)).toEqual({
      Cisco: 2,
      Juniper: 2,
    });
    expect(byValue((await t.call("/api/v1/reports/devices?group_by=model", { token: admin })).body.data)).toEqual({
      ISR4331: 2,
      MX204: 1,
      "": 1,
    });
    expect(byValue((await t.call("/api/v1/reports/devices?group_by=tag", { token: admin })).body.data)).toEqual({
      core: 2,
      ams: 2,
      lab: 1,
    });
    const bad = await t.call("/api/v1/reports/devices?group_by=colour", { token: admin });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.group_by[0]).toMatch(/vendor, model, os_version, category, tag, status/);
  });

  it("gives each device's backup success rate over a period, leaving cancelled jobs and other periods out", async () => {
    const res = await t.call("/api/v1/reports/backup-success?from=2026-06-01&to=2026-06-30", { token: admin });
    const rows = Object.fromEntries(
      res.body.data.map((r: any) => [r.device_name, [r.attempts, r.succeeded, r.failed, r.success_percent]]),
    );
    expect(rows).toEqual({
      "rep-r1": [3, 3, 0, 100],
      "rep-r2": [4, 1, 3, 25],
      "rep-r3": [1, 1, 0, 100],
      "rep-r4": [0, 0, 0, null],
    });
  });

  it("sums backups and changes per day for the reports page as the whole reports count them, in the scope", async () => {
    const june = dayRange({ from: "2026-06-01", to: "2026-06-30" }, clock.now());
    expect(await backupSummary(t.db, { all: true }, june, 10)).toEqual({
      devices: 3,
      attempts: 8,
      succeeded: 5,
      worst: [{ device_id: ids.r2, device_name: "rep-r2", attempts: 4, succeeded: 1, failed: 3, success_percent: 25 }],
    });
    expect(await backupSummary(t.db, { all: true }, june, 0)).toMatchObject({ attempts: 8, worst: [] });
    expect(await changesPerDay(t.db, { all: true }, june)).toEqual([
      { date: "2026-06-02", changes: 2 },
      { date: "2026-06-03", changes: 2 },
    ]);
    // Scoped to the tag "core" (r1 and r2): r3's change and backup are left out.
    const [core] = await t.db.select({ id: tags.id }).from(tags).where(eq(tags.name, "core"));
    const scope = { all: false as const, tagIds: [core!.id], categoryIds: [] };
    expect(await backupSummary(t.db, scope, june, 10)).toMatchObject({ devices: 2, attempts: 7, succeeded: 4 });
    expect(await changesPerDay(t.db, scope, june)).toEqual([
      { date: "2026-06-02", changes: 2 },
      { date: "2026-06-03", changes: 1 },
    ]);
  });

  it("counts changes per day and device, vendor or tag, and names the devices that change most", async () => {
    const range = "from=2026-06-01&to=2026-06-30";
    const triples = (rows: any[]) => rows.map((r) => [r.date, r.value, r.changes]);
    expect(triples((await t.call(`/api/v1/reports/changes?${range}`, { token: admin })).body.data)).toEqual([
      ["2026-06-02", "rep-r1", 2],
      ["2026-06-03", "rep-r1", 1],
      ["2026-06-03", "rep-r3", 1],
    ]);
    expect(
      triples((await t.call(`/api/v1/reports/changes?${range}&group_by=vendor`, { token: admin })).body.data),
    ).toEqual([
      ["2026-06-02", "Cisco", 2],
      ["2026-06-03", "Cisco", 1],
      ["2026-06-03", "Juniper", 1],
    ]);
    expect(
      triples((await t.call(`/api/v1/reports/changes?${range}&group_by=tag`, { token: admin })).body.data),
    ).toEqual([
      ["2026-06-02", "ams", 2],
      ["2026-06-02", "core", 2],
      ["2026-06-03", "ams", 2],
      ["2026-06-03", "core", 1],
    ]);
    expect(
      triples((await t.call("/api/v1/reports/changes?from=2026-06-03&to=2026-06-03", { token: admin })).body.data),
    ).toEqual([
      ["2026-06-03", "rep-r1", 1],
      ["2026-06-03", "rep-r3", 1],
    ]);
    const top = (await t.call(`/api/v1/reports/top-changers?${range}`, { token: admin })).body.data;
    expect(top.map((r: any) => [r.device_name, r.changes, r.last_change_at])).toEqual([
      ["rep-r1", 3, day(3, 5).toISOString()],
      ["rep-r3", 1, day(3, 6).toISOString()],
    ]);
    const reversed = await t.call("/api/v1/reports/changes?from=2026-06-30&to=2026-06-01", { token: admin });
    expect(reversed.status).toBe(422);
    expect(reversed.body.errors.from[0]).toMatch(/must not be after to/);
  });

  it("answers every report as CSV, by Accept or format=csv, holding the same rows as the JSON", async () => {
    const paths = [
      "/api/v1/reports/devices?group_by=tag",
      "/api/v1/reports/backup-success?from=2026-06-01&to=2026-06-30",
      "/api/v1/reports/changes?from=2026-06-01&to=2026-06-30&group_by=tag",
      "/api/v1/reports/top-changers?from=2026-06-01&to=2026-06-30",
      "/api/v1/reports/compliance-trends?from=2026-06-01&to=2026-06-03",
    ];
    for (const path of paths) {
      const json = (await t.call(path, { token: admin })).body.data as Record<string, unknown>[];
      expect(json.length, path).toBeGreaterThan(0);
      for (const how of [{ headers: { accept: "text/csv" } }, { query: "&format=csv" }]) {
        const res = await t.request("query" in how ? path + how.query : path, {
          token: admin,
          headers: "headers" in how ? how.headers : {},
        });
        expect(res.headers.get("content-type"), path).toBe("text/csv; charset=utf-8");
        const records = parse(await res.text(), { columns: true }) as Record<string, string>[];
        // Every JSON value, written as text ("" for null), is the CSV cell of the same row and column.
        expect(records, path).toEqual(
          json.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? "" : String(v)]))),
        );
      }
    }
  });

  it("neutralises formulas in CSV cells", async () => {
    const id = await createDevice(t, admin, { device_name: "=HYPERLINK(1)", device_vendor: "Cisco" });
    const csv = await (await t.request("/api/v1/reports/backup-success?format=csv", { token: admin })).text();
    expect(csv).toContain("'=HYPERLINK(1)");
    expect(csv).not.toMatch(/(^|,)=HYPERLINK/m);
    // The other tests count the four devices of the fixture: this one goes.
    expect((await t.call(`/api/v1/devices/${id}`, { method: "DELETE", token: admin })).status).toBeLessThan(300);
  });

  it("shows a scoped user only the devices of the scope", async () => {
    await t.role({ name: "ams-reports", tags: ["ams"], permissions: ["system.read"] });
    const scoped = await t.token(["system.read"], { role: "ams-reports" });
    expect(byValue((await t.call("/api/v1/reports/devices?group_by=vendor", { token: scoped })).body.data)).toEqual({
      Cisco: 1,
      Juniper: 1,
    });
    const success = (await t.call("/api/v1/reports/backup-success?from=2026-06-01&to=2026-06-30", { token: scoped }))
      .body.data;
    expect(success.map((r: any) => r.device_name)).toEqual(["rep-r1", "rep-r3"]);
    const tagged = (
      await t.call("/api/v1/reports/changes?from=2026-06-01&to=2026-06-30&group_by=tag", { token: scoped })
    ).body.data;
    // r1's changes still count under its tag "core", but only as r1's: r2 (core, out of scope) never changed anyway.
    expect(tagged.map((r: any) => r.value).sort()).toEqual(["ams", "ams", "core", "core"]);
    const top = (await t.call("/api/v1/reports/top-changers?from=2026-06-01&to=2026-06-30", { token: scoped })).body
      .data;
    expect(top.map((r: any) => r.device_name)).toEqual(["rep-r1", "rep-r3"]);
    await t.role({ name: "lab-reports", tags: ["lab"], permissions: ["system.read"] });
    const lab = await t.token(["system.read"], { role: "lab-reports" });
    expect(
      (await t.call("/api/v1/reports/top-changers?from=2026-06-01&to=2026-06-30", { token: lab })).body.data,
    ).toEqual([]);
  });

  it("needs system.read", async () => {
    const none = await t.token(["devices.read"]);
    for (const path of ["devices", "backup-success", "changes", "top-changers", "compliance-trends"]) {
      expect((await t.call(`/api/v1/reports/${path}`, { token: none })).status, path).toBe(403);
    }
  });
});
