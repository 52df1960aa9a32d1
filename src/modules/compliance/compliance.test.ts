import { parse } from "csv-parse/sync";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { until } from "../../../test/helpers/until.ts";
import { compliancePending, complianceResults, jobs, policies } from "../../db/schema/index.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { runComplianceJob } from "../../../collector/compliance-job.ts";
import { createDevice, storeVersion } from "../configs/test-fixtures.ts";
import { seedBuiltinPolicies } from "./builtins.ts";
import { evaluatePendingVersions } from "./pending.ts";
import { complianceTrends } from "./trends.ts";

const DEFINITION = [
  "// Description: NTP keeps logs and certificates on time",
  "#[must_match_single_string]",
  "ntp server",
  "",
  "// Description: no SNMP community public",
  "#[must_not_match_single_string]",
  "snmp-server community public",
  "",
].join("\n");

const GOOD = ["hostname r1", "ntp server 192.0.2.1", "snmp-server community s3cret RO", "end"].join("\n");
const BAD = ["hostname r1", "snmp-server community public RO", "end"].join("\n");

let t: TestContext;
let token: string;
const clock = manualClock(new Date("2026-06-01T12:00:00Z"));
/** How many times the app said it had queued jobs (src/main.ts wakes its collector then). */
let wakes = 0;

beforeEach(async () => {
  wakes = 0;
  t = await createTestContext({ clock, jobsQueued: () => void wakes++ });
  token = await t.token();
});
afterEach(async () => t.close());

