/**
 * Every web page the app serves, asked for by a signed-in administrator with odd path ids and query strings (as
 * a hand-edited address bar or a stale bookmark sends them): never a 5xx or a hang. Deterministic; a failure
 * names the address.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerWithin, seededChoice } from "../../../test/helpers/fuzz.ts";
import { createWebTestContext, type WebClient, type WebTestContext } from "../../../test/web/client.ts";

const ODD = [
  "0",
  "-1",
  "1",
  "2",
  "abc",
  "1.5",
  "99999999999999999999",
  "%00",
  "%25",
  "..%2F..",
  "%C3%BC",
  "a".repeat(3000),
  "",
  "null",
  "%5B%5D",
];
const PARAMS = [
  "page",
  "per_page",
  "sort",
  "q",
  "tab",
  "version",
  "status",
  "device_id",
  "filter[name]",
  "from",
  "to",
  "latest_only",
  "regex",
  "next",
  "id",
];
const FIELDS = [
  "username",
  "password",
  "next",
  "name",
  "abilities",
  "action",
  "ids",
  "back",
  "inline",
  "role",
  "role_id",
  "tags",
  "expires_at",
  "email",
  "new_password",
];
const REQUESTS_PER_PAGE = 12;

let t: WebTestContext;
let browser: WebClient;
beforeAll(async () => {
  t = await createWebTestContext();
  const admin = await t.token();
  await t.call("/api/v1/devices", {
    method: "POST",
    token: admin,
    body: { device_name: "fuzz-1", device_ip: "192.0.2.10", device_vendor: "Cisco" },
  });
  await t.user({ username: "fuzz-admin" });
  browser = t.client();
  await browser.login("fuzz-admin");
});
afterAll(() => t.close());

describe("the web pages under odd addresses", () => {
  it("answers every GET page without a 5xx or a hang", async () => {
    const { rnd, pick } = seededChoice(11);
    const pages = [
      ...new Set(
        t.webApp.routes
          .filter((r) => r.method === "GET" && !r.path.startsWith("/api/") && !r.path.includes("*"))
          .map((r) => r.path),
      ),
    ];
    expect(pages.length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const page of pages) {
      for (let n = 0; n < REQUESTS_PER_PAGE; n++) {
        let url = page.replace(/:[A-Za-z_]+(\{[^}]*\})?/g, () => (rnd() < 0.5 ? pick(["1", "2"]) : pick(ODD)));
        const query = Array.from(
          { length: Math.floor(rnd() * 3) },
          () => `${encodeURIComponent(pick(PARAMS))}=${pick(ODD)}`,
        );
        if (query.length) url += `?${query.join("&")}`;
        try {
          const res = await answerWithin(browser.get(url));
          if (res.status >= 500)
            failures.push(`GET ${url.slice(0, 200)}: ${res.status} ${(await res.text()).slice(0, 300)}`);
          else await res.arrayBuffer();
        } catch (e) {
          failures.push(`GET ${url.slice(0, 200)}: ${(e as Error).message.slice(0, 300)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it("answers every form post with odd fields without a 5xx or a hang", async () => {
    const { rnd, pick } = seededChoice(17);
    // Signing out would only end the session the rest uses; each form gets a session of its own, as a user may
    // disable or demote themselves through one.
    const forms = [
      ...new Set(
        t.webApp.routes
          .filter((r) => r.method === "POST" && !r.path.startsWith("/api/") && r.path !== "/logout")
          .map((r) => r.path),
      ),
    ];
    expect(forms.length).toBeGreaterThan(5);
    const failures: string[] = [];
    for (const [i, form] of forms.entries()) {
      await t.user({ username: `fuzz-form-${i}` });
      const session = t.client();
      await session.login(`fuzz-form-${i}`);
      const csrf = await session.csrf();
      for (let n = 0; n < REQUESTS_PER_PAGE; n++) {
        const url = form.replace(/:([A-Za-z_]+)(\{([^}]*)\})?/g, (_, _name: string, _all: string, choices?: string) =>
          choices && rnd() < 0.7 ? pick(choices.split("|")) : rnd() < 0.5 ? pick(["1", "2"]) : pick(ODD),
        );
        const fields: Record<string, string[]> = { _csrf: [rnd() < 0.9 ? csrf : pick(ODD)] };
        for (let k = Math.floor(rnd() * 5); k > 0; k--)
          (fields[pick(FIELDS)] ??= []).push(decodeURIComponent(pick(ODD).replace(/%(?![0-9A-F]{2})/g, "%25")));
        try {
          const res = await answerWithin(session.postForm(url, fields));
          if (res.status >= 500)
            failures.push(
              `POST ${url.slice(0, 200)} ${JSON.stringify(fields).slice(0, 200)}: ${res.status} ${(await res.text()).slice(0, 300)}`,
            );
          else await res.arrayBuffer();
        } catch (e) {
          failures.push(`POST ${url.slice(0, 200)}: ${(e as Error).message.slice(0, 300)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
