import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog } from "../../db/schema/index.ts";

let t: TestContext;
let admin: string;
let routers: number;
let switches: number;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  routers = (await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "Routers" } })).body.data
    .id;
  switches = (await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "Switches" } })).body
    .data.id;
});
afterAll(() => t.close());

const post = (body: Record<string, unknown>) => t.call("/api/v1/commands", { method: "POST", token: admin, body });

describe("commands", () => {
  it("creates a command in several categories, changes them, and deletes it", async () => {
    const created = await post({
      command: "show running-config",
      description: "config",
      category_ids: [routers, switches],
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({
      command: "show running-config",
      description: "config",
      category_ids: [routers, switches],
      categories: [
        { id: routers, name: "Routers" },
        { id: switches, name: "Switches" },
      ],
    });
    expect(created.headers.get("location")).toMatch(new RegExp(`/api/v1/commands/${id}$`));

    const moved = await t.call(`/api/v1/commands/${id}`, {
      method: "PATCH",
      token: admin,
      body: { category_ids: [switches] },
    });
    expect(moved.body.data).toMatchObject({ description: "config", category_ids: [switches] });
    const renamed = await t.call(`/api/v1/commands/${id}`, {
      method: "PATCH",
      token: admin,
      body: { command: "show run" },
    });
    expect(renamed.body.data).toMatchObject({ command: "show run", category_ids: [switches] });
    const put = await t.call(`/api/v1/commands/${id}`, {
      method: "PUT",
      token: admin,
      body: { command: "show run", category_ids: [routers] },
    });
    expect(put.body.data).toMatchObject({ description: "", category_ids: [routers] });
    expect((await t.call(`/api/v1/categories/${routers}`, { token: admin })).body.data.commands).toEqual([
      { id, command: "show run" },
    ]);

    const del = await t.call(`/api/v1/commands/${id}`, { method: "DELETE", token: admin });
    expect(del.body.detail).toBe(`Command ${id} deleted; 1 category link removed`);
    expect((await t.call(`/api/v1/categories/${routers}`, { token: admin })).body.data.commands).toEqual([]);
    const audit = (await t.db.select().from(activityLog).where(eq(activityLog.subjectId, id))).filter(
      (r) => r.subjectType === "command",
    );
    expect(audit.map((r) => r.action)).toEqual([
      "command.create",
      "command.update",
      "command.update",
      "command.update",
      "command.delete",
    ]);
  });

  it("needs at least one existing category", async () => {
    const none = await post({ command: "show clock", category_ids: [] });
    expect(none.body.errors.category_ids).toEqual([
      "category_ids must have at least 1 item: a command belongs to one or more categories",
    ]);
    const missing = await post({ command: "show clock" });
    expect(missing.body.errors.category_ids).toEqual(["category_ids is required"]);
    const unknown = await post({ command: "show clock", category_ids: [routers, 99999] });
    expect(unknown).toMatchObject({
      status: 422,
      body: { errors: { "category_ids.1": ["category_ids.1 99999 is not an existing category"] } },
    });
  });

  it("keeps command texts unique and one line", async () => {
    const first = (await post({ command: "show version", category_ids: [routers] })).body.data;
    const dup = await post({ command: "show version", category_ids: [switches] });
    expect(dup.body.errors.command).toEqual([
      `command 'show version' already exists (command ${first.id}); add that one to more categories instead`,
    ]);
    const self = await t.call(`/api/v1/commands/${first.id}`, {
      method: "PUT",
      token: admin,
      body: { command: "show version", category_ids: [switches] },
    });
    expect(self.status).toBe(200);
    const oneLine = ["command must be one line without control characters (such as a line break, NUL or an escape)"];
    expect((await post({ command: "show a\nshow b", category_ids: [routers] })).body.errors.command).toEqual(oneLine);
    expect((await post({ command: "show run\u0000ning", category_ids: [routers] })).body.errors.command).toEqual(
      oneLine,
    );
    expect((await post({ command: "show \u001b[2Jversion", category_ids: [routers] })).body.errors.command).toEqual(
      oneLine,
    );
  });

  it("lists by category, text and search, sorted and paged, and bulk deletes", async () => {
    const a = (await post({ command: "show inventory", category_ids: [routers] })).body.data;
    const b = (await post({ command: "show interfaces status", category_ids: [routers, switches] })).body.data;
    const inRouters = await t.call(`/api/v1/commands?filter[category_id]=${routers}&search=show%20in&sort=-command`, {
      token: admin,
    });
    expect(inRouters.body.data.map((c: { id: number }) => c.id)).toEqual([a.id, b.id]);
    const paged = await t.call(`/api/v1/commands?filter[category_id]=${switches}&per_page=1&fields=command`, {
      token: admin,
    });
    expect(paged.body).toMatchObject({ data: [{ command: "show version" }], meta: { total: 2, last_page: 2 } });
    expect((await t.call("/api/v1/commands?filter[command]=show%20inventory", { token: admin })).body.data[0].id).toBe(
      a.id,
    );
    expect(
      (await t.call("/api/v1/commands?filter[category_id]=x", { token: admin })).body.errors["filter[category_id]"],
    ).toEqual(["filter[category_id] values must be whole numbers of at most 15 digits; 'x' is not"]);

    const del = await t.call("/api/v1/commands/bulk", { method: "DELETE", token: admin, body: { ids: [a.id, b.id] } });
    expect(del.body.message).toBe("Deleted 2 commands; 3 category links removed");
  });

  it("needs commands.read / commands.write", async () => {
    const other = await t.token(["categories.read", "categories.write"]);
    expect((await t.call("/api/v1/commands", { token: other })).status).toBe(403);
    const reader = await t.token(["commands.read"]);
    expect((await t.call("/api/v1/commands", { token: reader })).status).toBe(200);
    expect(
      (
        await t.call("/api/v1/commands", {
          method: "POST",
          token: reader,
          body: { command: "x", category_ids: [routers] },
        })
      ).status,
    ).toBe(403);
  });
});
