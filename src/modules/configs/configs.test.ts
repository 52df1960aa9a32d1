import { createHash } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog, configBlobs, configChanges, configs } from "../../db/schema/index.ts";
import { blobBase } from "./storage/blobs.ts";
import { unifiedDiff } from "./history/config-diff.ts";
import { createDevice, day, RUNNING, storeVersion } from "./test-fixtures.ts";

let t: TestContext;
let admin: string;
let reader: string;
let devA: number;
let devB: number;
let categoryId: number;
let ids: Record<string, number>;

const runV1 = "hostname cfg-api-a\ninterface Gi0/1\n description uplink\nend\n";
const runV2 = "hostname cfg-api-a\ninterface Gi0/1\n description uplink to core\n shutdown\nend\n";
const versionText = "Cisco IOS XE Software, Version 17.9.4a\n";
const sectionCommand = "show running-config | section interface";

/** A database of its own with two devices and six downloads, so the counts below hold whatever ran before. */
async function openEstate() {
  t = await createTestContext();
  ids = {};
  admin = await t.token();
  reader = await t.token(["configs.read"]);
  categoryId = (await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "Access switches" } }))
    .body.data.id;
  devA = await createDevice(t, admin, {
    device_name: "cfg-api-a",
    device_vendor: "Cisco",
    device_tags: ["core"],
    device_category_id: categoryId,
  });
  devB = await createDevice(t, admin, { device_name: "cfg-api-b", device_vendor: "Juniper" });
  ids.aRun1 = (await storeVersion(t, { deviceId: devA, text: runV1, at: day(1), durationMs: 1500 })).configId;
  await storeVersion(t, { deviceId: devA, text: runV1, at: day(2) });
  ids.aRun2 = (
    await storeVersion(t, { deviceId: devA, text: runV2, at: day(3), trigger: "download_now", durationMs: 2750 })
  ).configId;
  ids.aVersion = (
    await storeVersion(t, { deviceId: devA, command: "show version", text: versionText, at: day(3) })
  ).configId;
  ids.aSection = (
    await storeVersion(t, { deviceId: devA, command: sectionCommand, text: "interface Gi0/1\n", at: day(4) })
  ).configId;
  // The same text as device A's first version: one blob for both.
  ids.bRun1 = (await storeVersion(t, { deviceId: devB, text: runV1, at: day(5), trigger: "api" })).configId;
}

/** The estate for a describe's tests: one they share when none changes what another reads, else one each. */
function useEstate(per: "describe" | "test") {
  (per === "test" ? beforeEach : beforeAll)(openEstate);
  (per === "test" ? afterEach : afterAll)(() => t.close());
}

