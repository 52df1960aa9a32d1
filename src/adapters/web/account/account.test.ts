import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock, TEST_PASSWORD } from "../../../../test/helpers/app.ts";
import { until } from "../../../../test/helpers/until.ts";
import { createWebTestContext, csrfIn, type WebTestContext } from "../../../../test/web/client.ts";
import { createLogger } from "../../../kernel/logger.ts";
import { startTokenExpiryWarnings, warnExpiringTokens } from "../../../platform/auth/token-expiry.ts";
import { revokeToken } from "../../../platform/auth/tokens.ts";
import { activityLog, apiTokens, events, webSessions } from "../../../db/schema/index.ts";

let t: WebTestContext;
let admin: string;
const clock = manualClock(new Date("2026-06-01T09:00:00Z"));
let ipCounter = 0;

beforeAll(async () => {
  t = await createWebTestContext({ clock });
  admin = await t.token();
});
afterAll(() => t.close());

const browser = () => t.client({ "x-test-client-ip": `198.51.100.${++ipCounter}` });
async function signedIn(username: string, password = TEST_PASSWORD) {
  const client = browser();
  expect((await client.login(username, password)).headers.get("location")).toBe("/dashboard");
  return client;
}

describe("your account page", () => {
  it("links to what a user manages about themselves: password, sessions, second factor and API tokens", async () => {
    await t.user({ username: "olga", role: "viewer" });
    const html = await (await (await signedIn("olga")).get("/account")).text();
    for (const href of ["/account/password", "/account/sessions", "/account/two-factor", "/tokens"])
      expect(html, href).toContain(`href="${href}"`);
    expect(html).toContain("Second factor</a>: off");
  });
});

describe("your own password", () => {
  it("changes with the current password and the rule, ending the other sessions but this one", async () => {
    const userId = await t.user({ username: "alice", role: "viewer" });
    const here = await signedIn("alice");
    const elsewhere = await signedIn("alice");
    const csrf = await here.csrf("/account/password");
    const post = (fields: Record<string, string>) => here.postForm("/account/password", { _csrf: csrf, ...fields });
    const next = "a-brand-new-passphrase";

    const wrong = await post({ current: "not-it-at-all", password: next, repeated: next });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("The current password is wrong");
    expect((await post({ current: TEST_PASSWORD, password: "short", repeated: "short" })).status).toBe(422);
    expect((await post({ current: TEST_PASSWORD, password: next, repeated: `${next}x` })).status).toBe(422);
    expect((await elsewhere.get("/dashboard")).status).toBe(200);

    const done = await post({ current: TEST_PASSWORD, password: next, repeated: next });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("1 other session ended");
    expect((await here.get("/dashboard")).status).toBe(200);
    expect((await elsewhere.get("/dashboard")).status).toBe(302);
    expect((await browser().login("alice")).status).toBe(401);
    await signedIn("alice", next);
    const log = await t.db
      .select()
      .from(activityLog)
      .where(and(eq(activityLog.action, "user.password_change"), eq(activityLog.subjectId, userId)));
    expect(log).toHaveLength(1);
    expect(JSON.stringify(log)).not.toContain(next);
  });
});

describe("your own sessions", () => {
  it("lists them and ends one, or all others, and never another user's", async () => {
    const bobId = await t.user({ username: "bob", role: "viewer" });
    await t.user({ username: "carol", role: "viewer" });
    const here = await signedIn("bob");
    const laptop = await signedIn("bob");
    const phone = await signedIn("bob");
    const carol = await signedIn("carol");
    const page = await (await here.get("/account/sessions")).text();
    const ids = [...page.matchAll(/data-session-id="(\d+)"/g)].map((m) => Number(m[1]));
    expect(ids).toHaveLength(3);
    expect(page).toContain("this session");

    const [carolSession] = await t.db
      .select({ id: webSessions.id })
      .from(webSessions)
      .where(eq(webSessions.ip, `198.51.100.${ipCounter}`));
    const refused = await here.postForm(`/account/sessions/${carolSession!.id}/end`, { _csrf: csrfIn(page)! });
    expect(await refused.text()).toContain("No such session of yours");
    expect((await carol.get("/dashboard")).status).toBe(200);

    // The laptop's session is the one whose address is the laptop's.
    const laptopIp = `198.51.100.${ipCounter - 2}`;
    const [laptopSession] = await t.db
      .select({ id: webSessions.id })
      .from(webSessions)
      .where(eq(webSessions.ip, laptopIp));
    expect(ids).toContain(laptopSession!.id);
    const ended = await here.postForm(`/account/sessions/${laptopSession!.id}/end`, { _csrf: csrfIn(page)! });
    expect(await ended.text()).toContain("Session ended.");
    expect((await laptop.get("/dashboard")).status).toBe(302);
    expect((await phone.get("/dashboard")).status).toBe(200);

    const others = await here.postForm("/account/sessions/end-others", { _csrf: csrfIn(page)! });
    expect(await others.text()).toContain("1 other session ended.");
    expect((await phone.get("/dashboard")).status).toBe(302);
    expect((await here.get("/dashboard")).status).toBe(200);
    expect((await carol.get("/dashboard")).status).toBe(200);
    const log = await t.db
      .select()
      .from(activityLog)
      .where(and(eq(activityLog.action, "user.sessions_end"), eq(activityLog.subjectId, bobId)));
    expect(log.map((l) => [l.username, l.changes])).toEqual([
      ["bob", { sessions_ended: { old: null, new: 1 } }],
      ["bob", { sessions_ended: { old: null, new: 1 } }],
    ]);
  });
});

