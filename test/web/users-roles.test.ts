import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityLog, roles, users } from "../../src/db/schema/index.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * Users and roles on /admin/users: deleting a user and adding, editing and deleting roles, through the API's
 * services (same refusals), behind CSRF, escaped, and absent for a role that may not use them.
 */
const unavailable = chromiumMissing("test/web/users-roles.test.ts");
const HOSTILE = "<img src=x onerror=window.pwned=1>";

describe.skipIf(unavailable)("users and roles in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;

  const userNamed = async (username: string) =>
    (await t.db.select().from(users).where(eq(users.username, username)))[0];
  const roleNamed = async (name: string) => (await t.db.select().from(roles).where(eq(roles.name, name)))[0];
  /** A form posted from the page's own origin, with the given CSRF token: [status, page text]. */
  const post = (path: string, body: Record<string, string | string[]>) =>
    b.page.evaluate(
      async ([path, fields]) => {
        const form = new URLSearchParams();
        for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) form.append(k, one);
        const r = await fetch(path, {
          method: "POST",
          body: form.toString(),
          headers: { "content-type": "application/x-www-form-urlencoded" },
        });
        return [r.status, await r.text()] as const;
      },
      [path, body] as const,
    );
  const pwned = () => b.page.evaluate(() => (window as unknown as { pwned?: number }).pwned);

  beforeAll(async () => {
    t = await createWebTestContext();
    b = await startBrowserWithCast(t, ["devices.read", "users.read", "users.write"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  describe("deleting a user", () => {
    it("deletes a user after a confirmation page, showing a hostile e-mail address as text", async () => {
      const { page, base } = b;
      await page.goto(`${base}/admin/users`);
      await page.fill("#new-username", "leaver");
      await page.fill("#new-email", `${HOSTILE.replace(/ /g, "/")}@x.test`);
      await page.fill("#new-password", "a-long-passphrase-9");
      await page.click("text=Create user");
      await page.waitForURL(/done=created/);
      const leaver = (await userNamed("leaver"))!;
      await page.click(`#user-${leaver.id} a.delete-user`);
      await page.waitForURL(`${base}/admin/users/${leaver.id}/delete`);
      expect(await page.textContent("h1")).toBe("Delete the user leaver?");
      expect(await page.textContent("main")).toContain("<img/src=x/onerror=window.pwned=1>@x.test");
      expect(await page.locator("main img").count()).toBe(0);
      expect(await pwned()).toBeUndefined();
      await b.shoot("user-delete");
      await page.click("button:has-text('Delete the user')");
      await page.waitForURL(/done=deleted/);
      expect(await page.textContent("[role=status]")).toContain("User deleted");
      expect(await userNamed("leaver")).toBeUndefined();
      expect(await page.locator(`#user-${leaver.id}`).count()).toBe(0);
      const [entry] = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.delete"));
      expect(entry).toMatchObject({ username: "admin1", tokenName: "web session", subjectId: leaver.id });
    });

    it("offers no Delete for oneself, and refuses it with the API's words when forced", async () => {
      const { page, base } = b;
      const self = (await userNamed("admin1"))!;
      await page.goto(`${base}/admin/users`);
      expect(await page.locator(`#user-${self.id} a.delete-user`).count()).toBe(0);
      expect(await page.locator("a.delete-user").count()).toBeGreaterThan(0);
      const [status, text] = await post(`/admin/users/${self.id}/delete`, { _csrf: (await b.csrf())! });
      expect(status).toBe(409);
      expect(text).toContain("You cannot delete your own user (admin1); ask another administrator");
      expect(await userNamed("admin1")).toBeDefined();
    });

    it("refuses to delete the last enabled administrator, saying what to do instead", async () => {
      const { page, base } = b;
      // A custom role holding every ability may manage administrators, but not remove the last one.
      await t.role({ name: "superops" });
      await t.user({ username: "super", role: "superops" });
      const admin1 = (await userNamed("admin1"))!;
      await b.loginAs("super");
      await page.goto(`${base}/admin/users/${admin1.id}/delete`);
      await page.click("button:has-text('Delete the user')");
      expect(await page.textContent("[role=alert]")).toBe(
        "User 'admin1' is the last enabled admin; enable or create another admin first",
      );
      expect(await userNamed("admin1")).toBeDefined();
      await b.loginAs("admin1");
    });

    it("refuses a forged form and deletes nothing", async () => {
      await t.user({ username: "stayer", role: "viewer" });
      const stayer = (await userNamed("stayer"))!;
      await b.page.goto(`${b.base}/admin/users`);
      const [status, text] = await post(`/admin/users/${stayer.id}/delete`, { _csrf: "forged" });
      expect(status).toBe(403);
      expect(text).toContain("Form refused");
      expect(await userNamed("stayer")).toBeDefined();
    });

    it("shows a viewer no Delete, and refuses it the confirmation page and the form", async () => {
      const { page, base } = b;
      const stayer = (await userNamed("stayer"))!;
      await b.loginAs("viewer1");
      await page.goto(`${base}/admin/users`);
      expect(await page.locator("#user-list, table.users").count()).toBe(1);
      expect(await page.locator("a.delete-user").count()).toBe(0);
      expect((await page.goto(`${base}/admin/users/${stayer.id}/delete`))!.status()).toBe(403);
      const [status] = await post(`/admin/users/${stayer.id}/delete`, { _csrf: (await b.csrf())! });
      expect(status).toBe(403);
      expect(await userNamed("stayer")).toBeDefined();
      await b.loginAs("admin1");
    });
  });

  describe("roles", () => {
    it("adds a role with ticked abilities and a tag scope, shown in the roles table", async () => {
      const { page, base } = b;
      await page.goto(`${base}/admin/users`);
      await page.click("text=Add a role");
      await page.waitForURL(`${base}/admin/roles/new`);
      await page.fill("#role-name", "noc-readers");
      await page.fill("#role-description", "Night shift");
      await page.check("#ability-devices\\.read");
      await page.check("#ability-configs\\.read");
      await page.uncheck("#role-scope-all");
      await page.selectOption("#role-scope-tags", { label: "edge" });
      await b.shoot("role-form");
      await page.click("text=Add role");
      await page.waitForURL(/done=role_created/);
      const role = (await roleNamed("noc-readers"))!;
      expect(role).toMatchObject({
        description: "Night shift",
        permissions: ["devices.read", "configs.read"],
        scopeAll: false,
        scopeCategoryIds: [],
      });
      expect(role.scopeTagIds).toHaveLength(1);
      const row = page.locator(`#role-row-${role.id}`);
      expect(await row.textContent()).toContain("2 abilities");
      expect(await row.textContent()).toContain("tag edge");
      expect(await row.textContent()).toContain("0 users");
      await b.shoot("users-roles");
    });

    it("shows a problem under its field and keeps what was typed", async () => {
      const { page, base } = b;
      await page.goto(`${base}/admin/roles/new`);
      await page.fill("#role-name", "   ");
      await page.fill("#role-description", "kept");
      await page.check("#ability-tags\\.read");
      await page.click("text=Add role");
      expect(await page.textContent("#role-name-error")).toBe("must not be empty");
      expect(await page.inputValue("#role-description")).toBe("kept");
      expect(await page.isChecked("#ability-tags\\.read")).toBe(true);
      await page.fill("#role-name", "NOC-readers");
      await page.click("text=Add role");
      expect(await page.textContent("#role-name-error")).toContain("already");
      expect((await t.db.select().from(roles)).filter((r) => r.name.toLowerCase() === "noc-readers")).toHaveLength(1);
    });

    it("edits a role's abilities and scope", async () => {
      const { page, base } = b;
      const role = (await roleNamed("noc-readers"))!;
      await page.goto(`${base}/admin/users`);
      await page.click(`#role-row-${role.id} >> text=Edit`);
      await page.waitForURL(`${base}/admin/roles/${role.id}/edit`);
      expect(await page.isChecked("#ability-configs\\.read")).toBe(true);
      await page.uncheck("#ability-configs\\.read");
      await page.check("#ability-tasks\\.read");
      await page.check("#role-scope-all");
      await page.click("text=Save changes");
      await page.waitForURL(/done=role_saved/);
      expect(await roleNamed("noc-readers")).toMatchObject({
        permissions: ["devices.read", "tasks.read"],
        scopeAll: true,
        scopeTagIds: [],
      });
    });

    it("refuses to delete a role users hold, naming how many, then deletes it once they have none", async () => {
      const { page, base } = b;
      const role = (await roleNamed("noc-readers"))!;
      const holder = await t.user({ username: "nightowl", role: "noc-readers" });
      await page.goto(`${base}/admin/users`);
      await page.click(`#role-row-${role.id} >> text=Delete`);
      await page.waitForURL(`${base}/admin/roles/${role.id}/delete`);
      await page.click("button:has-text('Delete the role')");
      expect(await page.textContent("[role=alert]")).toBe(
        "Role 'noc-readers' is held by 1 user; give them another role first",
      );
      expect(await roleNamed("noc-readers")).toBeDefined();
      await t.db.delete(users).where(eq(users.id, holder));
      await page.goto(`${base}/admin/roles/${role.id}/delete`);
      await page.click("button:has-text('Delete the role')");
      await page.waitForURL(/done=role_deleted/);
      expect(await roleNamed("noc-readers")).toBeUndefined();
    });

    it("shows a hostile role name as text everywhere", async () => {
      const { page, base } = b;
      await page.goto(`${base}/admin/roles/new`);
      await page.fill("#role-name", HOSTILE);
      await page.check("#ability-devices\\.read");
      await page.click("text=Add role");
      await page.waitForURL(/done=role_created/);
      const role = (await roleNamed(HOSTILE))!;
      expect(await page.textContent(`#role-row-${role.id} strong`)).toBe(HOSTILE);
      await page.goto(`${base}/admin/roles/${role.id}/delete`);
      expect(await page.textContent("h1")).toBe(`Delete the role ${HOSTILE}?`);
      await page.goto(`${base}/admin/roles/${role.id}/edit`);
      expect(await page.inputValue("#role-name")).toBe(HOSTILE);
      expect(await page.locator("main img").count()).toBe(0);
      expect(await pwned()).toBeUndefined();
    });

    it("refuses forged role forms and changes nothing", async () => {
      await b.page.goto(`${b.base}/admin/users`);
      const before = (await t.db.select().from(roles)).length;
      const [created] = await post("/admin/roles/new", { _csrf: "forged", name: "sneaky", abilities: "devices.read" });
      expect(created).toBe(403);
      const edge = (await roleNamed("edge-ops"))!;
      const [edited] = await post(`/admin/roles/${edge.id}/edit`, { _csrf: "", name: "renamed" });
      expect(edited).toBe(403);
      const [deleted] = await post(`/admin/roles/${edge.id}/delete`, {});
      expect(deleted).toBe(403);
      expect((await t.db.select().from(roles)).length).toBe(before);
      expect((await roleNamed("edge-ops"))!.name).toBe("edge-ops");
    });

    it("offers built-in roles no Edit or Delete, and refuses them when forced", async () => {
      const { page, base } = b;
      const admin = (await roleNamed("admin"))!;
      await page.goto(`${base}/admin/users`);
      expect(await page.locator(`#role-row-${admin.id} a`).count()).toBe(0);
      const [status, text] = await post(`/admin/roles/${admin.id}/delete`, { _csrf: (await b.csrf())! });
      expect(status).toBe(403);
      expect(text).toContain("built-in role admin is read-only");
    });

    it("gives a viewer the roles table without any control, and refuses the forms", async () => {
      const { page, base } = b;
      await b.loginAs("viewer1");
      await page.goto(`${base}/admin/users`);
      expect(await page.locator("#role-list tbody tr").count()).toBeGreaterThan(3);
      expect(await page.locator("text=Add a role").count()).toBe(0);
      expect(await page.locator("#role-list a").count()).toBe(0);
      expect((await page.goto(`${base}/admin/roles/new`))!.status()).toBe(403);
      const [status] = await post("/admin/roles/new", {
        _csrf: (await b.csrf())!,
        name: "v",
        abilities: "devices.read",
      });
      expect(status).toBe(403);
      expect(await roleNamed("v")).toBeUndefined();
      await b.loginAs("admin1");
    });

    it("lets a scoped user manager change only roles within their own grant", async () => {
      const { page, base } = b;
      // edgy's role edge-ops holds devices.read and users.* and sees the devices tagged edge.
      await t.role({ name: "edge-helpers", permissions: ["devices.read"], tags: ["edge"] });
      const within = (await roleNamed("edge-helpers"))!;
      const beyond = (await roleNamed("superops"))!;
      await b.loginAs("edgy");
      await page.goto(`${base}/admin/users`);
      expect(await page.locator(`#role-row-${within.id} a`).allTextContents()).toEqual(["Edit", "Delete"]);
      expect(await page.locator(`#role-row-${beyond.id} a`).count()).toBe(0);
      // Abilities beyond edgy's role cannot be ticked.
      await page.goto(`${base}/admin/roles/new`);
      expect(await page.isDisabled("#ability-system\\.write")).toBe(true);
      expect(await page.isDisabled("#ability-devices\\.read")).toBe(false);
      await b.loginAs("admin1");
    });
  });
});
