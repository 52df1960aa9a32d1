import { afterAll, beforeAll, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
} from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../helpers/fake-device.ts";
import { readBlob } from "../../src/modules/configs/storage/store.ts";

/**
 * A secret value rotated on a device (a new SNMP community, a new enable secret) leaves the stored text as it
 * was, markers for values: the download is still a new version, flagged secrets_changed, and no value is stored.
 */
const USERNAME = "netkeep";
const PASSWORD = "device-login-pass";
const COMMUNITY_1 = "Wombat-Rotor-1111";
const COMMUNITY_2 = "Wombat-Rotor-2222";
const COMMUNITY_3 = "Wombat-Rotor-3333";

const config = (community: string, location: string) => [
  "hostname edge-7",
  "!",
  `snmp-server community ${community} RO`,
  `snmp-server location ${location}`,
  "!",
  "interface GigabitEthernet0/1",
  " description uplink",
  " ip address 192.0.2.1 255.255.255.0",
  "!",
  "end",
];

let t: TestContext;
let token: string;
let device: FakeDevice;
let running = config(COMMUNITY_1, "rack-1");

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  device = await startFakeDevice({
    script: (line) => iosScript("edge-7", running).script(line),
    initPrompt: "edge-7#",
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
  });
});
afterAll(async () => {
  await device.close();
  await t.close();
});

/** Every string and blob of every table, configuration texts decompressed: where a value could have been kept. */
async function everythingStored(): Promise<string> {
  const tables = await t.db.all<{ name: string }>(sql`select name from sqlite_master where type = 'table'`);
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await t.db.all<Record<string, unknown>>(sql.raw(`select * from "${name}"`));
    for (const row of rows) {
      for (const value of Object.values(row)) {
        if (typeof value === "string") parts.push(value);
        else if (value instanceof ArrayBuffer || ArrayBuffer.isView(value))
          parts.push(Buffer.from(value as ArrayBuffer).toString("latin1"));
      }
    }
  }
  const blobs = await t.db.all<{ hash: string }>(sql`select hash from config_blobs`);
  for (const { hash } of blobs) parts.push(await readBlob(t.db, hash));
  return parts.join("\n");
}

const versions = async (deviceId: number) =>
  (
    await t.call(
      `/api/v1/configs/all-by-deviceid/${deviceId}?filter[command]=${encodeURIComponent(IOS_CONFIG_COMMAND)}&sort=version`,
      { token },
    )
  ).body.data
    .filter((v: { command: string }) => v.command === IOS_CONFIG_COMMAND)
    .sort((a: { version: number }, b: { version: number }) => a.version - b.version);

async function changeOf(configId: number) {
  const res = await t.call(`/api/v2/config-changes/by-config/${configId}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

it("a rotated secret is a new version flagged secrets_changed, its value stored nowhere; the same download again is unchanged", async () => {
  const deviceId = await addLoopbackDevice(t, token, {
    port: device.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: USERNAME,
    password: PASSWORD,
  });
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");

  running = config(COMMUNITY_2, "rack-1");
  const rotated = await downloadOnce(t, deviceId);
  expect(rotated.outcome, rotated.message ?? "").toBe("success");
  let list = await versions(deviceId);
  expect(list.map((v: { version: number; secrets_changed: boolean }) => [v.version, v.secrets_changed])).toEqual([
    [1, false],
    [2, true],
  ]);
  // The masked text is the same: only the flag tells them apart.
  expect(list[1].hash).toBe(list[0].hash);
  const one = (await t.call(`/api/v1/configs/${list[1].id}`, { token })).body.data;
  expect(one.secrets_changed).toBe(true);
  const change = await changeOf(list[1].id);
  expect(change.secrets_changed).toBe(true);
  expect(change.diff).toContain("secrets changed (values not stored)");
  // The event that webhooks and mail hear of it by says so too, with no line changed.
  const [event] = await t.db.all<{ payload: string }>(
    sql`select payload from events where type = 'config.changed' and json_extract(payload, '$.new_version_id') = ${list[1].id}`,
  );
  expect(JSON.parse(event!.payload)).toMatchObject({ secrets_changed: true, lines_added: 0, lines_removed: 0 });

  const stored = await everythingStored();
  for (const value of [COMMUNITY_1, COMMUNITY_2]) expect(stored.includes(value), `${value} stored`).toBe(false);
  expect(stored).toContain("snmp-server community <secret hidden> RO");

  const again = await downloadOnce(t, deviceId);
  expect(again.outcome, again.message ?? "").toBe("unchanged");
  expect((await versions(deviceId)).length).toBe(2);

  // A text change with the secret as it was: a change, and no secrets_changed.
  running = config(COMMUNITY_2, "rack-2");
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  list = await versions(deviceId);
  expect(list.map((v: { version: number; secrets_changed: boolean }) => [v.version, v.secrets_changed])).toEqual([
    [1, false],
    [2, true],
    [3, false],
  ]);
  const textChange = await changeOf(list[2].id);
  expect(textChange.secrets_changed).toBe(false);
  expect(textChange.diff).not.toContain("secrets changed");

  // Both at once: one version, a change that says both.
  running = config(COMMUNITY_3, "rack-3");
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  list = await versions(deviceId);
  expect(list.map((v: { version: number; secrets_changed: boolean }) => [v.version, v.secrets_changed])).toEqual([
    [1, false],
    [2, true],
    [3, false],
    [4, true],
  ]);
  const both = await changeOf(list[3].id);
  expect(both.diff).toContain("secrets changed (values not stored)");
  expect(both.diff).toContain("+snmp-server location rack-3");
  expect(await everythingStored()).not.toContain(COMMUNITY_3);
});

it("versions stored before digests were kept (null) never count as a secret change by themselves", async () => {
  const deviceId = await addLoopbackDevice(t, token, {
    port: device.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: USERNAME,
    password: PASSWORD,
  });
  running = config(COMMUNITY_1, "rack-9");
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  await t.db.run(sql`update configs set secrets_digest = null where device_id = ${deviceId}`);
  running = config(COMMUNITY_2, "rack-9");
  expect((await downloadOnce(t, deviceId)).outcome).toBe("unchanged");
  // That download gave the old version a digest: the next rotation shows.
  running = config(COMMUNITY_3, "rack-9");
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  expect((await versions(deviceId)).map((v: { secrets_changed: boolean }) => v.secrets_changed)).toEqual([false, true]);
});

it("a template whose device encrypts secrets anew at every display (secrets_reencrypted) keeps no digest: a new value is no change", async () => {
  const [row] = await t.db.all<{ code: string }>(
    sql`select code from templates where id = ${await builtinTemplateId(t, "cisco-ios")}`,
  );
  const created = await t.call("/api/v1/templates", {
    method: "POST",
    token,
    body: { name: "ios re-encrypting", code: `${row!.code.trimEnd()}\nsecrets_reencrypted: true\n` },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const deviceId = await addLoopbackDevice(t, token, {
    port: device.port,
    templateId: created.body.data.id,
    username: USERNAME,
    password: PASSWORD,
  });
  running = config(COMMUNITY_1, "rack-5");
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  running = config(COMMUNITY_2, "rack-5");
  expect((await downloadOnce(t, deviceId)).outcome).toBe("unchanged");
  expect(
    await t.db.all(sql`select distinct secrets_digest as digest from configs where device_id = ${deviceId}`),
  ).toEqual([{ digest: null }]);
});
