/**
 * Every place a user's pattern runs, through the API and a download: patterns that backtrack for seconds to
 * minutes in JavaScript's engine on a line of 40 characters answer at once, and the checks of user-pattern.ts
 * (size, control characters, what RE2 lacks) are 422s everywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import {
  addLoopbackDevice,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
  latestConfigs,
} from "../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../test/helpers/fake-device.ts";
import { compareExclusions, templates } from "../../db/schema/index.ts";
import { nameKey } from "../../db/name-key.ts";

// On these lines `.*.*.*.*.*.*.*.*!` (no "!" in the first) takes about 6 s in JavaScript's engine and
// `(a|aa)+$` (a line not ending in "a") about 40 s; each more "a" makes the second 1.6 times slower.
const RUN = "a".repeat(40);
const POLYNOMIAL = ".*.*.*.*.*.*.*.*!";
const EXPONENTIAL = "(a|aa)+$";
/** Far more than RE2 needs and far less than the backtracking took. */
const PROMPTLY_MS = 5000;

const TEMPLATE = [
  "prompt: '(?:^|\\r)[\\w.@()/:-]+[#>] ?$'",
  "commands:",
  `  - ${IOS_CONFIG_COMMAND}`,
  "filters:",
  "  drop:",
  `    - '${POLYNOMIAL}'`,
  "secrets:",
  `  - pattern: '${EXPONENTIAL}'`,
  "    replace: 'x'",
].join("\n");

let t: TestContext;
let admin: string;
let viewer: string;
let device: FakeDevice;
let deviceId: number;
let running = ["hostname slow-r1", RUN, `${RUN}!`, `${RUN}?`, "version 1", "end"];

const timed = async <T>(work: () => Promise<T>): Promise<T> => {
  const started = Date.now();
  const result = await work();
  expect(Date.now() - started).toBeLessThan(PROMPTLY_MS);
  return result;
};

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  viewer = await t.token(["configs.read"]);
  device = await startFakeDevice({
    script: (line) => iosScript("slow-r1", running).script(line),
    initPrompt: "slow-r1#",
    auth: { username: "netops", password: "Slow-Pass-2026" },
  });
  const template = await t.call("/api/v1/templates", {
    method: "POST",
    token: admin,
    body: { name: "slow-patterns", code: TEMPLATE },
  });
  expect(template.status, JSON.stringify(template.body)).toBe(201);
  deviceId = await addLoopbackDevice(t, admin, {
    port: device.port,
    templateId: template.body.data.id,
    username: "netops",
    password: "Slow-Pass-2026",
    name: "slow-r1",
  });
});
afterAll(async () => {
  device?.close();
  await t?.close();
});

