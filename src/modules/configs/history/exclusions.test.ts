import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
} from "../../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../../test/helpers/fake-device.ts";
import { CompareExclusions, patternProblem } from "./exclusions.ts";

let t: TestContext;
let admin: string;
let reader: string;

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  reader = await t.token(["configs.read"]);
});
afterAll(() => t.close());

const rules = (body: unknown, method = "POST", path = "/api/v1/compare-exclusions", token = admin) =>
  t.call(path, { method, token, body });

describe("compare exclusion rules", () => {
  it("are created, listed, changed and deleted through the API, with configs.write to change them", async () => {
    const created = await rules({ pattern: "^! Time: ", description: "clock line" });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      pattern: "^! Time: ",
      command: null,
      ignore_case: false,
      enabled: true,
      description: "clock line",
    });
    const id = created.body.data.id;
    expect(created.headers.get("location")).toMatch(new RegExp(`/api/v1/compare-exclusions/${id}$`));

    expect((await rules({ pattern: "^x" }, "POST", "/api/v1/compare-exclusions", reader)).status).toBe(403);
    const listed = await t.call("/api/v2/compare-exclusions", { token: reader });
    expect(listed.body.data.map((r: { id: number }) => r.id)).toContain(id);

    const patched = await rules(
      { command: "show running-config", ignore_case: true },
      "PATCH",
      `/api/v1/compare-exclusions/${id}`,
    );
    expect(patched.body.data).toMatchObject({
      pattern: "^! Time: ",
      command: "show running-config",
      ignore_case: true,
    });
    const scoped = await t.call("/api/v1/compare-exclusions?filter[command]=show%20version", { token: reader });
    expect(scoped.body.data.map((r: { id: number }) => r.id)).not.toContain(id);

    const replaced = await rules({ pattern: "^! Clock " }, "PUT", `/api/v1/compare-exclusions/${id}`);
    expect(replaced.body.data).toMatchObject({ pattern: "^! Clock ", command: null, ignore_case: false });

    expect((await rules(undefined, "DELETE", `/api/v1/compare-exclusions/${id}`)).status).toBe(200);
    expect((await t.call(`/api/v1/compare-exclusions/${id}`, { token: reader })).status).toBe(404);
  });

  it("refuse an invalid regular expression with 422 saying so", async () => {
    const res = await rules({ pattern: "^interface (Gi" });
    expect(res.status).toBe(422);
    expect(res.body.errors.pattern[0]).toBe(
      "pattern is not a valid regular expression: missing closing ): `^interface (Gi`",
    );
  });

  it("refuse what RE2 lacks, and overly long patterns, naming the limit", async () => {
    for (const pattern of ["^(?!interface)", "(x)\\1"]) {
      const res = await rules({ pattern });
      expect(res.status, pattern).toBe(422);
      expect(res.body.errors.pattern[0], pattern).toMatch(
        /^pattern uses (lookahead|a backreference) .*, which RE2, the engine that runs patterns, lacks/,
      );
    }
    expect((await rules({ pattern: "x".repeat(1001) })).body.errors.pattern).toEqual([
      "pattern must be at most 1000 characters",
    ]);
    const patch = await rules({ pattern: "^ok" });
    expect(
      (await rules({ pattern: "(?=a)" }, "PATCH", `/api/v1/compare-exclusions/${patch.body.data.id}`)).status,
    ).toBe(422);
  });

  it("let ordinary patterns through, those JavaScript's engine backtracks on included (RE2 does not backtrack)", () => {
    for (const p of [
      "^ntp clock-period \\d+$",
      "^! Last change at [0-9:]+ ",
      "[(]a+[)]*",
      "^(?:ntp|sntp) ",
      "\\(x+\\)+",
      "^ (description|remark) ",
      "(a+)+$",
      "(a|b)?",
    ]) {
      expect(patternProblem(p, false), p).toBeUndefined();
    }
  });

  it("remove the lines they match for their command only, ignoring case when asked", () => {
    const set = new CompareExclusions([
      { pattern: "^! time ", ignoreCase: true, command: null },
      { pattern: "^ntp ", ignoreCase: false, command: "show running-config" },
    ]);
    const text = "! TIME 10:00\nhostname r1\nntp clock-period 5\nNTP x\nend";
    expect(set.strip("show running-config", text)).toBe("hostname r1\nNTP x\nend");
    expect(set.strip("show version", text)).toBe("hostname r1\nntp clock-period 5\nNTP x\nend");
  });
});

