import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { apiTokens } from "../../../db/schema/index.ts";
import { createWebTestContext, csrfIn, type WebTestContext } from "../../../../test/web/client.ts";

let t: WebTestContext;
afterEach(() => t?.close());

/** A user's own token from /tokens, with the optional date it stops working. */
describe("/tokens: expiry", () => {
  it("keeps a chosen date as the end of that day (UTC), shows it, and refuses a date that has passed", async () => {
    t = await createWebTestContext();
    await t.user({ username: "op1", role: "operator" });
    const browser = t.client();
    expect((await browser.login("op1")).status).toBe(303);
    const csrf = csrfIn(await (await browser.get("/tokens")).text())!;
    const today = t.clock.now().toISOString().slice(0, 10);
    const day = new Date(t.clock.now().getTime() + 10 * 86_400_000).toISOString().slice(0, 10);

    const made = await browser.postForm("/tokens", {
      _csrf: csrf,
      name: "ten days",
      abilities: ["devices.read"],
      expires_on: day,
    });
    expect(made.status).toBe(201);
    const [row] = await t.db.select().from(apiTokens).where(eq(apiTokens.name, "ten days"));
    expect(row!.expiresAt!.toISOString()).toBe(new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString());
    const listed = await (await browser.get("/tokens")).text();
    expect(listed).toContain("<th>Expires</th>");

    for (const bad of [today, "2020-01-01", "2026-02-30", "next week"]) {
      const refused = await browser.postForm("/tokens", {
        _csrf: csrf,
        name: `bad ${bad}`,
        abilities: ["devices.read"],
        expires_on: bad,
      });
      expect(refused.status, bad).toBe(422);
      const page = await refused.text();
      expect(page).toContain("Expires on must be a date (YYYY-MM-DD) after today, or empty.");
    }
    expect(await t.db.select().from(apiTokens)).toHaveLength(1);
  });

  it("leaves an empty date to the settings' default lifetime", async () => {
    t = await createWebTestContext();
    await t.user({ username: "op2", role: "operator" });
    const browser = t.client();
    expect((await browser.login("op2")).status).toBe(303);
    const csrf = csrfIn(await (await browser.get("/tokens")).text())!;
    const made = await browser.postForm("/tokens", { _csrf: csrf, name: "no date", abilities: ["devices.read"] });
    expect(made.status).toBe(201);
    const [row] = await t.db.select().from(apiTokens).where(eq(apiTokens.name, "no date"));
    expect(row!.expiresAt).toBeNull();
  });
});
