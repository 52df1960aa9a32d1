import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, downloadOnce, iosScript } from "../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../test/helpers/fake-device.ts";
import { freePort } from "../../../test/helpers/process.ts";
import { jobs } from "../../db/schema/index.ts";

/**
 * The fleet's counts (dashboard counts and failing devices, the v2 summary with rConfig's figures) are kept on
 * write by triggers (device_counts, each device's last download). After every step of a mixed sequence of writes
 * through the API (create, bulk create, CSV import, downloads that succeed and fail, status changes, disable and
 * enable, delete and bulk delete, the purge's delete of a failed job) each answer must equal what a fresh count of
 * the devices and their jobs gives, for the whole fleet and for a caller scoped to a tag.
 */

const AUTH = { username: "netops", password: "Count-Pass-2026" };
const GOOD = ["success", "unchanged"];
let t: TestContext;
let admin: string;
let scoped: string;
let fake: FakeDevice;
let templateId: number;

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  await t.role({ name: "edge-team", tags: ["edge"] });
  scoped = await t.token(undefined, { role: "edge-team" });
  fake = await startFakeDevice({
    script: iosScript("count-r1", ["hostname count-r1", "end"]).script,
    initPrompt: "count-r1#",
    auth: AUTH,
  });
  templateId = await builtinTemplateId(t, "cisco-ios");
}, 60_000);
afterAll(async () => {
  await fake.close();
  await t.close();
});

type Fresh = {
  id: number;
  enabled: number;
  status: string;
  backedUpAt: number | null;
  lastOutcome: string | null;
  lastAt: number | null;
  lastJob: number | null;
};

