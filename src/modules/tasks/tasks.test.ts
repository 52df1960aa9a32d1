import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { loadBuiltinTemplates } from "../../runtime/builtin-templates.ts";
import { seedReferenceData } from "../../runtime/seed.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { finishJob, settleFinishedRuns } from "./settle.ts";
import { count, eq } from "drizzle-orm";
import { jobs, type JobOutcome } from "../../db/schema/index.ts";

let t: TestContext;
let admin: string;
const clock = manualClock(new Date("2026-03-27T12:00:00Z"));

const queuedJobs = async () => (await t.db.select({ n: count() }).from(jobs).where(eq(jobs.state, "queued")))[0]!.n;
/** Each time the app said it had queued jobs (src/main.ts wakes its collector then): the queued jobs the database held. */
const wakes: Promise<number>[] = [];

beforeAll(async () => {
  t = await createTestContext({ clock, jobsQueued: () => void wakes.push(queuedJobs()) });
  admin = await t.token();
});
afterAll(() => t.close());

let names = 0;
async function device(tags: string[], enabled = true): Promise<number> {
  const res = await t.call("/api/v1/devices", {
    method: "POST",
    token: admin,
    body: {
      device_name: `task-dev-${++names}`,
      device_ip: "192.0.2.1",
      device_vendor: "Cisco",
      device_tags: tags,
      enabled,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}
async function tagId(name: string): Promise<number> {
  return (await t.call(`/api/v1/tags?filter[name]=${name}`, { token: admin })).body.data[0].id;
}
let taskNames = 0;
async function createTask(body: Record<string, unknown>, token = admin) {
  return t.call("/api/v1/tasks", {
    method: "POST",
    token,
    body: { task_name: `task ${++taskNames}`, task_cron: "0 3 * * *", ...body },
  });
}

/** Plays a collector: claims every queued job and ends it with the outcome the device id maps to. */
async function finishJobs(
  outcomes: Map<number, { outcome: JobOutcome; message?: string; result?: Record<string, unknown> }>,
) {
  for (;;) {
    const job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000);
    if (!job) return;
    const end = outcomes.get(job.deviceId!) ?? { outcome: "success" as const };
    await finishJob(
      t.db,
      { ...job, maxAttempts: 1 },
      "test-collector",
      { ...end, result: { duration_ms: 1500, ...end.result } },
      clock.now(),
    );
  }
}

describe("system tasks", () => {
  it("are seeded on first start, all active (the nightly backup too); seeding again keeps a user's edits", async () => {
    const list = await t.call("/api/v1/tasks?filter[is_system]=true&sort=id", { token: admin });
    expect(list.body.data.map((x: any) => [x.task_type, x.is_paused, x.is_system])).toEqual([
      ["download_all", false, true],
      ["purge_configs", false, true],
      ["backup_database", false, true],
    ]);
    const [backup, purge, databaseBackup] = list.body.data;
    expect(backup.next_runs).toHaveLength(3);
    expect(purge.next_runs).toHaveLength(3);

    const edited = await t.call(`/api/v1/tasks/${backup.id}`, {
      method: "PATCH",
      token: admin,
      body: { task_cron: "15 1 * * *", timezone: "Europe/Berlin" },
    });
    expect(edited.status).toBe(200);
    await seedReferenceData(t.db, clock, loadBuiltinTemplates());
    const again = await t.call("/api/v1/tasks?filter[is_system]=true&sort=id", { token: admin });
    expect(again.body.data.map((x: any) => x.id)).toEqual([backup.id, purge.id, databaseBackup.id]);
    expect(again.body.data[0]).toMatchObject({ task_cron: "15 1 * * *", timezone: "Europe/Berlin" });
  });

  it("cannot be deleted (409) nor change type, but can be paused and resumed", async () => {
    const purge = (
      await t.call("/api/v1/tasks?filter[task_type]=purge_configs&filter[is_system]=true", { token: admin })
    ).body.data[0];
    const del = await t.call(`/api/v1/tasks/${purge.id}`, { method: "DELETE", token: admin });
    expect(del.status).toBe(409);
    expect(del.body.message).toMatch(/system task.*pause it/);
    const retype = await t.call(`/api/v1/tasks/${purge.id}`, {
      method: "PATCH",
      token: admin,
      body: { task_type: "download_all" },
    });
    expect(retype.status).toBe(422);
    expect(retype.body.errors.task_type[0]).toMatch(/cannot change/);
    expect(
      (await t.call(`/api/v1/tasks/${purge.id}/pause`, { method: "POST", token: admin })).body.data.is_paused,
    ).toBe(true);
    expect(
      (await t.call(`/api/v1/tasks/${purge.id}/resume`, { method: "POST", token: admin })).body.data.is_paused,
    ).toBe(false);
  });
});

describe("cron expressions", () => {
  it.each([
    ["61 * * * *", "minute"],
    ["0 24 * * *", "hour"],
    ["0 0 32 * *", "day-of-month"],
    ["0 0 0 * *", "day-of-month"],
    ["0 0 * 13 *", "month"],
    ["0 0 * * 8", "day-of-week"],
    ["0 0 * * MON-FOO", "day-of-week"],
    ["*/0 * * * *", "minute"],
  ])("rejects %s with a 422 naming the %s field", async (cron, field) => {
    const res = await createTask({ task_type: "download_all", task_cron: cron });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(["task_cron"]);
    expect(res.body.errors.task_cron[0]).toContain(`invalid ${field} field`);
  });

  it("rejects expressions without exactly 5 fields, and ones that never match", async () => {
    for (const cron of ["0 0 * *", "0 0 0 * * *", "@daily"]) {
      const res = await createTask({ task_type: "download_all", task_cron: cron });
      expect(res.status, cron).toBe(422);
      expect(res.body.errors.task_cron[0], cron).toMatch(
        /must have 5 fields \(minute hour day-of-month month day-of-week\)/,
      );
    }
    const never = await createTask({ task_type: "download_all", task_cron: "0 0 30 2 *" });
    expect(never.body.errors.task_cron[0]).toMatch(/never matches/);
  });

  it("accepts the 5-element array rConfig clients send, and names, lists, ranges and steps", async () => {
    const arr = await createTask({ task_type: "download_all", task_cron: ["30", "2", "*", "*", 1] });
    expect(arr.status, JSON.stringify(arr.body)).toBe(201);
    expect(arr.body.data.task_cron).toBe("30 2 * * 1");
    const four = await createTask({ task_type: "download_all", task_cron: ["30", "2", "*", "*"] });
    expect(four.body.errors.task_cron[0]).toMatch(/exactly 5 fields/);
    const rich = await createTask({ task_type: "download_all", task_cron: "*/15 8-18 1,15 JAN-JUN MON-FRI" });
    expect(rich.status).toBe(201);
  });

  it("validates the time zone and stores its canonical IANA name", async () => {
    const bad = await createTask({ task_type: "download_all", timezone: "Mars/Olympus_Mons" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.timezone[0]).toMatch(/IANA time zone/);
    const ok = await createTask({ task_type: "download_all", timezone: "europe/berlin" });
    expect(ok.body.data.timezone).toBe("Europe/Berlin");
  });

  it("computes next_runs across the spring-forward day in Europe/Berlin (02:30 does not exist on 2026-03-29)", async () => {
    // Clock: 2026-03-27 12:00 UTC. CET is UTC+1 until 2026-03-29 02:00 local, when clocks jump to 03:00 CEST (UTC+2).
    // 02:30 that night never happens: the run happens when the clocks jump (03:00 CEST = 01:00 UTC), once.
    const res = await createTask({ task_type: "download_all", task_cron: "30 2 * * *", timezone: "Europe/Berlin" });
    expect(res.status).toBe(201);
    expect(res.body.data.next_runs).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
    const shown = await t.call(`/api/v1/tasks/${res.body.data.id}`, { token: admin });
    expect(shown.body.data.next_runs).toEqual(res.body.data.next_runs);
  });

  it("runs once on the fall-back day, when 02:30 happens twice (2026-10-25 in Europe/Berlin)", async () => {
    const autumn = manualClock(new Date("2026-10-24T12:00:00Z"));
    const ctx = await createTestContext({ clock: autumn });
    try {
      const token = await ctx.token();
      const res = await ctx.call("/api/v1/tasks", {
        method: "POST",
        token,
        body: { task_name: "autumn", task_type: "download_all", task_cron: "30 2 * * *", timezone: "Europe/Berlin" },
      });
      // 25 Oct: 02:30 CEST (00:30 UTC) and, after 03:00 CEST becomes 02:00 CET, 02:30 CET (01:30 UTC): only the first runs.
      expect(res.body.data.next_runs).toEqual([
        "2026-10-25T00:30:00.000Z",
        "2026-10-26T01:30:00.000Z",
        "2026-10-27T01:30:00.000Z",
      ]);
    } finally {
      await ctx.close();
    }
  });
});

describe("task fields", () => {
  it("create answers 201 with Location; rConfig's task_command is an alias of task_type; its notification switches are accepted and ignored", async () => {
    const ams = await device(["fields-ams"]);
    const tag = await tagId("fields-ams");
    const res = await t.call("/api/v1/tasks", {
      method: "POST",
      token: admin,
      body: {
        task_name: "rConfig style",
        task_desc: "from rConfig",
        task_command: "rconfig:download-tag",
        tags: [tag],
        task_cron: ["0", "4", "*", "*", "*"],
        download_report_notify: 1,
        notify_on_failure: true,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.headers.get("location")).toBe(`http://localhost/api/v1/tasks/${res.body.data.id}`);
    expect(res.body.data).toMatchObject({
      task_name: "rConfig style",
      task_desc: "from rConfig",
      task_type: "download_tags",
      task_command: "rconfig:download-tag",
      tags: [tag],
      devices: [],
      categories: [],
      task_cron: "0 4 * * *",
      timezone: "UTC",
      is_paused: false,
      notify_on_failure: true,
      is_system: false,
      last_run: null,
    });
    const alias = await createTask({ task_type: "rconfig:download-device", devices: [ams] });
    expect(alias.body.data.task_type).toBe("download_devices");
    const dup = await createTask({ task_name: "RCONFIG STYLE", task_type: "download_all" });
    expect(dup.body.errors.task_name).toEqual(["task_name 'RCONFIG STYLE' is already taken"]);
  });

  it("checks the targets against the type: the used list must name existing records, the others stay empty", async () => {
    const missing = await createTask({ task_type: "download_devices" });
    expect(missing.body.errors.devices).toEqual([
      "devices must list at least one device id for download_devices tasks",
    ]);
    const unknown = await createTask({ task_type: "download_devices", devices: [999999, 999998] });
    expect(unknown.body.errors.devices).toEqual(["devices has unknown device ids: 999999, 999998"]);
    const unknownCategory = await createTask({ task_type: "download_categories", categories: [424242] });
    expect(unknownCategory.body.errors.categories).toEqual(["categories has unknown category id: 424242"]);
    const unknownTag = await createTask({ task_type: "download_tags", tags: [434343] });
    expect(unknownTag.body.errors.tags).toEqual(["tags has unknown tag id: 434343"]);
    const extra = await createTask({ task_type: "download_all", tags: [1] });
    expect(extra.body.errors.tags[0]).toMatch(/tags must be empty for download_all tasks/);
    const noType = await t.call("/api/v1/tasks", {
      method: "POST",
      token: admin,
      body: { task_name: "typeless", task_cron: "0 0 * * *" },
    });
    expect(noType.body.errors.task_type[0]).toMatch(/task_type is required/);
    const badType = await createTask({ task_type: "reboot_everything" });
    expect(badType.body.errors.task_type[0]).toMatch(
      /must be one of: download_devices, download_categories, download_tags, download_all, purge_configs, compliance, snippet, backup_database, discovery_scan, rconfig:download-device/,
    );
  });

  it("PUT resets what it leaves out, PATCH changes only what it sends; changing the type clears unused lists; delete answers a message", async () => {
    const d = await device(["crud"]);
    const created = (
      await createTask({
        task_type: "download_devices",
        devices: [d],
        task_desc: "x",
        notify_on_failure: true,
        timezone: "Asia/Tokyo",
      })
    ).body.data;
    const patched = await t.call(`/api/v1/tasks/${created.id}`, {
      method: "PATCH",
      token: admin,
      body: { task_type: "download_all" },
    });
    expect(patched.body.data).toMatchObject({
      task_type: "download_all",
      devices: [],
      task_desc: "x",
      notify_on_failure: true,
      timezone: "Asia/Tokyo",
    });
    const replaced = await t.call(`/api/v1/tasks/${created.id}`, {
      method: "PUT",
      token: admin,
      body: { task_name: created.task_name, task_type: "download_all", task_cron: "5 5 * * *" },
    });
    expect(replaced.body.data).toMatchObject({
      task_desc: "",
      notify_on_failure: false,
      timezone: "UTC",
      task_cron: "5 5 * * *",
    });
    const del = await t.call(`/api/v1/tasks/${created.id}`, { method: "DELETE", token: admin });
    expect(del.body).toEqual({ message: `Task ${created.id} deleted` });
    expect((await t.call(`/api/v1/tasks/${created.id}`, { token: admin })).status).toBe(404);
    const log = await t.call(
      `/api/v1/activity-logs?filter[subject_type]=task&filter[subject_id]=${created.id}&sort=id`,
      { token: admin },
    );
    expect(log.body.data.map((e: any) => e.action)).toEqual([
      "task.create",
      "task.update",
      "task.update",
      "task.delete",
    ]);
  });

  it("pause and resume through their endpoints; a paused task shows no next runs", async () => {
    const created = (await createTask({ task_type: "download_all" })).body.data;
    expect(created.next_runs).toHaveLength(3);
    const paused = await t.call(`/api/v1/tasks/${created.id}/pause`, { method: "POST", token: admin });
    expect(paused.body.data).toMatchObject({ is_paused: true, next_runs: [] });
    const resumed = await t.call(`/api/v1/tasks/${created.id}/resume`, { method: "POST", token: admin });
    expect(resumed.body.data).toMatchObject({ is_paused: false, next_runs: created.next_runs });
    expect((await t.call("/api/v1/tasks/999999/pause", { method: "POST", token: admin })).status).toBe(404);
  });
});

describe("runs, outcomes and reports", () => {
  it("run now wakes the collector beside the API once the run's jobs are committed, so they start without waiting for its poll", async () => {
    await device(["wake"]);
    await device(["wake"]);
    const task = (await createTask({ task_type: "download_tags", tags: [await tagId("wake")] })).body.data;
    const before = await queuedJobs();
    const woken = wakes.length;
    expect((await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).status).toBe(202);
    expect(wakes).toHaveLength(woken + 1);
    expect(await wakes.at(-1)).toBe(before + 2);
    await finishJobs(new Map());
  });

  it("run now answers 202 with the run; counts and per-device outcomes follow the jobs; the run finishes with its last job", async () => {
    const ok = await device(["runs"]);
    const failing = await device(["runs"]);
    const same = await device(["runs"]);
    const disabled = await device(["runs"], false);
    const task = (await createTask({ task_type: "download_tags", tags: [await tagId("runs")], task_name: "runs task" }))
      .body.data;

    const res = await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin });
    expect(res.status).toBe(202);
    const run = res.body.data;
    expect(res.headers.get("location")).toBe(run.status_url);
    expect(run.status_url).toBe(`http://localhost/api/v1/task-runs/${run.id}`);
    expect(run).toMatchObject({
      task_id: task.id,
      task_name: "runs task",
      task_type: "download_tags",
      trigger: "manual",
      scheduled_for: null,
      status: "running",
      finished_at: null,
      progress: { queued: 3, running: 0, finished: 0, total: 3 },
      counts: { total: 4, succeeded: 0, unchanged: 0, failed: 0, skipped: 1 },
    });

    clock.advance(1000);
    const job = (await claimNextJob(t.db, "test-collector", clock.now(), 60_000))!;
    expect((await t.call(`/api/v1/task-runs/${run.id}`, { token: admin })).body.data.progress).toEqual({
      queued: 2,
      running: 1,
      finished: 0,
      total: 3,
    });
    await finishJob(
      t.db,
      job,
      "test-collector",
      {
        outcome: "success",
        message: "4 of 4 command outputs changed",
        result: { duration_ms: 1200, config_ids: [11, 12] },
      },
      clock.now(),
    );

    clock.advance(1000);
    await finishJobs(
      new Map([
        [failing, { outcome: "auth_failed" as const, message: "the device refused the password" }],
        [same, { outcome: "unchanged" as const, message: "no configuration change", result: { config_ids: [7] } }],
      ]),
    );
    const done = (await t.call(`/api/v1/task-runs/${run.id}`, { token: admin })).body.data;
    expect(done).toMatchObject({
      status: "failed",
      finished_at: clock.now().toISOString(),
      duration_ms: 2000,
      progress: { queued: 0, running: 0, finished: 3, total: 3 },
      counts: { total: 4, succeeded: 1, unchanged: 1, failed: 1, skipped: 1 },
    });

    const items = (await t.call(`/api/v1/task-runs/${run.id}/devices?sort=id`, { token: admin })).body;
    expect(items.meta.total).toBe(4);
    const byDevice = new Map(items.data.map((i: any) => [i.device_id, i]));
    expect(byDevice.get(ok)).toMatchObject({
      status: "succeeded",
      outcome: "success",
      error: null,
      duration_ms: 1200,
      config_ids: [11, 12],
      config_urls: ["http://localhost/api/v1/configs/11", "http://localhost/api/v1/configs/12"],
    });
    expect(byDevice.get(failing)).toMatchObject({
      status: "failed",
      outcome: "auth_failed",
      error: "the device refused the password",
      config_ids: [],
    });
    expect(byDevice.get(same)).toMatchObject({ status: "unchanged", outcome: "unchanged", config_ids: [7] });
    expect(byDevice.get(disabled)).toMatchObject({ status: "skipped", outcome: null, error: "disabled", job_id: null });
    const failed = await t.call(`/api/v1/task-runs/${run.id}/devices?filter[status]=failed,skipped&sort=id`, {
      token: admin,
    });
    expect(failed.body.data.map((i: any) => i.device_id)).toEqual([failing, disabled]);

    const failures = await t.call(`/api/v1/tasks/${task.id}/last-run/failures`, { token: admin });
    expect(failures.body.data.run.id).toBe(run.id);
    expect(failures.body.data.failures.map((i: any) => [i.device_id, i.error])).toEqual([
      [failing, "the device refused the password"],
    ]);

    const report = await t.call(`/api/v1/task-runs/${run.id}/report`, { token: admin });
    expect(report.body.data.run.counts).toEqual(done.counts);
    expect(report.body.data.devices).toHaveLength(4);

    const csv = await t.request(`/api/v1/task-runs/${run.id}/report.csv`, { token: admin });
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="task-run-${run.id}.csv"`);
    const rows: Record<string, string>[] = parse(await csv.text(), { columns: true });
    expect(
      rows
        .map((r) => [Number(r.device_id), r.status, r.error, r.config_ids])
        .sort((a, b) => Number(a[0]) - Number(b[0])),
    ).toEqual([
      [ok, "succeeded", "", "11 12"],
      [failing, "failed", "the device refused the password", ""],
      [same, "unchanged", "", "7"],
      [disabled, "skipped", "disabled", ""],
    ]);
    expect(rows.every((r) => r.run_id === String(run.id) && r.task_name === "runs task")).toBe(true);

    const task2 = (await t.call(`/api/v1/tasks/${task.id}`, { token: admin })).body.data;
    expect(task2.last_run).toMatchObject({ id: run.id, status: "failed", trigger: "manual" });
  });

  it("two runs while a device's download is still queued share that job, and both finish with it", async () => {
    const d = await device(["shared"]);
    const task = (await createTask({ task_type: "download_devices", devices: [d] })).body.data;
    const first = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;
    const second = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;
    const jobOf = async (runId: number) =>
      (await t.call(`/api/v1/task-runs/${runId}/devices`, { token: admin })).body.data[0].job_id;
    expect(await jobOf(second.id)).toBe(await jobOf(first.id));
    await finishJobs(new Map());
    for (const r of [first, second])
      expect((await t.call(`/api/v1/task-runs/${r.id}`, { token: admin })).body.data).toMatchObject({
        status: "succeeded",
        counts: { succeeded: 1 },
      });
  });

  it("a device deleted mid-run drops its job; the run's item says so and the scheduler's sweep finishes the run", async () => {
    const keep = await device(["deleted-mid-run"]);
    const gone = await device(["deleted-mid-run"]);
    const task = (await createTask({ task_type: "download_tags", tags: [await tagId("deleted-mid-run")] })).body.data;
    const run = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;
    // The kept device's job finishes first; the run still waits for the other.
    const job = (await claimNextJob(t.db, "test-collector", clock.now(), 60_000))!;
    expect(job.deviceId).toBe(keep);
    await finishJob(t.db, job, "test-collector", { outcome: "success", result: { duration_ms: 5 } }, clock.now());
    expect((await t.call(`/api/v1/task-runs/${run.id}`, { token: admin })).body.data.status).toBe("running");
    expect((await t.call(`/api/v1/devices/${gone}`, { method: "DELETE", token: admin })).status).toBe(200);

    clock.advance(1000);
    expect(await settleFinishedRuns(t.db, clock.now())).toBeGreaterThanOrEqual(1);
    const shown = (await t.call(`/api/v1/task-runs/${run.id}`, { token: admin })).body.data;
    expect(shown).toMatchObject({
      status: "succeeded",
      counts: { total: 2, succeeded: 1, skipped: 1 },
      finished_at: new Date(clock.now().getTime() - 1000).toISOString(),
    });
    const items = (await t.call(`/api/v1/task-runs/${run.id}/devices?filter[status]=skipped`, { token: admin })).body
      .data;
    expect(items).toMatchObject([{ device_id: null, status: "skipped", error: "the device or its job was deleted" }]);
    expect(items[0].device_name).toMatch(/^task-dev-/);
    // A finished run's counts are what happened then: kept when it finished, not counted again from what is left.
    expect((await t.call(`/api/v1/devices/${keep}`, { method: "DELETE", token: admin })).status).toBe(200);
    const later = (await t.call(`/api/v1/task-runs?filter[task_id]=${task.id}`, { token: admin })).body.data;
    expect(later).toMatchObject([{ id: run.id, counts: { total: 2, succeeded: 1, skipped: 1 } }]);
  });

  it("the CSV report neutralises a cell a spreadsheet would run as a formula, as every CSV export does", async () => {
    const d = await device(["formula"], false);
    const task = (await createTask({ task_type: "download_devices", devices: [d], task_name: "=cmd|'/C calc'!A0" }))
      .body.data;
    const run = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;
    const text = await (await t.request(`/api/v1/task-runs/${run.id}/report.csv`, { token: admin })).text();
    expect(text.split("\r\n")[1]).toMatch(new RegExp(`^${run.id},"'=cmd\\|'/C calc'!A0",`));
    const rows: Record<string, string>[] = parse(text, { columns: true });
    expect(rows.map((r) => r.task_name)).toEqual(["'=cmd|'/C calc'!A0"]);
  });

  it("a run with nothing to do finishes at once", async () => {
    const d = await device(["idle"], false);
    const task = (await createTask({ task_type: "download_devices", devices: [d] })).body.data;
    const run = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;
    expect(run).toMatchObject({
      status: "succeeded",
      counts: { total: 1, skipped: 1 },
      progress: { total: 0 },
      duration_ms: 0,
    });
  });

  it("lists runs across tasks filtered by task, status, trigger and time, newest first", async () => {
    const a = await device(["filters"]);
    const task = (await createTask({ task_type: "download_devices", devices: [a] })).body.data;
    clock.advance(60_000);
    const since = clock.now().toISOString();
    const failedRun = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;
    await finishJobs(new Map([[a, { outcome: "unreachable" as const, message: "no route to host" }]]));
    clock.advance(1000);
    const runningRun = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;

    const ofTask = await t.call(`/api/v1/tasks/${task.id}/runs`, { token: admin });
    expect(ofTask.body.data.map((r: any) => r.id)).toEqual([runningRun.id, failedRun.id]);
    const ids = async (query: string) =>
      (await t.call(`/api/v1/task-runs?${query}`, { token: admin })).body.data.map((r: any) => r.id);
    expect(await ids(`filter[task_id]=${task.id}&filter[status]=failed`)).toEqual([failedRun.id]);
    expect(await ids(`filter[task_id]=${task.id}&filter[status]=running`)).toEqual([runningRun.id]);
    expect(await ids(`filter[task_id]=${task.id}&filter[status]=succeeded`)).toEqual([]);
    expect(await ids(`filter[task_id]=${task.id}&filter[status]=running,failed&sort=id`)).toEqual([
      failedRun.id,
      runningRun.id,
    ]);
    expect(
      await ids(
        `filter[task_id]=${task.id}&filter[trigger]=manual&filter[started_after]=${since}&filter[started_before]=${runningRun.started_at}`,
      ),
    ).toEqual([failedRun.id]);
    const bad = await t.call("/api/v1/task-runs?filter[status]=broken", { token: admin });
    expect(bad.status).toBe(422);
    expect(bad.body.errors["filter[status]"][0]).toMatch(/must be one of: running, succeeded, failed/);
    expect((await t.call("/api/v1/task-runs?filter[started_after]=yesterday", { token: admin })).status).toBe(422);
    expect((await t.call("/api/v1/task-runs/999999", { token: admin })).status).toBe(404);
    await finishJobs(new Map());
  });
});

describe("scope", () => {
  it("a scoped user sees only tasks reaching their devices, only their devices in them, and only runs and outcomes over their devices", async () => {
    await t.role({ name: "ams-operators", tags: ["scope-ams"] });
    const scoped = await t.token(undefined, { role: "ams-operators" });
    const mine = await device(["scope-ams"]);
    const theirs = await device(["scope-lon"]);
    const both = (await createTask({ task_type: "download_devices", devices: [mine, theirs], task_name: "scope both" }))
      .body.data;
    const lonOnly = (await createTask({ task_type: "download_devices", devices: [theirs], task_name: "scope lon" }))
      .body.data;
    const byTag = (
      await createTask({ task_type: "download_tags", tags: [await tagId("scope-lon")], task_name: "scope lon tag" })
    ).body.data;

    const visible = await t.call("/api/v1/tasks?per_page=500", { token: scoped });
    const visibleIds = visible.body.data.map((x: any) => x.id);
    expect(visibleIds).toContain(both.id);
    expect(visibleIds).not.toContain(lonOnly.id);
    expect(visibleIds).not.toContain(byTag.id);
    // The nightly backup reaches every device, theirs too; the retention purge reaches none.
    expect(visible.body.data.filter((x: any) => x.is_system).map((x: any) => x.task_type)).toEqual(["download_all"]);
    expect((await t.call(`/api/v1/tasks/${both.id}`, { token: scoped })).body.data.devices).toEqual([mine]);
    expect((await t.call(`/api/v1/tasks/${lonOnly.id}`, { token: scoped })).status).toBe(404);
    expect((await t.call(`/api/v1/tasks/${lonOnly.id}/run`, { method: "POST", token: scoped })).status).toBe(404);

    const run = (await t.call(`/api/v1/tasks/${both.id}/run`, { method: "POST", token: admin })).body.data;
    const lonRun = (await t.call(`/api/v1/tasks/${lonOnly.id}/run`, { method: "POST", token: admin })).body.data;
    await finishJobs(new Map([[theirs, { outcome: "timeout" as const, message: "no answer" }]]));
    expect((await t.call(`/api/v1/task-runs/${run.id}`, { token: admin })).body.data).toMatchObject({
      status: "failed",
      counts: { total: 2, failed: 1, succeeded: 1 },
    });
    // The scoped user's view of the same run: their device only, so it succeeded.
    expect((await t.call(`/api/v1/task-runs/${run.id}`, { token: scoped })).body.data).toMatchObject({
      status: "succeeded",
      counts: { total: 1, failed: 0, succeeded: 1 },
    });
    expect(
      (await t.call(`/api/v1/task-runs/${run.id}/devices`, { token: scoped })).body.data.map((i: any) => i.device_id),
    ).toEqual([mine]);
    expect((await t.call(`/api/v1/tasks/${both.id}/last-run/failures`, { token: scoped })).body.data.failures).toEqual(
      [],
    );
    const csv = await (await t.request(`/api/v1/task-runs/${run.id}/report.csv`, { token: scoped })).text();
    expect(csv).not.toContain(`,${theirs},`);
    expect((await t.call(`/api/v1/task-runs/${lonRun.id}`, { token: scoped })).status).toBe(404);
    expect((await t.call(`/api/v1/task-runs/${lonRun.id}/devices`, { token: scoped })).status).toBe(404);
    const runIds = (await t.call("/api/v1/task-runs?per_page=500", { token: scoped })).body.data.map((r: any) => r.id);
    expect(runIds).toContain(run.id);
    expect(runIds).not.toContain(lonRun.id);
    expect(
      (await t.call(`/api/v1/task-runs?filter[status]=failed&filter[id]=${run.id}`, { token: scoped })).body.data,
    ).toEqual([]);
  });

  it("a scoped user names only devices, tags and categories of their scope, and no task for every device", async () => {
    await t.role({ name: "ams-editors", tags: ["edit-ams"] });
    const scoped = await t.token(undefined, { role: "ams-editors" });
    const mine = await device(["edit-ams"]);
    const theirs = await device(["edit-lon"]);
    const outside = await createTask({ task_type: "download_devices", devices: [theirs] }, scoped);
    expect(outside.body.errors.devices).toEqual([`devices has unknown device id: ${theirs}`]);
    const lonTag = await tagId("edit-lon");
    const otherTag = await createTask({ task_type: "download_tags", tags: [lonTag] }, scoped);
    expect(otherTag.status).toBe(422);
    expect(otherTag.body.errors.tags).toEqual([
      `tags ${lonTag} is not among the tags of your role's scope (${await tagId("edit-ams")}), so the task could reach devices outside it`,
    ]);
    for (const task_type of ["download_all", "purge_configs"]) {
      const everything = await createTask({ task_type }, scoped);
      expect(everything.status, task_type).toBe(422);
      expect(everything.body.errors.task_type[0]).toMatch(
        new RegExp(`^${task_type} tasks .* including devices outside your role's scope$`),
      );
    }
    const category = (
      await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "edit-routers" } })
    ).body.data.id;
    const byCategory = await createTask({ task_type: "download_categories", categories: [category] }, scoped);
    expect(byCategory.body.errors.categories).toEqual([
      `categories ${category} is not among the categories of your role's scope (none), so the task could reach devices outside it`,
    ]);

    const own = await createTask({ task_type: "download_tags", tags: [await tagId("edit-ams")] }, scoped);
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    const byDevice = await createTask({ task_type: "download_devices", devices: [mine] }, scoped);
    expect(byDevice.status).toBe(201);
    expect(
      (
        await t.call(`/api/v1/tasks/${byDevice.body.data.id}`, {
          method: "PATCH",
          token: scoped,
          body: { task_type: "download_all" },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await t.call(`/api/v1/tasks/${byDevice.body.data.id}`, {
          method: "PATCH",
          token: scoped,
          body: { devices: [mine, theirs] },
        })
      ).status,
    ).toBe(422);
    expect((await t.call(`/api/v1/tasks/${byDevice.body.data.id}`, { token: admin })).body.data).toMatchObject({
      task_type: "download_devices",
      devices: [mine],
    });
  });

  it("a scoped user cannot change, pause, run or delete a task that reaches devices outside the scope, the nightly backup included (403)", async () => {
    await t.role({ name: "ams-runners", tags: ["run-ams"] });
    const scoped = await t.token(undefined, { role: "ams-runners" });
    const mine = await device(["run-ams"]);
    const theirs = await device(["run-lon"]);
    const mixed = (await createTask({ task_type: "download_devices", devices: [mine, theirs], task_name: "run mixed" }))
      .body.data;
    const backup = (
      await t.call("/api/v1/tasks?filter[is_system]=true&filter[task_type]=download_all", { token: admin })
    ).body.data[0];
    const runsBefore = (await t.call("/api/v1/task-runs?per_page=500", { token: admin })).body.meta.total;

    for (const task of [mixed, backup]) {
      expect((await t.call(`/api/v1/tasks/${task.id}`, { token: scoped })).status).toBe(200);
      for (const [method, path, body] of [
        ["PATCH", "", { task_cron: "5 4 * * *" }],
        [
          "PUT",
          "",
          { task_name: task.task_name, task_type: task.task_type, task_cron: "5 4 * * *", devices: task.devices },
        ],
        ["POST", "/pause", undefined],
        ["POST", "/resume", undefined],
        ["POST", "/run", undefined],
        ["DELETE", "", undefined],
      ] as const) {
        const res = await t.call(`/api/v1/tasks/${task.id}${path}`, { method, token: scoped, body });
        expect(res.status, `${method} ${task.task_name}${path}`).toBe(403);
        expect(res.body.message).toMatch(
          new RegExp(
            `^Task ${task.id} \\('${task.task_name}'\\) is not yours to change or run: .*outside your role's scope`,
          ),
        );
      }
    }
    const [mixedAfter, backupAfter] = await Promise.all(
      [mixed, backup].map(async (x) => (await t.call(`/api/v1/tasks/${x.id}`, { token: admin })).body.data),
    );
    expect(mixedAfter).toMatchObject({
      task_cron: mixed.task_cron,
      is_paused: mixed.is_paused,
      devices: [mine, theirs].sort((a, b) => a - b),
    });
    expect(backupAfter).toMatchObject({ task_cron: backup.task_cron, is_paused: backup.is_paused });
    expect((await t.call("/api/v1/task-runs?per_page=500", { token: admin })).body.meta.total).toBe(runsBefore);

    // A task wholly inside the scope is theirs: it changes, pauses and runs, reaching only their devices.
    const own = (await createTask({ task_type: "download_tags", tags: [await tagId("run-ams")] }, scoped)).body.data;
    expect(
      (await t.call(`/api/v1/tasks/${own.id}`, { method: "PATCH", token: scoped, body: { task_cron: "5 4 * * *" } }))
        .status,
    ).toBe(200);
    expect((await t.call(`/api/v1/tasks/${own.id}/pause`, { method: "POST", token: scoped })).status).toBe(200);
    const run = await t.call(`/api/v1/tasks/${own.id}/run`, { method: "POST", token: scoped });
    expect(run.status).toBe(202);
    const reached = (await t.call(`/api/v1/task-runs/${run.body.data.id}/devices`, { token: admin })).body.data.map(
      (i: any) => i.device_id,
    );
    expect(reached).toEqual([mine]);
    expect((await t.call(`/api/v1/tasks/${own.id}`, { method: "DELETE", token: scoped })).status).toBe(200);
    await finishJobs(new Map());
  });
});