async function createPolicy(body: Record<string, unknown> = {}) {
  const res = await t.call("/api/v1/policies", {
    method: "POST",
    token,
    body: { name: `policy ${Math.random()}`, definition: DEFINITION, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number; revision: string };
}

async function assign(policyId: number, body: Record<string, unknown> = { scope: "all" }) {
  const res = await t.call("/api/v1/policy-assignments", {
    method: "POST",
    token,
    body: { policy_id: policyId, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number };
}

/** Runs every queued compliance job the way a collector does (claim, run, complete), in this process. */
async function runQueuedJobs(): Promise<number> {
  let n = 0;
  for (let job; (job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000)); n++) {
    await runComplianceJob({ db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "test-collector" }, job);
  }
  return n;
}

const results = async (query = "") => (await t.call(`/api/v1/policy-compliance?per_page=500${query}`, { token })).body;

describe("policies", () => {
  it("refuses a definition that does not parse with a 422 naming the line and the problem", async () => {
    const bad = await t.call("/api/v1/policies", {
      method: "POST",
      token,
      body: { name: "broken", definition: "// Description: x\n#[must_match_regex]\n(unclosed\n" },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/^definition: line 3: /);
    const unknown = await t.call("/api/v1/policies", {
      method: "POST",
      token,
      body: { name: "broken", definition: "// Description: x\n#[must_match_everything]\nfoo\n" },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toMatch(/^definition: line 2: /);
  });

  it("creates, shows, updates (new revision) and deletes a policy; a name is unique in any case", async () => {
    const created = await createPolicy({ name: "IOS baseline", vendor: "Cisco IOS" });
    const shown = await t.call(`/api/v1/policies/${created.id}`, { token });
    expect(shown.body.data).toMatchObject({
      name: "IOS baseline",
      vendor: "Cisco IOS",
      rules_count: 2,
      builtin: false,
      assignments_count: 0,
    });
    expect(
      (
        await t.call("/api/v1/policies", {
          method: "POST",
          token,
          body: { name: "ios BASELINE", definition: DEFINITION },
        })
      ).status,
    ).toBe(422);
    const patched = await t.call(`/api/v1/policies/${created.id}`, {
      method: "PATCH",
      token,
      body: { definition: DEFINITION + "\n// Description: banner\n#[must_match_single_string]\nbanner motd\n" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.rules_count).toBe(3);
    expect(patched.body.data.revision).not.toBe(created.revision);
    expect((await t.call(`/api/v1/policies/${created.id}`, { method: "DELETE", token })).status).toBe(200);
  });

  it("keeps built-in policies read-only (403 with the reason) and copyable", async () => {
    await t.db.transaction((tx) =>
      seedBuiltinPolicies(tx, clock.now(), [
        { key: "test-baseline", name: "Test baseline", description: "d", vendor: "Cisco IOS", definition: DEFINITION },
      ]),
    );
    const [row] = await t.db.select().from(policies).where(eq(policies.builtinKey, "test-baseline"));
    const refused = await t.call(`/api/v1/policies/${row!.id}`, { method: "PATCH", token, body: { name: "mine" } });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain(`POST /api/v1/policies/${row!.id}/copy`);
    expect((await t.call(`/api/v1/policies/${row!.id}`, { method: "DELETE", token })).status).toBe(403);
    const copy = await t.call(`/api/v1/policies/${row!.id}/copy`, { method: "POST", token });
    expect(copy.status).toBe(201);
    expect(copy.body.data).toMatchObject({
      name: "Test baseline (copy)",
      builtin: false,
      definition: DEFINITION,
      revision: row!.definitionHash,
    });
    expect(
      (await t.call(`/api/v1/policies/${copy.body.data.id}`, { method: "PATCH", token, body: { name: "mine" } }))
        .status,
    ).toBe(200);
  });

  it("seeds the built-in baseline policies, whose definitions pass the same checks as a user's", async () => {
    const builtins = (await t.call("/api/v1/policies?filter[builtin]=true&per_page=100", { token })).body.data;
    expect(builtins.length).toBeGreaterThanOrEqual(5);
    for (const p of builtins) {
      expect(p.rules_count).toBeGreaterThan(0);
      const copy = await t.call("/api/v1/policies", {
        method: "POST",
        token,
        body: { name: `${p.name} as mine`, definition: p.definition },
      });
      expect(copy.status, JSON.stringify(copy.body)).toBe(201);
    }
  });

  it("refuses to delete a policy that has assignments (409)", async () => {
    const p = await createPolicy();
    await assign(p.id);
    expect((await t.call(`/api/v1/policies/${p.id}`, { method: "DELETE", token })).status).toBe(409);
  });
});

describe("assignments", () => {
  it("checks the scope's list and the policy, and defaults enabled, run_on_backup and the command", async () => {
    const p = await createPolicy();
    const noTags = await t.call("/api/v1/policy-assignments", {
      method: "POST",
      token,
      body: { policy_id: p.id, scope: "tags" },
    });
    expect(noTags.status).toBe(422);
    expect(noTags.body.errors.tags[0]).toContain("at least one tag");
    const unknown = await t.call("/api/v1/policy-assignments", {
      method: "POST",
      token,
      body: { policy_id: 999, scope: "devices", devices: [12345] },
    });
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.errors).sort()).toEqual(["devices", "policy_id"]);
    const mixed = await t.call("/api/v1/policy-assignments", {
      method: "POST",
      token,
      body: { policy_id: p.id, scope: "all", tags: [1] },
    });
    expect(mixed.status).toBe(422);
    const ok = await t.call("/api/v1/policy-assignments", {
      method: "POST",
      token,
      body: { policy_id: p.id, scope: "all" },
    });
    expect(ok.body.data).toMatchObject({
      scope: "all",
      command: null,
      enabled: true,
      run_on_backup: true,
      policy_name: expect.any(String),
    });
  });
});

describe("evaluation", () => {
  it("evaluates on demand through a job: results with evidence, remediation, not_evaluated, and no duplicate for an unchanged version", async () => {
    const good = await createDevice(t, token, { device_name: "good-router" });
    const bad = await createDevice(t, token, { device_name: "bad-router" });
    const empty = await createDevice(t, token, { device_name: "empty-router" });
    await storeVersion(t, { deviceId: good, text: GOOD, at: clock.now() });
    await storeVersion(t, { deviceId: bad, text: BAD, at: clock.now() });
    const p = await createPolicy();
    const a = await assign(p.id);

    const run = await t.call(`/api/v1/policy-assignments/${a.id}/run`, { method: "POST", token });
    expect(run.status).toBe(202);
    expect(run.body.data).toMatchObject({ type: "compliance", state: "queued" });
    expect(wakes, "the collector beside the API is woken, not left to its poll").toBe(1);
    expect(await runQueuedJobs()).toBe(1);
    const job = await t.call(`/api/v1/jobs/${run.body.data.id}`, { token });
    expect(job.body.data).toMatchObject({
      state: "finished",
      outcome: "success",
      result: { evaluated: 3, added: 3, compliant: 1, not_compliant: 1, not_evaluated: 1 },
    });

    const list = await results("&sort=device_name");
    expect(list.data.map((r: any) => [r.device_name, r.status, r.score])).toEqual([
      ["bad-router", "not_compliant", 0],
      ["empty-router", "not_evaluated", 0],
      ["good-router", "compliant", 100],
    ]);
    const failed = list.data[0];
    expect(failed.rules[0]).toMatchObject({
      passed: false,
      description: "NTP keeps logs and certificates on time",
      evidence: [{ line: null, text: "ntp server" }],
    });
    expect(failed.rules[1]).toMatchObject({
      passed: false,
      evidence: [{ line: 2, text: "snmp-server community public RO" }],
      remediation: ["no snmp-server community public RO"],
    });
    expect(failed.command).toBe("show running-config");
    expect((await t.call(`/api/v1/policy-compliance/${failed.id}`, { token })).body.data).toEqual(failed);
    expect(list.data[1].config_id).toBeNull();

    // The same versions against the same policy: no new row. A new version of one device: one new row.
    await t.call(`/api/v1/policies/${p.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    expect((await results()).meta.total).toBe(3);
    clock.advance(60_000);
    await storeVersion(t, { deviceId: bad, text: GOOD, at: clock.now() });
    await t.call(`/api/v1/policies/${p.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    expect((await results()).meta.total).toBe(4);
    const state = await t.call(`/api/v1/devices/${bad}/compliance`, { token });
    expect(state.body.data).toMatchObject({
      device_name: "bad-router",
      status: "compliant",
      assignments: [{ assignment_id: a.id, covers_device: true, status: "compliant" }],
    });
    expect((await results("&filter[latest]=true&filter[status]=not_compliant")).meta.total).toBe(0);
    expect(empty).toBeGreaterThan(0);
  });

  it("answers ?wait= with the finished job once a collector has run it", async () => {
    const d = await createDevice(t, token, { device_name: "router-w" });
    await storeVersion(t, { deviceId: d, text: GOOD, at: clock.now() });
    const a = await assign((await createPolicy()).id);
    const answer = t.call(`/api/v1/policy-assignments/${a.id}/run?wait=10`, { method: "POST", token });
    // The collector's part once the request has queued its job (and is waiting on it).
    const queued = async () =>
      (await t.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.type, "compliance"))).length > 0;
    await until("the compliance job to be queued", queued, Boolean, { tries: 2000, everyMs: 5 });
    expect(await runQueuedJobs()).toBe(1);
    const done = await answer;
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ state: "finished", outcome: "success", result: { compliant: 1 } });
  });

  it("queues new versions for the after-backup pass, which evaluates them; an unchanged download queues nothing", async () => {
    const d = await createDevice(t, token, { device_name: "router-b" });
    await storeVersion(t, { deviceId: d, text: BAD, at: clock.now() });
    // No assignment evaluates on backup yet: nothing queued.
    expect((await t.db.select({ n: count() }).from(compliancePending))[0]!.n).toBe(0);
    const p = await createPolicy();
    await assign(p.id, { scope: "devices", devices: [d], run_on_backup: true });
    await assign(p.id, { scope: "devices", devices: [d], run_on_backup: false });
    clock.advance(1000);
    await storeVersion(t, { deviceId: d, text: GOOD, at: clock.now() });
    expect((await t.db.select({ n: count() }).from(compliancePending))[0]!.n).toBe(1);
    const done = await evaluatePendingVersions(t.db, 25, clock.now());
    expect(done).toMatchObject({ taken: 1, summary: { evaluated: 1, compliant: 1 } });
    expect((await results()).data.map((r: any) => r.status)).toEqual(["compliant"]);
    clock.advance(1000);
    await storeVersion(t, { deviceId: d, text: GOOD, at: clock.now() });
    expect((await t.db.select({ n: count() }).from(compliancePending))[0]!.n).toBe(0);
  });
});

describe("compliance task type", () => {
  it("checks the devices a compliance task targets, with run history", async () => {
    const tag = await t.call("/api/v1/tags", { method: "POST", token, body: { name: "core" } });
    const d1 = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
    const d2 = await createDevice(t, token, { device_name: "edge-1" });
    await storeVersion(t, { deviceId: d1, text: BAD, at: clock.now() });
    await storeVersion(t, { deviceId: d2, text: BAD, at: clock.now() });
    await assign((await createPolicy()).id);
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token,
      body: {
        task_name: "compliance nightly",
        task_type: "compliance",
        tags: [tag.body.data.id],
        task_cron: "0 3 * * *",
      },
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    const run = await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token });
    expect(run.status).toBe(202);
    expect(await runQueuedJobs()).toBe(1);
    const finished = await t.call(run.body.data.status_url.replace("http://netkeep.test", ""), { token });
    expect(finished.body.data).toMatchObject({
      task_type: "compliance",
      status: "succeeded",
      counts: { total: 1, succeeded: 1 },
    });
    const items = await t.call(run.body.data.devices_url.replace("http://netkeep.test", ""), { token });
    expect(items.body.data[0]).toMatchObject({
      device_name: "core-1",
      status: "succeeded",
      message: expect.stringContaining("1 not compliant"),
    });
    expect((await results()).data.map((r: any) => r.device_name)).toEqual(["core-1"]);
    const [job] = await t.db.select().from(jobs).where(eq(jobs.type, "compliance"));
    expect(job!.deviceId).toBe(d1);
  });
});

describe("trends, exports and scope", () => {
  async function history() {
    const tagged = await t.call("/api/v1/tags", { method: "POST", token, body: { name: "site-a" } });
    const a1 = await createDevice(t, token, { device_name: "site-a-1", device_tags: ["site-a"] });
    const b1 = await createDevice(t, token, { device_name: "site-b-1" });
    const p = await createPolicy();
    await assign(p.id);
    // Day 1: both fail. Day 3: a-1 fixed.
    clock.advance(-2 * 86_400_000 + 3_600_000);
    await storeVersion(t, { deviceId: a1, text: BAD, at: clock.now() });
    await storeVersion(t, { deviceId: b1, text: BAD, at: clock.now() });
    await t.call(`/api/v1/policies/${p.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    clock.advance(2 * 86_400_000);
    await storeVersion(t, { deviceId: a1, text: GOOD, at: clock.now() });
    await t.call(`/api/v1/policies/${p.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    return { p, a1, b1, tagId: tagged.body.data.id as number };
  }

  it("computes per-day compliance and failing rules from history", async () => {
    const { p } = await history();
    const res = await t.call(
      `/api/v1/policy-compliance/trends?policy_id=${p.id}&from=2026-05-29&to=2026-06-01&group_by=day`,
      { token },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const days = res.body.data.periods.map((d: any) => [
      d.period_start.slice(0, 10),
      d.devices,
      d.compliant,
      d.compliant_percent,
      d.failing_rules.map((r: any) => [r.rule, r.devices]),
    ]);
    expect(days).toEqual([
      ["2026-05-29", 0, 0, null, []],
      [
        "2026-05-30",
        2,
        0,
        0,
        [
          [0, 2],
          [1, 2],
        ],
      ],
      [
        "2026-05-31",
        2,
        0,
        0,
        [
          [0, 2],
          [1, 2],
        ],
      ],
      [
        "2026-06-01",
        2,
        1,
        50,
        [
          [0, 1],
          [1, 1],
        ],
      ],
    ]);
    const week = await t.call(
      `/api/v1/policy-compliance/trends?policy_id=${p.id}&from=2026-05-25&to=2026-06-01&group_by=week`,
      { token },
    );
    expect(week.body.data.periods.map((w: any) => w.compliant_percent)).toEqual([0, 50]);
    // A range that starts after the first results carries their state in (the pairs' state when it starts).
    const later = await t.call(
      `/api/v1/policy-compliance/trends?policy_id=${p.id}&from=2026-05-31&to=2026-06-01&group_by=day`,
      { token },
    );
    expect(later.body.data.periods.map((d: any) => [d.devices, d.compliant, d.not_compliant])).toEqual([
      [2, 0, 2],
      [2, 1, 1],
    ]);
    expect((await t.call("/api/v1/policy-compliance/trends?from=2026-06-02&to=2026-06-01", { token })).status).toBe(
      422,
    );
  });

  it("counts the same devices per period in the database when the failing rules are left out (the pages' charts)", async () => {
    const { p, tagId } = await history();
    const counts = (r: Awaited<ReturnType<typeof complianceTrends>>) =>
      r.periods.map((d) => [d.period_start.slice(0, 10), d.devices, d.compliant, d.not_compliant, d.compliant_percent]);
    const now = clock.now();
    const scoped = { all: false as const, tagIds: [tagId], categoryIds: [] };
    for (const [scope, query] of [
      [{ all: true as const }, { policy_id: p.id, from: "2026-05-29", to: "2026-06-01" }],
      [{ all: true as const }, { from: "2026-05-31", to: "2026-06-01" }],
      [{ all: true as const }, { from: "2026-05-25", to: "2026-06-01", group_by: "week" as const }],
      [scoped, { from: "2026-05-29", to: "2026-06-01" }],
    ] as const) {
      const full = await complianceTrends(t.db, scope, query, now);
      const brief = await complianceTrends(t.db, scope, query, now, { failingRules: false });
      expect(counts(brief), JSON.stringify(query)).toEqual(counts(full));
      expect(brief.periods.every((d) => d.failing_rules.length === 0)).toBe(true);
    }
    expect(
      counts(
        await complianceTrends(t.db, { all: true }, { from: "2026-05-30", to: "2026-06-01" }, now, {
          failingRules: false,
        }),
      ),
    ).toEqual([
      ["2026-05-30", 2, 0, 2, 0],
      ["2026-05-31", 2, 0, 2, 0],
      ["2026-06-01", 2, 1, 1, 50],
    ]);
    expect(
      counts(
        await complianceTrends(t.db, scoped, { from: "2026-06-01", to: "2026-06-01" }, now, { failingRules: false }),
      ),
    ).toEqual([["2026-06-01", 1, 1, 0, 100]]);
  });

  it("exports CSV and JSON (v2, streamed) that parse back to the list", async () => {
    await history();
    const list = (await results("&sort=id")).data;
    expect(list.length).toBe(3);
    const json = await t.request("/api/v2/policy-compliance/export?format=json", { token });
    expect(json.status).toBe(200);
    expect(JSON.parse(await json.text())).toEqual(list);
    const csv = await t.request("/api/v2/policy-compliance/export?format=csv&filter[status]=not_compliant", { token });
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const rows = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    const failing = list.filter((r: any) => r.status === "not_compliant");
    expect(rows.map((r) => [Number(r.id), r.device_name, r.status, Number(r.score), r.failed_rules])).toEqual(
      failing.map((r: any) => [
        r.id,
        r.device_name,
        r.status,
        r.score,
        r.rules
          .filter((x: any) => !x.passed)
          .map((x: any) => x.description)
          .join(" | "),
      ]),
    );
    expect((await t.call("/api/v2/policy-compliance/export?filter[bogus]=1", { token })).status).toBe(422);
  });

  it("shows a scoped user only the results of devices in scope, in lists, totals, trends, exports and device state", async () => {
    const { p, b1 } = await history();
    await t.role({ name: "site-a-only", tags: ["site-a"] });
    const scoped = await t.token(undefined, { role: "site-a-only" });
    const list = (await t.call("/api/v1/policy-compliance", { token: scoped })).body;
    expect(list.meta.total).toBe(2);
    expect(new Set(list.data.map((r: any) => r.device_name))).toEqual(new Set(["site-a-1"]));
    const other = (await results(`&filter[device_id]=${b1}`)).data[0];
    expect((await t.call(`/api/v1/policy-compliance/${other.id}`, { token: scoped })).status).toBe(404);
    expect((await t.call(`/api/v1/devices/${b1}/compliance`, { token: scoped })).status).toBe(404);
    const trend = await t.call(`/api/v1/policy-compliance/trends?policy_id=${p.id}&from=2026-06-01&to=2026-06-01`, {
      token: scoped,
    });
    expect(trend.body.data.periods[0]).toMatchObject({ devices: 1, compliant: 1, compliant_percent: 100 });
    const exported = JSON.parse(
      await (await t.request("/api/v2/policy-compliance/export?format=json", { token: scoped })).text(),
    );
    expect(exported).toEqual(list.data.slice().sort((x: any, y: any) => x.id - y.id));
  });

  it("runs a scoped user's policy or assignment run only on devices in their scope, and shows them its job", async () => {
    await t.call("/api/v1/tags", { method: "POST", token, body: { name: "site-a" } });
    const a1 = await createDevice(t, token, { device_name: "site-a-1", device_tags: ["site-a"] });
    const b1 = await createDevice(t, token, { device_name: "site-b-1" });
    await storeVersion(t, { deviceId: a1, text: BAD, at: clock.now() });
    await storeVersion(t, { deviceId: b1, text: BAD, at: clock.now() });
    const p = await createPolicy();
    const a = await assign(p.id);
    await t.role({ name: "site-a-only", tags: ["site-a"] });
    const scoped = await t.token(undefined, { role: "site-a-only" });
    const evaluatedDevices = async () => new Set((await results()).data.map((r: any) => r.device_name));

    const byPolicy = await t.call(`/api/v1/policies/${p.id}/run`, { method: "POST", token: scoped });
    expect(byPolicy.status).toBe(202);
    await runQueuedJobs();
    expect(await evaluatedDevices()).toEqual(new Set(["site-a-1"]));
    // The requester sees the job about no device; another user of the same scope does not; an unscoped user does.
    const job = await t.call(`/api/v1/jobs/${byPolicy.body.data.id}`, { token: scoped });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect(job.body.data).toMatchObject({
      type: "compliance",
      state: "finished",
      outcome: "success",
      result: { evaluated: 1 },
    });
    expect(
      (
        await t.call(`/api/v1/jobs/${byPolicy.body.data.id}`, {
          token: await t.token(undefined, { role: "site-a-only" }),
        })
      ).status,
    ).toBe(404);
    expect((await t.call(`/api/v1/jobs/${byPolicy.body.data.id}`, { token })).status).toBe(200);

    const byAssignment = await t.call(`/api/v1/policy-assignments/${a.id}/run`, { method: "POST", token: scoped });
    expect(byAssignment.status).toBe(202);
    await storeVersion(t, { deviceId: a1, text: GOOD, at: clock.now() });
    await storeVersion(t, { deviceId: b1, text: GOOD, at: clock.now() });
    await runQueuedJobs();
    const after = (await results()).data;
    expect(after.filter((r: any) => r.device_name === "site-b-1")).toHaveLength(0);
    expect(
      after
        .filter((r: any) => r.device_name === "site-a-1")
        .map((r: any) => r.status)
        .sort(),
    ).toEqual(["compliant", "not_compliant"]);
    expect((await t.call(`/api/v1/jobs/${byAssignment.body.data.id}`, { token: scoped })).body.data).toMatchObject({
      result: { evaluated: 1 },
    });

    // An unscoped user's run still reaches every device the assignment covers.
    await t.call(`/api/v1/policies/${p.id}/run`, { method: "POST", token });
    await runQueuedJobs();
    expect(await evaluatedDevices()).toEqual(new Set(["site-a-1", "site-b-1"]));
  });

  it("needs policycompliance abilities", async () => {
    const reader = await t.token(["policycompliance.read"]);
    expect((await t.call("/api/v1/policy-compliance", { token: reader })).status).toBe(200);
    expect(
      (await t.call("/api/v1/policies", { method: "POST", token: reader, body: { name: "x", definition: DEFINITION } }))
        .status,
    ).toBe(403);
    expect((await t.call("/api/v1/policies", { token: await t.token(["devices.read"]) })).status).toBe(403);
  });
});

it("stores a result once per version even when two evaluations race", async () => {
  // The unique indexes, not a read before the write, keep duplicates out (two collectors may evaluate together).
  const t2 = await createTestContext({ clock });
  try {
    const tok = await t2.token();
    const d = await createDevice(t2, tok, { device_name: "router-r" });
    await storeVersion(t2, { deviceId: d, text: GOOD, at: clock.now() });
    const p = await t2.call("/api/v1/policies", {
      method: "POST",
      token: tok,
      body: { name: "p", definition: DEFINITION },
    });
    const a = await t2.call("/api/v1/policy-assignments", {
      method: "POST",
      token: tok,
      body: { policy_id: p.body.data.id, scope: "all" },
    });
    const { assignmentsWithPolicies, checkAssignments } = await import("./evaluate.ts");
    const pairs = await assignmentsWithPolicies(t2.db, undefined);
    await Promise.all([checkAssignments(t2.db, pairs, clock.now()), checkAssignments(t2.db, pairs, clock.now())]);
    expect((await t2.db.select({ n: count() }).from(complianceResults))[0]!.n).toBe(1);
    expect(a.status).toBe(201);
  } finally {
    await t2.close();
  }
});
