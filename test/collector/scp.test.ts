import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { addLoopbackDevice, downloadOnce, latestConfigs } from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice, type FakeDeviceOptions } from "../helpers/fake-device.ts";

/**
 * Templates' `{scp: <path>}` commands: the collector fetches the file over SCP (`scp -f` on an exec channel of the
 * same SSH connection) from the fake device, which speaks the source side of the protocol.
 */

const USERNAME = "netops";
const PASSWORD = "Scp-Test-Pass-2291";
// Multi-byte text split across SSH packets (chunkSize below) must come back byte for byte.
const CONFIG_INI = "; APC\r\n[NetworkTCP/IP]\r\nHostName=ups-a\r\nsysLocation=Zürich – Raum 3\r\n";

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

async function deviceWith(
  code: string,
  options: Partial<FakeDeviceOptions>,
): Promise<{ id: number; device: FakeDevice }> {
  const created = await t.call("/api/v1/templates", {
    method: "POST",
    token,
    body: { name: `scp-${started.length}`, code },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const device = await startFakeDevice({
    script: () => undefined,
    mode: "exec",
    auth: { username: USERNAME, password: PASSWORD },
    ...options,
  });
  started.push(device);
  const id = await addLoopbackDevice(t, token, {
    port: device.port,
    templateId: created.body.data.id,
    username: USERNAME,
    password: PASSWORD,
  });
  return { id, device };
}

describe("a file fetched over SCP", () => {
  it("is stored under 'scp <path>', byte for byte, its lines normalised", async () => {
    const { id, device } = await deviceWith("exec: true\ncommands:\n  - scp: config.ini\n", {
      files: { "config.ini": CONFIG_INI },
      chunkSize: 7,
    });
    const job = await downloadOnce(t, id, { jobTimeLimitMs: 5_000 });
    expect(job.outcome, job.message ?? "").toBe("success");
    expect((await latestConfigs(t, id)).get("scp config.ini")).toBe(CONFIG_INI.replaceAll("\r\n", "\n"));
    expect(device.received).toEqual(["scp -f config.ini"]);
    expect(device.unexpected).toEqual([]);
  });

  it("one the device lacks fails the job with the device's reason, and nothing is stored", async () => {
    const { id } = await deviceWith("exec: true\ncommands:\n  - scp: config.ini\n", { files: {} });
    const job = await downloadOnce(t, id, { jobTimeLimitMs: 5_000 });
    expect(job.outcome).toBe("error");
    expect(job.message).toContain("config.ini: No such file or directory");
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  it("a device that never starts the transfer: the job times out on the silence limit, it does not hang", async () => {
    const { id } = await deviceWith("exec: true\ncommands:\n  - scp: config.ini\n", {
      files: { "config.ini": CONFIG_INI },
      faults: { neverPrompt: true },
    });
    const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 400 }, jobTimeLimitMs: 5_000 });
    expect(job.outcome).toBe("timeout");
    expect(job.message).toContain("SCP of 'config.ini' produced nothing for 0.4 s");
  });

  it("one larger than the output limit is refused before its bytes are read", async () => {
    const { id } = await deviceWith("exec: true\ncommands:\n  - scp: config.ini\n", {
      files: { "config.ini": "x".repeat(4096) },
    });
    const job = await downloadOnce(t, id, { limits: { maxOutputBytes: 1024 }, jobTimeLimitMs: 5_000 });
    expect(job.outcome).toBe("error");
    expect(job.message).toContain("the file is 4096 bytes, more than the output limit of 1024 bytes");
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  it("an optional one the device lacks is skipped and recorded; the others are stored", async () => {
    const code = "exec: true\ncommands:\n  - scp: config.ini\n  - {scp: /var/log/event.txt, optional: true}\n";
    const { id } = await deviceWith(code, { files: { "config.ini": CONFIG_INI } });
    const job = await downloadOnce(t, id, { jobTimeLimitMs: 5_000 });
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(job.result).toMatchObject({
      skipped_commands: [
        { command: "scp /var/log/event.txt", reason: expect.stringContaining("No such file or directory") },
      ],
    });
    expect([...(await latestConfigs(t, id)).keys()]).toEqual(["scp config.ini"]);
  });

  it("works beside an interactive shell session on the same connection", async () => {
    const code =
      "prompt: '^apc>$'\nsetup: [session -h]\ncommands:\n  - scp: config.ini\n  - about\nconfig_command: scp config.ini\nteardown: [exit]\n";
    const { id, device } = await deviceWith(code, {
      mode: "both",
      initPrompt: "\r\nSchneider Electric Network Management Card AOS\r\napc>",
      files: { "config.ini": CONFIG_INI },
      script: (line) => {
        if (line === "session -h") return "session -h\r\nE000: Success\r\napc>";
        if (line === "about") return "about\r\nE000: Success\r\nModel Number: AP9641\r\napc>";
        if (line === "exit") return { answer: "exit\r\nBye.\r\n", close: true };
        return undefined;
      },
    });
    const job = await downloadOnce(t, id, { jobTimeLimitMs: 5_000 });
    expect(job.outcome, job.message ?? "").toBe("success");
    const stored = await latestConfigs(t, id);
    expect(stored.get("scp config.ini")).toBe(CONFIG_INI.replaceAll("\r\n", "\n"));
    expect(stored.get("about")).toBe("E000: Success\nModel Number: AP9641\n");
    expect(device.unexpected).toEqual([]);
  });

  it("a template refuses SCP over Telnet and a path that would be read as an option or by a shell", async () => {
    for (const [code, key] of [
      ["protocol: telnet\nprompt: '>$'\ncommands:\n  - scp: config.ini\n", "code.commands.0.scp"],
      ["exec: true\ncommands:\n  - scp: -tr\n", "code.commands.0.scp"],
      ["exec: true\ncommands:\n  - scp: 'config.ini; reboot'\n", "code.commands.0.scp"],
      ["exec: true\ncommands:\n  - {scp: config.ini, command: show config}\n", "code.commands.0.scp"],
    ] as const) {
      const res = await t.call("/api/v1/templates", { method: "POST", token, body: { name: "scp-refused", code } });
      expect(res.status, code).toBe(422);
      expect(Object.keys(res.body.errors), JSON.stringify(res.body)).toEqual([key]);
    }
  });
});