describe("API token expiry", () => {
  it("gives a token made without a date the settings' default lifetime, and warns once before it expires", async () => {
    const settings = await t.call("/api/v1/settings", {
      method: "PATCH",
      token: admin,
      body: { tokens: { default_expiry_days: 30, expiry_warning_days: 7 } },
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    await t.user({ username: "dave", role: "admin" });
    const client = await signedIn("dave");
    const made = await client.postForm("/tokens", {
      _csrf: await client.csrf("/tokens"),
      name: "backup script",
      abilities: "devices.read",
    });
    expect(made.status).toBe(201);
    const [token] = await t.db.select().from(apiTokens).where(eq(apiTokens.name, "backup script"));
    const expiresAt = new Date(clock.now().getTime() + 30 * 86_400_000);
    expect(token!.expiresAt).toEqual(expiresAt);
    // One made with no expiry on purpose (null), and one revoked before its warning: neither is warned about.
    await t.token(["devices.read"]);
    const doomed = await t.token(["devices.read"], { expiresAt: new Date(expiresAt.getTime() - 60_000) });
    const [doomedRow] = await t.db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.tokenPrefix, doomed.slice(0, 9)));
    expect(await revokeToken(t.db, doomedRow!.id, clock.now())).toBe(true);

    const warnings = async () =>
      (await t.db.select().from(events).where(eq(events.type, "token.expiring"))).map((e) => e.payload);
    expect(await warnExpiringTokens(t.db, clock.now())).toBe(0);
    clock.advance(23 * 86_400_000 - 60_000);
    expect(await warnExpiringTokens(t.db, clock.now())).toBe(0);
    clock.advance(60_000);
    expect(await warnExpiringTokens(t.db, clock.now())).toBe(1);
    expect(await warnings()).toEqual([
      {
        token_id: token!.id,
        token_name: "backup script",
        user_id: token!.userId,
        username: "dave",
        expires_at: expiresAt.toISOString(),
      },
    ]);
    clock.advance(86_400_000);
    expect(await warnExpiringTokens(t.db, clock.now())).toBe(0);
    expect(await warnings()).toHaveLength(1);
  });

  it("looks for tokens due a warning on its own schedule, as the API process runs it", async () => {
    const token = await t.token(["devices.read"], { expiresAt: new Date(clock.now().getTime() + 86_400_000) });
    const [row] = await t.db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.tokenPrefix, token.slice(0, 9)));
    const lines: string[] = [];
    // A short interval stands in for the hour: nothing here calls warnExpiringTokens.
    const schedule = startTokenExpiryWarnings({ db: t.db, clock, logger: createLogger((l) => lines.push(l)) }, 20);
    try {
      const sent = await until(
        "the scheduled pass to warn of the token",
        async () => (await t.db.select().from(events).where(eq(events.type, "token.expiring"))).map((e) => e.payload),
        (payloads) => payloads.some((p) => (p as { token_id: number }).token_id === row!.id),
      );
      expect(sent.filter((p) => (p as { token_id: number }).token_id === row!.id)).toHaveLength(1);
      await until("the pass to be logged", () => lines.some((l) => l.includes("warned of expiring API tokens")));
    } finally {
      schedule.stop();
    }
  });
});
