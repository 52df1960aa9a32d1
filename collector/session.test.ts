import { describe, expect, it } from "vitest";
import { ShellSession, SessionError, type Channel, type SessionProfile } from "./session.ts";

/** A scripted device: each line the client sends is answered by the function, in the chunks it returns. */
function scriptedDevice(answer: (line: string) => string[] | undefined, greeting: string[] = []) {
  let listener: (chunk: string) => void = () => {};
  let closeListener: (error?: Error) => void = () => {};
  const sent: string[] = [];
  const emit = (chunks: string[]) => chunks.forEach((c, i) => setTimeout(() => listener(c), i));
  const channel: Channel & { sent: string[]; close(): void } = {
    sent,
    write(data) {
      sent.push(data);
      const reply = answer(data);
      if (reply) emit(reply);
    },
    onData(l) {
      listener = l;
      emit(greeting);
    },
    onClose(l) {
      closeListener = l;
    },
    close: () => closeListener(),
  };
  return channel;
}

const ios: SessionProfile = {
  prompt: /^\r?([\w.@()-]+[#>])\s?$/,
  pager: { pattern: /--More--\s*$/, answer: " " },
  login: { usernamePrompt: /[Uu]sername:\s*$/, passwordPrompt: /[Pp]assword:\s*$/ },
  enable: { command: "enable", passwordPrompt: /[Pp]assword:\s*$/ },
  lineEnding: "\n",
};
const limits = { idleTimeoutMs: 300, maxOutputBytes: 1024 * 1024, optionalIdleTimeoutMs: 300 };

describe("ShellSession", () => {
  it("returns exactly the command's output when the prompt arrives split across chunks", async () => {
    const device = scriptedDevice(
      (line) =>
        line === "show version\n"
          ? ["show ver", "sion\r\n", "Cisco IOS XE Software\r\n", "uptime is 4 weeks\r\nLAB-", "SW1", "#"]
          : undefined,
      ["\r\nBanner\r\n", "LAB-SW1#"],
    );
    const session = new ShellSession(device, ios, limits);
    await session.expectPrompt();
    expect(await session.run("show version")).toBe("Cisco IOS XE Software\nuptime is 4 weeks\n");
  });

  it("answers the pager and leaves no debris", async () => {
    const device = scriptedDevice(
      (line) => {
        if (line === "show run\n") return ["show run\r\n", "hostname r1\r\ninterface Gi1\r\n", " --More-- "];
        if (line === " ") return ["\r          \r", " description up\r\n", "end\r\n", "r1#"];
        return undefined;
      },
      ["r1#"],
    );
    const session = new ShellSession(device, ios, limits);
    await session.expectPrompt();
    expect(await session.run("show run")).toBe("hostname r1\ninterface Gi1\n description up\nend\n");
    expect(device.sent).toEqual(["show run\n", " "]);
  });

  it("answers a pager that a message the device printed on its own pushed off the last line, after a second's silence", async () => {
    // A V-SOL OLT prints log messages into the session, also between its " --More-- " and the key it waits for.
    const device = scriptedDevice(
      (line) => {
        if (line === "show run\n")
          return [
            "show run\r\n",
            "hostname olt1\r\ninterface gpon 0/1\r\n --More-- \x00\r\n",
            "2026/05/25 18:51:33   ONU Port Los   PON 0/3 ONU 98  LAN1 LINK DOWN\r\n",
          ];
        if (line === " ")
          return [
            "\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b onu 1 profile line name line_1\r\n",
            "end\r\n",
            "olt1#",
          ];
        return undefined;
      },
      ["olt1#"],
    );
    const session = new ShellSession(
      device,
      { ...ios, pager: { pattern: /--More--[\s\x00]*$/, answer: " " } },
      { ...limits, idleTimeoutMs: 10_000 },
    );
    await session.expectPrompt();
    // The log line stays (the template's filters drop it); the pager prompt and its erasing do not.
    expect(await session.run("show run")).toBe(
      "hostname olt1\ninterface gpon 0/1\n2026/05/25 18:51:33   ONU Port Los   PON 0/3 ONU 98  LAN1 LINK DOWN\n onu 1 profile line name line_1\nend\n",
    );
    expect(device.sent).toEqual(["show run\n", " "]);
  });

  it("fails with timeout and the last lines seen when the device stalls after its prompt was seen", async () => {
    const device = scriptedDevice(
      (line) => (line === "show run\n" ? ["show run\r\n", "hostname r1\r\n", "interface Gi1\r\n"] : undefined),
      ["r1#"],
    );
    const session = new ShellSession(device, ios, limits);
    await session.expectPrompt();
    const error = await session.run("show run").catch((e) => e);
    expect(error).toBeInstanceOf(SessionError);
    // The prompt matched at login, so the template fits: the device stopped answering (retryable), not a template fault.
    expect(error.outcome).toBe("timeout");
    expect(error.message).toContain("'show run'");
    expect(error.lastLines).toEqual(["show run", "hostname r1", "interface Gi1"]);
  });

  it("never finds a prompt that is not there, and reports what it saw instead", async () => {
    const device = scriptedDevice(() => undefined, ["Welcome\r\n", "some-box$ "]);
    const error = await new ShellSession(device, ios, limits).expectPrompt().catch((e) => e);
    expect(error.outcome).toBe("prompt_not_found");
    expect(error.lastLines).toEqual(["Welcome", "some-box$"]);
  });

  it("logs in at username and password prompts, and reports refused credentials as auth_failed", async () => {
    const good = scriptedDevice(
      (line) => (line === "admin\n" ? ["admin\r\nPassword: "] : line === "secret\n" ? ["\r\nr1>"] : undefined),
      ["User Access Verification\r\n\r\nUsername: "],
    );
    await new ShellSession(good, ios, limits).login("admin", "secret");
    expect(good.sent).toEqual(["admin\n", "secret\n"]);

    const bad = scriptedDevice(
      (line) => (line === "admin\n" ? ["admin\r\nPassword: "] : ["\r\n% Login invalid\r\n\r\nUsername: "]),
      ["Username: "],
    );
    const error = await new ShellSession(bad, ios, limits).login("admin", "wrong").catch((e) => e);
    expect(error).toMatchObject({ outcome: "auth_failed" });
    expect(JSON.stringify(error)).not.toContain("wrong");
  });

  it("enters enable mode with its password, and reports a refused one", async () => {
    const device = scriptedDevice(
      (line) => (line === "enable\n" ? ["enable\r\nPassword: "] : line === "en-pass\n" ? ["\r\nr1#"] : undefined),
      ["r1>"],
    );
    const session = new ShellSession(device, ios, limits);
    await session.expectPrompt();
    await session.enable("en-pass");

    const refusing = scriptedDevice(
      (line) => (line === "enable\n" ? ["enable\r\nPassword: "] : ["\r\n% Access denied\r\nPassword: "]),
      ["r1>"],
    );
    const s2 = new ShellSession(refusing, ios, limits);
    await s2.expectPrompt();
    expect(await s2.enable("nope").catch((e) => e)).toMatchObject({
      outcome: "auth_failed",
      message: "the enable password was refused",
    });
  });

  it("gives up on output larger than the limit", async () => {
    const big = "x".repeat(64 * 1024) + "\r\n";
    const device = scriptedDevice(
      (line) => (line === "show tech\n" ? Array.from({ length: 40 }, () => big) : undefined),
      ["r1#"],
    );
    const session = new ShellSession(device, ios, {
      idleTimeoutMs: 1000,
      maxOutputBytes: 1024 * 1024,
      optionalIdleTimeoutMs: 1000,
    });
    await session.expectPrompt();
    expect(await session.run("show tech").catch((e) => e)).toMatchObject({
      outcome: "error",
      message: expect.stringMatching(/exceeded/),
    });
  });

  it("reads a 24 MB output whole, in chunks", async () => {
    let listener: (chunk: string) => void = () => {};
    const channel: Channel = { write() {}, onData: (l) => void (listener = l), onClose() {} };
    const session = new ShellSession(channel, ios, {
      idleTimeoutMs: 5000,
      maxOutputBytes: 32 * 1024 * 1024,
      optionalIdleTimeoutMs: 5000,
    });
    const pending = session.expectPrompt();
    const block = " description access port\r\n".repeat(2000);
    // 24 MB in 48 KB chunks. (Appending to one string and searching it all for the last newline on each chunk
    // took seconds here: that regression shows as this test's timeout, speed itself is bench:collect's to measure.)
    for (let i = 0; i < 500; i++) listener(block);
    listener("r1#");
    const before = await pending;
    expect(before.length).toBe(block.length * 500);
  });

  it("reports a dropped connection while waiting", async () => {
    const device = scriptedDevice(
      (line) => (line === "show run\n" ? ["show run\r\nhostname r1\r\n"] : undefined),
      ["r1#"],
    );
    const session = new ShellSession(device, ios, limits);
    await session.expectPrompt();
    const pending = session.run("show run").catch((e) => e);
    setTimeout(() => device.close(), 20);
    expect(await pending).toMatchObject({ outcome: "error", message: expect.stringMatching(/closed the connection/) });
  });
});
