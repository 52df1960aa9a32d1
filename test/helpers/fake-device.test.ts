import { basename } from "node:path";
import { Client, type ClientChannel, type ConnectConfig } from "ssh2";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "./until.ts";
import {
  configBlocks,
  fingerprintOf,
  generateHostKey,
  startFakeDevice,
  startFakeDevices,
  type FakeDevice,
  type FakeDeviceOptions,
} from "./fake-device.ts";
import {
  decodeRubyEscapes,
  loadSimulation,
  parseSimulation,
  recordedMode,
  simulationFiles,
  stripTerminator,
  type Simulation,
} from "./simulation.ts";

const USER = { username: "oxidized", password: "s3cret" };
const QUIET_MS = 250;

let devices: FakeDevice[] = [];
let clients: Client[] = [];
afterEach(async () => {
  for (const client of clients) client.end();
  await Promise.all(devices.map((d) => d.close()));
  devices = [];
  clients = [];
});

async function device(options: FakeDeviceOptions): Promise<FakeDevice> {
  const started = await startFakeDevice(options);
  devices.push(started);
  return started;
}

type Login = { client: Client; fingerprint: string };

function connect(
  target: FakeDevice,
  config: Partial<ConnectConfig> = { password: USER.password },
  username = USER.username,
): Promise<Login> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    clients.push(client);
    let fingerprint = "";
    client.on("ready", () => resolve({ client, fingerprint }));
    client.on("error", reject);
    client.connect({
      host: target.host,
      port: target.port,
      username,
      readyTimeout: 5_000,
      hostVerifier: (key: Buffer) => ((fingerprint = fingerprintOf(key)), true),
      ...config,
    });
  });
}

/** Everything a channel printed so far, and a bounded wait for more. */
class Capture {
  private chunks: Buffer[] = [];
  stderr = "";
  packets = 0;
  closed = false;
  exitCode: number | undefined;
  constructor(readonly channel: ClientChannel) {
    channel.on("data", (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.packets++;
    });
    channel.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString("utf8")));
    channel.on("exit", (code: number) => (this.exitCode = code));
    channel.on("close", () => (this.closed = true));
  }
  get bytes(): number {
    return this.chunks.reduce((n, c) => n + c.length, 0);
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
  /** Waits, 5 ms a try, until `done`; a failure shows the last 300 characters that arrived. */
  async until(what: string, done: () => boolean, tries = 600): Promise<void> {
    await until(
      what,
      () => (done() ? true : this.text().slice(-300)),
      (v) => v === true,
      { everyMs: 5, tries },
    );
  }

  untilBytes(n: number): Promise<void> {
    return this.until(`${n} bytes`, () => this.bytes >= n);
  }
  /**
   * Nothing more arrives for a while (and the channel stays as it is). A sleep on purpose: a silent device sends
   * no later event to wait for, so callers first wait until the device has read what it would answer.
   */
  async quiet(ms = QUIET_MS): Promise<void> {
    const before = this.bytes;
    await new Promise((r) => setTimeout(r, ms));
    expect(this.bytes).toBe(before);
  }
}

function shell(client: Client): Promise<Capture> {
  return new Promise((resolve, reject) =>
    client.shell({ term: "vt100", cols: 200, rows: 24 }, (err, ch) => (err ? reject(err) : resolve(new Capture(ch)))),
  );
}

async function exec(client: Client, command: string): Promise<Capture> {
  const capture = await new Promise<Capture>((resolve, reject) =>
    client.exec(command, (err, ch) => (err ? reject(err) : resolve(new Capture(ch)))),
  );
  await capture.until(`the end of '${command}'`, () => capture.closed);
  return capture;
}

const byteLength = (s: string) => Buffer.byteLength(s, "utf8");
const files = simulationFiles();
const fixture = (prefix: string) => loadSimulation(files.find((f) => basename(f).startsWith(prefix))!);

