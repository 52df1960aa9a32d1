import { statSync } from "node:fs";
import { createClient } from "@libsql/client";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { API_VERSIONS, openApiDocument } from "../api/versions.ts";
import { activityLog, apiTokens } from "../../db/schema/index.ts";
import { createWebTestContext, csrfIn, type WebClient, type WebTestContext } from "../../../test/web/client.ts";

let t: WebTestContext;
afterEach(() => t?.close());

async function adminBrowser(ctx: WebTestContext, username = "admin1"): Promise<WebClient> {
  await ctx.user({ username });
  const browser = ctx.client();
  expect((await browser.login(username)).status).toBe(303);
  return browser;
}

/** A docs.md with markup in it, to prove the view escapes what it shows. */
const FIXTURE = "# REST API v1\n\nVersion: 1.0.0\n\n## Overview\n\nFields like <script>alert(1)</script> & friends.\n";

describe("REST API Access: who gets in", () => {
  it("answers 403 to a non-admin session on every settings page and endpoint, and changes nothing", async () => {
    t = await createWebTestContext();
    t.writeDocs("v1", FIXTURE);
    await t.user({ username: "viewer1", role: "viewer" });
    const browser = t.client();
    expect((await browser.login("viewer1")).status).toBe(303);
    for (const path of [
      "/settings/restapi",
      "/settings/restapi?tab=documentation",
      "/settings/restapi?tab=ai-agent-docs",
      "/settings/restapi/ai-agent-docs",
      "/settings/restapi/ai-agent-docs/v1",
      "/settings/restapi/ai-agent-docs/v1/download",
    ]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(403);
      const text = await res.text();
      expect(text).toContain("REST API Access settings are for users with the admin role");
      expect(text).not.toContain("alert(1)");
    }
    // The 403 page still carries a logout form with this session's token, so no CSRF token for the settings is needed to test the POST.
    const csrf = csrfIn(await (await browser.get("/settings/restapi")).text())!;
    const create = await browser.postForm("/settings/restapi/tokens", {
      _csrf: csrf,
      name: "sneaky",
      abilities: ["devices.read"],
    });
    expect(create.status).toBe(403);
    // A token of one's own is made on /tokens, within one's role: never one with an ability the role lacks.
    const beyond = await browser.postForm("/tokens", { _csrf: csrf, name: "sneaky", abilities: ["devices.write"] });
    expect(beyond.status).toBe(422);
    expect(await t.db.select().from(apiTokens)).toHaveLength(0);
  });

  it("answers 401 to an API token, in the header or the query, on the docs endpoints", async () => {
    t = await createWebTestContext();
    t.writeDocs("v1", FIXTURE);
    const token = await t.token();
    for (const path of [
      "/settings/restapi/ai-agent-docs",
      "/settings/restapi/ai-agent-docs/v1",
      "/settings/restapi/ai-agent-docs/v1/download",
    ]) {
      const byHeader = await t.webApp.request(path, { headers: { apitoken: token } });
      expect(byHeader.status, path).toBe(401);
      expect(await byHeader.text()).not.toContain("Overview");
      const byQuery = await t.webApp.request(`${path}?apitoken=${encodeURIComponent(token)}`);
      expect(byQuery.status, path).toBe(401);
    }
  });

  it("does not serve the generated files at any other URL", async () => {
    t = await createWebTestContext();
    t.writeDocs("v1", FIXTURE);
    const token = await t.token();
    for (const path of [
      "/storage/app/api-docs/v1/docs.md",
      "/app/api-docs/v1/docs.md",
      "/api-docs/v1/docs.md",
      "/api/v1/docs.md",
      "/docs.md",
    ]) {
      const res = await t.webApp.request(path, { headers: { apitoken: token } });
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain("Overview");
    }
  });
});

describe("tabs", () => {
  it("opens each tab by deep link, with security headers and the tab marked current", async () => {
    t = await createWebTestContext();
    const browser = await adminBrowser(t);
    for (const [tab, marker] of [
      ["documentation", "GET</span> <code>/api/v1/devices</code>"],
      ["ai-agent-docs", "REST API v2"],
    ] as const) {
      const res = await browser.get(`/settings/restapi?tab=${tab}`);
      expect(res.status, tab).toBe(200);
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(res.headers.get("cache-control")).toBe("no-store");
      const html = await res.text();
      expect(html).toMatch(new RegExp(`href="/settings/restapi\\?tab=${tab}" aria-current="page"`));
      expect(html).toContain(marker);
      expect(html).toContain(`id="tab-${tab}"`);
    }
    const unknown = await browser.get("/settings/restapi?tab=tokens");
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("use one of: documentation, ai-agent-docs");
    // The tokens have one page: the old tab's address moves there for good, and the tab links to it.
    const old = await browser.get("/settings/restapi?tab=api-token");
    expect(old.status).toBe(301);
    expect(old.headers.get("location")).toBe("/tokens");
    const opened = await (await browser.get("/settings/restapi")).text();
    expect(opened).toMatch(/href="\/settings\/restapi\?tab=documentation" aria-current="page"/);
    expect(opened).toContain('<a href="/tokens" data-tab="api-token">API Token</a>');
  });

  it("documents every endpoint of each version on the Documentation tab", async () => {
    t = await createWebTestContext();
    const browser = await adminBrowser(t);
    for (const version of API_VERSIONS) {
      const html = await (await browser.get(`/settings/restapi?tab=documentation&version=${version}`)).text();
      const doc = openApiDocument(version, t.config.appUrl);
      const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
        ["get", "post", "put", "patch", "delete"]
          .filter((m) => (item as Record<string, unknown>)[m])
          .map((m) => ({ path, method: m.toUpperCase() })),
      );
      expect(operations.length).toBeGreaterThan(5);
      for (const { path, method } of operations) {
        expect(html, `${method} ${path}`).toContain(`data-method="${method}" data-path="${path}"`);
      }
    }
    // Field rules in words come through, e.g. the device create body's name rules.
    const v1 = await (await browser.get("/settings/restapi?tab=documentation&version=v1")).text();
    expect(v1).toMatch(/<code>device_name<\/code>/);
    expect(v1).toContain("at least 5 characters");
  });
});

