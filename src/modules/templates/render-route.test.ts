import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { RENDER_MAX_CHARS } from "./routes.ts";

let t: TestContext;
let reader: string;
beforeAll(async () => {
  t = await createTestContext();
  reader = await t.token(["templates.read"]);
});
afterAll(() => t.close());

const builtinId = async (key: string) =>
  (await t.call(`/api/v1/templates?filter[name]=${key}`, { token: reader })).body.data[0].id as number;

const CONFIG = [
  "Building configuration...",
  "hostname r1",
  "enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0",
  "interface Vlan10",
  " standby 1 authentication Hsrp-Text-9",
  "ntp server 10.0.0.1 key 42",
].join("\r\n");

describe("POST /templates/{id}/render", () => {
  it("answers what a backup would store, each masked span with its layer and rule, and stores nothing", async () => {
    const id = await builtinId("cisco-ios");
    const res = await t.call(`/api/v1/templates/${id}/render`, {
      method: "POST",
      token: reader,
      body: { text: CONFIG },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { text, masks, lines_dropped, template_id } = res.body.data;
    expect(template_id).toBe(id);
    expect(lines_dropped).toBe(1);
    expect(text).toBe(
      [
        "hostname r1",
        "enable secret 5 <secret hidden>",
        "interface Vlan10",
        " standby 1 authentication <secret hidden>",
        "ntp server 10.0.0.1 key 42",
      ].join("\n"),
    );
    expect(text).not.toContain("Hsrp-Text-9");
    expect(masks).toEqual([
      expect.objectContaining({
        line: 2,
        column: 17,
        length: 15,
        text: "<secret hidden>",
        layer: "template",
        rule: "secrets[2]",
        pattern: expect.stringContaining("enable"),
      }),
      { line: 4, column: 27, length: 15, text: "<secret hidden>", layer: "generic", rule: "authentication" },
    ]);
  });

  it("needs templates.read, answers 404 for an unknown template and 422 for a missing or too long text", async () => {
    const id = await builtinId("cisco-ios");
    const other = await t.token(["devices.read"]);
    expect(
      (await t.call(`/api/v1/templates/${id}/render`, { method: "POST", token: other, body: { text: "x" } })).status,
    ).toBe(403);
    expect(
      (await t.call(`/api/v1/templates/999999/render`, { method: "POST", token: reader, body: { text: "x" } })).status,
    ).toBe(404);
    const missing = await t.call(`/api/v1/templates/${id}/render`, { method: "POST", token: reader, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.text).toBeDefined();
    const long = await t.call(`/api/v1/templates/${id}/render`, {
      method: "POST",
      token: reader,
      body: { text: "a".repeat(RENDER_MAX_CHARS + 1) },
    });
    expect(long.status).toBe(422);
    expect(long.body.message).toContain(`at most ${RENDER_MAX_CHARS} characters`);
  });
});
