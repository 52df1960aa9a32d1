import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { claimNextJob, getJob, requeueExpiredLeases, type Job } from "../../platform/jobs/queue.ts";
import { finishJob } from "../tasks/settle.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { runSnippetJob } from "../../../collector/snippet-job.ts";
import { scheduleDueRuns } from "../../../collector/scheduler.ts";
import { completePushJob } from "./deployments.ts";
import { count, eq } from "drizzle-orm";
import { jobs } from "../../db/schema/index.ts";

let t: TestContext;
let admin: string;
let clock: ReturnType<typeof manualClock>;
/** Each time the app said it had queued jobs (src/main.ts wakes its collector then): the queued jobs the database held. */
let wakes: Promise<number>[];
const queuedJobs = async () => (await t.db.select({ n: count() }).from(jobs).where(eq(jobs.state, "queued")))[0]!.n;

// Every test gets a database, a job queue and a clock of its own: what one leaves queued, leased or moved on, no
// other claims or sees.
beforeEach(async () => {
  clock = manualClock(new Date("2026-11-24T12:00:00Z"));
  wakes = [];
  t = await createTestContext({ clock, jobsQueued: () => void wakes.push(queuedJobs()) });
  admin = await t.token();
});
afterEach(() => t.close());

let names = 0;
async function device(
  opts: { tags?: string[]; custom?: Record<string, string>; enabled?: boolean } = {},
): Promise<number> {
  const res = await t.call("/api/v1/devices", {
    method: "POST",
    token: admin,
    body: {
      device_name: `snip-dev-${++names}`,
      device_ip: `192.0.2.${names % 250}`,
      device_vendor: "Cisco",
      device_tags: opts.tags ?? [],
      custom: opts.custom ?? {},
      enabled: opts.enabled ?? true,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}
let snippetNames = 0;
async function snippet(body: Record<string, unknown> = {}): Promise<number> {
  const res = await t.call("/api/v1/snippets", {
    method: "POST",
    token: admin,
    body: { name: `snippet ${++snippetNames}`, content: "ntp server {ntp}", ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}
const deploy = (id: number, body: Record<string, unknown>, token = admin) =>
  t.call(`/api/v1/snippets/${id}/deploy`, { method: "POST", token, body });
const deploymentDevices = async (id: number, token = admin) =>
  (await t.call(`/api/v1/snippet-deployments/${id}/devices?per_page=500`, { token })).body.data as {
    device_id: number;
    status: string;
    job_id: number | null;
    message: string | null;
  }[];

/** Plays a collector: claims every runnable job, and ends each push as `push` says for its device. */
async function runPushes(push: (deviceId: number) => "success" | "failed"): Promise<Job[]> {
  const claimed: Job[] = [];
  for (;;) {
    const job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000);
    if (!job) return claimed;
    claimed.push(job);
    const status = push(job.deviceId!);
    await completePushJob(
      t.db,
      job,
      "test-collector",
      {
        status,
        outcome: status === "success" ? "success" : "error",
        message: status === "success" ? "pushed" : "line 1 refused",
        result:
          status === "success"
            ? { saved: true }
            : { failed_line: { index: 0, line: "x", answer: "% Invalid input detected at '^' marker." }, saved: false },
        transcript: "R1(config)# x",
      },
      clock.now(),
      finishJob,
    );
  }
}

describe("snippets resource", () => {
  it("creates, lists with its variables, refuses a duplicate name in any case, and logs every write", async () => {
    const res = await t.call("/api/v1/snippets", {
      method: "POST",
      token: admin,
      body: {
        name: "Banner Ü",
        content: "banner motd #{site} {device_name}#",
        rollback_content: "no banner motd",
        tags: ["banner"],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: "Banner Ü",
      variables: ["site", "device_name"],
      tags: ["banner"],
      template_ids: [],
    });
    const dup = await t.call("/api/v1/snippets", {
      method: "POST",
      token: admin,
      body: { name: "banner ü", content: "x" },
    });
    expect(dup.status).toBe(422);
    expect(dup.body.errors.name[0]).toContain("already taken");
    const list = await t.call("/api/v1/snippets?filter[tag]=banner", { token: admin });
    expect(list.body.data.map((s: any) => s.id)).toEqual([res.body.data.id]);
    const log = await t.call(`/api/v1/activity-logs?filter[subject_type]=snippet`, { token: admin });
    expect(log.body.data.map((e: any) => e.action)).toContain("snippet.create");
  });

  it("refuses a template it does not know, and an empty content", async () => {
    const empty = await t.call("/api/v1/snippets", {
      method: "POST",
      token: admin,
      body: { name: "empty", content: " \n " },
    });
    expect(empty.status).toBe(422);
    expect(Object.keys(empty.body.errors)).toEqual(["content"]);
    const unknown = await t.call("/api/v1/snippets", {
      method: "POST",
      token: admin,
      body: { name: "bad refs", content: "x", template_ids: [99999] },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors["template_ids.0"][0]).toContain("99999 is not an existing connection template");
  });
});

describe("dry run and variables", () => {
  it("renders each target's exact lines from dynamic_vars, device fields and custom attributes without queueing anything", async () => {
    const a = await device({ custom: { site: "ams" } });
    const id = await snippet({ content: "hostname {device_name}\nsnmp-server location {site}\nntp server {ntp}" });
    const res = await t.call(`/api/v1/snippets/${id}/send`, {
      method: "POST",
      token: admin,
      body: { device_id: a, dynamic_vars: { ntp: "10.0.0.5" }, dry_run: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.devices).toEqual([
      {
        device_id: a,
        device_name: `snip-dev-${names}`,
        lines: [`hostname snip-dev-${names}`, "snmp-server location ams", "ntp server 10.0.0.5"],
        rollback_lines: [],
      },
    ]);
    expect(await claimNextJob(t.db, "test-collector", clock.now(), 60_000)).toBeUndefined();
  });

  it("answers 422 naming the missing variable and the device that lacks it", async () => {
    const withSite = await device({ custom: { site: "ams" } });
    const without = await device();
    const id = await snippet({ content: "snmp-server location {site}" });
    const res = await deploy(id, { devices: [withSite, without], dry_run: true });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain("{site}");
    expect(res.body.message).toContain(`device ${without}`);
    expect(res.body.message).not.toContain(`device ${withSite}`);
    // The same refusal for a real deploy: nothing is recorded.
    expect((await deploy(id, { devices: [withSite, without] })).status).toBe(422);
    expect(await claimNextJob(t.db, "test-collector", clock.now(), 60_000)).toBeUndefined();
  });
});

describe("send", () => {
  it("queues a push job for the device, and the deployment records its result and transcript", async () => {
    const d = await device();
    const id = await snippet();
    const before = await queuedJobs();
    const woken = wakes.length;
    const res = await t.call(`/api/v1/snippets/${id}/send`, {
      method: "POST",
      token: admin,
      body: { device_id: d, dynamic_vars: { ntp: "10.1.1.1" } },
    });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ type: "snippet_push", device_id: d, state: "queued" });
    // The collector beside the API is woken once the push is committed, as for a deploy.
    expect(wakes).toHaveLength(woken + 1);
    expect(await wakes.at(-1)).toBe(before + 1);
    const deploymentId = res.body.data.deployment_id;
    expect((await deploymentDevices(deploymentId))[0]).toMatchObject({
      device_id: d,
      status: "queued",
      lines: ["ntp server 10.1.1.1"],
    });
    await runPushes(() => "success");
    const deployment = await t.call(`/api/v1/snippet-deployments/${deploymentId}`, { token: admin });
    expect(deployment.body.data).toMatchObject({ state: "finished", kind: "send", device_counts: { success: 1 } });
    expect((await deploymentDevices(deploymentId))[0]).toMatchObject({
      status: "success",
      transcript: "R1(config)# x",
    });
    const job = await t.call(`/api/v1/jobs/${res.body.data.id}`, { token: admin });
    expect(job.body.data).toMatchObject({ state: "finished", outcome: "success" });
  });

  it("is never sent twice: a push claimed again after its collector died ends with an error instead of connecting", async () => {
    const d = await device();
    const id = await snippet();
    const res = await t.call(`/api/v1/snippets/${id}/send`, {
      method: "POST",
      token: admin,
      body: { device_id: d, dynamic_vars: { ntp: "x" } },
    });
    const first = await claimNextJob(t.db, "collector-a", clock.now(), 60_000);
    expect(first?.id).toBe(res.body.data.id);
    // collector-a dies mid-push: its lease runs out and the job goes back to the queue.
    clock.advance(120_000);
    expect(await requeueExpiredLeases(t.db, clock.now())).toBe(1);
    const again = await claimNextJob(t.db, "collector-b", clock.now(), 60_000);
    expect(again?.attempts).toBe(2);
    await runSnippetJob(
      { db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "collector-b", connectTimeoutMs: 500 },
      again!,
      60_000,
      new AbortController().signal,
    );
    expect(await getJob(t.db, again!.id)).toMatchObject({ state: "finished", outcome: "error" });
    const [pushed] = await deploymentDevices(res.body.data.deployment_id);
    expect(pushed).toMatchObject({ status: "error" });
    expect(pushed!.message).toContain("not sent again");
  });

  it("answers 409 for a disabled device and 404 for an unknown one", async () => {
    const id = await snippet();
    const off = await device({ enabled: false });
    expect(
      (
        await t.call(`/api/v1/snippets/${id}/send`, {
          method: "POST",
          token: admin,
          body: { device_id: off, dynamic_vars: { ntp: "x" } },
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await t.call(`/api/v1/snippets/${id}/send`, {
          method: "POST",
          token: admin,
          body: { device_id: 999999, dynamic_vars: { ntp: "x" } },
        })
      ).status,
    ).toBe(404);
  });
});

describe("guard rails", () => {
  it("a deploy to more than 25 devices must state the count it expects; exactly 25 need not", async () => {
    const tag = `fleet-${Date.now()}`;
    for (let i = 0; i < 25; i++) await device({ tags: [tag] });
    const tagId = (await t.call(`/api/v1/tags?filter[name]=${tag}`, { token: admin })).body.data[0].id;
    const id = await snippet();
    // The boundary: 25 devices, the threshold itself, deploy without a count.
    const atThreshold = await deploy(id, { tags: [tagId], dynamic_vars: { ntp: "x" }, concurrency: 100 });
    expect(atThreshold.status, JSON.stringify(atThreshold.body)).toBe(202);
    expect(atThreshold.body.data.device_counts).toMatchObject({ queued: 25, pending: 0 });
    await runPushes(() => "success");
    // One more is past it.
    await device({ tags: [tag] });
    const unconfirmed = await deploy(id, { tags: [tagId], dynamic_vars: { ntp: "x" } });
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.body.errors.confirm_device_count[0]).toContain("26 devices");
    const wrong = await deploy(id, { tags: [tagId], dynamic_vars: { ntp: "x" }, confirm_device_count: 25 });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors.confirm_device_count[0]).toContain("is 25 but the deploy reaches 26");
    const ok = await deploy(id, {
      tags: [tagId],
      dynamic_vars: { ntp: "x" },
      confirm_device_count: 26,
      concurrency: 100,
    });
    expect(ok.status).toBe(202);
    expect(ok.body.data.device_counts).toMatchObject({ queued: 26, pending: 0 });
    await runPushes(() => "success");
  });

  it("a deploy wakes the collector beside the API once its first pushes are committed, so they start without waiting for its poll", async () => {
    const ds = [await device(), await device(), await device()];
    const id = await snippet();
    const before = await queuedJobs();
    const woken = wakes.length;
    const res = await deploy(id, { devices: ds, concurrency: 2, dynamic_vars: { ntp: "x" } });
    expect(res.status).toBe(202);
    expect(wakes).toHaveLength(woken + 1);
    expect(await wakes.at(-1)).toBe(before + 2);
    await runPushes(() => "success");
  });

  it("a canary goes first; the rest follow only when it succeeded", async () => {
    const ds = [await device(), await device(), await device()];
    const id = await snippet();
    const res = await deploy(id, { devices: ds, canary: 1, dynamic_vars: { ntp: "x" } });
    expect(res.status).toBe(202);
    expect(res.body.data.device_counts).toMatchObject({ queued: 1, pending: 2 });
    const pushed = await runPushes(() => "success");
    expect(pushed).toHaveLength(3);
    const canaryFirst = pushed[0]!.deviceId;
    expect((await deploymentDevices(res.body.data.id))[0]!.device_id).toBe(canaryFirst);
    expect((await t.call(`/api/v1/snippet-deployments/${res.body.data.id}`, { token: admin })).body.data).toMatchObject(
      { state: "finished", device_counts: { success: 3 } },
    );
  });

  it("a failed canary stops the deployment: nothing else is pushed", async () => {
    const ds = [await device(), await device(), await device()];
    const id = await snippet();
    const res = await deploy(id, { devices: ds, canary: 1, dynamic_vars: { ntp: "x" } });
    const pushed = await runPushes(() => "failed");
    expect(pushed).toHaveLength(1);
    const after = (await t.call(`/api/v1/snippet-deployments/${res.body.data.id}`, { token: admin })).body.data;
    expect(after).toMatchObject({ state: "finished", device_counts: { failed: 1, skipped: 2 } });
    expect(after.stopped_reason).toContain("canary");
  });

  it("stop_on_failure pushes to no further device after a failure; without it the others still go", async () => {
    const ds = [await device(), await device(), await device()];
    const id = await snippet();
    const stopping = await deploy(id, {
      devices: ds,
      stop_on_failure: true,
      concurrency: 1,
      dynamic_vars: { ntp: "x" },
    });
    expect(await runPushes(() => "failed")).toHaveLength(1);
    expect(
      (await t.call(`/api/v1/snippet-deployments/${stopping.body.data.id}`, { token: admin })).body.data.device_counts,
    ).toMatchObject({ failed: 1, skipped: 2 });

    const going = await deploy(id, { devices: ds, concurrency: 1, dynamic_vars: { ntp: "x" } });
    expect(await runPushes(() => "failed")).toHaveLength(3);
    expect(
      (await t.call(`/api/v1/snippet-deployments/${going.body.data.id}`, { token: admin })).body.data.device_counts,
    ).toMatchObject({ failed: 3, skipped: 0 });
  });

  it("holds a deployment to its concurrency: no more pushes queued at once than it allows", async () => {
    const ds = [await device(), await device(), await device(), await device(), await device()];
    const id = await snippet();
    const res = await deploy(id, { devices: ds, concurrency: 2, dynamic_vars: { ntp: "x" } });
    expect(res.body.data.device_counts).toMatchObject({ queued: 2, pending: 3 });
    expect(await runPushes(() => "success")).toHaveLength(5);
  });

  it("a device deleted with its push still queued ends that push at the next scheduler pass, and the deployment finishes", async () => {
    const [kept, gone] = [await device(), await device()];
    const id = await snippet();
    const res = await deploy(id, { devices: [kept, gone], dynamic_vars: { ntp: "x" } });
    expect((await t.call(`/api/v1/devices/${gone}`, { method: "DELETE", token: admin })).status).toBe(200);
    await runPushes(() => "success");
    expect((await t.call(`/api/v1/snippet-deployments/${res.body.data.id}`, { token: admin })).body.data.state).toBe(
      "running",
    );
    await scheduleDueRuns({ db: t.db, clock, logger: silentLogger });
    const after = (await t.call(`/api/v1/snippet-deployments/${res.body.data.id}`, { token: admin })).body.data;
    expect(after).toMatchObject({ state: "finished", device_counts: { success: 1, error: 1 } });
  });

  it("a push job that ended without recording its push (the collector could not write it) is ended at the next scheduler pass", async () => {
    const d = await device();
    const id = await snippet();
    const res = await t.call(`/api/v1/snippets/${id}/send`, {
      method: "POST",
      token: admin,
      body: { device_id: d, dynamic_vars: { ntp: "x" } },
    });
    const job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000);
    // What the worker does when recording a job's end failed: the job ends alone, with the error.
    await finishJob(
      t.db,
      job!,
      "test-collector",
      { outcome: "error", message: "the job's end could not be recorded: disk full" },
      clock.now(),
    );
    await scheduleDueRuns({ db: t.db, clock, logger: silentLogger });
    const [pushed] = await deploymentDevices(res.body.data.deployment_id);
    expect(pushed).toMatchObject({
      status: "error",
      message: "the push's job ended without recording the push: the job's end could not be recorded: disk full",
    });
    expect(
      (await t.call(`/api/v1/snippet-deployments/${res.body.data.deployment_id}`, { token: admin })).body.data.state,
    ).toBe("finished");
  });

  it("a push and a download never run on one device at once", async () => {
    const d = await device();
    const id = await snippet();
    const download = await t.call(`/api/v1/download-now/${d}`, { token: admin });
    expect(download.status).toBe(200);
    const send = await t.call(`/api/v1/snippets/${id}/send`, {
      method: "POST",
      token: admin,
      body: { device_id: d, dynamic_vars: { ntp: "x" } },
    });
    expect(send.status).toBe(202);
    const first = await claimNextJob(t.db, "collector-a", clock.now(), 60_000);
    expect(first?.deviceId).toBe(d);
    // Another collector finds nothing it may start: the device's other job waits for the first to end.
    expect(await claimNextJob(t.db, "collector-b", clock.now(), 60_000)).toBeUndefined();
  });
});

describe("scope", () => {
  it("a scoped user cannot send to, deploy on or see pushes to devices outside the scope, and cannot tell them from devices that do not exist", async () => {
    await t.role({ name: "snippet-ams", tags: ["snip-ams"] });
    const scoped = await t.token(undefined, { role: "snippet-ams" });
    const mine = await device({ tags: ["snip-ams"] });
    const theirs = await device({ tags: ["snip-lon"] });
    const id = await snippet();
    const vars = { ntp: "10.0.0.1" };

    const sendTheirs = await t.call(`/api/v1/snippets/${id}/send`, {
      method: "POST",
      token: scoped,
      body: { device_id: theirs, dynamic_vars: vars, dry_run: true },
    });
    const sendNone = await t.call(`/api/v1/snippets/${id}/send`, {
      method: "POST",
      token: scoped,
      body: { device_id: 999999, dynamic_vars: vars, dry_run: true },
    });
    expect([sendTheirs.status, sendTheirs.body.message]).toEqual([404, `Device ${theirs} not found`]);
    expect([sendNone.status, sendNone.body.message]).toEqual([404, "Device 999999 not found"]);

    const deployTheirs = await deploy(id, { devices: [mine, theirs], dynamic_vars: vars }, scoped);
    expect(deployTheirs.status).toBe(422);
    expect(deployTheirs.body.errors).toEqual({ "devices.1": [`devices.1 ${theirs} is not an existing device`] });

    // A tag reaches only the devices the scope holds.
    const lonTag = (await t.call("/api/v1/tags?filter[name]=snip-lon", { token: admin })).body.data[0].id;
    const amsTag = (await t.call("/api/v1/tags?filter[name]=snip-ams", { token: admin })).body.data[0].id;
    const byTags = await deploy(id, { tags: [amsTag, lonTag], dynamic_vars: vars, dry_run: true }, scoped);
    expect(byTags.body.data.devices.map((d: any) => d.device_id)).toEqual([mine]);
    expect((await deploy(id, { tags: [lonTag], dynamic_vars: vars }, scoped)).status).toBe(422);
    expect(await claimNextJob(t.db, "test-collector", clock.now(), 60_000)).toBeUndefined();

    // Deployments by someone else: only the part in the scope shows; one wholly outside it does not exist.
    const both = (await deploy(id, { devices: [mine, theirs], dynamic_vars: vars })).body.data.id;
    const lonOnly = (await deploy(id, { devices: [theirs], dynamic_vars: vars })).body.data.id;
    expect((await deploymentDevices(both, scoped)).map((d) => d.device_id)).toEqual([mine]);
    expect(
      (await t.call(`/api/v1/snippet-deployments/${both}`, { token: scoped })).body.data.device_counts,
    ).toMatchObject({ queued: 1 });
    expect((await t.call(`/api/v1/snippet-deployments/${lonOnly}`, { token: scoped })).status).toBe(404);
    expect((await t.call(`/api/v1/snippet-deployments/${lonOnly}/devices`, { token: scoped })).status).toBe(404);
    const listed = (await t.call("/api/v1/snippet-deployments?per_page=500", { token: scoped })).body.data.map(
      (d: any) => d.id,
    );
    expect(listed).toContain(both);
    expect(listed).not.toContain(lonOnly);
    await runPushes(() => "success");
  });

  it("needs snippets.write to send or deploy and snippets.read to see deployments", async () => {
    const reader = await t.token(["snippets.read"]);
    const id = await snippet();
    const d = await device();
    expect(
      (
        await t.call(`/api/v1/snippets/${id}/send`, {
          method: "POST",
          token: reader,
          body: { device_id: d, dynamic_vars: { ntp: "x" } },
        })
      ).status,
    ).toBe(403);
    expect((await deploy(id, { devices: [d], dynamic_vars: { ntp: "x" } }, reader)).status).toBe(403);
    expect((await t.call("/api/v1/snippet-deployments", { token: reader })).status).toBe(200);
    expect((await t.call("/api/v1/snippet-deployments", { token: await t.token(["configs.read"]) })).status).toBe(403);
  });
});

describe("snippet tasks", () => {
  const createTask = (body: Record<string, unknown>, token = admin) =>
    t.call("/api/v1/tasks", {
      method: "POST",
      token,
      body: { task_name: `snippet task ${++snippetNames}`, task_cron: "0 3 * * *", task_type: "snippet", ...body },
    });

  it("a run is a deployment with its guard rails; the run stays open until its last push and reports each device", async () => {
    const ds = [await device(), await device(), await device()];
    const id = await snippet();
    const task = await createTask({
      devices: ds,
      snippet_id: id,
      snippet_options: { dynamic_vars: { ntp: "10.0.0.9" }, canary: 1 },
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    expect(task.body.data).toMatchObject({ task_type: "snippet", snippet_id: id, snippet_options: { canary: 1 } });
    const run = await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token: admin });
    expect(run.status).toBe(202);
    const deployment = (
      await t.call(`/api/v1/snippet-deployments?filter[task_run_id]=${run.body.data.id}`, { token: admin })
    ).body.data[0];
    expect(deployment).toMatchObject({ kind: "task", device_counts: { queued: 1, pending: 2 } });

    // The canary's push ends; the others are queued in the same step, so the run is still running.
    const canary = await claimNextJob(t.db, "test-collector", clock.now(), 60_000);
    await completePushJob(
      t.db,
      canary!,
      "test-collector",
      { status: "success", outcome: "success", message: "pushed", result: {}, transcript: "" },
      clock.now(),
      finishJob,
    );
    expect((await t.call(`/api/v1/task-runs/${run.body.data.id}`, { token: admin })).body.data.status).toBe("running");
    await runPushes(() => "success");
    const done = await t.call(`/api/v1/task-runs/${run.body.data.id}`, { token: admin });
    expect(done.body.data).toMatchObject({ status: "succeeded", counts: { total: 3, succeeded: 3 } });
    const lines = (await deploymentDevices(deployment.id)).map((d: any) => d.lines);
    expect(lines).toEqual([["ntp server 10.0.0.9"], ["ntp server 10.0.0.9"], ["ntp server 10.0.0.9"]]);
  });

  it("a run that cannot render pushes nothing and says why on every device", async () => {
    const d = await device();
    const task = await createTask({ devices: [d], snippet_id: await snippet() });
    const run = await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token: admin });
    const items = (await t.call(`/api/v1/task-runs/${run.body.data.id}/devices`, { token: admin })).body.data;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ status: "skipped", job_id: null });
    expect(items[0].error).toContain("{ntp}");
  });

  it("needs snippets.write besides tasks.write, and a snippet that exists", async () => {
    const d = await device();
    const id = await snippet();
    const tasksOnly = await t.token(["tasks.read", "tasks.write", "devices.read"]);
    expect((await createTask({ devices: [d], snippet_id: id }, tasksOnly)).status).toBe(403);
    const missing = await createTask({ devices: [d], snippet_id: 999999 });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.snippet_id[0]).toContain("999999 is not an existing snippet");
  });
});