describe("simulation.yaml decoding", () => {
  it("decodes the recorder's Ruby escapes after YAML parsing, and only those", () => {
    expect(decodeRubyEscapes(String.raw`a\x20\r\n\t\e[m\b\"q\" \\x20 \x00 \q`)).toBe(
      'a \r\n\t\x1b[m\b"q" \\x20 \x00 \\q',
    );
    const sim = parseSimulation(
      [
        "init_prompt: |-",
        "  banner\\r",
        "  R1#\\x20",
        "commands:",
        '  - "show x\\n": |-',
        "      show x",
        "      R1#\\x20",
        '  - " ": ""',
      ].join("\n"),
    );
    expect(sim).toEqual({
      initPrompt: "banner\r\nR1# ",
      commands: [
        { line: "show x\n", answer: "show x\nR1# " },
        { line: " ", answer: "" },
      ],
      ordered: true,
    });
    expect(parseSimulation('init_prompt:\ncommands:\n  "ls\\n": x').initPrompt).toBe("");
  });

  it("finds every recording and tells shell families from exec-channel ones", () => {
    expect(files.length).toBeGreaterThanOrEqual(18);
    expect(recordedMode(fixture("ios#"))).toBe("shell");
    expect(recordedMode(fixture("junos#"))).toBe("exec"); // a login banner, but no echo
    expect(recordedMode(fixture("routeros#"))).toBe("exec");
  });
});

describe("replays every recording byte for byte", () => {
  it.each(files.map((f) => [basename(f), f]))("%s", async (_name, file) => {
    const sim: Simulation = loadSimulation(file);
    const target = await device({ simulation: sim, auth: USER });
    const { client } = await connect(target);
    if (recordedMode(sim) === "exec") {
      for (const { line, answer } of sim.commands) {
        const run = await exec(client, stripTerminator(line));
        expect(run.text(), line).toBe(answer);
        expect(run.exitCode).toBe(0);
      }
    } else {
      const out = await shell(client);
      let expected = sim.initPrompt;
      await out.untilBytes(byteLength(expected));
      for (const { line, answer } of sim.commands) {
        out.channel.write(line);
        expected += answer;
        await out.untilBytes(byteLength(expected));
      }
      expect(out.text()).toBe(expected);
      // The last entry of a list, or exit in a map, ends the session as the device did.
      await out.until("the device to close the shell", () => out.closed);
    }
    expect(target.received).toEqual(
      sim.commands.map((c) => (recordedMode(sim) === "exec" ? stripTerminator(c.line) : c.line)),
    );
    expect(target.unexpected).toEqual([]);
    expect(target.sessions).toBe(1);
  });
});

