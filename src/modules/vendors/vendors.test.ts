import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_TEMPLATES_DIR } from "../../runtime/builtin-templates.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

describe("vendors", () => {
  it("lists the seeded vendors sorted by name, paginated", async () => {
    const res = await t.call("/api/v1/vendors?per_page=3", { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.map((v: { name: string }) => v.name)).toEqual([
      "Adtran",
      "Alcatel-Lucent Enterprise",
      "Allied Telesis",
    ]);
    expect(res.body.meta.total).toBeGreaterThanOrEqual(13);
  });

  it("seeds the vendors the built-in templates name, with the other names their devices are sold under", async () => {
    const res = await t.call("/api/v1/vendors?per_page=500", { token: admin });
    const names = res.body.data.map((v: { name: string }) => v.name);
    // The template files' own `vendor:` lines, read without the loader the seeding uses.
    const named = readdirSync(BUILTIN_TEMPLATES_DIR)
      .filter((f) => f.endsWith(".yaml"))
      .flatMap((f) => /^vendor: (.+)$/m.exec(readFileSync(join(BUILTIN_TEMPLATES_DIR, f), "utf8"))?.[1] ?? []);
    expect(named.length).toBeGreaterThan(40);
    expect(names).toEqual(expect.arrayContaining([...new Set(named)]));
    // Named by no template's `vendor`, only by HPE Comware's `also_sold_as`.
    expect(names).toContain("H3C");
    expect(names).toHaveLength(new Set(named).size + 1);
  });

  it("creates, renames and deletes an unused vendor", async () => {
    const created = await t.call("/api/v1/vendors", { method: "POST", token: admin, body: { name: "Cambium" } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const renamed = await t.call(`/api/v1/vendors/${id}`, {
      method: "PATCH",
      token: admin,
      body: { name: "Cambium Networks" },
    });
    expect(renamed.body.data.name).toBe("Cambium Networks");
    expect(
      (
        await t.call("/api/v1/devices", {
          method: "POST",
          token: admin,
          body: { device_name: "uap-lobby", device_ip: "192.0.2.7", device_vendor: "cambium networks" },
        })
      ).status,
    ).toBe(201);
    const refused = await t.call(`/api/v1/vendors/${id}`, { method: "DELETE", token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe(`Vendor ${id} is used by 1 device; move them to another vendor first`);
    await t.call("/api/v1/devices/bulk", {
      method: "DELETE",
      token: admin,
      body: {
        ids: [(await t.call("/api/v1/devices?filter[device_name]=uap-lobby", { token: admin })).body.data[0].id],
      },
    });
    expect((await t.call(`/api/v1/vendors/${id}`, { method: "DELETE", token: admin })).status).toBe(200);
    expect((await t.call(`/api/v1/vendors/${id}`, { token: admin })).status).toBe(404);
  });

  it("validates names", async () => {
    const dup = await t.call("/api/v1/vendors", { method: "POST", token: admin, body: { name: "CISCO" } });
    expect(dup.status).toBe(422);
    expect(dup.body).toEqual({
      success: false,
      message: "name 'CISCO' is already taken",
      errors: { name: ["name 'CISCO' is already taken"] },
    });
    expect((await t.call("/api/v1/vendors", { method: "POST", token: admin, body: {} })).body.errors.name).toEqual([
      "name is required",
    ]);
  });
});
