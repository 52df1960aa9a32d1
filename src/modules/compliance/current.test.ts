import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { complianceResults } from "../../db/schema/index.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { runComplianceJob } from "../../../collector/compliance-job.ts";
import { createDevice, storeVersion } from "../configs/test-fixtures.ts";

/**
 * `filter[latest]` reads compliance_current, each (assignment, device) pair's link to its newest result, kept by
 * triggers. After each write (new results, a policy's new revision, a device, an assignment or a current result
 * deleted) the list's latest and older results must be what comparing every result with its pair's others gives.
 */

const DEFINITION = "// Description: NTP set\n#[must_match_single_string]\nntp server\n";
const GOOD = "hostname r1\nntp server 192.0.2.1\nend";
const BAD = "hostname r1\nend";

let t: TestContext;
let token: string;
const clock = manualClock(new Date("2026-06-01T12:00:00Z"));

beforeAll(async () => {
  t = await createTestContext({ clock });
  token = await t.token();
});
afterAll(() => t.close());

const post = async (path: string, body: Record<string, unknown>) => {
  const res = await t.call(path, { method: "POST", token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number };
};

async function runQueuedJobs() {
  for (let job; (job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000)); ) {
    await runComplianceJob({ db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "test-collector" }, job);
  }
}

const listed = async (latest: "true" | "false") => {
  const body = (await t.call(`/api/v1/policy-compliance?per_page=500&sort=id&filter[latest]=${latest}`, { token }))
    .body;
  expect(body.meta.total).toBe(body.data.length);
  return body.data.map((r: { id: number }) => r.id) as number[];
};

/** Every result that is its pair's newest, found by comparing it with the pair's other results. */
async function freshLatest(): Promise<number[]> {
  const rows = await t.db.all<{ id: number }>(sql`select r.id from compliance_results r where r.id = (
    select r2.id from compliance_results r2 where r2.assignment_id = r.assignment_id and r2.device_id = r.device_id
    order by r2.evaluated_at desc, r2.id desc limit 1) order by r.id`);
  return rows.map((r) => Number(r.id));
}

async function expectLatestAsFresh() {
  const latest = await freshLatest();
  const all = (await t.db.select({ id: complianceResults.id }).from(complianceResults)).map((r) => r.id);
  expect(await listed("true")).toEqual(latest);
  expect(await listed("false")).toEqual(all.filter((id) => !latest.includes(id)).sort((a, b) => a - b));
  return latest;
}

describe("filter[latest] over the pairs' links", () => {
  it("lists each pair's newest result after every kind of write", async () => {
    const devices = [];
    for (const name of ["cur-1", "cur-2", "cur-3"]) {
      const id = await createDevice(t, token, { device_name: name });
      await storeVersion(t, { deviceId: id, text: BAD, at: clock.now() });
      devices.push(id);
    }
    const policy = await post("/api/v1/policies", { name: "ntp", definition: DEFINITION });
    const first = await post("/api/v1/policy-assignments", { policy_id: policy.id, scope: "all" });
    const second = await post("/api/v1/policy-assignments", { policy_id: policy.id, scope: "all" });
    await t.call(`/api/v1/policies/${policy.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    expect(await expectLatestAsFresh()).toHaveLength(6);

    // New versions, evaluated later: the older results are no longer the latest.
    clock.advance(60_000);
    for (const id of devices.slice(0, 2)) await storeVersion(t, { deviceId: id, text: GOOD, at: clock.now() });
    await t.call(`/api/v1/policies/${policy.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    await expectLatestAsFresh();
    // A new revision of the policy evaluates every device again.
    clock.advance(60_000);
    const patched = await t.call(`/api/v1/policies/${policy.id}`, {
      method: "PATCH",
      token,
      body: { definition: `${DEFINITION}\n// Description: hostname\n#[must_match_single_string]\nhostname\n` },
    });
    expect(patched.status).toBe(200);
    await t.call(`/api/v1/policies/${policy.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    await expectLatestAsFresh();

    // A current result deleted: its pair's newest left takes over.
    const [current] = await t.db
      .select({ id: complianceResults.id })
      .from(complianceResults)
      .where(eq(complianceResults.deviceId, devices[0]!))
      .orderBy(sql`${complianceResults.id} desc`)
      .limit(1);
    await t.db.delete(complianceResults).where(eq(complianceResults.id, current!.id));
    await expectLatestAsFresh();

    expect((await t.call(`/api/v1/devices/${devices[1]}`, { method: "DELETE", token })).status).toBe(200);
    await expectLatestAsFresh();
    expect((await t.call(`/api/v1/policy-assignments/${second.id}`, { method: "DELETE", token })).status).toBe(200);
    const left = await expectLatestAsFresh();
    expect(left).toHaveLength(2);
    expect(first.id).toBeGreaterThan(0);
  }, 60_000);
});
