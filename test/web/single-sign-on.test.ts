import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityLog, appSettings, events, users } from "../../src/db/schema/index.ts";
import { manualClock } from "../helpers/app.ts";
import { startOidcProvider, type TamperMode } from "../helpers/oidc-provider.ts";
import { chromiumMissing, createWebTestContext, startBrowser, type Browser, type WebTestContext } from "./chromium.ts";

/**
 * OpenID Connect single sign-on against a real oidc-provider in its own process, signed in through headless
 * Chromium: the provider's login form, its redirect back, and netkeep's checks of what comes back.
 */
const missing = chromiumMissing("single-sign-on.test.ts");
const CLIENT = { clientId: "netkeep", clientSecret: "oidc-client-secret-Qw7" };

describe.skipIf(missing)("single sign-on (OpenID Connect)", () => {
  let t: WebTestContext;
  let b: Browser;
  let admin: string;
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let other: Awaited<ReturnType<typeof startOidcProvider>>;
  // Drives the group refresh interval; the provider's own token lifetimes run on real time.
  const clock = manualClock(new Date());

  const settings = (oidc: Record<string, unknown>) =>
    t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { oidc } });
  const failures = async () =>
    (await t.db.select().from(events).where(eq(events.type, "user.login_failed"))).map(
      (e) => e.payload as { username: string; reason: string },
    );

  /** Through the login page's button and the provider's (development) login form. */
  async function signInAtProvider(login: string) {
    await b.context.clearCookies();
    await b.page.goto(`${b.base}/login`);
    await b.page.getByRole("link", { name: "Sign in with Test IdP" }).click();
    await b.page.waitForURL((url) => url.origin !== b.base);
    await b.page.fill("input[name=login]", login);
    await b.page.fill("input[name=password]", "anything");
    await b.page.click("button[type=submit]");
    await b.page.waitForURL((url) => url.origin === b.base);
  }

  beforeAll(async () => {
    t = await createWebTestContext({ clock });
    b = await startBrowser(t);
    // The redirect URI is built from APP_URL: here, where the browser reaches the app.
    (t.config as { appUrl: string }).appUrl = b.base;
    const client = {
      ...CLIENT,
      redirectUri: `${b.base}/login/oidc/callback`,
      postLogoutUri: `${b.base}/login?logged_out`,
    };
    [provider, other] = await Promise.all([startOidcProvider(client), startOidcProvider(client)]);
    admin = await t.token();
    await t.role({ name: "branch-ops", tags: ["branch"] });
    const res = await settings({
      enabled: true,
      issuer: provider.issuer,
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      scopes: "openid profile email groups",
      group_claim: "groups",
      group_roles: { "netkeep-admins": "branch-ops", staff: "viewer" },
      button_label: "Test IdP",
    });
    expect(res.status).toBe(200);
  });

  afterAll(async () => {
    await b?.close();
    await Promise.all([provider?.stop(), other?.stop()]);
    await t?.close();
  });

  it("keeps the client secret write-only and sealed, and wants the provider and a mapping to enable", async () => {
    const shown = await t.call("/api/v1/settings", { token: admin });
    expect(shown.body.data.oidc).toMatchObject({
      enabled: true,
      issuer: provider.issuer,
      has_client_secret: true,
      button_label: "Test IdP",
    });
    expect(JSON.stringify(shown.body)).not.toContain(CLIENT.clientSecret);
    const [row] = await t.db.select().from(appSettings);
    expect(row!.oidcClientSecretEnc).toBeTruthy();
    expect(JSON.stringify(row)).not.toContain(CLIENT.clientSecret);
    const noMapping = await t.call("/api/v1/settings", {
      method: "PATCH",
      token: admin,
      body: { oidc: { group_roles: {} } },
    });
    expect(noMapping.status).toBe(422);
    expect(JSON.stringify(noMapping.body)).toContain("oidc.group_roles");
    const noRole = await settings({ group_roles: { staff: "no-such-role" } });
    expect(noRole.status).toBe(422);
  });

  let callbackUrl = "";
  it("signs alice in, creating her account with the role her group maps to", async () => {
    // A local account already has her address: hers gets the placeholder rather than failing the sign-in.
    const namesake = await t.user({ username: "alice-local" });
    await t.db
      .update(users)
      .set({ email: "alice@example.test", emailKey: "alice@example.test" })
      .where(eq(users.id, namesake));
    const seen: string[] = [];
    b.page.on("request", (r) => {
      if (r.url().includes("/login/oidc/callback")) seen.push(r.url());
    });
    await signInAtProvider("alice");
    expect(new URL(b.page.url()).pathname).toBe("/dashboard");
    callbackUrl = seen[0]!;
    expect(callbackUrl).toContain("code=");
    const list = await t.call("/api/v1/users", { token: admin });
    const alice = (list.body.data as { username: string; role: string; auth_source: string; email: string }[]).find(
      (u) => u.username === "alice",
    );
    expect(alice).toMatchObject({ role: "branch-ops", auth_source: "oidc", email: "alice@directory.invalid" });
    const logins = await t.db.select().from(events).where(eq(events.type, "user.login"));
    expect(logins.map((e) => e.payload)).toContainEqual(expect.objectContaining({ username: "alice", method: "oidc" }));
    const activity = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.login"));
    expect(activity.some((a) => a.username === "alice")).toBe(true);
    // Her role's scope holds: the devices page shows the branch device, not the other one.
    for (const [name, tag] of [
      ["sso-branch-sw", "branch"],
      ["sso-core-sw", "core"],
    ]) {
      const dev = await t.call("/api/v1/devices", {
        method: "POST",
        token: admin,
        body: { device_name: name, device_ip: "192.0.2.10", device_vendor: "Cisco", device_tags: [tag] },
      });
      expect(dev.status, JSON.stringify(dev.body)).toBe(201);
    }
    await b.page.goto(`${b.base}/devices`);
    const listed = await b.page.textContent("main");
    expect(listed).toContain("sso-branch-sw");
    expect(listed).not.toContain("sso-core-sw");
  });

  it("refuses the same callback URL a second time (state and nonce are used once)", async () => {
    const res = await b.page.goto(callbackUrl);
    expect(res!.status()).toBe(400);
    expect(await b.page.textContent("[role=alert]")).toContain("Single sign-on did not complete");
    expect((await failures()).map((f) => f.reason)).toContain(
      "single sign-on: no pending sign-in (replayed or expired callback)",
    );
  });

  it("logs out of netkeep and sends the browser to the provider's end-session endpoint", async () => {
    await signInAtProvider("alice");

    await b.page.click("form[action='/logout'] button");
    await b.page.waitForURL((url) => url.origin === provider.issuer);
    expect(b.page.url()).toContain("/session/end");
    const after = await b.page.goto(`${b.base}/dashboard`);
    expect(new URL(after!.url()).pathname).toBe("/login");
  });

  it("refuses bob, whose groups map to no role, and creates no account for him", async () => {
    await signInAtProvider("bob");
    expect(await b.page.textContent("[role=alert]")).toContain("in no group that has access");
    expect(await t.db.select().from(users).where(eq(users.username, "bob"))).toHaveLength(0);
    expect(await failures()).toContainEqual({
      username: "bob",
      ip: expect.anything(),
      reason: "single sign-on: no group mapped to a role",
    });
  });

  it("refuses a provider account whose name a local user already has", async () => {
    const local = await t.user({ username: "dana", role: "viewer" });
    await signInAtProvider("dana");
    expect(await b.page.textContent("[role=alert]")).toContain("Single sign-on did not complete");
    expect(await failures()).toContainEqual({
      username: "dana",
      ip: expect.anything(),
      reason: "single sign-on: not a single sign-on user",
    });
    const [row] = await t.db.select().from(users).where(eq(users.id, local));
    expect(row).toMatchObject({ authSource: "local", enabled: true });
  });

  /** Signs in at the provider with the next ID token re-issued (signed with its key) for another audience or nonce. */
  async function signInWithTamperedIdToken(mode: TamperMode) {
    await provider.tamperNextIdToken(mode);
    try {
      await signInAtProvider("alice");
    } finally {
      await provider.tamperNextIdToken("none");
    }
    expect(new URL(b.page.url()).pathname).toBe("/login/oidc/callback");
    expect(await b.page.textContent("[role=alert]")).toContain("Single sign-on did not complete");
    const after = await b.page.goto(`${b.base}/dashboard`);
    expect(new URL(after!.url()).pathname).toBe("/login");
    return (await failures()).at(-1)!;
  }

  it("refuses an ID token the provider signed for another client (audience)", async () => {
    const failure = await signInWithTamperedIdToken("audience");
    expect(failure.reason).toMatch(/^single sign-on: .*"aud"/);
  });

  it("refuses an ID token whose nonce is not the one this sign-in sent", async () => {
    const failure = await signInWithTamperedIdToken("nonce");
    expect(failure.reason).toMatch(/^single sign-on: .*"nonce"/);
  });

  it("refuses an ID token, signed with the provider's key, that names another issuer", async () => {
    const failure = await signInWithTamperedIdToken("issuer");
    expect(failure.reason).toMatch(/^single sign-on: .*"iss" \(issuer\) claim/);
  });

  it("refuses an expired ID token, and one not signed with a key the provider publishes", async () => {
    expect((await signInWithTamperedIdToken("expired")).reason).toMatch(/^single sign-on: .*"exp"/);
    expect((await signInWithTamperedIdToken("signature")).reason).toMatch(/^single sign-on: .*signature/i);
  });

  it("re-reads a signed-in user's groups at the provider after the refresh interval; a removed member loses access", async () => {
    await signInAtProvider("carl");
    expect(new URL(b.page.url()).pathname).toBe("/dashboard");
    const [carl] = await t.db.select().from(users).where(eq(users.username, "carl"));
    // The refresh token is kept sealed, never in clear.
    expect(carl!.oidcRefreshTokenEnc).toMatch(/^v1\./);
    const token = await t.token(["users.read"], { userId: carl!.id });
    const role = async () => (await t.call(`/api/v1/users/${carl!.id}`, { token: admin })).body.data.role as string;
    expect(await role()).toBe("branch-ops");

    await provider.setGroups("carl", ["staff"]);
    clock.advance(14 * 60_000);
    expect((await b.page.goto(`${b.base}/dashboard`))!.status()).toBe(200);
    expect(await role()).toBe("branch-ops"); // groups are trusted for 15 minutes
    clock.advance(2 * 60_000);
    expect((await b.page.goto(`${b.base}/dashboard`))!.status()).toBe(200);
    expect(await role()).toBe("viewer");
    const mapped = await t.db.select().from(events).where(eq(events.type, "user.role_mapped"));
    expect(mapped.map((e) => e.payload)).toContainEqual(
      expect.objectContaining({ username: "carl", old_role: "branch-ops", new_role: "viewer", groups: ["staff"] }),
    );
    expect((await t.call("/api/v1/users", { token })).status).toBe(200);

    await provider.setGroups("carl", ["contractors"]);
    clock.advance(16 * 60_000);
    // His API token is the first to ask: refused, and the account disabled, so the session goes too.
    expect((await t.call("/api/v1/users", { token })).status).toBe(401);
    const after = await b.page.goto(`${b.base}/dashboard`);
    expect(new URL(after!.url()).pathname).toBe("/login");
    const [disabled] = await t.db.select().from(users).where(eq(users.id, carl!.id));
    expect(disabled).toMatchObject({ enabled: false });
    const log = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.disable"));
    expect(log.some((l) => l.subjectId === carl!.id)).toBe(true);
  });

  it("refuses a single sign-on session due a re-read when the provider refuses the refresh token", async () => {
    await signInAtProvider("alice");
    expect(new URL(b.page.url()).pathname).toBe("/dashboard");
    const [alice] = await t.db.select().from(users).where(eq(users.username, "alice"));
    // A refresh token the provider never issued stands for one it revoked.
    await t.db
      .update(users)
      .set({ oidcRefreshTokenEnc: await t.secrets.encrypt("not-a-refresh-token") })
      .where(eq(users.id, alice!.id));
    clock.advance(16 * 60_000);
    const after = await b.page.goto(`${b.base}/dashboard`);
    expect(new URL(after!.url()).pathname).toBe("/login");
    // Refused, not disabled: signing in again reads the groups afresh.
    const [row] = await t.db.select().from(users).where(eq(users.id, alice!.id));
    expect(row).toMatchObject({ enabled: true, oidcRefreshTokenEnc: null });
    await signInAtProvider("alice");
    expect(new URL(b.page.url()).pathname).toBe("/dashboard");
  });

  it("refuses a provider whose discovery document names another issuer", async () => {
    // Same server, reached by another name: its document says http://127.0.0.1:<port>, not what is configured.
    expect((await settings({ issuer: provider.issuer.replace("127.0.0.1", "localhost") })).status).toBe(200);
    await b.context.clearCookies();
    const res = await b.page.goto(`${b.base}/login/oidc`);
    expect(res!.status()).toBe(503);
    expect((await failures()).map((f) => f.reason)).toContain("single sign-on: provider discovery failed");
  });

  it("refuses a callback once the configured provider is another than the one the sign-in started at", async () => {
    // Sign-in starts at the first provider; the second (another issuer, the same client) is configured before
    // the callback, so the code and token are not the configured issuer's.
    expect((await settings({ issuer: provider.issuer })).status).toBe(200);
    await b.context.clearCookies();
    await b.page.goto(`${b.base}/login`);
    await b.page.getByRole("link", { name: "Sign in with Test IdP" }).click();
    await b.page.waitForURL((url) => url.origin === provider.issuer);
    expect((await settings({ issuer: other.issuer })).status).toBe(200);
    await b.page.fill("input[name=login]", "alice");
    await b.page.fill("input[name=password]", "anything");
    await b.page.click("button[type=submit]");
    await b.page.waitForURL((url) => url.origin === b.base);
    expect(await b.page.textContent("[role=alert]")).toContain("Single sign-on did not complete");
    expect(new URL(b.page.url()).pathname).toBe("/login/oidc/callback");
    // The redirect back names the issuer it came from (RFC 9207), which is not the configured one.
    expect((await failures()).at(-1)!.reason).toMatch(/^single sign-on: .*"iss" \(issuer\) response parameter/);
  });

  it("refuses a client id the provider did not issue the token to", async () => {
    expect((await settings({ issuer: provider.issuer, client_id: "someone-else" })).status).toBe(200);
    await b.context.clearCookies();
    await b.page.goto(`${b.base}/login/oidc`);
    // The provider refuses the unknown client at once; no netkeep session comes of it.
    expect(new URL(b.page.url()).origin).toBe(provider.issuer);
    const after = await b.page.goto(`${b.base}/dashboard`);
    expect(new URL(after!.url()).pathname).toBe("/login");
  });

  it("asks the provider nothing within the refresh interval, and refuses a re-read it cannot make", async () => {
    expect((await settings({ issuer: provider.issuer, client_id: CLIENT.clientId })).status).toBe(200);
    await signInAtProvider("alice");
    expect(new URL(b.page.url()).pathname).toBe("/dashboard");
    // A provider that cannot be reached (nothing listens on port 9 of loopback).
    expect((await settings({ issuer: "http://127.0.0.1:9" })).status).toBe(200);
    clock.advance(10 * 60_000);
    expect((await b.page.goto(`${b.base}/dashboard`))!.status()).toBe(200);
    clock.advance(6 * 60_000);
    const after = await b.page.goto(`${b.base}/dashboard`);
    expect(new URL(after!.url()).pathname).toBe("/login");
    const [alice] = await t.db.select().from(users).where(eq(users.username, "alice"));
    expect(alice).toMatchObject({ enabled: true });
  });
});
