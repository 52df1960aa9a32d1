import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, downloadOnce, latestConfigs } from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice, type FakeDeviceOptions } from "../helpers/fake-device.ts";
import type { FakeNetconfOptions } from "../helpers/fake-netconf.ts";
import { loadPlan } from "../../collector/download.ts";
import { pushLines } from "../../collector/push.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../../collector/worker.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { startCompliancePass } from "../../collector/compliance-pass.ts";
import { until } from "../helpers/until.ts";

/**
 * Backups over NETCONF (protocol: netconf): the collector against the fake device's `netconf` subsystem, which is
 * first checked against an independent client, Debian's python3-ncclient.
 */

const USERNAME = "netconf-op";
const PASSWORD = "Nc-Test-Pass-7781";
const JUNOS_NS = "http://xml.juniper.net/xnm/1.1/xnm";
const JUNOS_PREFIX_NS = "http://xml.juniper.net/junos/*/junos";
// A Junos answer as a device writes it: namespace and volatile attributes, indentation of its own, a secret.
const JUNOS_CONFIG = `
<configuration xmlns:junos="${JUNOS_PREFIX_NS}" junos:changed-seconds="1732700000" xmlns="${JUNOS_NS}" junos:changed-localtime="2026-11-27 10:13:20 UTC">
    <version>23.4R1.9</version>
    <system>
        <host-name>edge-1</host-name>
        <root-authentication>
            <encrypted-password>$6$Qx0b$Root-Hash-Secret-991</encrypted-password>
        </root-authentication>
    </system>
    <snmp>
        <community>
            <name>Comm-Secret-4411</name>
            <authorization>read-only</authorization>
        </community>
    </snmp>
    <interfaces>
        <interface><name>ge-0/0/0</name><description>uplink &amp; core</description><disable/></interface>
    </interfaces>
</configuration>`;

const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const ncclientMissing = await promisify(execFile)(PYTHON, ["-c", "import ncclient"]).then(
  () => undefined,
  () => "python3-ncclient is not installed (apt-get install python3-ncclient)",
);

let t: TestContext;
let token: string;
const started: FakeDevice[] = [];

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
  await t.close();
});

async function fakeNetconfDevice(
  netconf: FakeNetconfOptions,
  extra: Partial<FakeDeviceOptions> = {},
): Promise<FakeDevice> {
  const device = await startFakeDevice({ netconf, auth: { username: USERNAME, password: PASSWORD }, ...extra });
  started.push(device);
  return device;
}

