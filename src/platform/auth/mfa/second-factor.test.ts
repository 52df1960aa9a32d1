import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../../../test/helpers/app.ts";
import { createWebTestContext, csrfIn, type WebClient, type WebTestContext } from "../../../../test/web/client.ts";
import { activityLog, events, users } from "../../../db/schema/index.ts";
import { totpCode } from "./totp.ts";

const SECOND_FACTOR = "/login/second-factor";

let t: WebTestContext;
let admin: string;
const clock = manualClock(new Date("2026-06-01T09:00:00Z"));
let ipCounter = 0;

beforeAll(async () => {
  t = await createWebTestContext({ clock });
  admin = await t.token();
});
afterAll(() => t.close());

/** A browser of its own address, so the throttle of one test does not reach another. */
const browser = () => t.client({ "x-test-client-ip": `198.51.100.${++ipCounter}` });
const eventsOf = async (type: string) =>
  (await t.db.select().from(events).where(eq(events.type, type))).map((e) => e.payload as Record<string, unknown>);
const userRow = async (username: string) => (await t.db.select().from(users).where(eq(users.username, username)))[0]!;
const secretIn = (html: string) => /class="totp-secret">([A-Z2-7]+)</.exec(html)?.[1];
const codesIn = (html: string) =>
  [...html.matchAll(/<li><code>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})<\/code><\/li>/g)].map((m) => m[1]!);

/** Password step, then the code form; returns the answer to the code. */
async function signInWithCode(client: WebClient, username: string, code: string) {
  const first = await client.login(username);
  expect(first.status).toBe(303);
  expect(first.headers.get("location")).toBe(SECOND_FACTOR);
  const form = await client.get(SECOND_FACTOR);
  expect(form.status).toBe(200);
  return client.postForm(SECOND_FACTOR, { _csrf: csrfIn(await form.text())!, code });
}

/** Enrols a signed-in user through the account page; returns the secret and the recovery codes. */
async function enrol(client: WebClient) {
  const page = await client.get("/account/two-factor");
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("<svg");
  const secret = secretIn(html)!;
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  const wrong = await client.postForm("/account/two-factor/confirm", {
    _csrf: csrfIn(html)!,
    code: "000000" === (await totpCode(secret, clock.now())) ? "111111" : "000000",
  });
  expect(wrong.status).toBe(422);
  const done = await client.postForm("/account/two-factor/confirm", {
    _csrf: csrfIn(html)!,
    code: await totpCode(secret, clock.now()),
  });
  expect(done.status).toBe(200);
  const codes = codesIn(await done.text());
  expect(codes).toHaveLength(10);
  return { secret, codes };
}

