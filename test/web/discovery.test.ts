import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDiscoverJob } from "../../collector/discover-job.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import {
  credentials,
  devices,
  discoveryCandidates,
  jobs,
  scanPresets,
  tasks,
  templates,
} from "../../src/db/schema/index.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { claimNextJob, getJob } from "../../src/platform/jobs/queue.ts";
import { getCollectorSettings } from "../../src/platform/settings/service.ts";
import { startFakeDevice, type FakeDevice } from "../helpers/fake-device.ts";
import { parseSimulation } from "../helpers/simulation.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * The Discovery page: a scan of a fake device on loopback started from the form, run by the collector's discover
 * job, then adopted from the candidates list; the API's 422s next to their fields; presets; and the roles that
 * may not use it (a scoped one, one without devices.read) never see it.
 */
const unavailable = chromiumMissing("test/web/discovery.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
const LOGIN = { username: "netkeep", password: "replay-pass", enable: "enable-pass" };
const SESSION = "dell-os6/n2048-6.6.yaml";

describe.skipIf(unavailable)("discovery page in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  let device: FakeDevice;
  let setId: number;

  const discoverJobs = async () => (await t.db.select().from(jobs).where(eq(jobs.type, "discover"))).length;
  /** Claims the next queued job and runs it as a collector's discover job does. */
  async function runDiscovery() {
    // Backups queued by adoptions wait: only the scan is run here.
    let job = await claimNextJob(t.db, "test-collector", new Date(), 120_000);
    while (job && job.type !== "discover") job = await claimNextJob(t.db, "test-collector", new Date(), 120_000);
    expect(job?.type).toBe("discover");
    await runDiscoverJob(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "test-collector",
        limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 5_000, optionalIdleTimeoutMs: 1_000 },
        connectTimeoutMs: 3_000,
        settings: () => getCollectorSettings(t.db),
      },
      job!,
      new AbortController().signal,
    );
    return (await getJob(t.db, job!.id))!;
  }

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    const sessions = join(import.meta.dirname, "..", "fixtures", "sessions");
    device = await startFakeDevice({
      simulation: parseSimulation(readFileSync(join(sessions, SESSION), "utf8"), SESSION),
      auth: LOGIN,
      host: "127.0.0.1",
    });
    const set = await t.call("/api/v1/device-credentials", {
      method: "POST",
      token,
      body: {
        cred_name: "switches",
        cred_username: LOGIN.username,
        cred_password: LOGIN.password,
        cred_enable_password: LOGIN.enable,
        cred_discovery: true,
      },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(201);
    setId = set.body.data.id;
    await t.role({ name: "auditor", permissions: ["configs.read", "system.read"] });
    await t.user({ username: "auditor1", role: "auditor" });
    b = await startBrowserWithCast(t, ["devices.read", "devices.write", "tasks.read", "tasks.write"]);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await device?.close();
    await t?.close();
  });

  it("marks a credential set for discovery from the credentials form", async () => {
    const { page, base } = b;
    await page.goto(`${base}/credentials/new`);
    await page.fill("#c-cred_name", "branch-switches");
    await page.fill("#c-cred_username", "backup");
    await page.check("#c-cred_discovery");
    await page.click("button:text('Add credential set')");
    await page.waitForURL(/done=created/);
    const row = page.locator("#credential-list tr", { hasText: "branch-switches" });
    expect(await row.textContent()).toContain("tried by discovery");
    const [made] = await t.db.select().from(credentials).where(eq(credentials.name, "branch-switches"));
    expect(made!.discovery).toBe(true);
    await page.goto(`${base}/credentials/${made!.id}/edit`);
    expect(await page.isChecked("#c-cred_discovery")).toBe(true);
    await page.uncheck("#c-cred_discovery");
    await page.click("text=Save changes");
    await page.waitForURL(/done=saved/);
    expect((await t.db.select().from(credentials).where(eq(credentials.id, made!.id)))[0]!.discovery).toBe(false);
  });

  it("discovers a device from the form, lists what it found, and adopts it", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices`);
    await page.click(".topnav summary >> text=Fleet");
    await page.click("nav.topnav a:text('Discovery')");
    await page.waitForURL(`${base}/discovery`);
    await page.fill("#d-addresses", "127.0.0.1");
    await page.fill("#d-ports", String(device.port));
    await page.click("button:text('Discover')");
    await page.waitForURL(/\/discovery\?job=\d+/);
    expect(await page.textContent("#scan-progress")).toContain("queued");
    const job = await runDiscovery();
    expect(job.outcome, job.message ?? "").toBe("success");
    await page.reload();
    expect(await page.textContent("#scan-progress")).toContain("finished: success");
    const row = page.locator("#candidate-list tbody tr", { hasText: "127.0.0.1" });
    const cells = await row.locator("td").allTextContents();
    expect(cells.slice(0, 3)).toEqual(["127.0.0.1", `${device.port} (ssh)`, "switches"]);
    expect(cells[3]).toMatch(/dell/i);
    expect(cells[8]).toBe("idf2-n2048p-stack-ground-floor");
    expect(cells[9]).toContain("pending");
    await b.shoot("discovery");
    await row.locator("button:text('Adopt')").click();
    await page.waitForURL(/done=adopted/);
    expect(await row.textContent()).toContain("adopted");
    await row.locator("a:text('device')").click();
    await page.waitForURL(/\/devices\/\d+$/);
    const id = Number(new URL(page.url()).pathname.split("/").pop());
    expect((await t.call(`/api/v1/devices/${id}`, { token })).body.data).toMatchObject({
      device_name: "idf2-n2048p-stack-ground-floor",
      device_ip: "127.0.0.1",
      device_port_override: device.port,
      device_cred_id: setId,
      device_template_id: (
        await t.db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, "dell-os6"))
      )[0]!.id,
    });
  }, 60_000);

  it("shows the API's reasons next to the field and keeps what was typed", async () => {
    const { page, base } = b;
    const before = await discoverJobs();
    await page.goto(`${base}/discovery`);
    await page.fill("#d-addresses", "192.0.2.1\n10.0.0.0/8");
    await page.fill("#d-ports", "22, 70000");
    await page.click("button:text('Discover')");
    // The body's schema first (as the API checks it), then the targets.
    expect(await page.textContent("#d-ports-error")).toContain("must be a port number");
    expect(await page.inputValue("#d-addresses")).toBe("192.0.2.1\n10.0.0.0/8");
    await page.fill("#d-ports", "22");
    await page.click("button:text('Discover')");
    expect(await page.textContent("#d-addresses-error")).toBe(
      "10.0.0.0/8 is a /8: a subnet may be at most a /20 (4096 addresses); split it",
    );
    expect(await page.locator("#d-ports-error").count()).toBe(0);
    expect(await discoverJobs()).toBe(before);
    await b.shoot("discovery-invalid");
  });

  it("refuses a forged form, shows a hostile host name as text, and ignores a candidate", async () => {
    const { page, base } = b;
    await page.goto(`${base}/discovery`);
    const before = await discoverJobs();
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/discovery", {
            method: "POST",
            body: "_csrf=nope&addresses=192.0.2.1&ports=22",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect(await discoverJobs()).toBe(before);
    // What a device says about itself is shown as text.
    const now = new Date();
    await t.db.insert(discoveryCandidates).values({
      address: "192.0.2.66",
      port: 22,
      protocol: "ssh",
      hostname: HOSTILE,
      model: HOSTILE,
      problem: "no credential set logged in to 192.0.2.66",
      foundAt: now,
      createdAt: now,
      updatedAt: now,
    });
    await page.goto(`${base}/discovery`);
    const row = page.locator("#candidate-list tbody tr", { hasText: "192.0.2.66" });
    expect(await row.locator("td.hostname").textContent()).toBe(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
    // It cannot be adopted (no set logged in), only ignored; "Adopt all" leaves it.
    expect(await row.locator("button:text('Adopt')").count()).toBe(0);
    await row.locator("button:text('Ignore')").click();
    await page.waitForURL(/done=ignored/);
    const [stored] = await t.db.select().from(discoveryCandidates).where(eq(discoveryCandidates.address, "192.0.2.66"));
    expect(stored!.state).toBe("ignored");
  });

  it("adopts every candidate that can be with Adopt all, leaving the ignored one", async () => {
    const { page, base } = b;
    const now = new Date();
    const [dell] = await t.db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, "dell-os6"));
    await t.db.insert(discoveryCandidates).values({
      address: "192.0.2.67",
      port: 22,
      protocol: "ssh",
      credId: setId,
      templateId: dell!.id,
      vendor: "Dell",
      hostname: "access-67",
      foundAt: now,
      createdAt: now,
      updatedAt: now,
    });
    await page.goto(`${base}/discovery`);
    await page.click("button:text('Adopt all')");
    await page.waitForURL(/done=adopted-all/);
    const row = page.locator("#candidate-list tbody tr", { hasText: "192.0.2.67" });
    expect(await row.textContent()).toContain("adopted");
    const [made] = await t.db.select().from(devices).where(eq(devices.ip, "192.0.2.67"));
    expect(made).toMatchObject({ name: "access-67", credId: setId, templateId: dell!.id, discoverCredentials: true });
    const [ignored] = await t.db
      .select()
      .from(discoveryCandidates)
      .where(eq(discoveryCandidates.address, "192.0.2.66"));
    expect(ignored).toMatchObject({ state: "ignored", deviceId: null });
    // Nothing left to adopt: the button is gone.
    expect(await page.locator("button:text('Adopt all')").count()).toBe(0);
  });

  it("adds a scan preset, runs it, schedules it as a task and deletes it", async () => {
    const { page, base } = b;
    await page.goto(`${base}/discovery`);
    await page.fill("#p-name", "lab");
    await page.fill("#p-targets", "192.0.2.0-192.0.2.255\n198.51.100.0/16");
    await page.click("button:text('Add scan preset')");
    expect(await page.textContent("#p-targets-error")).toContain("198.51.100.0/16 is a /16");
    expect(await page.inputValue("#p-name")).toBe("lab");
    await page.fill("#p-targets", "127.0.0.250-127.0.0.251");
    await page.fill("#p-ports", String(device.port));
    await page.selectOption("#p-credential_ids", { label: "switches" });
    await page.click("button:text('Add scan preset')");
    await page.waitForURL(/done=preset-created/);
    const [preset] = await t.db.select().from(scanPresets).where(eq(scanPresets.name, "lab"));
    expect(preset).toMatchObject({ targets: ["127.0.0.250-127.0.0.251"], ports: [device.port], credIds: [setId] });
    const row = page.locator("#preset-list tbody tr", { hasText: "lab" });
    await b.shoot("discovery-presets");
    await row.locator("button:text('Run now')").click();
    await page.waitForURL(/\/discovery\?job=\d+/);
    const job = await runDiscovery();
    expect(job.params).toMatchObject({ preset_id: preset!.id });
    expect(job.result).toMatchObject({ scanned: 2, answered: 0 });

    await page.goto(`${base}/discovery`);
    await row.locator("a:text('Schedule')").click();
    await page.waitForURL(/\/tasks\/new\?/);
    expect(await page.inputValue("#t-task_type")).toBe("discovery_scan");
    expect(await page.inputValue("#t-scan_preset_id")).toBe(String(preset!.id));
    await page.fill("#t-task_name", "nightly lab scan");
    await page.click("button:text('Save task')");
    await page.waitForURL(/\/tasks\/\d+\?done=created/);
    const [task] = await t.db.select().from(tasks).where(eq(tasks.name, "nightly lab scan"));
    expect(task).toMatchObject({ type: "discovery_scan", scanPresetId: preset!.id });

    await page.goto(`${base}/discovery`);
    // Refused while a task runs it (as the API refuses it), saying which; then deleted with the task gone.
    const refused = await t.call(`/api/v1/discovery/presets/${preset!.id}`, { method: "DELETE", token });
    expect(refused.status).toBe(409);
    await row.locator("button:text('Delete')").click();
    expect(await page.textContent("main")).toContain(`run by the tasks nightly lab scan (id ${task!.id})`);
    expect((await t.call(`/api/v1/tasks/${task!.id}`, { method: "DELETE", token })).status).toBe(200);
    await page.goto(`${base}/discovery`);
    await row.locator("button:text('Delete')").click();
    await page.waitForURL(/done=preset-deleted/);
    expect(await t.db.select().from(scanPresets).where(eq(scanPresets.id, preset!.id))).toEqual([]);
  }, 60_000);

  it("is absent for a scoped role and for one that cannot read devices; a viewer only reads", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/devices`);
    expect(await page.locator("nav.topnav a[href='/devices']").count()).toBe(1);
    expect(await page.locator("nav.topnav a:text('Discovery')").count()).toBe(0);
    const scoped = (await page.goto(`${base}/discovery`))!;
    expect(scoped.status()).toBe(403);
    expect(await page.textContent("main")).toContain("sees every device");

    await b.loginAs("auditor1");
    await page.goto(`${base}/changes`);
    expect(await page.locator("nav.topnav a[href='/changes']").count()).toBe(1);
    expect(await page.locator("nav.topnav a:text('Discovery')").count()).toBe(0);
    expect((await page.goto(`${base}/discovery`))!.status()).toBe(403);

    // A viewer sees what the API lists to it, and nothing that changes it.
    await b.loginAs("viewer1");
    await page.goto(`${base}/discovery`);
    expect(await page.textContent("#candidate-list")).toContain("127.0.0.1");
    expect(await page.locator("main form").count()).toBe(0);
    const [candidate] = await t.db
      .select()
      .from(discoveryCandidates)
      .where(eq(discoveryCandidates.address, "192.0.2.66"));
    const csrf = await page.getAttribute("input[name=_csrf]", "value").catch(() => null);
    const status = await page.evaluate(
      async ([id, token]) =>
        (
          await fetch(`/discovery/candidates/${id}/adopt`, {
            method: "POST",
            body: `_csrf=${token ?? ""}`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      [candidate!.id, csrf] as const,
    );
    expect(status).toBe(403);
    expect((await t.db.select().from(devices).where(eq(devices.ip, "192.0.2.66"))).length).toBe(0);
    await b.loginAs("admin1");
  });
});