/** Each device (in the tag's scope, or all) with its last attempted download, counted afresh from devices and jobs. */
async function freshDevices(tag?: string): Promise<Fresh[]> {
  const last = (column: string) =>
    sql.raw(`(select j.${column} from jobs j where j.device_id = d.id and j.state = 'finished' and j.type = 'download'
      and j.outcome <> 'cancelled' order by j.id desc limit 1)`);
  return t.db.all<Fresh>(sql`select d.id, d.enabled, d.status, d.last_backup_at as backedUpAt,
    ${last("outcome")} as lastOutcome, ${last("finished_at")} as lastAt, ${last("id")} as lastJob
    from devices d ${tag ? sql`where d.id in (select dt.device_id from device_tags dt join tags g on g.id = dt.tag_id where g.name = ${tag})` : sql``}`);
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const newest = (values: (number | null)[]) =>
  iso(values.reduce<number | null>((a, v) => (v !== null && (a === null || v > a) ? v : a), null));

async function expectCountsAsFresh(token: string, tag?: string) {
  const rows = await freshDevices(tag);
  const [{ n }] = (await t.db.all<{ n: number }>(
    tag
      ? sql`select count(*) as n from device_tags dt join tags g on g.id = dt.tag_id where g.name = ${tag}`
      : sql`select count(*) as n from devices`,
  )) as [{ n: number }];
  expect(rows).toHaveLength(n);
  const enabled = rows.filter((r) => r.enabled);
  const failed = (r: Fresh) => r.lastOutcome !== null && !GOOD.includes(r.lastOutcome);
  const never = enabled.filter((r) => r.backedUpAt === null).length;
  const failing = enabled.filter((r) => r.backedUpAt !== null && failed(r)).length;
  const disabled = rows.length - enabled.length;

  const counts = await t.call("/api/v1/dashboard/counts", { token });
  expect(counts.body.data).toEqual({
    total: rows.length,
    up: rows.length - disabled - never - failing,
    failing,
    disabled,
    never_backed_up: never,
  });

  const errored = await t.call("/api/v1/dashboard/errored-devices?limit=100", { token });
  const expectedErrored = enabled
    .filter(failed)
    .sort((a, b) => b.lastAt! - a.lastAt! || b.lastJob! - a.lastJob!)
    .map((r) => ({ device_id: r.id, job_id: r.lastJob, outcome: r.lastOutcome, failed_at: iso(r.lastAt) }));
  expect(
    errored.body.data.map((e: Record<string, unknown>) => ({
      device_id: e.device_id,
      job_id: e.job_id,
      outcome: e.outcome,
      failed_at: e.failed_at,
    })),
  ).toEqual(expectedErrored);

  const summary = await t.call("/api/v2/devices/summary", { token });
  const byStatus = (s: string) => enabled.filter((r) => r.status === s).length;
  const downloaded = rows.filter((r) => r.lastOutcome !== null);
  const good = downloaded.filter((r) => GOOD.includes(r.lastOutcome!)).length;
  expect(summary.body.data).toMatchObject({
    total: rows.length,
    up: byStatus("up"),
    unreachable: byStatus("unreachable"),
    unknown: byStatus("unknown"),
    disabled,
    never_backed_up: rows.filter((r) => r.backedUpAt === null).length,
    last_backup_at: newest(rows.map((r) => r.backedUpAt)),
    total_devices: rows.length,
    backup_success_last_run: good,
    backup_failed_last_run: downloaded.length - good,
    last_run_at: newest(downloaded.map((r) => r.lastAt)),
  });
}

async function expectAllAsFresh() {
  await expectCountsAsFresh(admin);
  await expectCountsAsFresh(scoped, "edge");
}

const call = (path: string, method: string, body?: unknown, extra: Record<string, unknown> = {}) =>
  t.call(path, { method, token: admin, body, ...extra });

describe("device counts kept on write", () => {
  it("equal a fresh count after each write of a mixed sequence", async () => {
    await expectAllAsFresh();
    const own = { port: fake.port, templateId, ...AUTH };
    const a = await addLoopbackDevice(t, admin, { ...own, name: "count-a", device_tags: ["edge"] });
    const b = await addLoopbackDevice(t, admin, { ...own, name: "count-b" });
    await expectAllAsFresh();

    const bulk = await call("/api/v1/devices/bulk", "POST", {
      devices: ["count-c", "count-d", "count-e"].map((name, i) => ({
        device_name: name,
        device_ip: "127.0.0.1",
        device_vendor: "Cisco",
        device_port_override: fake.port,
        device_template_id: templateId,
        device_username: AUTH.username,
        device_password: AUTH.password,
        enabled: i !== 1,
        device_tags: i === 2 ? ["edge"] : [],
      })),
    });
    expect(bulk.status).toBe(201);
    const [c, d, e] = bulk.body.data.map((x: { id: number }) => x.id) as number[];
    const imported = await call("/api/v1/devices/import", "POST", undefined, {
      rawBody:
        "device_name,device_ip,device_vendor,enabled,device_tags\r\ncount-f,192.0.2.31,Cisco,true,edge\r\ncount-g,192.0.2.32,Cisco,false,\r\n",
      headers: { "content-type": "text/csv" },
    });
    expect(imported.status).toBe(200);
    expect(imported.body.data.created).toBe(2);
    await expectAllAsFresh();

    // Downloads: first versions, then one unchanged, then failures on a port nothing answers.
    for (const id of [a, b, c!, e!]) expect((await downloadOnce(t, id)).outcome).toBe("success");
    await expectAllAsFresh();
    expect((await downloadOnce(t, a)).outcome).toBe("unchanged");
    const closed = await freePort();
    for (const id of [a, e!]) {
      expect((await call(`/api/v1/devices/${id}`, "PATCH", { device_port_override: closed })).status).toBe(200);
      expect((await downloadOnce(t, id, { connectTimeoutMs: 2000 })).outcome).toBe("unreachable");
      await expectAllAsFresh();
    }
    // A device never backed up whose first download fails.
    expect((await call(`/api/v1/devices/${d}`, "PATCH", { enabled: true, device_port_override: closed })).status).toBe(
      200,
    );
    expect((await downloadOnce(t, d!, { connectTimeoutMs: 2000 })).outcome).toBe("unreachable");
    await expectAllAsFresh();
    // Back up again: failing no more.
    expect((await call(`/api/v1/devices/${a}`, "PATCH", { device_port_override: fake.port })).status).toBe(200);
    expect((await downloadOnce(t, a)).outcome).toBe("unchanged");
    await expectAllAsFresh();

    expect((await call(`/api/v1/devices/${e}/disable`, "POST")).status).toBe(200);
    await expectAllAsFresh();
    expect((await call("/api/v1/devices/bulk/disable", "POST", { ids: [a, b] })).status).toBe(200);
    await expectAllAsFresh();
    expect((await call("/api/v1/devices/bulk/enable", "POST", { ids: [a, b, e] })).status).toBe(200);
    await expectAllAsFresh();

    // The retention purge deletes failed jobs: e's last download is its success again.
    const [lastFailure] = await t.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(eq(jobs.deviceId, e!))
      .orderBy(sql`${jobs.id} desc`)
      .limit(1);
    await t.db.delete(jobs).where(eq(jobs.id, lastFailure!.id));
    await expectAllAsFresh();

    expect((await call(`/api/v1/devices/${d}`, "DELETE")).status).toBe(200);
    await expectAllAsFresh();
    expect((await call("/api/v1/devices/bulk", "DELETE", { ids: [a, c] })).status).toBe(200);
    await expectAllAsFresh();
  }, 120_000);
});
