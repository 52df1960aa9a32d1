import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runComplianceJob } from "../../collector/compliance-job.ts";
import { claimNextJob } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { createDevice, storeVersion } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Editing a policy assignment in place, and a remediation snippet made from a compliance result. */
const unavailable = chromiumMissing("test/web/compliance-ops.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
const DEFINITION = [
  "// Description: NTP keeps logs on time",
  "#[must_match_single_string]",
  "ntp server 192.0.2.123",
].join("\n");

describe.skipIf(unavailable)("compliance assignments and remediation in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  let policy: number;
  let core: number;
  let edge: number;
  let coreOnly: number;
  let everyDevice: number;
  const api = (path: string, method = "GET", body?: unknown) => t.call(`/api/v1${path}`, { method, token, body });
  const assignment = async (id: number) => (await api(`/policy-assignments/${id}`)).body.data;
  const resultOf = async (device: number) =>
    (await api(`/policy-compliance?filter[device_id]=${device}&filter[latest]=true`)).body.data[0];
  const post = (path: string, body: string) =>
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
    b = await startBrowserWithCast(t, [
      "policycompliance.read",
      "policycompliance.write",
      "snippets.read",
      "snippets.write",
      "devices.read",
    ]);
    const at = new Date(t.clock.now().getTime() - 3_600_000);
    core = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
    edge = await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] });
    await storeVersion(t, { deviceId: core, at, text: "hostname core-1\nend\n" });
    await storeVersion(t, { deviceId: edge, at, text: "hostname edge-1\nend\n" });
    policy = (await api("/policies", "POST", { name: HOSTILE, definition: DEFINITION })).body.data.id;
    const coreTag = (await api("/tags?filter[name]=core")).body.data[0].id;
    coreOnly = (await api("/policy-assignments", "POST", { policy_id: policy, scope: "tags", tags: [coreTag] })).body
      .data.id;
    everyDevice = (await api("/policy-assignments", "POST", { policy_id: policy, scope: "all" })).body.data.id;
    await api(`/policy-assignments/${everyDevice}/run`, "POST");
    for (let job; (job = await claimNextJob(t.db, "test-collector", t.clock.now(), 60_000)); ) {
      await runComplianceJob(
        { db: t.db, secrets: t.secrets, clock: t.clock, logger: silentLogger, owner: "test-collector" },
        job,
      );
    }
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("edits an assignment in place: other devices, disabled, then enabled again from the list", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compliance`);
    await page.locator(`#assignment-list tr[data-id="${coreOnly}"]`).locator("a:text('Edit')").click();
    // A hostile policy name is text in the heading.
    expect(await page.textContent("h1")).toBe(`Edit the assignment of ${HOSTILE}`);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.inputValue("#a-scope")).toBe("tags");
    await page.selectOption("#a-scope", "devices");
    await page.fill("#a-devices", String(edge));
    await page.uncheck("input[name=enabled]");
    await b.shoot("compliance-assignment-edit");
    await page.click("button:text('Save changes')");
    await page.waitForURL(/done=assignment-saved/);
    expect(await assignment(coreOnly)).toMatchObject({ scope: "devices", devices: [edge], tags: [], enabled: false });
    const row = page.locator(`#assignment-list tr[data-id="${coreOnly}"]`);
    expect(await row.textContent()).toContain("disabled");
    await row.locator("button:text('Enable')").click();
    await page.waitForURL(/done=assignment-enabled/);
    expect((await assignment(coreOnly)).enabled).toBe(true);
    await b.shoot("compliance-assignments");
  });

  it("shows the API's problem next to the field and keeps what was typed", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compliance/assignments/${coreOnly}/edit`);
    await page.fill("#a-devices", "");
    await page.fill("#a-description", "kept");
    await page.click("button:text('Save changes')");
    expect(await page.textContent("#a-devices-error")).toContain("must list at least one device id");
    expect(await page.inputValue("#a-description")).toBe("kept");
    expect((await assignment(coreOnly)).devices).toEqual([edge]);
  });

  it("creates a remediation snippet from a result and lands on it; a taken name is said under the field", async () => {
    const { page, base } = b;
    const result = await resultOf(core);
    expect(result.status).toBe("not_compliant");
    await page.goto(`${base}/compliance/results/${result.id}`);
    await b.shoot("compliance-result-remediation");
    await page.click("button:text('Create remediation snippet')");
    await page.waitForURL(/\/snippets\/\d+\?done=remediation/);
    expect(await page.textContent("h1")).toBe(`Remediation: ${HOSTILE} on core-1 (result ${result.id})`);
    expect(await page.locator("main img").count()).toBe(0);
    const id = Number(/\/snippets\/(\d+)/.exec(page.url())![1]);
    expect((await api(`/snippets/${id}`)).body.data.content).toContain("ntp server 192.0.2.123");
    await page.goto(`${base}/compliance/results/${result.id}`);
    await page.click("button:text('Create remediation snippet')");
    expect(await page.textContent("#r-name-error")).toContain("is already taken");
    await page.fill("#r-name", "Fix NTP on core-1");
    await page.click("button:text('Create remediation snippet')");
    await page.waitForURL(/done=remediation/);
    expect(await page.textContent("h1")).toBe("Fix NTP on core-1");
  });

  it("refuses forged forms and changes nothing", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compliance`);
    const before = (await api("/snippets")).body.meta.total;
    expect(await post(`/compliance/assignments/${coreOnly}/enabled`, "_csrf=nope&enabled=false")).toBe(403);
    expect(await post(`/compliance/assignments/${coreOnly}/edit`, "_csrf=nope&policy_id=1&scope=all")).toBe(403);
    expect(await post(`/compliance/results/${(await resultOf(core)).id}/snippet`, "_csrf=nope")).toBe(403);
    expect(await assignment(coreOnly)).toMatchObject({ scope: "devices", enabled: true });
    expect((await api("/snippets")).body.meta.total).toBe(before);
  });

  it("keeps a scoped user to their devices: no other device's result or assignment, no change beyond the scope", async () => {
    const { page, base } = b;
    await api(`/policy-assignments/${coreOnly}`, "PATCH", { scope: "devices", devices: [core] });
    await b.loginAs("edgy");
    await page.goto(`${base}/compliance`);
    expect(await page.locator(`#assignment-list tr[data-id="${coreOnly}"]`).count()).toBe(0);
    expect((await page.goto(`${base}/compliance/assignments/${coreOnly}/edit`))!.status()).toBe(404);
    const csrf = await page.getAttribute("input[name=_csrf]", "value");
    expect(await post(`/compliance/assignments/${coreOnly}/enabled`, `_csrf=${csrf}&enabled=false`)).toBe(404);
    const coreResult = (await resultOf(core)).id;
    expect((await page.goto(`${base}/compliance/results/${coreResult}`))!.status()).toBe(404);
    expect(await post(`/compliance/results/${coreResult}/snippet`, `_csrf=${csrf}`)).toBe(404);
    expect((await assignment(coreOnly)).enabled).toBe(true);
    // An assignment judging every device reaches devices outside the scope: shown without controls, refused.
    await page.goto(`${base}/compliance`);
    const every = page.locator(`#assignment-list tr[data-id="${everyDevice}"]`);
    expect(await every.count()).toBe(1);
    expect(await every.locator("a, button").count()).toBe(0);
    expect((await page.goto(`${base}/compliance/assignments/${everyDevice}/edit`))!.status()).toBe(403);
    expect(await post(`/compliance/assignments/${everyDevice}/enabled`, `_csrf=${csrf}&enabled=false`)).toBe(403);
    expect((await assignment(everyDevice)).enabled).toBe(true);
    // Their own device's result: the snippet is theirs to make.
    await page.goto(`${base}/compliance/results/${(await resultOf(edge)).id}`);
    await page.fill("#r-name", "Fix NTP on edge-1");
    await page.click("button:text('Create remediation snippet')");
    await page.waitForURL(/done=remediation/);
    await b.loginAs("admin1");
  });

  it("shows a viewer the assignments and results without any control to change them", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/compliance`);
    expect(await page.locator("#assignment-list").count()).toBe(1);
    expect(await page.locator("#assignment-list a:text('Edit')").count()).toBe(0);
    expect(await page.locator("#assignment-list button").count()).toBe(0);
    await page.goto(`${base}/compliance/results/${(await resultOf(core)).id}`);
    expect(await page.locator("h1").count()).toBe(1);
    expect(await page.locator("button:text('Create remediation snippet')").count()).toBe(0);
    expect((await page.goto(`${base}/compliance/assignments/${coreOnly}/edit`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });
});
