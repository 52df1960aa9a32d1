import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

/** device_name's length rule counts what a person sees, and a name may not hide characters nobody sees. */

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

const create = (device_name: string) =>
  t.call("/api/v1/devices", {
    method: "POST",
    token,
    body: { device_name, device_ip: "192.0.2.70", device_vendor: "Cisco" },
  });

describe("device_name", () => {
  it("counts a letter with its combining marks once", async () => {
    const threeShown = "e\u0301\u0323a\u0308o\u0302"; // 7 code units, 3 characters on screen
    const refused = await create(threeShown);
    expect(refused).toMatchObject({
      status: 422,
      body: {
        errors: {
          device_name: ["device_name must be at least 5 characters as shown (a letter with its accents counts once)"],
        },
      },
    });
    expect((await create("re\u0301sea\u0301u-1")).status).toBe(201); // 9 shown
  });

  it("refuses zero-width and other invisible characters", async () => {
    for (const name of ["rtr\u200B01", "rtr01\u200D", "\u2060rtr-01", "rtr\u00AD-01", "rtr\u200E-01"]) {
      const res = await create(name);
      expect(res.status, JSON.stringify(name)).toBe(422);
      expect(res.body.errors.device_name).toEqual([expect.stringContaining("must not contain invisible characters")]);
    }
  });

  it("keeps the plain rules: five characters, one problem for a short name", async () => {
    expect((await create("abc")).body.errors.device_name).toEqual(["device_name must be at least 5 characters"]);
    expect((await create("abcde")).status).toBe(201);
  });
});
