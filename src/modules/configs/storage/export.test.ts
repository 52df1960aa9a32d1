import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { createDevice, day, storeVersion } from "../test-fixtures.ts";

let t: TestContext;
let reader: string;
const work = mkdtempSync(join(tmpdir(), "netkeep-export-"));
const longCommand = "show running-config " + "| include interface ".repeat(12);

beforeAll(async () => {
  t = await createTestContext();
  const admin = await t.token();
  reader = await t.token(["configs.read"]);
  const a = await createDevice(t, admin, { device_name: "exp-core-01", device_tags: ["core"] });
  const b = await createDevice(t, admin, { device_name: "exp-edge-01" });
  await storeVersion(t, { deviceId: a, text: "hostname exp-core-01\nold\n", at: day(1) });
  await storeVersion(t, { deviceId: a, text: "hostname exp-core-01\nnew\n", at: day(2) });
  await storeVersion(t, { deviceId: a, command: "show version", text: "IOS XE 17.9\n", at: day(2) });
  await storeVersion(t, { deviceId: a, command: "show run | inc ntp", text: "ntp server 192.0.2.123\n", at: day(2) });
  await storeVersion(t, { deviceId: a, command: "show run / inc ntp", text: "ntp server 192.0.2.124\n", at: day(2) });
  await storeVersion(t, { deviceId: a, command: longCommand, text: "interface Gi0/1\n", at: day(2) });
  await storeVersion(t, { deviceId: b, text: "hostname exp-edge-01\n", at: day(3) });
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await t.close();
});

/** Downloads the export and unpacks it with the system tar; answers the files by path and the response headers. */
async function exportAndExtract(query: string, name: string) {
  const res = await t.request(`/api/v1/configs/export${query}`, { token: reader });
  expect(res.status).toBe(200);
  const archive = join(work, `${name}.tar.gz`);
  writeFileSync(archive, new Uint8Array(await res.arrayBuffer()));
  const dir = join(work, name);
  execFileSync("mkdir", ["-p", dir]);
  execFileSync("tar", ["-xzf", archive, "-C", dir]);
  const files: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const p = join(d, entry);
      if (statSync(p).isDirectory()) walk(p);
      else files[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return { files, headers: res.headers, mtime: (path: string) => statSync(join(dir, path)).mtime };
}

describe("exporting configurations", () => {
  it("answers a .tar.gz with the latest version of each device and command as <device>/<command>.txt", async () => {
    const { files, headers, mtime } = await exportAndExtract("", "all");
    expect(headers.get("content-type")).toBe("application/gzip");
    expect(headers.get("content-disposition")).toMatch(/^attachment; filename="configs-\d{4}-\d{2}-\d{2}\.tar\.gz"$/);
    const longName = Object.keys(files).find((p) => p.startsWith("exp-core-01/show-running-config-include-interface"))!;
    expect(Object.keys(files).sort()).toEqual(
      [
        "exp-core-01/show-run-inc-ntp-2.txt",
        "exp-core-01/show-run-inc-ntp.txt",
        "exp-core-01/show-running-config.txt",
        "exp-core-01/show-version.txt",
        longName,
        "exp-edge-01/show-running-config.txt",
      ].sort(),
    );
    expect(longName.length).toBeLessThanOrEqual("exp-core-01/".length + 94);
    expect(files["exp-core-01/show-running-config.txt"]).toBe("hostname exp-core-01\nnew\n");
    expect(files["exp-edge-01/show-running-config.txt"]).toBe("hostname exp-edge-01\n");
    expect(
      Object.values(files)
        .filter((f) => f.startsWith("ntp server"))
        .sort(),
    ).toEqual(["ntp server 192.0.2.123\n", "ntp server 192.0.2.124\n"]);
    expect(mtime("exp-core-01/show-running-config.txt").toISOString()).toBe(day(2).toISOString());
  });

  it("honours the list filters", async () => {
    const tagged = await exportAndExtract("?filter[device_tags]=core&filter[command]=show%20version", "tagged");
    expect(Object.keys(tagged.files)).toEqual(["exp-core-01/show-version.txt"]);
    const none = await exportAndExtract("?filter[device_name]=nothing-here", "none");
    expect(none.files).toEqual({});
    const bad = await t.call("/api/v1/configs/export?filter[colour]=red", { token: reader });
    expect(bad.status).toBe(422);
  });
});