describe("API tokens (/tokens, which the old API Token tab redirects to)", () => {
  it("refuses Generate Token without a name or without abilities, saying what to fix, and creates nothing", async () => {
    t = await createWebTestContext();
    const browser = await adminBrowser(t);
    const csrf = await browser.csrf();
    const noAbility = await browser.postForm("/tokens", { _csrf: csrf, name: "backup script" });
    expect(noAbility.status).toBe(422);
    const noAbilityHtml = await noAbility.text();
    expect(noAbilityHtml).toContain("Tick at least one ability");
    expect(noAbilityHtml).toContain('value="backup script"');

    const noName = await browser.postForm("/tokens", {
      _csrf: csrf,
      name: "  ",
      abilities: ["devices.read"],
    });
    expect(noName.status).toBe(422);
    const noNameHtml = await noName.text();
    expect(noNameHtml).toContain("Name is required");
    expect(noNameHtml).toMatch(/value="devices.read" id="ability-devices.read" checked/);

    const bogus = await browser.postForm("/tokens", {
      _csrf: csrf,
      name: "x",
      abilities: ["devices.fly"],
    });
    expect(bogus.status).toBe(422);
    expect(await bogus.text()).toContain("Unknown abilities: devices.fly");
    expect(await t.db.select().from(apiTokens)).toHaveLength(0);
  });

  it("refuses forms without the session's CSRF token or from another origin (403, nothing created)", async () => {
    t = await createWebTestContext();
    const browser = await adminBrowser(t);
    const other = await adminBrowser(t, "admin2");
    const fields = { name: "t", abilities: ["devices.read"] };
    for (const [why, res] of [
      ["no token", await browser.postForm("/tokens", fields)],
      ["another session's token", await browser.postForm("/tokens", { ...fields, _csrf: await other.csrf() })],
      [
        "foreign origin",
        await browser.postForm(
          "/tokens",
          { ...fields, _csrf: await browser.csrf() },
          { origin: "https://evil.example" },
        ),
      ],
      [
        "JSON body",
        await browser.request("/tokens", {
          method: "POST",
          body: JSON.stringify({ ...fields, _csrf: await browser.csrf() }),
          headers: { "content-type": "application/json" },
        }),
      ],
    ] as const) {
      expect(res.status, why).toBe(403);
      expect(await res.text(), why).toContain("Form refused");
    }
    expect(await t.db.select().from(apiTokens)).toHaveLength(0);
    // The same form with the token and this site's origin goes through.
    const ok = await browser.postForm(
      "/tokens",
      { ...fields, _csrf: await browser.csrf() },
      { origin: "http://localhost" },
    );
    expect(ok.status).toBe(201);
  });

  it("creates a token shown once, which works on the API with its abilities only, then revokes it at once", async () => {
    t = await createWebTestContext();
    const browser = await adminBrowser(t);
    const created = await browser.postForm("/tokens", {
      _csrf: await browser.csrf(),
      name: "inventory sync",
      abilities: ["devices.read", "users.read"],
    });
    expect(created.status).toBe(201);
    const html = await created.text();
    const value = /<code id="new-token-value">([^<]+)<\/code>/.exec(html)?.[1];
    expect(value).toMatch(/^nk_/);
    expect(html).toContain("It is shown only once");
    expect(html).toContain('data-copy-from="new-token-value"');

    expect((await t.call("/api/v1/devices", { token: value })).status).toBe(200);
    expect((await t.call("/api/v2/users", { token: value })).status).toBe(200);
    expect((await t.call("/api/v1/tags", { token: value })).status).toBe(403);

    const [row] = await t.db.select().from(apiTokens);
    expect(row).toMatchObject({ name: "inventory sync", abilities: ["devices.read", "users.read"], revokedAt: null });
    const list = await (await browser.get("/tokens")).text();
    expect(list).not.toContain(value);
    expect(list).toContain(`data-token-id="${row!.id}"`);
    expect(list).toMatch(/inventory sync[\s\S]*admin1[\s\S]*devices\.read[\s\S]*users\.read[\s\S]*badge active/);

    const revoke = await browser.postForm(`/tokens/${row!.id}/revoke`, {
      _csrf: await browser.csrf(),
    });
    expect(revoke.status).toBe(303);
    expect(revoke.headers.get("location")).toBe("/tokens?done=revoked");
    expect((await t.call("/api/v1/devices", { token: value })).status).toBe(401);
    const after = await (await browser.get(revoke.headers.get("location")!)).text();
    expect(after).toContain("Token revoked: API requests with it are refused from now on.");
    expect(after).toContain("badge revoked");

    const actions = (await t.db.select().from(activityLog).where(eq(activityLog.subjectType, "api_token"))).map((a) => [
      a.action,
      a.username,
      a.tokenId,
    ]);
    expect(actions).toEqual([
      ["api_token.create", "admin1", null],
      ["api_token.revoke", "admin1", null],
    ]);
    expect(JSON.stringify(await t.db.select().from(activityLog))).not.toContain(value);
  });

  it("lists every user's tokens to an admin", async () => {
    t = await createWebTestContext();
    const viewer = await t.user({ username: "viewer1", role: "viewer" });
    await t.token(["devices.read"], { userId: viewer });
    const browser = await adminBrowser(t);
    const html = await (await browser.get("/tokens")).text();
    expect(html).toMatch(/test token \d+[\s\S]*viewer1/);
  });
});