describe("what the recording lacks", () => {
  it("answers an unknown line with a CLI error and the prompt, and records it", async () => {
    const sim = fixture("ios#");
    const target = await device({ simulation: sim, auth: USER });
    const out = await shell((await connect(target)).client);
    await out.untilBytes(byteLength(sim.initPrompt));
    out.channel.write("show bogus\n");
    const reply = 'show bogus\r\n% Unrecognized command recorded by fake device: "show bogus\\n"\r\nLAB-SW123_9200L#';
    await out.untilBytes(byteLength(sim.initPrompt + reply));
    expect(out.text()).toBe(sim.initPrompt + reply);
    expect(target.unexpected).toEqual(["show bogus\n"]);
  });

  it("matches the terminator exactly: a line ended by \\r\\n or a lone \\r is not the recorded one (and does not hang)", async () => {
    const sim = fixture("ios#");
    const target = await device({ simulation: sim, auth: USER });
    const out = await shell((await connect(target)).client);
    out.channel.write("show version\r\n");
    await out.until("an error", () => out.text().split("Unrecognized").length === 2);
    out.channel.write("show version\r");
    await out.until("a second error", () => out.text().split("Unrecognized").length === 3);
    expect(target.unexpected).toEqual(["show version\r\n", "show version\r"]);
  });

  it("buffers keystrokes that arrive in pieces until the line ends", async () => {
    const sim = fixture("ios#");
    const target = await device({ simulation: sim, auth: USER });
    const out = await shell((await connect(target)).client);
    for (const piece of ["ter", "minal len", "gth 0", "\n"]) {
      out.channel.write(piece);
      await new Promise((r) => setTimeout(r, 10));
    }
    const answer = sim.commands.find((c) => c.line === "terminal length 0\n")!.answer;
    await out.untilBytes(byteLength(sim.initPrompt + answer));
    expect(out.text()).toBe(sim.initPrompt + answer);
    expect(target.received).toEqual(["terminal length 0\n"]);
  });

  it("consumes a list in order: an entry already used is unexpected the second time", async () => {
    const sim = fixture("nxos#dummy");
    const target = await device({ simulation: sim, auth: USER });
    const out = await shell((await connect(target)).client);
    out.channel.write("terminal length 0\n");
    await out.until("the answer", () => out.text().includes("terminal length 0\r\n"));
    out.channel.write("terminal length 0\n");
    await out.until("an error", () => out.text().includes("Unrecognized"));
    expect(target.unexpected).toEqual(["terminal length 0\n"]);
  });

  it("answers an entry of a list that was skipped when asked later, as a device answers commands in any order", async () => {
    const sim = fixture("nxos#dummy");
    const [first, second] = ["terminal length 0\n", "show version\n"].map((line) =>
      sim.commands.findIndex((c) => c.line === line),
    );
    expect(first).toBeLessThan(second!); // recorded in this order; asked the other way round below
    const target = await device({ simulation: sim, auth: USER });
    const out = await shell((await connect(target)).client);
    await out.untilBytes(byteLength(sim.initPrompt));
    let expected = sim.initPrompt;
    for (const index of [second!, first!]) {
      out.channel.write(sim.commands[index]!.line);
      expected += sim.commands[index]!.answer;
      await out.untilBytes(byteLength(expected));
    }
    expect(out.text()).toBe(expected);
    // Each entry still answers once.
    out.channel.write("show version\n");
    await out.until("an error", () => out.text().includes("Unrecognized"));
    expect(target.unexpected).toEqual(["show version\n"]);
  });

  it("refuses an exec request to a shell device and an unknown exec command, loudly", async () => {
    const junos = await device({ simulation: fixture("junos#"), auth: USER });
    const run = await exec((await connect(junos)).client, "show bogus");
    expect(run.exitCode).toBe(127);
    expect(run.stderr).toContain('Unrecognized command recorded by fake device: "show bogus"');
    expect(junos.unexpected).toEqual(["show bogus"]);

    const ios = await device({ simulation: fixture("ios#"), auth: USER });
    const { client } = await connect(ios);
    await expect(
      new Promise((resolve, reject) => client.exec("show version", (err) => (err ? reject(err) : resolve(undefined)))),
    ).rejects.toThrow();
    expect(ios.unexpected).toEqual(["<exec request to a shell device> show version"]);
  });
});

