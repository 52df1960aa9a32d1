import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve, type ServerType } from "@hono/node-server";
import { eq } from "drizzle-orm";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobs } from "../../src/db/schema/index.ts";
import { createDevice, day, storeVersion } from "../../src/modules/configs/test-fixtures.ts";
import { indexAllPending } from "../../src/modules/configs/search/search-index.ts";
import { normalizeConfigText } from "../../src/modules/configs/storage/text.ts";
import { TEST_PASSWORD } from "../helpers/app.ts";
import { useBrowserStepTimeouts } from "./chromium.ts";
import { createWebTestContext, type WebTestContext } from "./client.ts";

/**
 * The fleet pages in headless Chromium: the diff view checked line by line against a real pair of configurations,
 * find-in-page and download-now progress (the page's script), and every page at phone and desktop width without
 * a layout break, each written as a screenshot to test-results/screenshots/ for review.
 */
const CHROMIUM = "/usr/bin/chromium";
const root = fileURLToPath(new URL("../..", import.meta.url));
const SHOTS = join(root, "test-results", "screenshots");
/** Two real ArubaOS-CX configurations (Oxidized's recorded data, Apache-2.0; see its README). */
const FIXTURES = "/work/shared/fixtures/oxidized";
const OLD_FILE = join(FIXTURES, "aoscx#6000-48G_PL.10.13.0005#output.txt");
const NEW_FILE = join(FIXTURES, "aoscx#6100-48G_PL.10.10.1090#output.txt");

