import { applyPatch } from "diff";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { createDevice, day, storeVersion } from "../test-fixtures.ts";

let t: TestContext;
let admin: string;
let reader: string;
const ids: Record<string, number> = {};

const v1 =
  [
    "! Last configuration change at 10:00:00 UTC Mon Jun 1 2026",
    "hostname diff-r1",
    "interface GigabitEthernet0/1",
    " description Uplink",
    " ip address 192.0.2.1 255.255.255.0",
    "interface GigabitEthernet0/2",
    " shutdown",
    "end",
  ].join("\n") + "\n";
const v2 = v1
  .replace("10:00:00", "11:45:00")
  .replace(" description Uplink", "  description UPLINK")
  .replace(" shutdown", " no shutdown");
const other = v1.replace("hostname diff-r1", "hostname diff-r2");

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  reader = await t.token(["configs.read"]);
  const r1 = await createDevice(t, admin, { device_name: "diff-r1" });
  const r2 = await createDevice(t, admin, { device_name: "diff-r2" });
  ids.v1 = (await storeVersion(t, { deviceId: r1, text: v1, at: day(1) })).configId;
  ids.v2 = (await storeVersion(t, { deviceId: r1, text: v2, at: day(2) })).configId;
  ids.other = (await storeVersion(t, { deviceId: r2, text: other, at: day(2) })).configId;
  ids.version = (
    await storeVersion(t, { deviceId: r1, command: "show version", text: "IOS 17\n", at: day(2) })
  ).configId;
});
afterAll(() => t.close());

const diff = (query: string, headers?: Record<string, string>) =>
  t.call(`/api/v1/configs/diff?${query}`, { token: reader, headers });
const changedLines = (body: any) =>
  body.data.hunks
    .flatMap((h: any) => h.lines)
    .filter((l: any) => l.kind !== "context")
    .map((l: any) => `${l.kind} ${l.old_line ?? "-"} ${l.new_line ?? "-"} ${l.text}`);

