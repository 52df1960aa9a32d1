import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDetectJob } from "../../collector/detect-job.ts";
import { runDownloadJob } from "../../collector/download.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { jobs } from "../../src/db/schema/index.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { claimNextJob } from "../../src/platform/jobs/queue.ts";
import { addLoopbackDevice, builtinTemplateId, IOS_CONFIG_COMMAND, iosScript } from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice, type ScriptAnswer } from "../helpers/fake-device.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * The device page after a connection test: what the detection recognised and **Apply this proposal** (the API's
 * detect with apply), and the last failed download's transcript, masked as GET /devices/{id}/last-failure gives
 * it. Both devices are SSH servers on loopback answering as IOS; the jobs run as a collector runs them.
 */
const unavailable = chromiumMissing("test/web/device-detect.test.ts");
const HOSTILE = "<script>alert(1)</script>";
const USERNAME = "netops";
const PASSWORD = "Detect-Web-Pass-4410";
const ENABLE = "Detect-Web-Enable-7781";
const SHOW_VERSION = [
  "Cisco IOS XE Software, Version 17.09.04a",
  "cisco C9300-48P (X86) processor with 1392369K/6147K bytes of memory.",
];

describe.skipIf(unavailable)("detect proposals and failure transcripts on the device page", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  let detected: number;
  let failing: number;
  let outside: number;
  let detectJob: number;
  const fakes: FakeDevice[] = [];
  const api = async (path: string) => (await t.call(`/api/v1${path}`, { token })).body.data;
  const detectJobs = (device: number) =>
    t.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.deviceId, device), eq(jobs.type, "detect")));
  const deps = () => ({
    db: t.db,
    secrets: t.secrets,
    clock: { now: () => new Date() },
    logger: silentLogger,
    owner: "test-collector",
    limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 5_000, optionalIdleTimeoutMs: 1_000 },
    connectTimeoutMs: 5_000,
  });
  /** What a collector does with the one queued job. */
  async function runQueued(type: "detect" | "download") {
    const job = await claimNextJob(t.db, "test-collector", new Date(), 60_000);
    expect(job?.type).toBe(type);
    if (type === "detect") await runDetectJob(deps(), job!, new AbortController().signal);
    else await runDownloadJob(deps(), job!, new AbortController().signal);
    return job!.id;
  }
  /** A POST from the page's own origin, as a forged form would send it (no CSRF token unless given). */
  const post = (path: string, body = "") =>
    b.page.evaluate(
      async ({ path, body }) =>
        (
          await fetch(path, {
            method: "POST",
            body,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      { path, body },
    );

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    const { prompt, script } = iosScript("branch-9", ["hostname branch-9", "end"]);
    const answering = async (answer: (line: string) => ScriptAnswer) => {
      const device = await startFakeDevice({
        initPrompt: "\r\nbranch-9>",
        configCommand: IOS_CONFIG_COMMAND,
        auth: { username: USERNAME, password: PASSWORD },
        script: (line) => {
          if (line === "enable") return "enable\r\nPassword: ";
          // The device echoes the enable password as it is typed: the transcript must mask it.
          if (line === ENABLE) return `${ENABLE}\r\n${prompt}`;
          return answer(line);
        },
      });
      fakes.push(device);
      return device.port;
    };
    const detectPort = await answering((line) =>
      line === "show version" ? [line, ...SHOW_VERSION, prompt].join("\r\n") : script(line),
    );
    // Refuses the configuration with a hostile line: the download fails, its transcript keeps what was said.
    const failPort = await answering((line) =>
      line === IOS_CONFIG_COMMAND ? [line, `% Not authorized ${HOSTILE}`, prompt].join("\r\n") : script(line),
    );
    const login = { username: USERNAME, password: PASSWORD, device_enable_password: ENABLE };
    // No template, and a vendor with several: nothing is chosen for it until the detection proposes one.
    detected = await addLoopbackDevice(t, token, {
      ...login,
      name: "edge-detect",
      port: detectPort,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      device_template_id: null,
      device_vendor: "Dell",
      device_tags: ["edge"],
    });
    failing = await addLoopbackDevice(t, token, {
      ...login,
      name: "edge-fails",
      port: failPort,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      device_tags: ["edge"],
    });
    outside = await addLoopbackDevice(t, token, {
      ...login,
      name: "core-outside",
      port: detectPort,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      device_tags: ["core"],
    });
    b = await startBrowserWithCast(t, ["devices.read", "devices.write", "configs.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await Promise.all(fakes.map((d) => d.close()));
    await t?.close();
  });

  it("shows what a connection test recognised, and applies it from the page", async () => {
    const { page, base } = b;
    expect((await api(`/devices/${detected}`)).device_template_id).toBeNull();
    await page.goto(`${base}/devices/${detected}`);
    await page.click("button:text('Test connection')");
    await page.waitForURL(/\?job=\d+/);
    // Queued: nothing recognised yet, so nothing to apply.
    expect(await page.locator("#detect-proposal").count()).toBe(0);
    detectJob = await runQueued("detect");
    await page.goto(`${base}/devices/${detected}?job=${detectJob}`);
    expect(await page.textContent("#download-progress")).toContain(
      "finished: success (proposes cisco-ios (Cisco), model C9300-48P, OS 17.09.04a)",
    );
    const proposal = (await page.textContent("#detect-proposal"))!.replace(/\s+/g, " ");
    expect(proposal).toContain("Templatecisco-ios");
    expect(proposal).toContain("VendorCisco");
    expect(proposal).toContain("ModelC9300-48P");
    expect(proposal).toContain("OS version17.09.04a");
    // Proposed only: the device is as it was.
    expect((await api(`/devices/${detected}`)).device_template_id).toBeNull();
    await b.shoot("device-detect-proposal");

    await page.click("button:text('Apply this proposal')");
    await page.waitForURL((url) => /job=\d+/.test(url.search) && !url.search.includes(`job=${detectJob}`));
    const queued = await detectJobs(detected);
    expect(queued.map((j) => j.params?.apply === true)).toEqual([false, true]);
    const applyJob = await runQueued("detect");
    await page.goto(`${base}/devices/${detected}?job=${applyJob}`);
    expect(await page.textContent("#download-progress")).toContain("finished: success (set cisco-ios (Cisco)");
    expect(await page.textContent("#detect-proposal")).toContain("Applied: the device now has this template");
    expect(await page.locator("button:text('Apply this proposal')").count()).toBe(0);
    expect(await api(`/devices/${detected}`)).toMatchObject({
      device_template_id: await builtinTemplateId(t, "cisco-ios"),
      device_vendor: "Cisco",
      device_model: "C9300-48P",
    });
  });

  it("refuses an apply posted without the session's CSRF token, and queues nothing", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices/${detected}`);
    const before = (await detectJobs(detected)).length;
    expect(await post(`/devices/${detected}/detect-apply`)).toBe(403);
    expect(await post(`/devices/${detected}/detect-apply`, "_csrf=forged")).toBe(403);
    expect(await detectJobs(detected)).toHaveLength(before);
  });

  it("shows the last failed download's transcript, masked and as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices/${failing}`);
    expect(await page.textContent("#last-failure")).toContain("No download of this device has failed.");
    await page.click("button:text('Download now')");
    await page.waitForURL(/\?job=\d+/);
    await runQueued("download");
    await page.goto(`${base}/devices/${failing}`);
    expect(await page.textContent("#last-failure")).toContain("output_invalid");
    await page.click("#failure-transcript summary");
    const transcript = (await page.textContent("#failure-transcript pre"))!;
    // The same text the API keeps (GET /devices/{id}/last-failure), secrets masked there already.
    expect(transcript).toBe((await api(`/devices/${failing}/last-failure`)).transcript);
    expect(transcript).toContain(`[sent] ${IOS_CONFIG_COMMAND}`);
    expect(transcript).toContain("[sent] <secret hidden>");
    expect(transcript).toContain(`% Not authorized ${HOSTILE}`);
    expect(transcript).not.toContain(ENABLE);
    expect(await page.content()).not.toContain(ENABLE);
    // The hostile line is text, not an element.
    expect(await page.locator("#failure-transcript script").count()).toBe(0);
    await b.shoot("device-failure-transcript");
  });

  it("shows a read-only role the proposal and the transcript, without Apply or Test connection", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/devices/${detected}?job=${detectJob}`);
    expect(await page.textContent("#detect-proposal")).toContain("cisco-ios");
    for (const label of ["Apply this proposal", "Test connection"])
      expect(await page.locator(`button:text('${label}')`).count()).toBe(0);
    await page.goto(`${base}/devices/${failing}`);
    expect(await page.locator("#failure-transcript").count()).toBe(1);
    // Without configs.read (as GET /devices/{id}/last-failure needs), the reason but not the transcript.
    await t.role({ name: "device-lookers", permissions: ["devices.read"] });
    await t.user({ username: "looker", role: "device-lookers" });
    await b.loginAs("looker");
    await page.goto(`${base}/devices/${failing}`);
    expect(await page.textContent("#last-failure")).toContain("output_invalid");
    expect(await page.locator("#failure-transcript").count()).toBe(0);
    await b.loginAs("admin1");
  });

  it("lets a scoped role apply on its devices only; another device is unknown to it", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/devices/${detected}?job=${detectJob}`);
    expect(await page.locator("button:text('Apply this proposal')").count()).toBe(1);
    const csrf = await b.csrf();
    const before = (await detectJobs(outside)).length;
    expect(await post(`/devices/${outside}/detect-apply`, `_csrf=${csrf}`)).toBe(404);
    expect(await detectJobs(outside)).toHaveLength(before);
    const res = await page.goto(`${base}/devices/${outside}`);
    expect(res?.status()).toBe(404);
    expect(await page.content()).not.toContain("core-outside");
    await b.loginAs("admin1");
  });
});
