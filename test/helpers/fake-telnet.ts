import { createServer, type Server, type Socket } from "node:net";
import type { ScriptAnswer } from "./fake-device.ts";

/**
 * A scripted device that speaks Telnet only, on a loopback address and port of the test's choosing (port 23 of an
 * address in 127.0.0.0/8, where nothing listens on 22, is a device that refuses SSH). It asks for the user name
 * and password, then answers each line as `script` says; the client's option negotiation is read and ignored,
 * as a device that offers no options does.
 */

export type FakeTelnetOptions = {
  host: string;
  port: number;
  auth: { username: string; password: string };
  /** What the device prints after login, ending with its first prompt. */
  initPrompt: string;
  script: (line: string) => ScriptAnswer;
};

export type FakeTelnet = { received: string[]; readonly logins: number; close(): Promise<void> };

const IAC = 255;
const SB = 250;
const SE = 240;

/** The text of a chunk with Telnet commands removed; `state` carries a command split across chunks. */
function stripCommands(chunk: Buffer, state: { mode: "text" | "iac" | "option" | "sub" | "sub-iac" }): string {
  const out: number[] = [];
  for (const byte of chunk) {
    switch (state.mode) {
      case "text":
        if (byte === IAC) state.mode = "iac";
        else out.push(byte);
        break;
      case "iac":
        if (byte === IAC) out.push(byte), (state.mode = "text");
        else if (byte === SB) state.mode = "sub";
        else if (byte >= 251 && byte <= 254) state.mode = "option";
        else state.mode = "text";
        break;
      case "option":
        state.mode = "text";
        break;
      case "sub":
        if (byte === IAC) state.mode = "sub-iac";
        break;
      case "sub-iac":
        state.mode = byte === SE ? "text" : "sub";
        break;
    }
  }
  return Buffer.from(out).toString("utf8");
}

export async function startFakeTelnet(options: FakeTelnetOptions): Promise<FakeTelnet> {
  const received: string[] = [];
  const sockets = new Set<Socket>();
  let logins = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    const state = { mode: "text" as "text" | "iac" | "option" | "sub" | "sub-iac" };
    let buffer = "";
    let stage: "username" | "password" | "shell" = "username";
    let username = "";
    socket.write("\r\nUsername: ");
    socket.on("data", (chunk: Buffer) => {
      buffer += stripCommands(chunk, state);
      for (;;) {
        const end = buffer.search(/\r\n|\r\0|\n|\r(?=.)/s);
        if (end < 0) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) || buffer.startsWith("\r\0", end) ? 2 : 1));
        if (stage === "username") {
          username = line;
          stage = "password";
          socket.write(`${line}\r\nPassword: `);
        } else if (stage === "password") {
          if (username === options.auth.username && line === options.auth.password) {
            logins++;
            stage = "shell";
            socket.write(`\r\n${options.initPrompt}`);
          } else {
            stage = "username";
            socket.write("\r\nLogin invalid\r\n\r\nUsername: ");
          }
        } else {
          received.push(line);
          const answer = options.script(line);
          if (answer === undefined) socket.write(`${line}\r\n% Unknown command\r\n`);
          else if (typeof answer === "string") socket.write(answer);
          else {
            socket.write(answer.answer);
            if (answer.close) socket.end();
          }
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    received,
    get logins() {
      return logins;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
