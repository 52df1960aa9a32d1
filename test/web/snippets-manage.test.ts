import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { snippetDeployments, snippets } from "../../src/db/schema/index.ts";
import { claimNextJob } from "../../src/platform/jobs/queue.ts";
import { createDevice } from "../../src/modules/configs/test-fixtures.ts";
import { completePushJob } from "../../src/modules/snippets/deployments.ts";
import { finishJob } from "../../src/modules/tasks/settle.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Snippets from the browser: the editor, the dry-run preview, the deploy with its guard rails, live progress, re-run. */
const unavailable = chromiumMissing("test/web/snippets-manage.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("snippets in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const ids: Record<string, number> = {};
  const snippetId = async (name: string) =>
    (await t.db.select({ id: snippets.id }).from(snippets).where(eq(snippets.name, name)))[0]?.id;
  const deploymentCount = async () => (await t.db.select().from(snippetDeployments)).length;
  /** Ends every queued push as a collector would: `refuse` names the devices that refuse the first line. */
  const finishPushes = async (refuse: number[]) => {
    for (let job; (job = await claimNextJob(t.db, "test-collector", t.clock.now(), 60_000)); ) {
      const ok = !refuse.includes(job.deviceId!);
      await completePushJob(
        t.db,
        job,
        "test-collector",
        ok
          ? {
              status: "success",
              outcome: "success",
              message: "pushed",
              result: { saved: true, diff: "@@ -1 +1,2 @@\n hostname r\n+ntp server 192.0.2.5\n" },
              transcript: "r(config)# ntp server 192.0.2.5",
            }
          : {
              status: "failed",
              outcome: "error",
              message: "the device refused line 1",
              result: {
                failed_line: { index: 0, line: "ntp server 192.0.2.5", answer: "% Invalid input" },
                saved: false,
              },
              transcript: "r(config)# ntp server 192.0.2.5\n% Invalid input",
            },
        t.clock.now(),
        finishJob,
      );
    }
  };

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["snippets.read", "snippets.write", "devices.read", "tags.read"]);
    for (const [name, tag] of [
      ["core-1", "core"],
      ["edge-1", "edge"],
      ["edge-2", "edge"],
    ] as const)
      ids[name] = await createDevice(t, token, { device_name: name, device_tags: [tag] });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("adds a snippet with a variable, showing the API's problems next to their fields", async () => {
    const { page, base } = b;
    await page.goto(`${base}/snippets`);
    await page.click("text=Add a snippet");
    await page.fill("#s-name", "ntp");
    await page.click("button:text('Add snippet')");
    expect(await page.textContent("#s-content-error")).toContain("must have at least one line");
    expect(await page.inputValue("#s-name")).toBe("ntp");
    await page.fill("#s-content", "ntp server {ntp}");
    await page.click("button:text('Add snippet')");
    await page.waitForURL(/\/snippets\/\d+\?done=created/);
    expect(await page.textContent("main")).toContain("{ntp}");
    await b.shoot("snippet");
  });

  it("previews each device's lines, asks for a missing variable, and deploys after confirming the count", async () => {
    const { page, base } = b;
    const id = (await snippetId("ntp"))!;
    await page.goto(`${base}/snippets/${id}`);
    await page.selectOption("#d-tags", { label: "edge" });
    await page.click("button:text('Preview (dry run)')");
    expect(await page.textContent("#d-vars-error")).toContain("variable {ntp} has no value for device");
    expect(await deploymentCount()).toBe(0);
    await page.fill("#d-var-ntp", "192.0.2.5");
    await page.click("button:text('Preview (dry run)')");
    expect(await page.textContent("#preview h2")).toBe("Preview: 2 devices");
    expect(await page.textContent("#preview-list")).toContain("ntp server 192.0.2.5");
    expect(await page.textContent("#preview-list")).not.toContain("core-1");
    await b.shoot("snippet-preview");
    // A count that is not what the deploy reaches is refused next to the field, and nothing is pushed.
    await page.fill("#d-confirm", "3");
    await page.click("button:text('Deploy to 2 devices')");
    expect(await page.textContent("#d-confirm-error")).toContain("but the deploy reaches 2 devices");
    expect(await deploymentCount()).toBe(0);
    await page.fill("#d-confirm", "2");
    await page.click("button:text('Deploy to 2 devices')");
    await page.waitForURL(/\/snippets\/deployments\/\d+$/);
    expect(await page.textContent("#progress h2")).toBe("Pushing…");
    await b.shoot("snippet-deployment-running");
    // htmx polls the progress: the page changes without a reload when the pushes end.
    await finishPushes([ids["edge-2"]!]);
    await page.waitForSelector("#progress h2:text('Finished')");
    const ok = page.locator("#deployment-devices tr[data-device='edge-1']");
    expect(await ok.locator(".badge").textContent()).toBe("pushed");
    expect(await ok.locator("pre.diff-text").textContent()).toContain("+ntp server 192.0.2.5");
    const refused = page.locator("#deployment-devices tr[data-device='edge-2']");
    expect(await refused.locator(".badge").textContent()).toBe("refused");
    expect(await refused.textContent()).toContain("% Invalid input");
    await b.shoot("snippet-deployment");
  });

  it("re-runs only the failed devices, as a new deployment", async () => {
    const { page } = b;
    await page.click("button:text('Re-run the 1 failed device')");
    await page.waitForURL(/done=rerun/);
    expect(await page.locator("#deployment-devices tbody tr").count()).toBe(1);
    expect(await page.textContent("#deployment-devices")).toContain("edge-2");
    expect(await deploymentCount()).toBe(2);
    await finishPushes([]);
  });

  it("refuses a forged deploy, and shows a hostile snippet name as text", async () => {
    const { page, base } = b;
    const id = (await snippetId("ntp"))!;
    await page.goto(`${base}/snippets/${id}`);
    const status = await page.evaluate(
      async (id) =>
        (
          await fetch(`/snippets/${id}/deploy`, {
            method: "POST",
            body: "_csrf=nope&action=deploy&devices=1&var_ntp=x",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      id,
    );
    expect(status).toBe(403);
    expect(await deploymentCount()).toBe(2);
    await page.goto(`${base}/snippets/new`);
    await page.fill("#s-name", HOSTILE);
    await page.fill("#s-content", "logging host 192.0.2.9");
    await page.click("button:text('Add snippet')");
    await page.waitForURL(/done=created/);
    expect(await page.textContent("h1")).toBe(HOSTILE);
    await page.goto(`${base}/snippets`);
    expect(await page.locator("#snippet-list strong", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("lets a scoped user deploy only inside the scope, and see only their devices' outcomes", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    const id = (await snippetId("ntp"))!;
    await page.goto(`${base}/snippets/${id}`);
    expect(await page.locator("#d-tags option", { hasText: "core" }).count()).toBeLessThanOrEqual(1);
    await page.fill("#d-devices", String(ids["core-1"]));
    await page.fill("#d-var-ntp", "192.0.2.5");
    await page.click("button:text('Preview (dry run)')");
    expect(await page.textContent("#d-devices-error")).toContain("is not an existing device");
    expect(await page.locator("#preview").count()).toBe(0);
    const first = (await t.db.select().from(snippetDeployments))[0]!.id;
    await page.goto(`${base}/snippets/deployments/${first}`);
    expect(await page.textContent("#deployment-devices")).toContain("edge-1");
    expect(await page.textContent("#deployment-devices")).not.toContain("core-1");
  });

  it("shows a viewer the snippets without any way to change or deploy them", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    const id = (await snippetId("ntp"))!;
    await page.goto(`${base}/snippets/${id}`);
    expect(await page.locator("#deploy").count()).toBe(0);
    expect(await page.locator("text=Edit").count()).toBe(0);
    await page.goto(`${base}/snippets`);
    expect(await page.locator("text=Add a snippet").count()).toBe(0);
    expect((await page.goto(`${base}/snippets/new`))!.status()).toBe(403);
    const first = (await t.db.select().from(snippetDeployments))[0]!.id;
    await page.goto(`${base}/snippets/deployments/${first}`);
    expect(await page.locator("button:text('Re-run')").count()).toBe(0);
  });
});