describe("TOTP second factor", () => {
  let secret: string;
  let codes: string[];

  it("enrols from the account page with a QR code and a first code, keeping the secret sealed and the recovery codes hashed", async () => {
    await t.user({ username: "alice", role: "viewer" });
    const client = browser();
    expect((await client.login("alice")).headers.get("location")).toBe("/dashboard");
    ({ secret, codes } = await enrol(client));
    const row = await userRow("alice");
    expect(row.totpSecretEnc).toMatch(/^v1\./);
    expect(row.totpPendingEnc).toBeNull();
    expect(JSON.stringify(row)).not.toContain(secret);
    for (const code of codes) expect(JSON.stringify(row)).not.toContain(code);
    expect(await eventsOf("user.mfa_changed")).toContainEqual({
      user_id: row.id,
      username: "alice",
      change: "enabled",
      recovery_codes_left: 10,
    });
    expect((await t.call(`/api/v1/users/${row.id}`, { token: admin })).body.data).toMatchObject({
      auth_source: "local",
      second_factor: true,
    });
    const log = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.mfa_enabled"));
    expect(log.map((l) => l.subjectId)).toContain(row.id);
  });

  it("asks for a code after the password, and the waiting session opens nothing else", async () => {
    clock.advance(60_000);
    const client = browser();
    expect((await client.login("alice")).headers.get("location")).toBe(SECOND_FACTOR);
    expect((await client.get("/dashboard")).status).toBe(302);
    expect((await client.get("/account/two-factor")).status).toBe(302);
    const form = await client.get(SECOND_FACTOR);
    const res = await client.postForm(SECOND_FACTOR, {
      _csrf: csrfIn(await form.text())!,
      code: await totpCode(secret, clock.now()),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard");
    expect((await client.get("/dashboard")).status).toBe(200);
    expect(await eventsOf("user.login")).toContainEqual(
      expect.objectContaining({ username: "alice", method: "local", second_factor: "totp" }),
    );
  });

  it("refuses a code already used, and a wrong one; the next step's code works", async () => {
    // The same 30-second step as the sign-in before: a replay.
    const replay = await signInWithCode(browser(), "alice", await totpCode(secret, clock.now()));
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain("already used");
    expect(await eventsOf("user.login_failed")).toContainEqual(
      expect.objectContaining({ username: "alice", reason: "second factor code already used" }),
    );
    const current = await totpCode(secret, clock.now());
    const wrong = await signInWithCode(browser(), "alice", current === "123456" ? "654321" : "123456");
    expect(wrong.status).toBe(401);
    expect(await eventsOf("user.login_failed")).toContainEqual(
      expect.objectContaining({ username: "alice", reason: "wrong second factor code" }),
    );
    clock.advance(30_000);
    expect((await signInWithCode(browser(), "alice", await totpCode(secret, clock.now()))).status).toBe(303);
  });

  it("takes each recovery code once", async () => {
    const client = browser();
    const used = await signInWithCode(client, "alice", codes[0]!.toUpperCase());
    expect(used.status).toBe(303);
    expect(await eventsOf("user.mfa_changed")).toContainEqual(
      expect.objectContaining({ username: "alice", change: "recovery_code_used", recovery_codes_left: 9 }),
    );
    expect(await (await client.get("/account/two-factor")).text()).toContain("9 recovery codes left");
    expect((await signInWithCode(browser(), "alice", codes[0]!)).status).toBe(401);
    expect((await signInWithCode(browser(), "alice", codes[1]!)).status).toBe(303);
  });

  it("counts wrong codes against the sign-in lockout, which then refuses even the right code", async () => {
    const client = browser();
    const ip = `198.51.100.${ipCounter}`;
    expect((await client.login("alice")).headers.get("location")).toBe(SECOND_FACTOR);
    const csrf = csrfIn(await (await client.get(SECOND_FACTOR)).text())!;
    const right = await totpCode(secret, clock.now());
    const wrong = right === "123456" ? "654321" : "123456";
    for (let i = 0; i < 5; i++)
      expect((await client.postForm(SECOND_FACTOR, { _csrf: csrf, code: wrong })).status).toBe(401);
    expect(await eventsOf("user.locked_out")).toContainEqual({ username: "alice", ip, retry_after_seconds: 30 });
    const locked = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.locked_out"));
    expect(locked.some((l) => (l.changes as Record<string, { new: unknown }>).ip?.new === ip)).toBe(true);
    const refused = await client.postForm(SECOND_FACTOR, { _csrf: csrf, code: right });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect((await client.get("/dashboard")).status).toBe(302);
  });

  it("renews the recovery codes, and turns off only with the password", async () => {
    clock.advance(30_000);
    const client = browser();
    expect((await signInWithCode(client, "alice", await totpCode(secret, clock.now()))).status).toBe(303);
    const page = await (await client.get("/account/two-factor")).text();
    const renewed = await client.postForm("/account/two-factor/recovery-codes", { _csrf: csrfIn(page)! });
    const fresh = codesIn(await renewed.text());
    expect(fresh).toHaveLength(10);
    expect((await signInWithCode(browser(), "alice", codes[2]!)).status).toBe(401);

    const wrong = await client.postForm("/account/two-factor/disable", {
      _csrf: csrfIn(page)!,
      password: "not-my-password",
    });
    expect(wrong.status).toBe(401);
    expect((await userRow("alice")).totpSecretEnc).not.toBeNull();
    const off = await client.postForm("/account/two-factor/disable", {
      _csrf: csrfIn(page)!,
      password: "correct-horse-battery",
    });
    expect(off.status).toBe(303);
    expect((await userRow("alice")).totpSecretEnc).toBeNull();
    expect((await browser().login("alice")).headers.get("location")).toBe("/dashboard");
    expect(await eventsOf("user.mfa_changed")).toContainEqual(
      expect.objectContaining({ username: "alice", change: "disabled", recovery_codes_left: 0 }),
    );
  });

  it("makes administrators enrol at sign-in when the policy asks it of admins, and lets an administrator reset it", async () => {
    const policy = await t.call("/api/v1/settings", {
      method: "PATCH",
      token: admin,
      body: { mfa: { required_for: "admins" } },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    await t.user({ username: "bob", role: "admin" });
    await t.user({ username: "carol", role: "viewer" });
    expect((await browser().login("carol")).headers.get("location")).toBe("/dashboard");

    const client = browser();
    expect((await client.login("bob")).headers.get("location")).toBe(SECOND_FACTOR);
    const html = await (await client.get(SECOND_FACTOR)).text();
    expect(html).toContain("Set up a second factor");
    const bobSecret = secretIn(html)!;
    expect((await client.get("/dashboard")).status).toBe(302);
    const enrolled = await client.postForm(SECOND_FACTOR, {
      _csrf: csrfIn(html)!,
      code: await totpCode(bobSecret, clock.now()),
    });
    expect(enrolled.status).toBe(200);
    expect(codesIn(await enrolled.text())).toHaveLength(10);
    expect((await client.get("/dashboard")).status).toBe(200);
    // The policy covers him: no way to turn it off.
    const page = await (await client.get("/account/two-factor")).text();
    expect(page).toContain("cannot be turned off");
    expect(
      (
        await client.postForm("/account/two-factor/disable", {
          _csrf: csrfIn(page)!,
          password: "correct-horse-battery",
        })
      ).status,
    ).toBe(409);

    const bob = await userRow("bob");
    const reset = await t.call(`/api/v1/users/${bob.id}/second-factor/reset`, { method: "POST", token: admin });
    expect(reset.status).toBe(200);
    expect((await userRow("bob")).totpSecretEnc).toBeNull();
    expect((await t.call(`/api/v1/users/${bob.id}/second-factor/reset`, { method: "POST", token: admin })).status).toBe(
      409,
    );
    expect(await eventsOf("user.mfa_changed")).toContainEqual(
      expect.objectContaining({ username: "bob", change: "reset" }),
    );
    // Still covered by the policy: the next sign-in enrols again.
    expect((await browser().login("bob")).headers.get("location")).toBe(SECOND_FACTOR);
    await t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { mfa: { required_for: "none" } } });
  });

  it("makes every local user enrol when the policy asks it of all", async () => {
    const policy = await t.call("/api/v1/settings", {
      method: "PATCH",
      token: admin,
      body: { mfa: { required_for: "all" } },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    try {
      // carol, a viewer, signed straight in under the admins-only policy; now she enrols first.
      const client = browser();
      expect((await client.login("carol")).headers.get("location")).toBe(SECOND_FACTOR);
      const html = await (await client.get(SECOND_FACTOR)).text();
      expect(html).toContain("Set up a second factor");
      expect((await client.get("/dashboard")).status).toBe(302);
      const enrolled = await client.postForm(SECOND_FACTOR, {
        _csrf: csrfIn(html)!,
        code: await totpCode(secretIn(html)!, clock.now()),
      });
      expect(enrolled.status).toBe(200);
      expect((await client.get("/dashboard")).status).toBe(200);
      expect((await userRow("carol")).totpSecretEnc).toMatch(/^v1\./);
    } finally {
      await t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { mfa: { required_for: "none" } } });
    }
  });
});
