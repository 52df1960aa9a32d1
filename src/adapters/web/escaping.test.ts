/**
 * Names people type (devices, tags, categories, roles, tasks, snippets, policies, API tokens) and configuration
 * text, each holding markup, shown by every web page: a signed-in administrator walks the whole site (every GET
 * route of the web app with real ids, then every link the pages lead to) and the markup never comes back as
 * markup. A page that renders one of them raw fails here, naming the page and the record.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebTestContext, type WebClient, type WebTestContext } from "../../../test/web/client.ts";
import { storeVersion, day } from "../../modules/configs/test-fixtures.ts";
import { jobs } from "../../db/schema/index.ts";
import { issueToken } from "../../platform/auth/tokens.ts";
import { ABILITIES } from "../../platform/auth/abilities.ts";

/** Markup that runs script when rendered raw (no spaces: device names take none), labelled with what carries it. */
const markup = (what: string) => `<svg/onload=alert('${what}')>`;
const raw = (html: string) => [...html.matchAll(/<svg\/onload=alert\('([a-z-]+)'\)>/g)].map((m) => m[1]!);

let t: WebTestContext;
let browser: WebClient;
const ids: Record<string, number> = {};
/** What could not be given a name with markup (the API refused it): said in the test, not silently skipped. */
const refused: string[] = [];

async function create(
  what: string,
  path: string,
  body: Record<string, unknown>,
  token: string,
): Promise<number | undefined> {
  const res = await t.call(path, { method: "POST", token, body });
  if (res.status !== 201) {
    refused.push(`${what}: ${res.status} ${res.body.message}`);
    return undefined;
  }
  return res.body.data.id;
}

beforeAll(async () => {
  t = await createWebTestContext();
  const token = await t.token();
  const tag = await create("tag", "/api/v1/tags", { name: markup("tag") }, token);
  const category = await create(
    "category",
    "/api/v1/categories",
    { categoryName: markup("category"), name: markup("category") },
    token,
  );
  ids.device = (await create(
    "device",
    "/api/v1/devices",
    {
      device_name: markup("device"),
      device_ip: "192.0.2.10",
      device_vendor: "Cisco",
      device_model: markup("model"),
      ...(tag ? { device_tags: [tag] } : {}),
      ...(category ? { device_category_id: category } : {}),
    },
    token,
  ))!;
  expect(ids.device, refused.join("; ")).toBeDefined();
  const other = await create(
    "device",
    "/api/v1/devices",
    { device_name: "plain-device", device_ip: "192.0.2.11", device_vendor: "Cisco" },
    token,
  );
  // Configuration text is the device's, not ours: it is shown, never rendered.
  ids.config = (
    await storeVersion(t, {
      deviceId: ids.device,
      text: `hostname edge\n banner motd ${markup("config")}\nend\n`,
      at: day(1),
    })
  ).configId;
  const second = await storeVersion(t, {
    deviceId: ids.device,
    text: `hostname edge\n banner motd ${markup("config")}\n description ${markup("config-diff")}\nend\n`,
    at: day(2),
  });
  ids.configNew = second.configId;
  const [job] = await t.db
    .insert(jobs)
    .values({
      type: "download",
      deviceId: ids.device,
      state: "finished",
      outcome: "error",
      message: markup("job-message"),
      trigger: "api",
      runAfter: day(3),
      createdAt: day(3),
      startedAt: day(3),
      finishedAt: day(3),
    })
    .returning({ id: jobs.id });
  ids.job = job!.id;
  ids.task = (await create(
    "task",
    "/api/v1/tasks",
    { task_name: markup("task"), task_type: "download_devices", devices: [ids.device, other], task_cron: "0 2 * * *" },
    token,
  ))!;
  await create("snippet", "/api/v1/snippets", { name: markup("snippet"), content: "ntp server 192.0.2.1" }, token);
  await create(
    "policy",
    "/api/v1/policies",
    { name: markup("policy"), definition: "// Description: ntp\n#[must_match_single_string]\nntp server\n" },
    token,
  );
  await create("role", "/api/v1/roles", { name: markup("role"), permissions: ["devices.read"] }, token);
  const userId = await t.user({ username: "markup-admin" });
  await issueToken(t.db, { userId, name: markup("token"), abilities: [...ABILITIES], expiresAt: null }, t.clock.now());
  browser = t.client();
  await browser.login("markup-admin");
});
afterAll(() => t.close());

/** The web app's GET pages with real ids in place of their parameters. */
function startingPages(): string[] {
  const routes = [
    ...new Set(
      t.webApp.routes
        .filter((r) => r.method === "GET" && !r.path.startsWith("/api/") && !r.path.includes("*"))
        .map((r) => r.path),
    ),
  ];
  const idFor: Record<string, string> = {
    "/devices/:id": String(ids.device),
    "/tasks/:id": String(ids.task),
    "/jobs/:id": String(ids.job),
    "/configs/:id": String(ids.config),
  };
  const pages = routes.map((path) =>
    path.replace(/\/([a-z-]+)\/:([a-z]+)(\{[^}]*\})?/g, (_whole, base: string, name: string) => {
      if (name === "version") return `/${base}/v1`;
      return `/${base}/${idFor[`/${base}/:id`] ?? "1"}`;
    }),
  );
  return [
    ...pages,
    `/configs/diff?a=${ids.config}&b=${ids.configNew}`,
    `/configs/diff?from=${ids.config}&to=${ids.configNew}`,
    "/search?q=banner",
    "/changes",
  ];
}

describe("user-entered text on the web pages", () => {
  it("is escaped on every page, wherever it is shown", async () => {
    const seen = new Set<string>();
    const queue = startingPages();
    const found: string[] = [];
    let html = 0;
    while (queue.length && seen.size < 400) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await browser.get(url);
      if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) {
        await res.arrayBuffer();
        continue;
      }
      const text = await res.text();
      html++;
      for (const what of raw(text)) found.push(`${url}: ${what}`);
      // Follow the site's own links, as a person clicking through would (never signing out).
      for (const [, href] of text.matchAll(/href="(\/[^"#]*)"/g)) {
        const link = href!.replaceAll("&amp;", "&");
        if (!link.startsWith("/logout") && !link.startsWith("/assets/") && !seen.has(link)) queue.push(link);
      }
    }
    expect(html, `pages walked: ${[...seen].join(" ")}`).toBeGreaterThan(10);
    expect(found).toEqual([]);
    // The records are on the pages (escaped), so the walk looked where they are.
    const page = await (await browser.get(`/devices/${ids.device}`)).text();
    expect(page).toContain("&lt;svg/onload=alert(&#39;device&#39;)&gt;");
    expect(refused, "records the API refused to name with markup").toEqual([]);
  }, 120_000);
});
