import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runComplianceJob } from "../../collector/compliance-job.ts";
import { policies } from "../../src/db/schema/index.ts";
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

/** Compliance from the browser: the policy editor, assignments, runs, results with their fix, trend and export. */
const unavailable = chromiumMissing("test/web/compliance-manage.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
const DEFINITION = [
  "// Description: NTP keeps logs on time",
  "#[must_match_single_string]",
  "ntp server 192.0.2.123",
  "",
  "// Description: no SNMP community public",
  "#[must_not_match_single_string]",
  "snmp-server community public",
].join("\n");

describe.skipIf(unavailable)("compliance in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const idOf = async (name: string) =>
    (await t.db.select({ id: policies.id }).from(policies).where(eq(policies.name, name)))[0]?.id;
  /** Runs the queued compliance jobs as a collector would. */
  const runJobs = async () => {
    for (let job; (job = await claimNextJob(t.db, "test-collector", t.clock.now(), 60_000)); ) {
      await runComplianceJob(
        { db: t.db, secrets: t.secrets, clock: t.clock, logger: silentLogger, owner: "test-collector" },
        job,
      );
    }
  };

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["policycompliance.read", "policycompliance.write", "devices.read"]);
    const at = new Date(t.clock.now().getTime() - 3_600_000);
    const core = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
    const edge = await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] });
    await storeVersion(t, { deviceId: core, at, text: "hostname core-1\nsnmp-server community public RO\nend\n" });
    await storeVersion(t, { deviceId: edge, at, text: "hostname edge-1\nntp server 192.0.2.123\nend\n" });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("shows a definition's problems on their lines, keeps what was typed, then saves the fixed policy", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compliance`);
    await page.click("text=Add a policy");
    await page.fill("#p-name", "Our NTP rules");
    await page.fill("#p-definition", "// Description: x\n#[must_match_regex]\n(unclosed\n");
    await page.click("button:text('Add policy')");
    expect(await page.locator("#p-definition-lines li").count()).toBe(1);
    expect(await page.getAttribute("#p-definition-lines li", "data-line")).toBe("3");
    expect(await page.textContent("#p-definition-lines li")).toContain("Line 3: (unclosed");
    expect(await page.inputValue("#p-name")).toBe("Our NTP rules");
    await b.shoot("compliance-policy-error");
    expect(await idOf("Our NTP rules")).toBeUndefined();
    await page.fill("#p-definition", DEFINITION);
    await page.click("button:text('Add policy')");
    await page.waitForURL(/done=policy-created/);
    expect(await page.textContent("#policy-list tr:has-text('Our NTP rules')")).toContain("2 rules");
  });

  it("assigns the policy, runs it, and shows each device's state in words with the failing lines and the fix", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compliance`);
    await page.click("summary:text('Assign a policy')");
    await page.selectOption("#a-policy_id", { label: "Our NTP rules" });
    await page.selectOption("#a-scope", "all");
    await page.click("button:text('Assign')");
    await page.waitForURL(/done=assignment-created/);
    expect(await page.textContent("#assignment-list")).toContain("every device");
    await page.locator("#policy-list tr", { hasText: "Our NTP rules" }).locator("button:text('Run')").click();
    await page.waitForURL(/done=run/);
    await runJobs();
    await page.goto(`${base}/compliance?filter[latest]=true`);
    const core = page.locator("#result-list tr", { hasText: "core-1" });
    expect(await core.locator(".badge").textContent()).toBe("not compliant");
    expect(await core.textContent()).toContain("0 of 2 rules");
    expect(await core.textContent()).toContain("line 2: snmp-server community public RO");
    expect(await core.locator(".remediation pre").first().textContent()).toBeTruthy();
    expect(await page.locator("#result-list tr", { hasText: "edge-1" }).locator(".badge").textContent()).toBe(
      "compliant",
    );
    // The trend chart is drawn by the vendored uPlot, from netkeep's own address.
    await page.waitForSelector("#trend-chart .uplot");
    expect(await page.textContent("#trend-table")).toContain("1 device");
    await b.shoot("compliance");
    await core.locator("a:text('Details')").click();
    expect(await page.textContent("h1")).toBe("Our NTP rules on core-1");
    expect(await page.textContent(".failing-rules")).toContain("NTP keeps logs on time");
    expect(await page.textContent(".failing-rules")).toContain("missing: ntp server 192.0.2.123");
    await b.shoot("compliance-result");
  });

  it("exports the results the filters select", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compliance?filter[status]=not_compliant`);
    const csv = await page.evaluate(async () => {
      const href = document.querySelector<HTMLAnchorElement>("a:not([href*=json])[href^='/compliance/export']")!.href;
      return (await fetch(href)).text();
    });
    expect(csv.split("\n")[0]).toContain("device_name");
    expect(csv).toContain("core-1");
    expect(csv).not.toContain("edge-1");
  });

  it("refuses a forged form, and shows a hostile policy name as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compliance`);
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/compliance/policies/new", {
            method: "POST",
            body: "_csrf=nope&name=forged&definition=x",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect(await idOf("forged")).toBeUndefined();
    await page.goto(`${base}/compliance/policies/new`);
    await page.fill("#p-name", HOSTILE);
    await page.click("button:text('Add policy')");
    await page.waitForURL(/done=policy-created/);
    expect(await page.locator("#policy-list strong", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("shows a scoped user only the devices in scope, and refuses to change a policy that judges others", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/compliance`);
    expect(await page.textContent("#result-list")).toContain("edge-1");
    expect(await page.textContent("#result-list")).not.toContain("core-1");
    const coreResult = await page.evaluate(async () => {
      const res = await fetch("/compliance?filter[status]=not_compliant");
      return (await res.text()).includes("core-1");
    });
    expect(coreResult).toBe(false);
    const id = (await idOf("Our NTP rules"))!;
    // Assigned to every device, the policy judges core-1 too: no Edit or Delete, and neither address serves.
    const row = page.locator(`#policy-list tr[data-id="${id}"]`);
    expect(await row.locator("a:text('Edit')").count()).toBe(0);
    expect(await row.locator("button:text('Delete')").count()).toBe(0);
    expect((await page.goto(`${base}/compliance/policies/${id}/edit`))!.status()).toBe(403);
    expect(await page.textContent("h1")).toBe("Refused");
    await page.goto(`${base}/compliance`);
    const csrf = (await b.csrf())!;
    const saved = await page.evaluate(
      async ({ id, csrf }) =>
        (
          await fetch(`/compliance/policies/${id}/edit`, {
            method: "POST",
            body: new URLSearchParams({
              _csrf: csrf,
              name: "Our NTP rules",
              description: "taken over",
              definition: "x",
            }),
          })
        ).status,
      { id, csrf },
    );
    expect(saved).toBe(403);
    const shown = await t.call(`/api/v1/policies/${id}`, { token });
    expect(shown.body.data.description).toBe("");
  });

  it("shows a viewer the results without any way to change them", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/compliance`);
    expect(await page.locator("#policy-list").count()).toBe(1);
    expect(await page.locator("text=Add a policy").count()).toBe(0);
    expect(await page.locator("#policy-list button").count()).toBe(0);
    expect(await page.locator("summary:text('Assign a policy')").count()).toBe(0);
    expect((await page.goto(`${base}/compliance/policies/new`))!.status()).toBe(403);
  });
});
