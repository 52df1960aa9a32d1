import { afterAll, beforeAll, expect, it } from "vitest";
import { createWebTestContext, type WebClient, type WebTestContext } from "../../../test/web/client.ts";
import { fillDatabase } from "../../../test/helpers/full-disk.ts";

/** A web form whose write the disk refuses (SQLITE_FULL, for real) shows a page saying the disk is full: a 507, not a 500. */

let t: WebTestContext;
let browser: WebClient;
beforeAll(async () => {
  t = await createWebTestContext();
  await t.user({ username: "disk-admin" });
  browser = t.client();
  await browser.login("disk-admin");
});
afterAll(() => t.close());

it("says the disk is full when a form's write is refused", async () => {
  const csrf = await browser.csrf();
  await fillDatabase(t.db);
  let res: Response | undefined;
  for (let i = 0; i < 300; i++) {
    res = await browser.postForm("/tokens", {
      _csrf: csrf,
      name: `full disk ${i} ${"x".repeat(80)}`,
      abilities: ["devices.read", "configs.read", "tags.read"],
    });
    if (res.status !== 201) break;
    await res.arrayBuffer();
  }
  expect(res!.status).toBe(507);
  const page = await res!.text();
  expect(page).toContain("The disk is full");
  expect(page).toMatch(/The page failed: the disk holding the database and STORAGE_DIR is full/);
});
