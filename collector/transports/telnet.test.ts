import { spawn } from "node:child_process";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../test/helpers/process.ts";
import { SessionError, ShellSession, type SessionProfile } from "../session.ts";
import { encodeForTelnet, openTelnet, TelnetProtocol } from "./telnet.ts";

const IAC = 255,
  DONT = 254,
  DO = 253,
  WONT = 252,
  WILL = 251,
  SB = 250,
  SE = 240,
  NOP = 241,
  GA = 249;
const ECHO = 1,
  SGA = 3,
  TTYPE = 24,
  NAWS = 31,
  AUTHENTICATION = 37,
  NEW_ENVIRON = 39;

const bytes = (...parts: (number | string)[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from([p]))));

/**
 * What the client sent, read by the test's own minimal Telnet reader: its option commands (3 bytes each, or a
 * whole SB ... SE) in order, and its text lines with their raw line endings.
 */
function readClient(raw: Buffer) {
  const commands: number[][] = [];
  let text = "";
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== IAC) {
      text += String.fromCharCode(raw[i]!);
    } else if (raw[i + 1] === SB) {
      const end = raw.indexOf(Buffer.from([IAC, SE]), i);
      commands.push([...raw.subarray(i, end + 2)]);
      i = end + 1;
    } else {
      commands.push([...raw.subarray(i, i + 3)]);
      i += 2;
    }
  }
  return { commands, text };
}

type Step = { chunks: Buffer[] };

/**
 * A Telnet device on loopback: negotiates the way real ones do (commands split across TCP segments, a
 * subnegotiation in the middle of output, repeated requests), asks Username:/Password:, then runs `show version`.
 * Each chunk goes out in its own write a few ms apart, so the client sees them as separate segments.
 */
function telnetDevice(password: string) {
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  const send = async (socket: Socket, { chunks }: Step) => {
    for (const c of chunks) {
      if (socket.destroyed) return;
      socket.write(c);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    // Without Nagle's algorithm each write leaves as its own segment, so the splits reach the client.
    socket.setNoDelay(true);
    let pending = "";
    let stage: "username" | "password" | "shell" = "username";
    socket.on("data", (chunk) => {
      received.push(chunk);
      // Lines end with CR LF (or CR NUL); commands are skipped by the reader.
      pending += readClient(chunk).text;
      let end: number;
      while ((end = pending.search(/\r[\n\0]/)) >= 0) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 2);
        void send(socket, answer(line));
      }
    });
    socket.on("error", () => {});
    void send(socket, {
      chunks: [
        bytes(IAC),
        bytes(WILL, ECHO, IAC),
        bytes(WILL, SGA, IAC, DO, TTYPE, IAC, DO, NAWS, IAC, WILL, AUTHENTICATION, IAC, DO),
        bytes(NEW_ENVIRON, IAC, SB, TTYPE),
        bytes(1, IAC, SE),
        bytes("\r\nUser Access Verification\r\n\r\n", IAC, GA, "Username: "),
      ],
    });
    const answer = (line: string): Step => {
      if (stage === "username") {
        stage = "password";
        return { chunks: [bytes(line, "\r\n"), bytes("Password: ")] };
      }
      if (stage === "password") {
        if (line !== password) {
          stage = "username";
          return { chunks: [bytes("\r\n% Authentication failed\r\n\r\nUsername: ")] };
        }
        stage = "shell";
        // An acknowledged option asked for again must not be answered (RFC 854's loop rule).
        return { chunks: [bytes("\r\n", IAC, WILL, ECHO, IAC, DO, NAWS, "r1#")] };
      }
      if (line === "show version") {
        return {
          chunks: [
            bytes("show version\r\n"),
            // "é" (C3 A9) split across segments and by a subnegotiation, itself split, with IAC IAC inside it.
            bytes("Cisco IOS Software, caf", 0xc3, IAC, SB, 99, IAC),
            bytes(IAC, 1, IAC),
            bytes(SE, 0xa9, " edition\r\n", IAC, NOP, "uptime is 4 weeks\r\n"),
            bytes("r1#"),
          ],
        };
      }
      return { chunks: [bytes(`${line}\r\n% Invalid input\r\nr1#`)] };
    };
  });
  return {
    listen: () =>
      new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
      ),
    received: () => Buffer.concat(received),
    /** Forgets what was received, for the next connection. */
    reset: () => void received.splice(0),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const profile: SessionProfile = {
  prompt: /^\r?[\w.-]+[#>]\s?$/,
  login: { usernamePrompt: /[Uu]sername: ?$/, passwordPrompt: /[Pp]assword: ?$/ },
  lineEnding: "\n",
};
const limits = { idleTimeoutMs: 2_000, maxOutputBytes: 1024 * 1024, optionalIdleTimeoutMs: 2_000 };

describe("openTelnet with a ShellSession", () => {
  const device = telnetDevice("s3cret");
  let port: number;
  beforeAll(async () => {
    port = await device.listen();
  });
  afterAll(() => device.close());

  it("answers negotiation, logs in at Username:/Password: and returns a command's output without Telnet debris", async () => {
    device.reset();
    const channel = await openTelnet({ host: "127.0.0.1", port, connectTimeoutMs: 2_000 });
    try {
      const session = new ShellSession(channel, profile, limits);
      await session.login("admin", "s3cret");
      expect(await session.run("show version")).toBe("Cisco IOS Software, café edition\nuptime is 4 weeks\n");
    } finally {
      channel.close();
    }
    const { commands, text } = readClient(device.received());
    expect(commands).toEqual([
      [IAC, DO, ECHO],
      [IAC, DO, SGA],
      [IAC, WILL, TTYPE],
      [IAC, WILL, NAWS],
      // 511 columns is 0x01 0xFF: the 255 doubled; 24 rows.
      [IAC, SB, NAWS, 1, IAC, IAC, 0, 24, IAC, SE],
      [IAC, DONT, AUTHENTICATION],
      [IAC, WONT, NEW_ENVIRON],
      [IAC, SB, TTYPE, 0, ...Buffer.from("VT100"), IAC, SE],
    ]);
    // The template's "\n" goes out as the NVT end of line.
    expect(text).toBe("admin\r\ns3cret\r\nshow version\r\n");
  });

  it("reports a refused password as auth_failed", async () => {
    const channel = await openTelnet({ host: "127.0.0.1", port, connectTimeoutMs: 2_000 });
    try {
      const error = await new ShellSession(channel, profile, limits).login("admin", "wrong").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionError);
      expect((error as SessionError).outcome).toBe("auth_failed");
    } finally {
      channel.close();
    }
  });
});

