import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { hashTokenValue } from "../../platform/auth/token-value.ts";
import { webSessions } from "../../db/schema/index.ts";
import { manualClock } from "../../../test/helpers/app.ts";
import { createWebTestContext, csrfIn, type WebTestContext } from "../../../test/web/client.ts";

let t: WebTestContext;
afterEach(() => t?.close());

const setCookieLine = (res: Response, name: string) => res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`));

describe("login", () => {
  it("sends / to the login page without a session and to the dashboard with one", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const browser = t.client();
    const anonymous = await browser.get("/");
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get("location")).toBe("/login");
    expect((await browser.login("alice")).status).toBe(303);
    const home = await browser.get("/");
    expect(home.headers.get("location")).toBe("/dashboard");
  });

  it("sets an HttpOnly, SameSite session cookie (not Secure over plain HTTP) and stores only its hash", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const browser = t.client();
    const form = await browser.get("/login");
    expect(form.status).toBe(200);
    expect(form.headers.get("content-type")).toMatch(/^text\/html/);
    expect(setCookieLine(form, "netkeep_login_csrf")).toMatch(/HttpOnly/);
    expect(setCookieLine(form, "netkeep_login_csrf")).toMatch(/SameSite=Strict/);

    const res = await browser.postForm("/login", {
      _csrf: csrfIn(await form.text())!,
      username: "alice",
      password: "correct-horse-battery",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard");
    const cookie = setCookieLine(res, "netkeep_session")!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);

    const value = browser.jar.get("netkeep_session")!;
    expect(value.length).toBeGreaterThanOrEqual(40);
    const rows = await t.db.select().from(webSessions);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.sessionHash).toBe(await hashTokenValue(value));
    expect(JSON.stringify(rows)).not.toContain(value);
  });

  it("marks the cookie Secure when the request came over HTTPS, or APP_URL is https", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const overHttps = t.client();
    const form = await overHttps.get("https://netkeep.test/login");
    const res = await overHttps.postForm("https://netkeep.test/login", {
      _csrf: csrfIn(await form.text())!,
      username: "alice",
      password: "correct-horse-battery",
    });
    expect(setCookieLine(res, "netkeep_session")).toMatch(/; Secure/);
    await t.close();

    t = await createWebTestContext({ config: { appUrl: "https://netkeep.example.net" } });
    await t.user({ username: "alice" });
    const behindProxy = t.client();
    const res2 = await behindProxy.login("alice");
    expect(res2.status).toBe(303);
    expect(setCookieLine(res2, "netkeep_session")).toMatch(/; Secure/);
  });

  it("refuses a login form without its CSRF token (403, no session)", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const browser = t.client();
    await browser.get("/login");
    const res = await browser.postForm("/login", { username: "alice", password: "correct-horse-battery" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("did not carry a valid security token");
    expect(setCookieLine(res, "netkeep_session")).toBeUndefined();
    // A token without the cookie it pairs with (another browser's form) is refused too.
    const other = t.client();
    const stolen = csrfIn(await (await t.client().get("/login")).text())!;
    expect(
      (await other.postForm("/login", { _csrf: stolen, username: "alice", password: "correct-horse-battery" })).status,
    ).toBe(403);
    expect(await t.db.select().from(webSessions)).toHaveLength(0);
  });

  it("refuses wrong passwords and disabled users with the same message", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const bob = await t.user({ username: "bob" });
    await t.disableUser(bob);
    const wrong = await t.client().login("alice", "not-the-password");
    expect(wrong.status).toBe(401);
    const wrongText = await wrong.text();
    expect(wrongText).toContain("Wrong username or password");
    const disabled = await t.client().login("bob");
    expect(disabled.status).toBe(401);
    expect(await disabled.text()).toContain("Wrong username or password");
    const unknown = await t.client().login("nobody");
    expect(unknown.status).toBe(401);
    expect(await unknown.text()).toContain("Wrong username or password");
    const impossible = await t.client().login("x".repeat(300));
    expect(impossible.status).toBe(401);
    expect(await impossible.text()).toContain("Wrong username or password");
    expect(await t.db.select().from(webSessions)).toHaveLength(0);
  });

  it("ends the sessions of a user who is disabled afterwards", async () => {
    t = await createWebTestContext();
    const alice = await t.user({ username: "alice" });
    const browser = t.client();
    await browser.login("alice");
    expect((await browser.get("/settings/restapi")).status).toBe(200);
    await t.disableUser(alice);
    const res = await browser.get("/settings/restapi");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^\/login/);
  });

  it("ends a user's sessions when the API disables, deletes or changes the password of the user; re-enabling brings none back", async () => {
    t = await createWebTestContext();
    const admin = await t.token();
    const alice = await t.user({ username: "alice" });
    const loggedIn = async (username = "alice", password?: string) => {
      const browser = t.client();
      expect((await browser.login(username, password)).status).toBe(303);
      expect((await browser.get("/settings/restapi")).status).toBe(200);
      return browser;
    };
    const sentToLogin = async (browser: ReturnType<typeof t.client>) => {
      const res = await browser.get("/settings/restapi");
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toMatch(/^\/login/);
    };
    const api = (path: string, body?: unknown) =>
      t.call(`/api/v1/users/${alice}${path}`, { method: body === undefined ? "POST" : "PATCH", token: admin, body });

    const beforeDisable = await loggedIn();
    expect((await api("/disable")).status).toBe(200);
    expect((await api("/enable")).status).toBe(200);
    await sentToLogin(beforeDisable);

    const beforePasswordRoute = await loggedIn();
    expect(
      (
        await t.call(`/api/v1/users/${alice}/password`, {
          method: "POST",
          token: admin,
          body: { password: "second-long-passphrase" },
        })
      ).status,
    ).toBe(200);
    await sentToLogin(beforePasswordRoute);

    const beforePatch = await loggedIn("alice", "second-long-passphrase");
    expect((await api("", { email: "alice@example.net" })).status).toBe(200);
    expect((await beforePatch.get("/settings/restapi")).status).toBe(200);
    expect((await api("", { password: "third-long-passphrase" })).status).toBe(200);
    await sentToLogin(beforePatch);

    const beforeDelete = await loggedIn("alice", "third-long-passphrase");
    expect((await t.call(`/api/v1/users/${alice}`, { method: "DELETE", token: admin })).status).toBe(200);
    await sentToLogin(beforeDelete);
    expect(await t.db.select().from(webSessions).where(eq(webSessions.userId, alice))).toHaveLength(0);
  });

  it("throttles failures per username and address: five, then 429 with a growing wait", async () => {
    const clock = manualClock();
    t = await createWebTestContext({ clock });
    await t.user({ username: "alice" });
    const attacker = t.client({ "x-test-client-ip": "198.51.100.7" });
    for (let i = 1; i <= 5; i++) expect((await attacker.login("alice", `guess-${i}`)).status).toBe(401);

    // Locked: even the right password is not heard, and the page says how long to wait.
    const locked = await attacker.login("alice");
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).toBe("30");
    expect(await locked.text()).toContain(
      "Too many failed logins for &#39;alice&#39; from your address. Wait 30 seconds",
    );
    expect(await t.db.select().from(webSessions)).toHaveLength(0);

    // The same user from another address, and another user from the attacker's address, are not held up.
    expect((await t.client({ "x-test-client-ip": "203.0.113.9" }).login("alice")).status).toBe(303);
    await t.user({ username: "carol" });
    expect((await t.client({ "x-test-client-ip": "198.51.100.7" }).login("carol")).status).toBe(303);

    // After the wait, one more failure locks for twice as long.
    clock.advance(30_000);
    expect((await attacker.login("alice", "guess-6")).status).toBe(401);
    const longer = await attacker.login("alice");
    expect(longer.status).toBe(429);
    expect(longer.headers.get("retry-after")).toBe("60");

    // Once the wait is over, the right password gets in and the count starts over.
    clock.advance(60_000);
    expect((await attacker.login("alice")).status).toBe(303);
    const typo = await t.client({ "x-test-client-ip": "198.51.100.7" }).login("alice", "one-typo");
    expect(typo.status).toBe(401);
    expect(await typo.text()).not.toContain("Too many failures");
  });

  it("counts attempts sent together: no more than five get their password checked", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const attackers = Array.from({ length: 12 }, () => t.client({ "x-test-client-ip": "198.51.100.8" }));
    const statuses = (await Promise.all(attackers.map((a, i) => a.login("alice", `guess-${i}`)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it("refuses a multipart or malformed form body with 403, not an error", async () => {
    t = await createWebTestContext();
    const browser = t.client();
    await browser.get("/login");
    const res = await browser.request("/login", {
      method: "POST",
      body: "garbage",
      headers: { "content-type": "multipart/form-data; boundary=x" },
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Form refused");
  });

  it("never redirects to a next path holding control characters", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const browser = t.client();
    expect((await browser.login("alice")).status).toBe(303);
    const res = await browser.get("/login?next=/a%00b");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/dashboard");
  });

  it("expires an idle session, and keeps a used one alive", async () => {
    const clock = manualClock();
    t = await createWebTestContext({ clock });
    await t.user({ username: "alice" });
    const browser = t.client();
    await browser.login("alice");
    const lifetime = t.config.sessionLifetimeMs;
    // Used just before the end of each lifetime, the session slides forward.
    for (let i = 0; i < 3; i++) {
      clock.advance(lifetime - 60_000);
      expect((await browser.get("/settings/restapi")).status).toBe(200);
    }
    clock.advance(lifetime + 1);
    const expired = await browser.get("/settings/restapi");
    expect(expired.status).toBe(302);
    expect(expired.headers.get("location")).toBe("/login?next=%2Fsettings%2Frestapi");
  });

  it("goes back to the page asked for after login, but never to another site", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const browser = t.client();
    const asked = await browser.get("/settings/restapi?tab=documentation");
    expect(asked.headers.get("location")).toBe("/login?next=%2Fsettings%2Frestapi%3Ftab%3Ddocumentation");
    const form = await browser.get(asked.headers.get("location")!);
    const res = await browser.postForm("/login", {
      _csrf: csrfIn(await form.text())!,
      username: "alice",
      password: "correct-horse-battery",
      next: "/settings/restapi?tab=documentation",
    });
    expect(res.headers.get("location")).toBe("/settings/restapi?tab=documentation");

    for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example"]) {
      const other = t.client();
      const page = await other.get("/login");
      const r = await other.postForm("/login", {
        _csrf: csrfIn(await page.text())!,
        username: "alice",
        password: "correct-horse-battery",
        next,
      });
      expect(r.headers.get("location"), next).toBe("/dashboard");
    }
  });
});

describe("logout", () => {
  it("needs the session's CSRF token, then ends the session for good", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const browser = t.client();
    await browser.login("alice");
    const value = browser.jar.get("netkeep_session")!;

    const forged = await browser.postForm("/logout", { _csrf: "not-the-token" });
    expect(forged.status).toBe(403);
    expect((await browser.get("/settings/restapi")).status).toBe(200);

    const res = await browser.postForm("/logout", { _csrf: await browser.csrf() });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/login?logged_out");
    expect(setCookieLine(res, "netkeep_session")).toMatch(/Max-Age=0/);
    expect(
      await t.db
        .select()
        .from(webSessions)
        .where(eq(webSessions.sessionHash, await hashTokenValue(value))),
    ).toHaveLength(0);

    // Replaying the old cookie opens nothing.
    const replay = t.client();
    replay.jar.set("netkeep_session", value);
    expect((await replay.get("/settings/restapi")).status).toBe(302);
  });
});

describe("credentials stay on their own side", () => {
  it("never takes an API token as a web session", async () => {
    t = await createWebTestContext();
    const token = await t.token();
    const withHeader = await t.webApp.request("/settings/restapi", {
      headers: { apitoken: token, accept: "text/html" },
    });
    expect(withHeader.status).toBe(302);
    expect(withHeader.headers.get("location")).toMatch(/^\/login/);
    const withQuery = await t.webApp.request(`/settings/restapi?apitoken=${token}`);
    expect(withQuery.status).toBe(401);
    const home = await t.webApp.request("/", { headers: { apitoken: token } });
    expect(home.headers.get("location")).toBe("/login");
  });

  it("never takes a web session on the API", async () => {
    t = await createWebTestContext();
    await t.user({ username: "alice" });
    const browser = t.client();
    await browser.login("alice");
    expect((await browser.get("/settings/restapi")).status).toBe(200);
    const api = await browser.request("/api/v1/devices");
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ success: false, message: "Unauthorized" });
    expect((await browser.request("/api/v2/users")).status).toBe(401);
  });

  it("shows the settings' login banner as text, at once, before and after a failed attempt", async () => {
    t = await createWebTestContext();
    const admin = await t.token();
    const browser = t.client();
    expect(await (await browser.get("/login")).text()).not.toContain("login-banner");
    const banner = "Authorised use only.\n<b>All sessions are recorded.</b>";
    expect(
      (await t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { login_banner: banner } })).status,
    ).toBe(200);
    const page = await (await browser.get("/login")).text();
    expect(page).toContain("Authorised use only.\n&lt;b&gt;All sessions are recorded.&lt;/b&gt;");
    expect(page).not.toContain("<b>All sessions");
    const refused = await browser.login("nobody-here");
    expect(await refused.text()).toContain("Authorised use only.");
  });
});