describe("deciding what is a new version (collector against a fake device)", () => {
  const base = [
    "hostname excl-r1",
    "! Config generated at 10:00:01",
    "interface GigabitEthernet0/1",
    " description uplink",
    "end",
  ];
  let running = base;
  let device: FakeDevice;
  let deviceId: number;
  let made = 0;
  /** Rules a test made, deleted after it so none decides another test's versions. */
  const ruleIds: number[] = [];

  beforeAll(async () => {
    const answer = (line: string) => iosScript("excl-r1", running).script(line);
    device = await startFakeDevice({
      script: answer,
      initPrompt: "excl-r1#",
      auth: { username: "netops", password: "Excl-Pass-2026" },
    });
  });
  afterAll(() => device.close());
  // Each test downloads into a device of its own, from the base text.
  beforeEach(async () => {
    running = base;
    deviceId = await addLoopbackDevice(t, admin, {
      port: device.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: "netops",
      password: "Excl-Pass-2026",
      name: `excl-r1-${++made}`,
    });
  });
  afterEach(async () => {
    for (const id of ruleIds.splice(0)) await rules(undefined, "DELETE", `/api/v1/compare-exclusions/${id}`);
  });

  /** The rule that ignores the "Config generated at" line of the running configuration. */
  const ignoreGeneratedLine = async () => {
    const rule = await rules({ pattern: "^! config generated at ", command: IOS_CONFIG_COMMAND, ignore_case: true });
    expect(rule.status).toBe(201);
    ruleIds.push(rule.body.data.id);
  };
  const firstDownload = async () => expect((await downloadOnce(t, deviceId)).outcome).toBe("success");

  const latestRunning = async () => {
    const res = await t.call(
      `/api/v1/configs/latest-by-deviceid/${deviceId}?filter[command]=${encodeURIComponent(IOS_CONFIG_COMMAND)}`,
      { token: reader },
    );
    return res.body.data[0] as { id: number; version: number; seen_count: number };
  };
  const content = async (id: number) => (await t.request(`/api/v1/configs/${id}/content`, { token: reader })).text();

  it("stores the same text twice as one version seen twice", async () => {
    expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
    expect((await downloadOnce(t, deviceId)).outcome).toBe("unchanged");
    expect(await latestRunning()).toMatchObject({ version: 1, seen_count: 2 });
  });

  it("makes no new version when only a line an exclusion rule matches changed, and keeps that line stored", async () => {
    await firstDownload();
    await ignoreGeneratedLine();
    running = base.map((l) => l.replace("10:00:01", "11:22:33"));
    expect((await downloadOnce(t, deviceId)).outcome).toBe("unchanged");
    const latest = await latestRunning();
    expect(latest).toMatchObject({ version: 1, seen_count: 2 });
    expect(await content(latest.id)).toContain("! Config generated at 10:00:01");
  });

  it("makes a new version with a change row and its diff for a real change", async () => {
    await firstDownload();
    running = base.map((l) =>
      l.replace("10:00:01", "12:00:00").replace(" description uplink", " description uplink to core-2"),
    );
    expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
    const latest = await latestRunning();
    expect(latest).toMatchObject({ version: 2, seen_count: 1 });
    const change = (await t.call(`/api/v2/config-changes/by-config/${latest.id}`, { token: reader })).body.data;
    expect(change).toMatchObject({ version: 2, previous_version: 1, lines_added: 2, lines_removed: 2, trigger: "api" });
    const lines = change.diff.split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        "-! Config generated at 10:00:01",
        "+! Config generated at 12:00:00",
        "- description uplink",
        "+ description uplink to core-2",
      ]),
    );
  });

  it("does not make a version when a rule is removed and the text is the same", async () => {
    await ignoreGeneratedLine();
    await firstDownload();
    running = base.map((l) =>
      l.replace("10:00:01", "12:00:00").replace(" description uplink", " description uplink to core-2"),
    );
    expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
    const [rule] = (await t.call("/api/v1/compare-exclusions?search=generated", { token: reader })).body.data;
    expect((await rules(undefined, "DELETE", `/api/v1/compare-exclusions/${rule.id}`)).status).toBe(200);
    expect((await downloadOnce(t, deviceId)).outcome).toBe("unchanged");
    expect(await latestRunning()).toMatchObject({ version: 2, seen_count: 2 });
    running = base.map((l) =>
      l.replace("10:00:01", "13:00:00").replace(" description uplink", " description uplink to core-2"),
    );
    expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
    expect(await latestRunning()).toMatchObject({ version: 3 });
  });
});