describe("AI Agent Docs tab and endpoints", () => {
  it("shows the exact generating command for a version with no file, and 404s its view and download", async () => {
    t = await createWebTestContext();
    const browser = await adminBrowser(t);
    const html = await (await browser.get("/settings/restapi?tab=ai-agent-docs")).text();
    expect(html).toContain('data-version="v1" data-state="absent"');
    expect(html).toContain("npm run svc:api-docs:build -- --api-version=v1");
    expect(html).toContain("npm run svc:api-docs:build -- --api-version=v2");
    const list = await (await browser.request("/settings/restapi/ai-agent-docs")).json();
    expect(list.data.map((d: { version: string; exists: boolean }) => [d.version, d.exists])).toEqual([
      ["v1", false],
      ["v2", false],
    ]);
    const view = await browser.get("/settings/restapi/ai-agent-docs/v1");
    expect(view.status).toBe(404);
    expect(await view.text()).toContain("npm run svc:api-docs:build -- --api-version=v1");
    expect((await browser.get("/settings/restapi/ai-agent-docs/v1/download")).status).toBe(404);
    expect((await browser.get("/settings/restapi/ai-agent-docs/v3")).status).toBe(404);
  });

  it("lists a generated file's size and time, views it escaped, and downloads it with the exact headers", async () => {
    t = await createWebTestContext({ config: { appName: "Net Keep Prod" } });
    const file = t.writeDocs("v1", FIXTURE);
    const browser = await adminBrowser(t);
    const stat = statSync(file);

    const list = await (await browser.request("/settings/restapi/ai-agent-docs")).json();
    expect(list.data[0]).toMatchObject({
      version: "v1",
      exists: true,
      size_bytes: stat.size,
      generated_at: stat.mtime.toISOString(),
      view_url: "/settings/restapi/ai-agent-docs/v1",
      download_url: "/settings/restapi/ai-agent-docs/v1/download",
    });
    expect(list.data[1]).toMatchObject({ version: "v2", exists: false, size_bytes: null, generated_at: null });

    const tab = await (await browser.get("/settings/restapi?tab=ai-agent-docs")).text();
    expect(tab).toContain('data-version="v1" data-state="present"');
    expect(tab).toContain(`data-size-bytes="${stat.size}"`);
    expect(tab).toContain(`datetime="${stat.mtime.toISOString()}"`);
    expect(tab).toContain('data-copy-url="/settings/restapi/ai-agent-docs/v1/download"');

    const view = await browser.get("/settings/restapi/ai-agent-docs/v1");
    expect(view.status).toBe(200);
    const page = await view.text();
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends");
    expect(page).not.toContain("<script>alert(1)");

    const download = await browser.get("/settings/restapi/ai-agent-docs/v1/download");
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(download.headers.get("content-disposition")).toBe('attachment; filename="net-keep-prod-api-v1-docs.md"');
    expect(await download.text()).toBe(FIXTURE);
  });
});

describe("a database another process keeps locked", () => {
  it("answers a form 503 with a page that says to retry, and creates nothing", async () => {
    t = await createWebTestContext();
    const browser = await adminBrowser(t);
    const csrf = csrfIn(await (await browser.get("/settings/restapi")).text())!;
    const other = createClient({ url: t.config.databaseUrl, timeout: 0, concurrency: 1 });
    const held = await other.transaction("write");
    let res;
    try {
      res = await browser.postForm("/tokens", {
        _csrf: csrf,
        name: "while locked",
        abilities: ["devices.read"],
      });
    } finally {
      await held.rollback();
      other.close();
    }
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.text()).toContain("nothing was changed. Try again in a few seconds.");
    expect(await t.db.select().from(apiTokens)).toHaveLength(0);
  }, 20_000);
});