describe("patterns that backtrack in JavaScript", () => {
  it("run promptly as compare exclusions (in the download's store step and in a diff) and as a template's filter and secret", async () => {
    for (const pattern of [POLYNOMIAL, EXPONENTIAL]) {
      expect(
        (await t.call("/api/v1/compare-exclusions", { method: "POST", token: admin, body: { pattern } })).status,
      ).toBe(201);
    }
    expect((await timed(() => downloadOnce(t, deviceId))).outcome).toBe("success");
    running = running.map((l) => (l === "version 1" ? "version 2" : l));
    expect((await timed(() => downloadOnce(t, deviceId))).outcome).toBe("success");

    // The filter dropped the line ending in "!"; the secret replaced the run of a's; the "?" line stayed.
    const stored = (await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)!;
    expect(stored.split("\n")).toEqual(expect.arrayContaining(["x", `${RUN}?`, "version 2"]));
    expect(stored).not.toContain(`${RUN}!`);

    const versions = (
      await t.call(
        `/api/v1/configs/latest-by-deviceid/${deviceId}?filter[command]=${encodeURIComponent(IOS_CONFIG_COMMAND)}`,
        { token: viewer },
      )
    ).body.data;
    const latest = versions[0];
    expect(latest.version).toBe(2);
    const list = await t.call(
      `/api/v1/configs?filter[device_id]=${deviceId}&filter[command]=${encodeURIComponent(IOS_CONFIG_COMMAND)}&sort=version`,
      { token: viewer },
    );
    const [first] = list.body.data;
    const diff = await timed(() =>
      t.request(`/api/v1/configs/diff?from=${first.id}&to=${latest.id}&exclusions=true&format=unified`, {
        token: viewer,
      }),
    );
    expect(diff.status).toBe(200);
    expect(await diff.text()).toContain("+version 2");
  });

  it("run promptly as a search by a viewer, which still finds what a pattern matches", async () => {
    const lines = async (q: string) => {
      const res = await timed(() =>
        t.call(`/api/v1/configs/search?regex=true&latest_only=true&q=${encodeURIComponent(q)}`, { token: viewer }),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.flatMap((hit: { matches: { line: string }[] }) => hit.matches.map((m) => m.line));
    };
    // Stored: the line ending in "!" was dropped and the run of a's replaced, so neither matches a line.
    expect(await lines(POLYNOMIAL)).toEqual([]);
    expect(await lines(EXPONENTIAL)).toEqual([]);
    expect(await lines("^(?:a|aa)+[?]$")).toEqual([`${RUN}?`]);
  });
});

describe("patterns RE2 cannot run, or that are not patterns", () => {
  const cases = [
    { pattern: "a".repeat(1001), message: /must be at most 1000 characters/ },
    {
      pattern: "key (?!<)\\S+",
      message: /uses lookahead \(\(\?!\.\.\.\)\), which RE2, the engine that runs patterns, lacks/,
    },
    { pattern: "(\\w+) \\1", message: /uses a backreference \(\\1\), which RE2/ },
    { pattern: "ab\u0000c", message: /must not contain control characters \(found U\+0000 at position 3\)/ },
  ];

  it("are a 422 saying why, in a search", async () => {
    for (const { pattern, message } of cases) {
      const res = await t.call(`/api/v1/configs/search?regex=true&q=${encodeURIComponent(pattern)}`, { token: viewer });
      expect(res.status, pattern).toBe(422);
      // A search term has a shorter limit of its own, which it names.
      expect(res.body.errors.q[0], pattern).toMatch(
        pattern.length > 1000 ? /^q must be at most 500 characters$/ : new RegExp(`^q .*${message.source}`),
      );
    }
  });

  it("are a 422 saying why, for a compare exclusion", async () => {
    for (const { pattern, message } of cases) {
      const res = await t.call("/api/v1/compare-exclusions", { method: "POST", token: admin, body: { pattern } });
      expect(res.status, pattern).toBe(422);
      expect(res.body.errors.pattern[0], pattern).toMatch(message);
    }
  });

  it("are a 422 saying why, in a template's prompt, filters and secrets", async () => {
    for (const { pattern, message } of cases) {
      const quoted = JSON.stringify(pattern); // YAML reads JSON strings, escapes (\u0000) included
      for (const [key, code] of [
        ["code.prompt", `prompt: ${quoted}\ncommands: [show run]`],
        ["code.filters.drop.0", `prompt: '#$'\ncommands: [show run]\nfilters:\n  drop: [${quoted}]`],
        [
          "code.secrets.0.pattern",
          `prompt: '#$'\ncommands: [show run]\nsecrets:\n  - pattern: ${quoted}\n    replace: x`,
        ],
      ] as const) {
        const res = await t.call("/api/v1/templates", {
          method: "POST",
          token: admin,
          body: { name: "refused", code },
        });
        expect(res.status, `${key} ${pattern}`).toBe(422);
        expect(res.body.errors[key]?.[0], `${key} ${pattern}: ${JSON.stringify(res.body.errors)}`).toMatch(message);
      }
    }
  });

  it("except the built-in templates' own patterns, which a copy keeps (they run in JavaScript's engine)", async () => {
    const ios = (
      await t.call("/api/v1/templates?filter[builtin]=true&search=cisco-ios", { token: admin })
    ).body.data.find((x: { name: string }) => x.name === "cisco-ios");
    expect(ios.code).toContain("(?!<)");
    const copy = await t.call(`/api/v1/templates/${ios.id}/copy`, { method: "POST", token: admin });
    expect(copy.status).toBe(201);
    const edited = ios.code.replace(
      "secrets:\n",
      "secrets:\n  - pattern: '^(tacacs key) (?!<)\\S+'\n    replace: '$1 <hidden>'\n",
    );
    const changed = await t.call(`/api/v1/templates/${copy.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { code: edited },
    });
    expect(changed.status).toBe(422);
    expect(changed.body.errors["code.secrets.0.pattern"][0]).toMatch(/uses lookahead .*, which RE2/);
  });

  it("saved before RE2 ran them: a template fails its downloads saying which pattern and why, an exclusion is skipped", async () => {
    const code = TEMPLATE.replace(`'${EXPONENTIAL}'`, "'^(version) (?!1)\\S+'");
    const [row] = await t.db
      .insert(templates)
      .values({
        name: "saved-before-re2",
        nameKey: nameKey("saved-before-re2"),
        description: "",
        code,
        createdAt: new Date(),
        updatedAt: new Date(),
      })
      .returning({ id: templates.id });
    await t.db.insert(compareExclusions).values({
      pattern: "^(?!x)",
      command: null,
      ignoreCase: false,
      description: "",
      enabled: true,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    expect(
      (
        await t.call(`/api/v1/devices/${deviceId}`, {
          method: "PATCH",
          token: admin,
          body: { device_template_id: row!.id },
        })
      ).status,
    ).toBe(200);
    const job = await downloadOnce(t, deviceId);
    expect(job.outcome).toBe("error");
    expect(job.message).toBe(
      `the device's connection template ${row!.id} is invalid: line 8: key \`secrets.0.pattern\`: uses lookahead ((?!...)), ` +
        "which RE2, the engine that runs patterns, lacks: it matches in linear time, without backtracking; edit it",
    );
    // The exclusion would exclude every line; skipped, it leaves the diff as it was.
    const list = (await t.call(`/api/v1/configs?filter[device_id]=${deviceId}&sort=version`, { token: viewer })).body
      .data;
    const diff = await t.request(
      `/api/v1/configs/diff?from=${list[0].id}&to=${list[1].id}&exclusions=true&format=unified`,
      { token: viewer },
    );
    expect(await diff.text()).toContain("+version 2");
  });
});