describe("diffing two versions", () => {
  it("answers hunks with each line's kind and old/new numbers", async () => {
    const res = await diff(`from=${ids.v1}&to=${ids.v2}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      from: { id: ids.v1, device_name: "diff-r1", version: 1 },
      to: { id: ids.v2, version: 2 },
      identical: false,
      lines_added: 3,
      lines_removed: 3,
      options: { context: 3, ignore_whitespace: false, ignore_case: false, exclusions: false },
    });
    expect(changedLines(res.body)).toEqual([
      "removed 1 - ! Last configuration change at 10:00:00 UTC Mon Jun 1 2026",
      "added - 1 ! Last configuration change at 11:45:00 UTC Mon Jun 1 2026",
      "removed 4 - " + " description Uplink",
      "added - 4 " + "  description UPLINK",
      "removed 7 - " + " shutdown",
      "added - 7 " + " no shutdown",
    ]);
    expect(res.body.data.hunks[0]).toMatchObject({ old_start: 1, new_start: 1 });
  });

  it("answers a unified diff as text/plain for format=unified or Accept: text/plain, that applies to the old text", async () => {
    for (const [query, headers] of [
      [`from=${ids.v1}&to=${ids.v2}&format=unified`, {}],
      [`from=${ids.v1}&to=${ids.v2}`, { accept: "text/plain" }],
    ] as const) {
      const res = await t.request(`/api/v1/configs/diff?${query}`, { token: reader, headers });
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; charset=utf-8$/i);
      const body = await res.text();
      expect(body.split("\n").slice(0, 2)).toEqual([
        `--- diff-r1_show-running-config_1.txt\t${day(1).toISOString()}`,
        `+++ diff-r1_show-running-config_2.txt\t${day(2).toISOString()}`,
      ]);
      expect(applyPatch(v1, body)).toBe(v2);
    }
    const json = await diff(`from=${ids.v1}&to=${ids.v2}&format=json`, { accept: "text/plain" });
    expect(json.body.data.lines_added).toBe(3);
  });

  it("compares the same command of two devices", async () => {
    const res = await diff(`from=${ids.v1}&to=${ids.other}&context=0`);
    expect(res.status).toBe(200);
    expect(res.body.data.to).toMatchObject({ device_name: "diff-r2", version: 1 });
    expect(changedLines(res.body)).toEqual(["removed 2 - hostname diff-r1", "added - 2 hostname diff-r2"]);
  });

  it("refuses versions of different commands with 422", async () => {
    const res = await diff(`from=${ids.v1}&to=${ids.version}`);
    expect(res.status).toBe(422);
    expect(res.body.errors.to[0]).toMatch(/'show version'.*'show running-config'.*same command/);
  });

  it("takes context lines 0-100", async () => {
    const none = await diff(`from=${ids.v1}&to=${ids.v2}&context=0`);
    expect(none.body.data.hunks.flatMap((h: any) => h.lines).some((l: any) => l.kind === "context")).toBe(false);
    expect(none.body.data.hunks).toHaveLength(3);
    const wide = await diff(`from=${ids.v1}&to=${ids.v2}&context=100`);
    expect(wide.body.data.hunks).toHaveLength(1);
    expect(wide.body.data.hunks[0].lines).toHaveLength(8 + 3);
    expect((await diff(`from=${ids.v1}&to=${ids.v2}&context=101`)).body.errors.context).toEqual([
      "context must be at most 100",
    ]);
  });

  it("ignores whitespace and case on request", async () => {
    const res = await diff(`from=${ids.v1}&to=${ids.v2}&ignore_whitespace=true&ignore_case=true`);
    expect(res.body.data).toMatchObject({ lines_added: 2, lines_removed: 2 });
    expect(changedLines(res.body)).not.toContain("added - 4   description UPLINK");
    const caseOnly = await diff(`from=${ids.v1}&to=${ids.v2}&ignore_case=true`);
    expect(caseOnly.body.data.lines_added).toBe(3);
  });

  it("applies the compare-exclusion rules of the command with exclusions=true", async () => {
    const rule = await t.call("/api/v1/compare-exclusions", {
      method: "POST",
      token: admin,
      body: { pattern: "^! Last configuration change at " },
    });
    expect(rule.status).toBe(201);
    const elsewhere = await t.call("/api/v1/compare-exclusions", {
      method: "POST",
      token: admin,
      body: { pattern: "shutdown", command: "show version" },
    });
    expect(elsewhere.status).toBe(201);
    const res = await diff(`from=${ids.v1}&to=${ids.v2}&exclusions=true`);
    expect(res.body.data).toMatchObject({ lines_added: 2, lines_removed: 2, options: { exclusions: true } });
    expect(changedLines(res.body)[0]).toBe("removed 4 -  description Uplink");
    expect((await diff(`from=${ids.v1}&to=${ids.v2}`)).body.data.lines_added).toBe(3);
    const all = await diff(`from=${ids.v1}&to=${ids.v2}&exclusions=true&ignore_whitespace=true&ignore_case=true`);
    expect(all.body.data).toMatchObject({ lines_added: 1, lines_removed: 1 });
    const same = await diff(`from=${ids.v1}&to=${ids.v1}`);
    expect(same.body.data).toMatchObject({ identical: true, hunks: [] });
  });

  it("answers 422 without from or to, and 404 for an unknown version", async () => {
    const res = await diff(`to=${ids.v2}`);
    expect(res.status).toBe(422);
    expect(res.body.errors.from).toEqual(["from is required: the id of the old config version"]);
    expect((await diff(`from=${ids.v1}&to=999999`)).status).toBe(404);
    expect((await diff(`from=${ids.v1}&to=${ids.v2}&format=html`)).body.errors.format).toEqual([
      "format must be one of: json, unified",
    ]);
    const huge = await diff(`from=${"9".repeat(400)}&to=${ids.v2}`);
    expect(huge.status).toBe(422);
    expect(huge.body.errors.from).toEqual(["from must be a positive whole number of at most 15 digits"]);
  });
});

describe("the settings' compare options", () => {
  it("apply to a diff that leaves them out, at once; a request's own value wins", async () => {
    const settings = (compare: Record<string, unknown>) =>
      t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { compare } });
    expect((await settings({ ignore_whitespace: true, context_lines: 0 })).status).toBe(200);
    try {
      const res = await diff(`from=${ids.v1}&to=${ids.v2}`);
      expect(res.body.data.options).toMatchObject({ context: 0, ignore_whitespace: true });
      expect(res.body.data.hunks.flatMap((h: any) => h.lines).filter((l: any) => l.kind === "context")).toEqual([]);
      const own = await diff(`from=${ids.v1}&to=${ids.v2}&context=2&ignore_whitespace=false`);
      expect(own.body.data.options).toMatchObject({ context: 2, ignore_whitespace: false });
    } finally {
      await settings({ ignore_whitespace: false, context_lines: 3 });
    }
  });
});
