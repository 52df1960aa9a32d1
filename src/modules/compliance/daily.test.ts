import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { complianceDays } from "../../db/schema/index.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { runComplianceJob } from "../../../collector/compliance-job.ts";
import { createDevice, storeVersion } from "../configs/test-fixtures.ts";
import { complianceTrends } from "./trends.ts";

/**
 * The whole fleet's trends read the daily roll-up (daily.ts): finished days are kept in compliance_days, and a
 * result written or deleted later changes the days after it. Checked against the walk over every result that a
 * scoped caller's trends still take (trends.ts), on the same history.
 */

const NTP = "// Description: NTP keeps time\n#[must_match_single_string]\nntp server\n";
const SNMP =
  "// Description: no SNMP community public\n#[must_not_match_single_string]\nsnmp-server community public\n";
const GOOD = "hostname r\nntp server 192.0.2.1\nsnmp-server community s3cret RO\nend";
const BAD = "hostname r\nsnmp-server community public RO\nend";
const HALF = "hostname r\nntp server 192.0.2.1\nsnmp-server community public RO\nend";

let t: TestContext;
let token: string;
const clock = manualClock(new Date("2026-06-01T12:00:00Z"));

beforeEach(async () => {
  t = await createTestContext({ clock });
  token = await t.token();
});
afterEach(async () => t.close());