describe("openTelnet connection failures", () => {
  it("reports a port nobody listens on as unreachable", async () => {
    const port = await freePort();
    const error = await openTelnet({ host: "127.0.0.1", port, connectTimeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionError);
    expect((error as SessionError).outcome).toBe("unreachable");
  });

  it("gives up with timeout when the TCP handshake never completes", async () => {
    // A listener whose process never accepts: once its backlog is full the kernel drops further SYNs, as a
    // firewall that drops packets would, and connect() hangs.
    const child = spawn(
      process.execPath,
      [
        "-e",
        `
      const s = require("node:net").createServer().listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
        process.stdout.write(s.address().port + "\\n");
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      });`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const fillers: Socket[] = [];
    try {
      const port = await new Promise<number>((resolve) =>
        child.stdout!.once("data", (d) => resolve(Number(String(d).trim()))),
      );
      for (let i = 0; i < 4; i++) fillers.push(connect(port, "127.0.0.1").on("error", () => {}));
      const started = Date.now();
      const error = await openTelnet({ host: "127.0.0.1", port, connectTimeoutMs: 300 }).catch((e: unknown) => e);
      expect((error as SessionError).outcome).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const f of fillers) f.destroy();
      child.kill();
    }
  });

  it("tells the session when the device hangs up during login", async () => {
    const server = createServer((socket) => socket.end("Username: "));
    const port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
    );
    try {
      const channel = await openTelnet({ host: "127.0.0.1", port, connectTimeoutMs: 2_000 });
      const error = await new ShellSession(channel, profile, limits).login("admin", "x").catch((e: unknown) => e);
      expect((error as SessionError).outcome).toBe("error");
      expect((error as SessionError).message).toMatch(/closed the connection/);
      channel.close();
    } finally {
      server.close();
    }
  });
});

describe("TelnetProtocol", () => {
  const run = (chunks: number[][]) => {
    const replies: number[][] = [];
    const protocol = new TelnetProtocol((b) => replies.push([...b]));
    const data = chunks.flatMap((c) => [...protocol.receive(Uint8Array.from(c))]);
    return { data, replies };
  };

  it("reads IAC IAC as one 255 data byte, also when split between chunks", () => {
    expect(run([[65, IAC, IAC, 66]]).data).toEqual([65, 255, 66]);
    expect(
      run([
        [65, IAC],
        [IAC, 66],
      ]).data,
    ).toEqual([65, 255, 66]);
  });

  it("gives the same result however a stream of commands is cut into chunks", () => {
    const stream = [
      72,
      IAC,
      WILL,
      ECHO,
      105,
      IAC,
      SB,
      TTYPE,
      1,
      IAC,
      SE,
      13,
      0,
      IAC,
      DO,
      99,
      IAC,
      SB,
      77,
      IAC,
      IAC,
      5,
      IAC,
      SE,
      IAC,
      IAC,
      10,
      IAC,
      WONT,
      ECHO,
      IAC,
      DONT,
      TTYPE,
      IAC,
      GA,
      33,
    ];
    const whole = run([stream]);
    // Data: "Hi", CR (its NUL dropped), 255, LF, "!"
    expect(whole.data).toEqual([72, 105, 13, 255, 10, 33]);
    expect(whole.replies).toEqual([
      [IAC, DO, ECHO],
      [IAC, WONT, 99],
      [IAC, DONT, ECHO],
    ]);
    // TTYPE was never agreed (no DO TTYPE), so its SEND is not answered, and DONT TTYPE needs no reply.
    const byteByByte = run(stream.map((b) => [b]));
    expect(byteByByte).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) expect(run([stream.slice(0, cut), stream.slice(cut)])).toEqual(whole);
  });

  it("turns an option off when asked and confirms it once", () => {
    const { replies } = run([[IAC, DO, SGA, IAC, DO, SGA, IAC, DONT, SGA, IAC, DONT, SGA, IAC, WILL, 0, IAC, WILL, 5]]);
    expect(replies).toEqual([
      [IAC, WILL, SGA],
      [IAC, WONT, SGA],
      [IAC, DO, 0],
      [IAC, DONT, 5],
    ]);
  });
});

describe("encodeForTelnet", () => {
  it("sends every line end as CR LF and a lone CR as CR NUL", () => {
    expect([...encodeForTelnet("show run\n")]).toEqual([...Buffer.from("show run"), 13, 10]);
    expect([...encodeForTelnet("show run\r\n")]).toEqual([...Buffer.from("show run"), 13, 10]);
    expect([...encodeForTelnet("\r")]).toEqual([13, 0]);
    expect([...encodeForTelnet("é\n")]).toEqual([0xc3, 0xa9, 13, 10]);
  });
});