describe("authentication and host keys", () => {
  it("accepts the right password and refuses a wrong one or a wrong user", async () => {
    const target = await device({ simulation: fixture("ios#"), auth: USER });
    await connect(target);
    await expect(connect(target, { password: "wrong" })).rejects.toMatchObject({ level: "client-authentication" });
    await expect(connect(target, { password: USER.password }, "someone")).rejects.toMatchObject({
      level: "client-authentication",
    });
    expect(target.sessions).toBe(1);
  });

  it("accepts the configured public key and no other", async () => {
    const mine = generateHostKey();
    const target = await device({
      simulation: fixture("ios#"),
      auth: { username: USER.username, publicKey: mine.publicKey },
    });
    await connect(target, { privateKey: mine.privateKey });
    await expect(connect(target, { privateKey: generateHostKey().privateKey })).rejects.toMatchObject({
      level: "client-authentication",
    });
    await expect(connect(target, { password: "anything" })).rejects.toMatchObject({ level: "client-authentication" });
  });

  it("asks for the password through keyboard-interactive, and refuses the password method then", async () => {
    const target = await device({ simulation: fixture("ios#"), auth: { ...USER, keyboardInteractive: true } });
    let asked: string[] = [];
    const viaKeyboard = (password: string) =>
      new Promise<void>((resolve, reject) => {
        const client = new Client();
        clients.push(client);
        client.on("keyboard-interactive", (_n, _i, _l, prompts, finish) => {
          asked = prompts.map((p) => p.prompt);
          finish([password]);
        });
        client.on("ready", () => resolve());
        client.on("error", reject);
        client.connect({
          host: target.host,
          port: target.port,
          username: USER.username,
          readyTimeout: 5_000,
          tryKeyboard: true,
        });
      });
    await viaKeyboard(USER.password);
    expect(asked).toEqual(["Password: "]);
    await expect(viaKeyboard("wrong")).rejects.toMatchObject({ level: "client-authentication" });
    await expect(connect(target)).rejects.toMatchObject({ level: "client-authentication" });
  });

  it("rejectAuth refuses even the right password", async () => {
    const target = await device({ simulation: fixture("ios#"), auth: USER, faults: { rejectAuth: true } });
    await expect(connect(target)).rejects.toMatchObject({ level: "client-authentication" });
    expect(target.sessions).toBe(0);
  });

  it("reports the fingerprint the client sees; a new instance has a new key unless given the same one", async () => {
    const a = await device({ simulation: fixture("ios#"), auth: USER });
    const b = await device({ simulation: fixture("ios#"), auth: USER });
    expect(a.hostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(a.hostKeyFingerprint).not.toBe(b.hostKeyFingerprint);
    expect((await connect(a)).fingerprint).toBe(a.hostKeyFingerprint);
    expect((await connect(b)).fingerprint).toBe(b.hostKeyFingerprint);
    const key = generateHostKey().privateKey;
    const [c, d] = [
      await device({ simulation: fixture("ios#"), auth: USER, hostKey: key }),
      await device({ simulation: fixture("ios#"), auth: USER, hostKey: key }),
    ];
    expect(c!.hostKeyFingerprint).toBe(d!.hostKeyFingerprint);
  });
});

describe("timing and chunking", () => {
  it("splits answers into chunkSize pieces and waits latencyMs before each answer", async () => {
    const sim = fixture("ios#");
    const target = await device({ simulation: sim, auth: USER, chunkSize: 7, latencyMs: 120 });
    const out = await shell((await connect(target)).client);
    await out.untilBytes(byteLength(sim.initPrompt));
    const started = Date.now();
    out.channel.write("show version\n");
    const answer = sim.commands.find((c) => c.line === "show version\n")!.answer;
    await out.untilBytes(byteLength(sim.initPrompt + answer));
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    expect(out.text()).toBe(sim.initPrompt + answer);
    expect(out.packets).toBeGreaterThanOrEqual(Math.ceil(byteLength(sim.initPrompt + answer) / 7));
  });
});

describe("faults", () => {
  it("neverPrompt sends the banner without its prompt, then nothing", async () => {
    const sim = fixture("ios#");
    const target = await device({ simulation: sim, auth: USER, faults: { neverPrompt: true } });
    const out = await shell((await connect(target)).client);
    const banner = sim.initPrompt.slice(0, sim.initPrompt.lastIndexOf("\n") + 1);
    await out.untilBytes(byteLength(banner));
    out.channel.write("terminal length 0\n");
    await until("the device to read the command", () => target.received.length === 1);
    await out.quiet();
    expect(out.text()).toBe(banner);
    expect(out.text()).not.toContain("LAB-SW123_9200L#");
    expect(target.received).toEqual(["terminal length 0\n"]);
  });

  it("stallAfterBytes sends that much of the answers, then stays connected and silent", async () => {
    const sim = fixture("ios#");
    const target = await device({ simulation: sim, auth: USER, faults: { stallAfterBytes: 30 } });
    const out = await shell((await connect(target)).client);
    await out.untilBytes(byteLength(sim.initPrompt));
    out.channel.write("terminal length 0\n"); // 34 bytes recorded: only 30 come
    out.channel.write("show version\n");
    await out.untilBytes(byteLength(sim.initPrompt) + 30);
    await until("the device to read both commands", () => target.received.length === 2);
    await out.quiet();
    expect(out.text()).toBe(sim.initPrompt + sim.commands[0]!.answer.slice(0, 30));
    expect(out.closed).toBe(false);
  });

  it("dropAfterBytes sends that much, then the connection goes away", async () => {
    const sim = fixture("ios#");
    const target = await device({ simulation: sim, auth: USER, faults: { dropAfterBytes: 100 } });
    const { client } = await connect(target);
    let gone = false;
    client.on("close", () => (gone = true));
    client.on("error", () => {});
    const out = await shell(client);
    await out.untilBytes(byteLength(sim.initPrompt));
    out.channel.write("terminal length 0\n");
    out.channel.write("show version\n");
    await out.until("the connection to drop", () => gone);
    const answers = sim.commands[0]!.answer + sim.commands.find((c) => c.line === "show version\n")!.answer;
    expect(out.text()).toBe(sim.initPrompt + answers.slice(0, 100));
  });

  it("hugeOutputBytes streams that many bytes of config between the echo and the prompt", async () => {
    const sim = fixture("ios#");
    const size = 3 * 1024 * 1024 + 17;
    const target = await device({ simulation: sim, auth: USER, faults: { hugeOutputBytes: size } });
    const out = await shell((await connect(target)).client);
    await out.untilBytes(byteLength(sim.initPrompt));
    out.channel.write("show running-config\n");
    const frame = "show running-config\n".length + "LAB-SW123_9200L#".length;
    await out.until("the huge config", () => out.bytes >= byteLength(sim.initPrompt) + frame + size, 2_000);
    const text = out.text().slice(sim.initPrompt.length);
    expect(text.startsWith("show running-config\nhostname huge-config\ninterface GigabitEthernet1/0/1\n")).toBe(true);
    expect(text.endsWith("\nLAB-SW123_9200L#")).toBe(true);
    expect(text.length).toBe(frame + size);
    expect(target.unexpected).toEqual([]);
  });

  it("hugeOutputBytes replaces a paged answer whole: its pager pages are consumed, the session goes on", async () => {
    const sim = fixture("tnsr#");
    const target = await device({ simulation: sim, auth: USER, faults: { hugeOutputBytes: 100_000 } });
    const out = await shell((await connect(target)).client);
    out.channel.write("show configuration running cli\n");
    await out.until(
      "the prompt after the config",
      () => out.text().endsWith("\rtnsr-23-02 tnsr# ") && out.bytes > 100_000,
    );
    out.channel.write("exit\n");
    await out.until("the shell to close", () => out.closed);
    expect(out.text().length).toBe(
      sim.initPrompt.length +
        "show configuration running cli\n".length +
        100_000 +
        "\rtnsr-23-02 tnsr# ".length +
        sim.commands.at(-1)!.answer.length,
    );
    expect(target.unexpected).toEqual([]);
  });

  it("hugeOutputBytes over exec, and exactly the asked size from the generator", async () => {
    for (const n of [0, 1, 2, 5, 99, 70_000]) expect([...configBlocks(n, "\r\n")].join("").length).toBe(n);
    const target = await device({ simulation: fixture("junos#"), auth: USER, faults: { hugeOutputBytes: 200_000 } });
    const run = await exec((await connect(target)).client, "show configuration | display omit");
    expect(run.bytes).toBe(200_000);
    expect(run.exitCode).toBe(0);
  });
});

describe("synthetic and many devices", () => {
  it("answers from a script, with its own prompt and exit", async () => {
    const prompt = "\r\nsynthetic-1# ";
    const target = await device({
      script: (line) =>
        line === "show clock"
          ? `show clock\r\n12:00:00 UTC${prompt}`
          : line === "exit"
            ? { answer: "exit\r\n", close: true }
            : undefined,
      initPrompt: "Welcome" + prompt,
      auth: USER,
    });
    const out = await shell((await connect(target)).client);
    out.channel.write("show clock\nshow nothing\nexit\n");
    await out.until("the shell to close", () => out.closed);
    expect(out.text()).toBe(
      `Welcome${prompt}show clock\r\n12:00:00 UTC${prompt}show nothing\r\n% Unrecognized command recorded by fake device: "show nothing\\n"\r\nsynthetic-1# exit\r\n`,
    );
    expect(target.unexpected).toEqual(["show nothing\n"]);
  });

  it("starts many devices on distinct ports, each with its own identity", async () => {
    const sim = fixture("eos#");
    const many = await startFakeDevices(25, (i) => ({
      simulation: sim,
      auth: { username: `user${i}`, password: `pw${i}` },
    }));
    devices.push(...many);
    expect(new Set(many.map((d) => d.port)).size).toBe(25);
    expect(new Set(many.map((d) => d.hostKeyFingerprint)).size).toBe(25);
    await Promise.all(
      [0, 12, 24].map(async (i) => {
        const out = await shell((await connect(many[i]!, { password: `pw${i}` }, `user${i}`)).client);
        await out.untilBytes(byteLength(sim.initPrompt));
        expect(out.text()).toBe(sim.initPrompt);
      }),
    );
    expect(many.map((d) => d.sessions).reduce((a, b) => a + b)).toBe(3);
  });
});