const unavailable = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium)`
  : !existsSync(OLD_FILE)
    ? `no fixture configurations at ${FIXTURES}`
    : undefined;
if (unavailable) {
  if (process.env.CI) it("runs the page browser tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`test/web/pages.test.ts skipped: ${unavailable}`);
}

const WIDTHS = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;

type ViewRow = { kind: string; cells: { line: number | null; text: string; plain: string; marked: boolean }[] };

describe.skipIf(unavailable)("the fleet pages in headless Chromium", () => {
  let t: WebTestContext;
  let server: ServerType;
  let base: string;
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  const ids = { device: 0, old: 0, new: 0, task: 0, other: 0 };
  // As a collector stores them (trailing blanks and blank edge lines dropped).
  const oldText = existsSync(OLD_FILE) ? normalizeConfigText(readFileSync(OLD_FILE, "utf8")) : "";
  const newText = existsSync(NEW_FILE) ? normalizeConfigText(readFileSync(NEW_FILE, "utf8")) : "";

  beforeAll(async () => {
    t = await createWebTestContext();
    const token = await t.token();
    ids.device = await createDevice(t, token, {
      device_name: "sw-aoscx-1",
      device_ip: "192.0.2.61",
      device_vendor: "Aruba",
      device_tags: ["access"],
    });
    ids.other = await createDevice(t, token, {
      device_name: "rtr-edge-2",
      device_ip: "192.0.2.62",
      device_tags: ["edge"],
    });
    ids.old = (await storeVersion(t, { deviceId: ids.device, text: oldText, at: day(1) })).configId;
    ids.new = (await storeVersion(t, { deviceId: ids.device, text: newText, at: day(2) })).configId;
    await storeVersion(t, { deviceId: ids.other, text: "hostname rtr-edge-2\n", at: day(2) });
    await t.db.insert(jobs).values({
      type: "download",
      deviceId: ids.other,
      state: "finished",
      outcome: "timeout",
      message: "no prompt within 30 s",
      trigger: "schedule",
      runAfter: day(3),
      createdAt: day(3),
      startedAt: day(3),
      finishedAt: day(3),
    });
    await indexAllPending(t.db);
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token,
      body: {
        task_name: "Nightly access",
        task_type: "download_devices",
        devices: [ids.device, ids.other],
        task_cron: "0 2 * * *",
      },
    });
    expect(task.status).toBe(201);
    ids.task = task.body.data.id;
    await t.user({ username: "admin1" });
    base = await new Promise<string>((resolve) => {
      server = serve({ fetch: t.webApp.fetch, port: 0, hostname: "127.0.0.1" }, (info) =>
        resolve(`http://127.0.0.1:${info.port}`),
      );
    });
    profile = mkdtempSync(join(tmpdir(), "netkeep-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
    useBrowserStepTimeouts(context);
    page.on("dialog", (dialog) => void dialog.accept());
    mkdirSync(SHOTS, { recursive: true });
    await page.goto(`${base}/login`);
    await page.fill("#username", "admin1");
    await page.fill("#password", TEST_PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForURL(`${base}/dashboard`);
  });

  afterAll(async () => {
    await context?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.close();
  });

  /** The diff table as the browser shows it: per row its kind and, per side, line number, text, and text without marked words. */
  const readDiff = () =>
    page.$$eval("#diff-table tbody tr", (trs) =>
      trs.map((tr) => {
        const cells: { line: number | null; text: string; plain: string; marked: boolean }[] = [];
        const tds = [...tr.querySelectorAll("td")];
        if (tr.classList.contains("fold"))
          return { kind: "fold", cells: [{ line: null, text: tds[0]!.textContent ?? "", plain: "", marked: false }] };
        for (let i = 0; i < tds.length; i++) {
          if (!tds[i]!.classList.contains("ln") || !tds[i + 1] || tds[i + 1]!.classList.contains("ln")) continue;
          const textCell = tds[i + 1]!;
          const plain = [...textCell.childNodes]
            .filter((n) => n.nodeName !== "MARK")
            .map((n) => n.textContent)
            .join("");
          cells.push({
            line: tds[i]!.textContent ? Number(tds[i]!.textContent) : null,
            text: textCell.textContent ?? "",
            plain,
            marked: !!textCell.querySelector("mark"),
          });
        }
        return { kind: tr.className, cells };
      }),
    );

  it("shows the diff of two real configurations side by side so that both texts can be rebuilt from it", async () => {
    await page.goto(`${base}/configs/diff?from=${ids.old}&to=${ids.new}`);
    const rows: ViewRow[] = await readDiff();
    const oldLines = oldText.replace(/\n$/, "").split("\n");
    const newLines = newText.replace(/\n$/, "").split("\n");
    const seenOld: number[] = [],
      seenNew: number[] = [];
    let removed = 0,
      added = 0;
    for (const row of rows) {
      if (row.kind === "fold") {
        const m = /old (\d+)-(\d+), new (\d+)-(\d+)/.exec(row.cells[0]!.text)!;
        const [of, ot, nf, nt] = m.slice(1).map(Number) as [number, number, number, number];
        // A folded stretch is the same on both sides.
        expect(oldLines.slice(of - 1, ot)).toEqual(newLines.slice(nf - 1, nt));
        for (let n = of; n <= ot; n++) seenOld.push(n);
        for (let n = nf; n <= nt; n++) seenNew.push(n);
        continue;
      }
      const [left, right] = row.cells as [ViewRow["cells"][0], ViewRow["cells"][0]];
      if (left.line !== null) {
        expect(left.text, `old line ${left.line}`).toBe(oldLines[left.line - 1]);
        seenOld.push(left.line);
      }
      if (right.line !== null) {
        expect(right.text, `new line ${right.line}`).toBe(newLines[right.line - 1]);
        seenNew.push(right.line);
      }
      if (row.kind === "context") expect(left.text).toBe(right.text);
      else {
        if (left.line !== null) removed++;
        if (right.line !== null) added++;
        // Inside a pair, what is not marked is what the two lines share, in order.
        if (left.line !== null && right.line !== null) expect(left.plain).toBe(right.plain);
      }
    }
    // Every line of each text appears exactly once, in order: shown or folded.
    expect(seenOld).toEqual(oldLines.map((_, i) => i + 1));
    expect(seenNew).toEqual(newLines.map((_, i) => i + 1));
    expect(rows.some((r) => r.kind === "change" && r.cells.some((c) => c.marked))).toBe(true);
    expect(await page.textContent("#diff-summary")).toBe(`${added} lines added, ${removed} removed`);

    await page.click("text=Inline view");
    await page.waitForURL(/view=inline/);
    const inline: ViewRow[] = await page.$$eval("#diff-table tbody tr:not(.fold)", (trs) =>
      trs.map((tr) => {
        const tds = [...tr.querySelectorAll("td")];
        return {
          kind: tds[2]!.textContent!,
          cells: [
            { line: Number(tds[0]!.textContent) || null, text: tds[3]!.textContent!, plain: "", marked: false },
            { line: Number(tds[1]!.textContent) || null, text: tds[3]!.textContent!, plain: "", marked: false },
          ],
        };
      }),
    );
    for (const r of inline) {
      if (r.kind !== "+") expect(r.cells[0]!.text).toBe(oldLines[r.cells[0]!.line! - 1]);
      if (r.kind !== "-") expect(r.cells[1]!.text).toBe(newLines[r.cells[1]!.line! - 1]);
    }
    expect(inline.filter((r) => r.kind === "-")).toHaveLength(removed);
    expect(inline.filter((r) => r.kind === "+")).toHaveLength(added);
  });

  it("finds text in a configuration, counting the lines that hold it and going from one to the next", async () => {
    await page.goto(`${base}/configs/${ids.old}`);
    const term = "interface";
    const expected = oldText.split("\n").filter((l) => l.toLowerCase().includes(term)).length;
    expect(expected).toBeGreaterThan(1);
    await page.fill("#find", term.toUpperCase());
    expect(await page.textContent("#find-count")).toBe(`${expected} lines`);
    await page.press("#find", "Enter");
    await page.press("#find", "Enter");
    expect(await page.textContent("#find-count")).toMatch(new RegExp(`^2 of ${expected} lines \\(line \\d+\\)$`));
    expect(await page.$$eval(".line.current", (els) => els.length)).toBe(1);
  });

  it("shows a download's progress and, when a collector finishes it, its outcome without a reload by hand", async () => {
    await page.goto(`${base}/devices/${ids.device}`);
    await page.click("text=Download now");
    await page.waitForSelector("#download-progress[data-poll]");
    const [queued] = await t.db.select().from(jobs).where(eq(jobs.trigger, "download_now"));
    expect(queued!.state).toBe("queued");
    // The collector's part: the page polls and shows the outcome by itself.
    await t.db
      .update(jobs)
      .set({ state: "finished", outcome: "unchanged", finishedAt: new Date() })
      .where(eq(jobs.id, queued!.id));
    await page.waitForSelector(`text=Download ${queued!.id} finished: unchanged`);
    expect(await page.$("#download-progress[data-poll]")).toBeNull();
  });

  const pages = () => ({
    dashboard: "/dashboard",
    devices: "/devices",
    device: `/devices/${ids.other}`,
    config: `/configs/${ids.new}`,
    diff: `/configs/diff?from=${ids.old}&to=${ids.new}`,
    changes: "/changes",
    search: "/search?q=interface&context=1",
    tasks: "/tasks",
    task: `/tasks/${ids.task}`,
    users: "/admin/users",
  });

  for (const [widthName, size] of Object.entries(WIDTHS)) {
    it(`renders every page at ${widthName} width (${size.width} px) without a layout break, and saves a screenshot`, async () => {
      await page.setViewportSize(size);
      for (const [name, path] of Object.entries(pages())) {
        const res = await page.goto(`${base}${path}`);
        expect(res?.status(), path).toBe(200);
        // Wide tables scroll inside their own box; the page itself never scrolls sideways.
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        const wide =
          overflow > 0
            ? await page.$$eval("body *", (els) =>
                els
                  .filter(
                    (el) =>
                      el.getBoundingClientRect().right > document.documentElement.clientWidth + 1 &&
                      !el.closest(".table-wrap, pre"),
                  )
                  .map((el) => el.outerHTML.slice(0, 100)),
              )
            : [];
        expect(overflow, `${name} at ${size.width} px: ${wide.slice(0, 3).join(" | ")}`).toBeLessThanOrEqual(0);
        // Every form control has a name a screen reader can say.
        const unlabelled = await page.$$eval("input:not([type=hidden]), select, textarea", (els) =>
          els
            .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute("aria-label"))
            .map((el) => el.outerHTML.slice(0, 80)),
        );
        expect(unlabelled, name).toEqual([]);
        await page.screenshot({ path: join(SHOTS, `${name}-${widthName}.png`), fullPage: true });
      }
    });
  }
});