const list = async (query: string, token = reader) => {
  const res = await t.call(`/api/v1/configs${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: Record<string, any>[]; meta: Record<string, number> };
};
const idsOf = (body: { data: Record<string, any>[] }) => body.data.map((c) => c.id).sort((x, y) => x - y);
const sorted = (...values: number[]) => values.sort((x, y) => x - y);

describe("listing configurations", () => {
  useEstate("describe");
  it("lists every version, newest first, in both API versions", async () => {
    const all = await list("");
    expect(all.data.map((c) => c.id)).toEqual([ids.bRun1, ids.aSection, ids.aVersion, ids.aRun2, ids.aRun1]);
    expect(all.meta.total).toBe(5);
    expect((await t.call("/api/v2/configs", { token: reader })).body.meta.total).toBe(5);
  });

  it("filters by device, command, category, tag, vendor, status, latest and date range", async () => {
    expect(idsOf(await list(`?filter[device_id]=${devB}`))).toEqual([ids.bRun1]);
    expect(idsOf(await list("?filter[device_name]=CFG-API-B"))).toEqual([ids.bRun1]);
    expect(idsOf(await list(`?filter[command]=${encodeURIComponent(RUNNING)}`))).toEqual(
      sorted(ids.aRun1!, ids.aRun2!, ids.bRun1!),
    );
    expect(idsOf(await list(`?filter[device_category_id]=${categoryId}`))).toEqual(
      sorted(ids.aRun1!, ids.aRun2!, ids.aVersion!, ids.aSection!),
    );
    expect(idsOf(await list("?filter[device_tags]=CORE"))).toHaveLength(4);
    expect(idsOf(await list("?filter[device_vendor]=juniper"))).toEqual([ids.bRun1]);
    expect((await list("?filter[download_status]=success")).meta.total).toBe(5);
    expect((await list("?filter[download_status]=timeout")).meta.total).toBe(0);
    expect(idsOf(await list("?filter[latest]=true"))).toEqual(
      sorted(ids.aRun2!, ids.aVersion!, ids.aSection!, ids.bRun1!),
    );
    expect(idsOf(await list("?filter[latest]=false"))).toEqual([ids.aRun1]);
    expect(idsOf(await list("?filter[date_from]=2026-06-03&filter[date_to]=2026-06-04"))).toEqual(
      sorted(ids.aRun2!, ids.aVersion!, ids.aSection!),
    );
    expect(idsOf(await list("?filter[date_to]=2026-06-03T11:00:00Z"))).toEqual([ids.aRun1]);
  });

  it("sorts, pages, picks fields and searches device name or command", async () => {
    const bySize = await list("?sort=-size,id&per_page=2&page=1&fields=id,size");
    expect(bySize.data.map((c) => Object.keys(c).sort())).toEqual([
      ["id", "size"],
      ["id", "size"],
    ]);
    expect(bySize.data[0]!.size).toBeGreaterThanOrEqual(bySize.data[1]!.size);
    expect(bySize.meta).toMatchObject({ total: 5, last_page: 3, per_page: 2 });
    expect(idsOf(await list("?search=section"))).toEqual([ids.aSection]);
    expect(idsOf(await list("?search=api-b"))).toEqual([ids.bRun1]);
  });

  it("answers 422 naming the problem for unknown filters, bad values and unknown fields", async () => {
    const cases: [string, string, RegExp][] = [
      ["?filter[colour]=red", "filter[colour]", /not a filter here/],
      ["?filter[latest]=maybe", "filter[latest]", /true or false/],
      ["?filter[date_from]=yesterday", "filter[date_from]", /must be an ISO-8601 time/],
      ["?filter[date_to]=2026-06-01%20(junk)", "filter[date_to]", /must be an ISO-8601 time/],
      ["?filter[date_to]=2026-06-01T12:00", "filter[date_to]", /must be an ISO-8601 time/],
      ["?filter[download_status]=great", "filter[download_status]", /must be one of/],
      [`?filter[device_id]=${"9".repeat(400)}`, "filter[device_id]", /whole numbers of at most 15 digits/],
      ["?sort=colour", "sort", /cannot use 'colour'/],
      ["?fields=colour", "fields", /unknown name colour/],
    ];
    for (const [query, field, problem] of cases) {
      const res = await t.call(`/api/v1/configs${query}`, { token: reader });
      expect(res.status, query).toBe(422);
      expect(res.body.errors[field][0]).toMatch(problem);
    }
  });
});

describe("one configuration", () => {
  useEstate("describe");
  it("shows the version's metadata, with the status and duration of the download that stored it", async () => {
    const res = await t.call(`/api/v1/configs/${ids.aRun1}`, { token: reader });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: ids.aRun1,
      device_id: devA,
      device_name: "cfg-api-a",
      command: RUNNING,
      version: 1,
      latest: false,
      first_seen_at: day(1).toISOString(),
      last_seen_at: day(2).toISOString(),
      seen_count: 2,
      lines: 4,
      size: Buffer.byteLength(runV1),
      hash: createHash("sha256").update(runV1).digest("hex"),
      secrets_changed: false,
      job_id: expect.any(Number),
      trigger: "schedule",
      download_status: "success",
      download_duration_ms: 1500,
    });
    const latest = (await t.call(`/api/v2/configs/${ids.aRun2}`, { token: reader })).body.data;
    expect(latest).toMatchObject({
      version: 2,
      latest: true,
      seen_count: 1,
      trigger: "download_now",
      download_duration_ms: 2750,
    });
  });

  it("answers its text as text/plain, and as a file named <device>_<command>_<version>.txt", async () => {
    const content = await t.request(`/api/v1/configs/${ids.aRun2}/content`, { token: reader });
    expect(content.status).toBe(200);
    expect(content.headers.get("content-type")).toMatch(/^text\/plain; charset=utf-8$/i);
    expect(content.headers.get("content-disposition")).toBeNull();
    expect(await content.text()).toBe(runV2);

    const file = await t.request(`/api/v1/configs/${ids.aRun2}/download`, { token: reader });
    expect(file.headers.get("content-type")).toMatch(/^text\/plain; charset=utf-8$/i);
    expect(file.headers.get("content-disposition")).toBe('attachment; filename="cfg-api-a_show-running-config_2.txt"');
    expect(await file.text()).toBe(runV2);

    const piped = await t.request(`/api/v2/configs/${ids.aSection}/download`, { token: reader });
    expect(piped.headers.get("content-disposition")).toBe(
      'attachment; filename="cfg-api-a_show-running-config-section-interface_1.txt"',
    );
  });

  it("answers 404 for an unknown id and 422 for one that is not a number", async () => {
    expect((await t.call("/api/v1/configs/999999", { token: reader })).status).toBe(404);
    expect((await t.call("/api/v1/configs/999999/content", { token: reader })).status).toBe(404);
    expect((await t.call("/api/v1/configs/abc", { token: reader })).status).toBe(422);
  });
});

describe("a device's configurations", () => {
  useEstate("describe");
  it("lists all versions of a device, paginated", async () => {
    const res = await t.call(`/api/v1/configs/all-by-deviceid/${devA}?per_page=3`, { token: reader });
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ total: 4, last_page: 2 });
    expect(res.body.data.every((c: { device_id: number }) => c.device_id === devA)).toBe(true);
    const second = await t.call(`/api/v1/configs/all-by-deviceid/${devA}?per_page=3&page=2`, { token: reader });
    expect(second.body.data).toHaveLength(1);
  });

  it("lists the latest version of each of its commands", async () => {
    const res = await t.call(`/api/v1/configs/latest-by-deviceid/${devA}?sort=command`, { token: reader });
    expect(res.body.data.map((c: { command: string; version: number }) => [c.command, c.version])).toEqual([
      [RUNNING, 2],
      [sectionCommand, 1],
      ["show version", 1],
    ]);
  });

  it("answers 404 for an unknown device (rConfig's all-by-deviceid: its 422, src/adapters/compat/rconfig)", async () => {
    expect((await t.call("/api/v1/configs/all-by-deviceid/999999", { token: reader })).status).toBe(422);
    expect((await t.call("/api/v2/configs/latest-by-deviceid/999999", { token: reader })).status).toBe(404);
  });
});

describe("deleting a version", () => {
  useEstate("test");
  const blobExists = async (hash: string) =>
    (await t.db.select().from(configBlobs).where(eq(configBlobs.hash, hash))).length === 1;

  it("needs configs.write", async () => {
    expect((await t.call(`/api/v1/configs/${ids.aRun2}`, { method: "DELETE", token: reader })).status).toBe(403);
  });

  it("deletes the latest version, its change row and its own text; the previous version becomes the latest", async () => {
    const hash = (await t.call(`/api/v1/configs/${ids.aRun2}`, { token: reader })).body.data.hash as string;
    const res = await t.call(`/api/v1/configs/${ids.aRun2}`, { method: "DELETE", token: admin });
    expect(res).toMatchObject({ status: 200, body: { message: `Config ${ids.aRun2} deleted` } });
    expect((await t.call(`/api/v1/configs/${ids.aRun2}`, { token: reader })).status).toBe(404);
    expect(await t.db.select().from(configChanges).where(eq(configChanges.configId, ids.aRun2!))).toEqual([]);
    expect(await blobExists(hash)).toBe(false);
    const latest = (
      await t.call(`/api/v1/configs/latest-by-deviceid/${devA}?filter[command]=${encodeURIComponent(RUNNING)}`, {
        token: reader,
      })
    ).body.data;
    expect(latest.map((c: { id: number }) => c.id)).toEqual([ids.aRun1]);
    const [entry] = await t.db.select().from(activityLog).where(eq(activityLog.action, "config.delete"));
    expect(entry).toMatchObject({ subjectType: "config", subjectId: ids.aRun2 });
  });

  it("keeps a text another version still has, and deletes it with the last version that has it", async () => {
    const hash = createHash("sha256").update(runV1).digest("hex");
    const first = await t.call(`/api/v1/configs/${ids.aRun1}`, { method: "DELETE", token: admin });
    expect(first.body.message).toMatch(/text is kept/);
    expect(await blobExists(hash)).toBe(true);
    expect(await (await t.request(`/api/v1/configs/${ids.bRun1}/content`, { token: reader })).text()).toBe(runV1);
    await t.call(`/api/v1/configs/${ids.bRun1}`, { method: "DELETE", token: admin });
    expect(await blobExists(hash)).toBe(false);
  });

  it("starts a command again at version 1 once all its versions are deleted", async () => {
    for (const id of [ids.aRun2, ids.aRun1])
      expect((await t.call(`/api/v1/configs/${id}`, { method: "DELETE", token: admin })).status).toBe(200);
    const next = await storeVersion(t, { deviceId: devA, text: "hostname cfg-api-a\nend\n", at: day(9) });
    expect(next).toMatchObject({ changed: true, version: 1 });
  });
});

describe("the significant hash", () => {
  useEstate("describe");
  const hashOf = async (id: number) =>
    (await t.db.select({ h: configs.significantHash }).from(configs).where(eq(configs.id, id)))[0]!.h;

  it("is kept for the latest version only; one that is the latest again compares by its text, finds an unchanged download and keeps it again", async () => {
    const dev = await createDevice(t, admin, { device_name: "cfg-sig-again" });
    const first = "hostname cfg-sig-again\n!\nend\n";
    const v1 = await storeVersion(t, { deviceId: dev, text: first, at: day(1) });
    expect(await hashOf(v1.configId)).not.toBe("");
    const v2 = await storeVersion(t, {
      deviceId: dev,
      text: first.replace("end", "ntp server 192.0.2.1\nend"),
      at: day(2),
    });
    expect([await hashOf(v1.configId), (await hashOf(v2.configId)) !== ""]).toEqual(["", true]);
    expect((await t.call(`/api/v1/configs/${v2.configId}`, { method: "DELETE", token: admin })).status).toBe(200);
    expect(await storeVersion(t, { deviceId: dev, text: first, at: day(3) })).toMatchObject({
      changed: false,
      version: 1,
      configId: v1.configId,
    });
    expect(await hashOf(v1.configId)).not.toBe("");
  });
});

describe("deleting versions stored as deltas", () => {
  useEstate("describe");
  const texts = (name: string, n: number) =>
    Array.from({ length: n }, (_, v) =>
      [
        `hostname ${name}`,
        ...Array.from({ length: 120 }, (_, i) => ` vlan ${i} name ${i % 11 === v ? `changed-${v}` : `users-${i}`}`),
        `banner motd v${v}`,
        "end",
        "",
      ].join("\n"),
    );
  const content = async (id: number) => (await t.request(`/api/v1/configs/${id}/content`, { token: reader })).text();
  const diffOf = async (id: number) =>
    (await t.call(`/api/v2/config-changes/by-config/${id}`, { token: reader })).body.data.diff as string;

  it("every other version reads back byte for byte after a middle one goes, and the next change keeps its diff", async () => {
    const dev = await createDevice(t, admin, { device_name: "cfg-delta-mid" });
    const v = texts("cfg-delta-mid", 5);
    const vids: number[] = [];
    for (const [i, text] of v.entries())
      vids.push((await storeVersion(t, { deviceId: dev, text, at: day(10 + i) })).configId);
    const expected = unifiedDiff(v[2]!, v[3]!, `${RUNNING} v3`, `${RUNNING} v4`).text;
    expect(await diffOf(vids[3]!)).toBe(expected);
    expect((await t.call(`/api/v1/configs/${vids[2]}`, { method: "DELETE", token: admin })).status).toBe(200);
    for (const i of [0, 1, 3, 4]) expect(await content(vids[i]!)).toBe(v[i]);
    expect(await diffOf(vids[3]!)).toBe(expected);
    expect(await diffOf(vids[1]!)).toBe(unifiedDiff(v[0]!, v[1]!, `${RUNNING} v1`, `${RUNNING} v2`).text);
    // The latest goes too: the version before it reads back, now whole.
    expect((await t.call(`/api/v1/configs/${vids[4]}`, { method: "DELETE", token: admin })).status).toBe(200);
    for (const i of [0, 1, 3]) expect(await content(vids[i]!)).toBe(v[i]);
  });

  it("a text two devices share, which is also a delta base, outlives the versions around it", async () => {
    const one = await createDevice(t, admin, { device_name: "cfg-delta-one" });
    const two = await createDevice(t, admin, { device_name: "cfg-delta-two" });
    const [x, y, z] = texts("cfg-delta-shared", 3) as [string, string, string];
    // Device one: x, y, z (x becomes a delta against y, y against z). Device two: y only, its latest.
    const ox = (await storeVersion(t, { deviceId: one, text: x, at: day(20) })).configId;
    const oy = (await storeVersion(t, { deviceId: one, text: y, at: day(21) })).configId;
    const ty = (await storeVersion(t, { deviceId: two, text: y, at: day(22) })).configId;
    const oz = (await storeVersion(t, { deviceId: one, text: z, at: day(23) })).configId;
    const hashOf = (s: string) => createHash("sha256").update(s).digest("hex");
    const [yBlob] = await t.db
      .select()
      .from(configBlobs)
      .where(eq(configBlobs.hash, hashOf(y)));
    expect(yBlob).toMatchObject({ encoding: "delta" });
    expect(await blobBase(t.db, hashOf(y))).toBe(hashOf(z));
    expect(
      await t.db.all(
        sql`select b.hash from config_blobs b join config_blobs p on p.id = b.base_id where p.hash = ${hashOf(y)}`,
      ),
    ).toEqual([{ hash: hashOf(x) }]);
    expect(await content(ty)).toBe(y);
    // z goes: y (device two's latest, a delta against z) must be rebuilt first.
    expect((await t.call(`/api/v1/configs/${oz}`, { method: "DELETE", token: admin })).status).toBe(200);
    expect([await content(ox), await content(oy), await content(ty)]).toEqual([x, y, y]);
    // Device one's y goes: the text stays for device two, and x still rebuilds against it.
    expect((await t.call(`/api/v1/configs/${oy}`, { method: "DELETE", token: admin })).body.message).toMatch(
      /text is kept/,
    );
    expect([await content(ox), await content(ty)]).toEqual([x, y]);
    // Device two goes with its versions (the text is left behind, not deleted): x still reads back.
    expect((await t.call(`/api/v1/devices/${two}`, { method: "DELETE", token: admin })).status).toBe(200);
    expect(await content(ox)).toBe(x);
    expect((await t.call(`/api/v1/configs/${ox}`, { method: "DELETE", token: admin })).status).toBe(200);
  });
});