async function made(path: string, body: Record<string, unknown>): Promise<number> {
  const res = await t.call(`/api/v1/${path}`, { method: "POST", token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as number;
}

/** Runs every queued compliance job the way a collector does, in this process. */
async function runQueuedJobs() {
  for (let job; (job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000)); )
    await runComplianceJob({ db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "test-collector" }, job);
}

async function evaluateAt(at: string, policyIds: number[], versions: [number, string][]) {
  clock.advance(Date.parse(at) - clock.now().getTime());
  for (const [deviceId, text] of versions) await storeVersion(t, { deviceId, text, at: clock.now() });
  for (const id of policyIds) await t.call(`/api/v1/policies/${id}/run`, { method: "POST", token });
  await runQueuedJobs();
}

const trends = (query: string) => t.call(`/api/v1/policy-compliance/trends?${query}`, { token });
const counts = (body: any) =>
  body.data.periods.map((p: any) => [p.period_start.slice(0, 10), p.devices, p.compliant, p.not_compliant]);

describe("the daily roll-up of the fleet's compliance", () => {
  it("answers as the walk over every result does, per policy and for all, by day and by week", async () => {
    await made("tags", { name: "everywhere" });
    const ids: number[] = [];
    for (const name of ["rtr-1", "rtr-2", "rtr-3", "rtr-4"])
      ids.push(await createDevice(t, token, { device_name: name, device_tags: ["everywhere"] }));
    const [r1, r2, r3, r4] = ids as [number, number, number, number];
    const ntp = await made("policies", { name: "ntp", definition: NTP });
    const both = await made("policies", { name: "ntp and snmp", definition: NTP + "\n" + SNMP });
    await made("policy-assignments", { policy_id: ntp, scope: "all" });
    await made("policy-assignments", { policy_id: both, scope: "devices", devices: [r1, r2, r3] });
    await evaluateAt(
      "2026-05-20T10:00:00Z",
      [ntp, both],
      [
        [r1, BAD],
        [r2, BAD],
        [r3, GOOD],
      ],
    );
    await evaluateAt(
      "2026-05-23T22:00:00Z",
      [ntp, both],
      [
        [r1, HALF],
        [r4, GOOD],
      ],
    );
    await evaluateAt(
      "2026-05-27T03:00:00Z",
      [ntp, both],
      [
        [r2, GOOD],
        [r3, BAD],
      ],
    );
    await evaluateAt("2026-06-01T08:00:00Z", [ntp, both], [[r1, GOOD]]);
    const tag = (await t.call("/api/v1/tags", { token })).body.data[0].id as number;
    const scoped = { all: false as const, tagIds: [tag], categoryIds: [] };
    const now = clock.now();
    for (const query of [
      { from: "2026-05-18", to: "2026-06-01" },
      { policy_id: ntp, from: "2026-05-18", to: "2026-06-01" },
      { policy_id: both, from: "2026-05-22", to: "2026-06-02" },
      { from: "2026-05-11", to: "2026-06-01", group_by: "week" as const },
      { from: "2026-05-24", to: "2026-05-28" },
    ]) {
      const walked = await complianceTrends(t.db, scoped, query, now);
      expect(walked.periods.some((p) => p.failing_rules.length)).toBe(true);
      // Twice: computing the days, then reading those kept.
      for (let k = 0; k < 2; k++) expect(await complianceTrends(t.db, { all: true }, query, now)).toEqual(walked);
    }
    expect((await t.db.select().from(complianceDays)).length).toBeGreaterThan(0);
  });

  it("drops the kept days a deleted device's results counted in, and a result written later for a past day changes it", async () => {
    const a = await createDevice(t, token, { device_name: "rtr-a" });
    const b = await createDevice(t, token, { device_name: "rtr-b" });
    const policy = await made("policies", { name: "ntp", definition: NTP });
    await made("policy-assignments", { policy_id: policy, scope: "all" });
    await evaluateAt(
      "2026-05-29T13:00:00Z",
      [policy],
      [
        [a, BAD],
        [b, BAD],
      ],
    );
    await evaluateAt("2026-05-31T13:00:00Z", [policy], [[a, GOOD]]);
    await evaluateAt("2026-06-01T12:00:00Z", [policy], []);
    const range = `policy_id=${policy}&from=2026-05-28&to=2026-05-31`;
    expect(counts((await trends(range)).body)).toEqual([
      ["2026-05-28", 0, 0, 0],
      ["2026-05-29", 2, 0, 2],
      ["2026-05-30", 2, 0, 2],
      ["2026-05-31", 2, 1, 1],
    ]);
    const kept = async () =>
      (await t.db.select({ dayEnd: complianceDays.dayEnd }).from(complianceDays)).map((d) => d.dayEnd);
    expect(new Set(await kept())).toEqual(new Set([29, 30, 31, 32].map((d) => Date.UTC(2026, 4, d))));

    // b's evaluation of 2026-05-30 (made late, as a collector with a slow clock would): the days after it change.
    clock.advance(Date.parse("2026-05-30T09:00:00Z") - clock.now().getTime());
    await storeVersion(t, { deviceId: b, text: GOOD, at: clock.now() });
    await t.call(`/api/v1/policies/${policy}/run`, { method: "POST", token });
    await runQueuedJobs();
    expect(new Set(await kept())).toEqual(new Set([29, 30].map((d) => Date.UTC(2026, 4, d))));
    clock.advance(Date.parse("2026-06-01T12:00:00Z") - clock.now().getTime());
    expect(counts((await trends(range)).body)).toEqual([
      ["2026-05-28", 0, 0, 0],
      ["2026-05-29", 2, 0, 2],
      ["2026-05-30", 2, 1, 1],
      ["2026-05-31", 2, 2, 0],
    ]);

    // Deleting a deletes its results (ON DELETE CASCADE): every day from its first result's on is computed again.
    expect((await t.call(`/api/v1/devices/${a}`, { method: "DELETE", token })).status).toBe(200);
    expect(await kept()).toEqual([Date.UTC(2026, 4, 29)]);
    expect(counts((await trends(range)).body)).toEqual([
      ["2026-05-28", 0, 0, 0],
      ["2026-05-29", 1, 0, 1],
      ["2026-05-30", 1, 1, 0],
      ["2026-05-31", 1, 1, 0],
    ]);
    expect((await trends(`from=2026-05-29&to=2026-05-29`)).body.data.periods[0].failing_rules).toEqual([
      { policy_id: policy, rule: 0, description: "NTP keeps time", devices: 1 },
    ]);
  });

  it("keeps today's state until a result is written today", async () => {
    const a = await createDevice(t, token, { device_name: "rtr-a" });
    const policy = await made("policies", { name: "ntp", definition: NTP });
    await made("policy-assignments", { policy_id: policy, scope: "all" });
    await evaluateAt("2026-06-01T10:00:00Z", [policy], [[a, BAD]]);
    const today = () => trends("from=2026-06-01&to=2026-06-01");
    const todayEnd = Date.UTC(2026, 5, 2);
    const kept = async () =>
      (await t.db.select({ dayEnd: complianceDays.dayEnd }).from(complianceDays)).map((d) => d.dayEnd);

    expect(counts((await today()).body)).toEqual([["2026-06-01", 1, 0, 1]]);
    // Kept, so the next chart of the day reads it instead of the day's results.
    expect(await kept()).toContain(todayEnd);
    expect(counts((await today()).body)).toEqual([["2026-06-01", 1, 0, 1]]);

    // A result written later today drops it, and the day is computed again with it.
    await evaluateAt("2026-06-01T13:00:00Z", [policy], [[a, GOOD]]);
    expect(await kept()).not.toContain(todayEnd);
    expect(counts((await today()).body)).toEqual([["2026-06-01", 1, 1, 0]]);
    expect(await kept()).toContain(todayEnd);
  });
});