async function netconfTemplate(yaml: string): Promise<number> {
  const created = await t.call("/api/v1/templates", {
    method: "POST",
    token,
    body: { name: `netconf-${started.length}-${Math.random()}`, code: yaml },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data.id;
}

const junosYaml = (filter?: string) => `vendor: Juniper
protocol: netconf
config_marker: '<host-name>'
netconf:
  secrets: [encrypted-password, snmp/community/name]
  drop: ['configuration/@changed-seconds', 'configuration/@changed-localtime']
${filter ? `  filter: '${filter}'\n` : ""}`;
const JUNOS_YAML = junosYaml();

async function deviceOn(device: FakeDevice, templateId: number): Promise<number> {
  return addLoopbackDevice(t, token, {
    port: device.port,
    templateId,
    username: USERNAME,
    password: PASSWORD,
    device_vendor: "Juniper",
  });
}

describe("the fake device's NETCONF server, checked with python3-ncclient", () => {
  if (ncclientMissing) {
    if (process.env.CI) it("has python3-ncclient (required in CI)", () => expect.fail(ncclientMissing));
    else it.skip(`skipped: ${ncclientMissing}`, () => {});
    return;
  }
  const ncclient = async (device: FakeDevice, subtree?: string) => {
    const { stdout } = await promisify(execFile)(
      PYTHON,
      [
        new URL("../helpers/ncclient-get.py", import.meta.url).pathname,
        device.host,
        String(device.port),
        USERNAME,
        PASSWORD,
        ...(subtree ? [subtree] : []),
      ],
      { timeout: 60_000 },
    );
    return JSON.parse(stdout) as {
      session_id: string;
      capabilities: string[];
      data?: string;
      rpc_error?: { tag: string; message: string };
      framing: string;
    };
  };

  it.each([
    [true, "1.1"],
    [false, "1.0"],
  ] as const)("serves get-config and close-session (base:1.1 offered: %s; framing %s)", async (base11, framing) => {
    const device = await fakeNetconfDevice({ config: JUNOS_CONFIG, base11 });
    const got = await ncclient(device, "<configuration><system/></configuration>");
    expect(got.framing).toBe(framing);
    expect(got.session_id).toBe("4242");
    expect(got.capabilities).toContain("urn:ietf:params:netconf:base:1.0");
    expect(got.data).toContain("<host-name>edge-1</host-name>");
    expect(got.data).toContain("uplink &amp; core");
    expect(device.received).toEqual([
      "<netconf> hello",
      "<netconf> get-config <configuration><system/></configuration>",
      "<netconf> close-session",
    ]);
    expect(device.unexpected).toEqual([]);
  });

  it("answers with an rpc-error that ncclient reads as one", async () => {
    const device = await fakeNetconfDevice({
      config: JUNOS_CONFIG,
      rpcError: { tag: "access-denied", message: "permission denied for get-config" },
    });
    const got = await ncclient(device);
    expect(got.rpc_error).toEqual({ tag: "access-denied", message: "permission denied for get-config" });
  });
});

describe("a backup over NETCONF", () => {
  it.each([[true], [false]])(
    "stores canonical XML, secrets masked and volatile attributes gone (base:1.1 offered: %s)",
    async (base11) => {
      const device = await fakeNetconfDevice({ config: JUNOS_CONFIG, base11 }, { chunkSize: 97 });
      const id = await deviceOn(device, await netconfTemplate(junosYaml("<configuration/>")));
      const job = await downloadOnce(t, id, { jobTimeLimitMs: 10_000 });
      expect(job.outcome, job.message ?? "").toBe("success");
      const stored = (await latestConfigs(t, id)).get("get-config")!;
      expect(stored).toBe(
        [
          `<configuration xmlns="${JUNOS_NS}" xmlns:junos="${JUNOS_PREFIX_NS}">`,
          "  <version>23.4R1.9</version>",
          "  <system>",
          "    <host-name>edge-1</host-name>",
          "    <root-authentication>",
          "      <encrypted-password>(secret removed)</encrypted-password>",
          "    </root-authentication>",
          "  </system>",
          "  <snmp>",
          "    <community>",
          "      <name>(secret removed)</name>",
          "      <authorization>read-only</authorization>",
          "    </community>",
          "  </snmp>",
          "  <interfaces>",
          "    <interface>",
          "      <name>ge-0/0/0</name>",
          "      <description>uplink &amp; core</description>",
          "      <disable/>",
          "    </interface>",
          "  </interfaces>",
          "</configuration>",
          "",
        ].join("\n"),
      );
      expect(device.received).toEqual([
        "<netconf> hello",
        "<netconf> get-config <configuration/>",
        "<netconf> close-session",
      ]);
      expect(device.unexpected).toEqual([]);
      expect(JSON.stringify(job)).not.toContain("Secret");
    },
  );

  it("finds the same configuration unchanged when the device reorders attributes, repeats namespaces and indents otherwise", async () => {
    const templateId = await netconfTemplate(JUNOS_YAML);
    const first = await fakeNetconfDevice({ config: JUNOS_CONFIG });
    const id = await deviceOn(first, templateId);
    expect((await downloadOnce(t, id)).outcome).toBe("success");
    const reordered = JUNOS_CONFIG.replace(
      `xmlns:junos="${JUNOS_PREFIX_NS}" junos:changed-seconds="1732700000" xmlns="${JUNOS_NS}"`,
      `xmlns="${JUNOS_NS}" junos:changed-seconds="1732790000" xmlns:junos="${JUNOS_PREFIX_NS}"`,
    )
      .replace("<system>", `<system xmlns="${JUNOS_NS}">`)
      .replace(/\n\s*/g, "");
    const second = await fakeNetconfDevice({ config: reordered });
    await t.call(`/api/v1/devices/${id}`, { method: "PATCH", token, body: { device_port_override: second.port } });
    await t.call(`/api/v1/devices/${id}/host-key/reset`, { method: "POST", token });
    const again = await downloadOnce(t, id);
    expect(again.outcome, again.message ?? "").toBe("unchanged");
  });

  it("uses a built-in NETCONF template (juniper-junos-netconf), and asks the device for no shell", async () => {
    const device = await fakeNetconfDevice({ config: JUNOS_CONFIG });
    const id = await deviceOn(device, await builtinTemplateId(t, "juniper-junos-netconf"));
    const job = await downloadOnce(t, id);
    expect(job.outcome, job.message ?? "").toBe("success");
    const stored = (await latestConfigs(t, id)).get("get-config")!;
    expect(stored).toContain("<encrypted-password>(secret removed)</encrypted-password>");
    expect(stored).not.toContain("Comm-Secret-4411");
    expect(stored).not.toContain("changed-seconds");
    expect(device.received).not.toContain("<shell request>");
  });

  it("compliance sections follow the XML tree: a section rule finds a line inside its element and misses one in another", async () => {
    const device = await fakeNetconfDevice({ config: JUNOS_CONFIG });
    // The built-in Junos template: Junos's own CLI nests by braces, its stored NETCONF XML by element.
    const id = await deviceOn(device, await builtinTemplateId(t, "juniper-junos-netconf"));
    const definition = [
      "// Description: the host name is set in the system hierarchy",
      "#[section: ^\\s*<system>$]",
      "#[must_match_regex]",
      "<host-name>edge-1</host-name>",
      "",
      "// Description: SNMP access is set in the system hierarchy",
      "#[section: ^\\s*<system>$]",
      "#[must_match_regex]",
      "<authorization>read-only</authorization>",
      "",
    ].join("\n");
    const policy = await t.call("/api/v1/policies", {
      method: "POST",
      token,
      body: { name: `netconf-sections-${id}`, definition },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    await t.call("/api/v1/policy-assignments", {
      method: "POST",
      token,
      body: { policy_id: policy.body.data.id, scope: "devices", devices: [id] },
    });
    const pass = startCompliancePass(
      { db: t.db, clock: { now: () => new Date() }, logger: silentLogger },
      { pollIntervalMs: 20, busyIntervalMs: 20, batch: 25, busy: () => false },
    );
    try {
      expect((await downloadOnce(t, id)).outcome).toBe("success");
      const result = await until(
        "the device's compliance result",
        async () =>
          (await t.call(`/api/v1/policy-compliance?device_id=${id}`, { token })).body.data.find(
            (r: { device_id: number }) => r.device_id === id,
          ) as { rules: unknown[] } | undefined,
        Boolean,
        { tries: 200, everyMs: 50 },
      );
      expect(result).toMatchObject({ device_id: id, command: "get-config", status: "not_compliant" });
      const stored = (await latestConfigs(t, id)).get("get-config")!.split("\n");
      expect(result!.rules[0]).toMatchObject({ passed: true, sections_checked: 1 });
      // The <authorization> line is in <snmp>, not <system>: the failure names the <system> element's line.
      expect(result!.rules[1]).toMatchObject({ passed: false, sections_checked: 1 });
      expect(JSON.stringify(result!.rules[1])).toContain(
        `"line":${stored.findIndex((l) => l.trim() === "<system>") + 1}`,
      );

      // A template that declares another nesting style gets it: no line opens a brace, so <system> holds nothing.
      const braced = await deviceOn(
        await fakeNetconfDevice({ config: JUNOS_CONFIG }),
        await netconfTemplate(`${JUNOS_YAML}nesting: braces\n`),
      );
      await t.call("/api/v1/policy-assignments", {
        method: "POST",
        token,
        body: { policy_id: policy.body.data.id, scope: "devices", devices: [braced] },
      });
      expect((await downloadOnce(t, braced)).outcome).toBe("success");
      const other = await until(
        "the braced device's compliance result",
        async () =>
          (await t.call(`/api/v1/policy-compliance?device_id=${braced}`, { token })).body.data.find(
            (r: { device_id: number }) => r.device_id === braced,
          ) as { rules: unknown[] } | undefined,
        Boolean,
        { tries: 200, everyMs: 50 },
      );
      expect(other!.rules[0]).toMatchObject({ passed: false });
    } finally {
      await pass.stop();
    }
  });

  it("an rpc-error fails the job with the device's words, and stores nothing", async () => {
    const device = await fakeNetconfDevice({
      config: JUNOS_CONFIG,
      rpcError: { tag: "access-denied", message: "permission denied for get-config", path: "/rpc/get-config" },
    });
    const id = await deviceOn(device, await netconfTemplate(JUNOS_YAML));
    const job = await downloadOnce(t, id);
    expect(job.outcome).toBe("error");
    expect(job.message).toBe(
      "the device refused <get-config>: access-denied: permission denied for get-config (at /rpc/get-config)",
    );
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  it.each([[true], [false]])(
    "a device that drops the session mid-message fails the job and stores nothing (base:1.1 offered: %s)",
    async (base11) => {
      const device = await fakeNetconfDevice({ config: JUNOS_CONFIG, base11 }, { faults: { dropAfterBytes: 700 } });
      const id = await deviceOn(device, await netconfTemplate(JUNOS_YAML));
      const job = await downloadOnce(t, id);
      expect(job.outcome).toBe("error");
      expect(job.message).toMatch(
        /^the device closed the NETCONF session in the middle of a message \(\d+ bytes of it received\)/,
      );
      expect(await latestConfigs(t, id)).toEqual(new Map());
    },
  );

  it("a device that goes silent mid-answer times out on the silence limit", async () => {
    const device = await fakeNetconfDevice({ config: JUNOS_CONFIG }, { faults: { stallAfterBytes: 700 } });
    const id = await deviceOn(device, await netconfTemplate(JUNOS_YAML));
    const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 300 } });
    expect(job.outcome).toBe("timeout");
    expect(job.message).toMatch(
      /^no NETCONF message for 0.3 s while waiting for the answer to <get-config> \(\d+ bytes of it received\)/,
    );
  });

  it("an answer larger than the output limit is refused", async () => {
    const device = await fakeNetconfDevice({ config: "", hugeConfigBytes: 3 * 1024 * 1024 });
    const id = await deviceOn(device, await netconfTemplate(JUNOS_YAML));
    const job = await downloadOnce(t, id, { limits: { maxOutputBytes: 1024 * 1024 } });
    expect(job.outcome).toBe("error");
    expect(job.message).toBe("a NETCONF message exceeded 1 MB (the output limit)");
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  const LARGE_MB = 20;
  it.each([[true], [false]])(
    `stores a ${LARGE_MB} MB configuration whole (base:1.1 offered: %s)`,
    async (base11) => {
      const device = await fakeNetconfDevice({ config: "", hugeConfigBytes: LARGE_MB * 1024 * 1024, base11 });
      const id = await deviceOn(device, await netconfTemplate("protocol: netconf\n"));
      const job = await downloadOnce(t, id, { limits: { maxOutputBytes: 64 * 1024 * 1024 }, jobTimeLimitMs: 120_000 });
      expect(job.outcome, job.message ?? "").toBe("success");
      const stored = (await latestConfigs(t, id)).get("get-config")!;
      const interfaces = stored.match(/^ {4}<interface>$/gm)!.length;
      // Every interface the device sent, the last one included: nothing cut off.
      expect(stored).toContain(`<name>ge-0/0/${interfaces - 1}</name>`);
      expect(interfaces * 240).toBeGreaterThan(LARGE_MB * 1024 * 1024 * 0.95);
      expect(stored.endsWith("</configuration>\n")).toBe(true);
    },
    180_000,
  );

  it("a device without the netconf subsystem fails in words", async () => {
    const device = await startFakeDevice({ script: () => undefined, auth: { username: USERNAME, password: PASSWORD } });
    started.push(device);
    const id = await deviceOn(device, await netconfTemplate(JUNOS_YAML));
    const job = await downloadOnce(t, id);
    expect(job.outcome).toBe("error");
    expect(job.message).toContain("the device refused the SSH subsystem 'netconf'");
  });
});

describe("NETCONF templates", () => {
  it.each([
    ["protocol: netconf\nprompt: '#$'\n", "code.prompt", "has no meaning over NETCONF"],
    ["protocol: netconf\nnetconf:\n  filter: '<configuration>'\n", "code.netconf.filter", "is not well-formed XML"],
    [
      "protocol: netconf\nnetconf:\n  secrets: ['junos:password']\n",
      "code.netconf.secrets.0",
      "must be element names separated by /",
    ],
    ["protocol: netconf\ncommands: [show running-config]\n", "code.commands", "must be left out over NETCONF"],
    ["prompt: '#$'\ncommands: [show run]\nnetconf: {}\n", "code.netconf", "needs protocol netconf"],
  ])("refuses %j", async (code, key, problem) => {
    const res = await t.call("/api/v1/templates", {
      method: "POST",
      token,
      body: { name: `bad-${Math.random()}`, code },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[key]?.[0]).toContain(problem);
  });
});

describe("a snippet pushed over NETCONF", () => {
  const PUSH_YAML = `${JUNOS_YAML}  push:\n    confirm_timeout_seconds: 90\n`;
  const SNIPPET = [
    "<configuration>",
    "  <system><ntp><server><name>192.0.2.123</name></server></ntp></system>",
    "</configuration>",
  ];
  const push = async (device: FakeDevice, save = true, yaml = PUSH_YAML) => {
    const id = await deviceOn(device, await netconfTemplate(yaml));
    const { plan } = await loadPlan(t.db, t.secrets, id);
    const outcome = await pushLines(
      { target: plan, limits: DEFAULT_LIMITS, connectTimeoutMs: 5_000 },
      { lines: SNIPPET, save },
      new AbortController().signal,
      { connected: false },
    );
    return { id, outcome };
  };
  const ops = (device: FakeDevice) => device.received.map((r) => r.replace(/^<netconf> /, ""));

  it("goes to the candidate, is validated, committed with confirmed and a timeout, then confirmed; a backup shows it", async () => {
    const netconf = { config: JUNOS_CONFIG, candidate: {} };
    const device = await fakeNetconfDevice(netconf);
    const { id, outcome } = await push(device);
    expect(outcome, outcome.message).toMatchObject({ status: "success", saved: true });
    expect(ops(device)).toEqual([
      "hello",
      "lock",
      "edit-config",
      "validate",
      "commit confirmed 90 s",
      "commit",
      "unlock",
      "close-session",
    ]);
    expect(outcome.transcript).toContain("<name>192.0.2.123</name>");
    expect((await downloadOnce(t, id)).outcome).toBe("success");
    expect((await latestConfigs(t, id)).get("get-config")).toContain("<name>192.0.2.123</name>");
  });

  it.each(["edit-config", "validate", "commit"] as const)(
    "refused at %s: the candidate is discarded, the lock released, nothing committed",
    async (refuse) => {
      const device = await fakeNetconfDevice({ config: JUNOS_CONFIG, candidate: { refuse } });
      const { outcome } = await push(device);
      expect(outcome, outcome.message).toMatchObject({
        status: "failed",
        saved: false,
        failedLine: { stage: refuse === "edit-config" ? "line" : "save" },
      });
      expect(outcome.message).toBe(
        `the device refused <${refuse}>: invalid-value: the fake device refuses <${refuse}>: syntax error at 'bogus' (at /config/bogus)`,
      );
      expect(ops(device).slice(-3)).toEqual(["discard-changes", "unlock", "close-session"]);
      expect(ops(device).filter((o) => o.startsWith("commit") && refuse !== "commit")).toEqual([]);
    },
  );

  it("a dry check validates and discards", async () => {
    const device = await fakeNetconfDevice({ config: JUNOS_CONFIG, candidate: {} });
    const { outcome } = await push(device, false);
    expect(outcome).toMatchObject({ status: "success", saved: false });
    expect(ops(device)).toEqual([
      "hello",
      "lock",
      "edit-config",
      "validate",
      "discard-changes",
      "unlock",
      "close-session",
    ]);
  });

  it("a device without a candidate datastore, or a template without netconf.push, is refused in words", async () => {
    const plain = await fakeNetconfDevice({ config: JUNOS_CONFIG });
    expect((await push(plain)).outcome).toMatchObject({
      status: "error",
      message: expect.stringContaining("offers no candidate datastore"),
    });
    expect(ops(plain)).not.toContain("edit-config");
    const other = await fakeNetconfDevice({ config: JUNOS_CONFIG, candidate: {} });
    expect((await push(other, true, JUNOS_YAML)).outcome).toMatchObject({
      status: "error",
      message: expect.stringContaining("has no netconf.push section"),
    });
  });
});

describe("a snippet sent to a NETCONF device through the API", () => {
  it("is rendered, pushed by a collector with the confirmed commit, and the configurations before and after are stored", async () => {
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-nc",
        connectTimeoutMs: 5_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 2, pollIntervalMs: 50 },
    );
    try {
      const device = await fakeNetconfDevice({ config: JUNOS_CONFIG, candidate: {} });
      const id = await deviceOn(device, await builtinTemplateId(t, "juniper-junos-netconf"));
      const content =
        "<configuration>\n  <system><ntp><server><name>{ntp}</name></server></ntp></system>\n</configuration>";
      const created = await t.call("/api/v1/snippets", {
        method: "POST",
        token,
        body: { name: "netconf ntp", content },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const sent = await t.call(`/api/v1/snippets/${created.body.data.id}/send?wait=20`, {
        method: "POST",
        token,
        body: { device_id: id, dynamic_vars: { ntp: "192.0.2.77" } },
      });
      expect(sent.body.data, JSON.stringify(sent.body)).toMatchObject({
        type: "snippet_push",
        state: "finished",
        outcome: "success",
      });
      expect(device.received.filter((r) => r.startsWith("<netconf> commit"))).toEqual([
        "<netconf> commit confirmed 120 s",
        "<netconf> commit",
      ]);
      const pushed = (await t.call(`/api/v1/snippet-deployments/${sent.body.data.deployment_id}/devices`, { token }))
        .body.data[0];
      expect(pushed.result.diff, pushed.result.diff).toContain("+        <name>192.0.2.77</name>");
      expect(pushed.transcript).not.toContain(PASSWORD);
    } finally {
      await worker.stop();
    }
  });
});

describe("the built-in NETCONF templates, each against a configuration of its family (test/fixtures/netconf)", () => {
  const templatesDir = new URL("../../collector/templates/", import.meta.url);
  const fixtures = new URL("../fixtures/netconf/", import.meta.url);
  const keys = readdirSync(templatesDir)
    .filter((f) => f.endsWith(".yaml") && /^protocol: netconf$/m.test(readFileSync(new URL(f, templatesDir), "utf8")))
    .map((f) => f.slice(0, -5));

  it("are six, each with a fixture", () => {
    expect(keys.sort()).toEqual(
      readdirSync(fixtures)
        .map((f) => f.replace(/\.xml$/, ""))
        .sort(),
    );
    expect(keys).toHaveLength(6);
  });

  it.each(keys)("%s stores the configuration with every secret masked", async (key) => {
    const xml = readFileSync(new URL(`${key}.xml`, fixtures), "utf8");
    expect(xml.startsWith("<!-- source:")).toBe(true);
    const device = await fakeNetconfDevice({ config: xml });
    const id = await deviceOn(device, await builtinTemplateId(t, key));
    const job = await downloadOnce(t, id);
    expect(job.outcome, job.message ?? "").toBe("success");
    const stored = (await latestConfigs(t, id)).get("get-config")!;
    // The header comment names "Secret-" once; a masked element with children masks each of their texts.
    const secrets = xml.match(/Secret-/g)!.length - 1;
    expect(stored, stored).not.toContain("Secret-");
    expect(stored.match(/\(secret removed\)/g)!.length).toBeGreaterThanOrEqual(secrets);
    expect(stored).not.toContain("source:");
  });
});
