import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId } from "../../../../test/helpers/collector.ts";
import { activityLog, configBlobs, configs } from "../../../db/schema/index.ts";
import { readBlob, storeConfig } from "./store.ts";
import { indexPendingVersions } from "../search/search-index.ts";
import { remaskStoredConfigs, scanStoredSecrets } from "./secret-history.ts";

let t: TestContext;
let admin: string;
let deviceId: number;
const day = (n: number) => new Date(Date.UTC(2025, 0, n));
const COMMAND = "show running-config";

// History stored before today's rules: the HSRP text and the PPP password were kept in clear.
const v1 = "hostname r1\ninterface Vlan10\n standby 1 authentication Old-Hsrp-41\nend\n";
const v2 =
  "hostname r1\ninterface Vlan10\n standby 1 authentication Old-Hsrp-41\ninterface Dialer1\n ppp chap password 0 Old-Chap-77\nend\n";
const v3 = "hostname r1\ninterface Vlan10\n standby 1 authentication <secret hidden>\nend\n";

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  deviceId = await addLoopbackDevice(t, admin, {
    port: 22,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    name: "remask-r1",
  });
  for (const [i, text] of [v1, v2, v3].entries()) {
    await storeConfig(t.db, {
      deviceId,
      command: COMMAND,
      text,
      significant: (s) => s,
      trigger: "api",
      jobId: null,
      now: day(i + 1),
    });
  }
  while ((await indexPendingVersions(t.db, 10)).taken);
});
afterAll(() => t.close());

const allBlobTexts = async () =>
  Promise.all((await t.db.select({ hash: configBlobs.hash }).from(configBlobs)).map((b) => readBlob(t.db, b.hash)));

describe("secrets in stored history", () => {
  it("GET /system/secret-scan reports each version still holding a value, by rule, never the value; it needs system.read", async () => {
    const res = await t.call("/api/v1/system/secret-scan", { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.versions_scanned).toBe(3);
    expect(
      res.body.data.findings.map((f: { version: number; values: number; rules: string[] }) => [
        f.version,
        f.values,
        f.rules,
      ]),
    ).toEqual([
      [1, 1, ["authentication"]],
      [2, 2, ["authentication", "password"]],
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/Old-Hsrp-41|Old-Chap-77/);
    const other = await t.token(["configs.read"]);
    expect((await t.call("/api/v1/system/secret-scan", { token: other })).status).toBe(403);
  });

  it("remask rewrites the versions that change, leaves the clean one, and keeps search, diffs and blobs in step", async () => {
    const before = await t.call("/api/v1/configs/search?q=Old-Chap&latest_only=false", { token: admin });
    expect(before.body.data).toHaveLength(1);
    // A digest covers the values the rules of its day masked: a rewritten version's is forgotten, the others' kept.
    await t.db.run(sql`update configs set secrets_digest = 'digest-' || version where device_id = ${deviceId}`);
    const dry = await remaskStoredConfigs(t.db, { actor: { system: "test" }, now: day(10), dryRun: true });
    expect(dry).toEqual({ versions_checked: 3, versions_rewritten: 2, series_rewritten: 1 });
    expect((await scanStoredSecrets(t.db)).findings).toHaveLength(2);

    const report = await remaskStoredConfigs(t.db, { actor: { system: "test" }, now: day(10) });
    expect(report).toEqual({ versions_checked: 3, versions_rewritten: 2, series_rewritten: 1 });
    expect(
      (await t.db.select().from(configs).where(eq(configs.deviceId, deviceId)).orderBy(configs.version)).map(
        (r) => r.secretsDigest,
      ),
    ).toEqual([null, null, "digest-3"]);
    expect((await scanStoredSecrets(t.db)).findings).toEqual([]);

    const rows = await t.db.select().from(configs).where(eq(configs.deviceId, deviceId)).orderBy(configs.version);
    const texts = await Promise.all(rows.map((r) => readBlob(t.db, r.blobHash)));
    expect(texts).toEqual([
      v3,
      v2.replace("Old-Hsrp-41", "<secret hidden>").replace("Old-Chap-77", "<secret hidden>"),
      v3,
    ]);
    // versions 1 and 3 now hold the same text: stored once
    expect(rows[0]!.blobHash).toBe(rows[2]!.blobHash);
    for (const text of await allBlobTexts()) expect(text).not.toMatch(/Old-Hsrp-41|Old-Chap-77/);

    const search = await t.call("/api/v1/configs/search?q=Old-Chap&latest_only=false", { token: admin });
    expect(search.status).toBe(200);
    expect(search.body.data).toEqual([]);
    const diff = await t.request(`/api/v1/configs/diff?from=${rows[0]!.id}&to=${rows[1]!.id}&format=unified`, {
      token: admin,
    });
    expect(diff.status).toBe(200);
    const unified = await diff.text();
    expect(unified).toContain("+ ppp chap password 0 <secret hidden>");
    expect(unified).not.toMatch(/Old-Hsrp-41|Old-Chap-77/);

    const logged = await t.db.select().from(activityLog).where(eq(activityLog.action, "config.remask"));
    expect(logged.map((l) => l.subjectId).sort()).toEqual([rows[0]!.id, rows[1]!.id].sort());
    expect(JSON.stringify(logged)).not.toMatch(/Old-Hsrp-41|Old-Chap-77/);

    // a second run finds nothing left to do
    expect(await remaskStoredConfigs(t.db, { actor: { system: "test" }, now: day(11) })).toEqual({
      versions_checked: 3,
      versions_rewritten: 0,
      series_rewritten: 0,
    });
  });
});
