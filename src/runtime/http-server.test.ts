import { connect, type AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../test/helpers/app.ts";
import { createHttpServer } from "./http-server.ts";
import { until } from "../../test/helpers/until.ts";

/**
 * The API's HTTP server as main.ts starts it, spoken to over raw sockets: what a client sees of the connection
 * itself (the bytes of an answer, and how the socket ends), which app.request() cannot show.
 */

type Line = { level: string; msg: string } & Record<string, unknown>;
const lines: Line[] = [];
const log = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
  void lines.push({ level, msg, ...fields });
let t: TestContext;
let token: string;
let server: Server;
let port: number;
beforeAll(async () => {
  t = await createTestContext({
    logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
  });
  token = await t.token();
  server = createHttpServer(t.app.fetch);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  t.close();
});

const head = (path: string, bytes: number) =>
  `POST ${path} HTTP/1.1\r\nHost: netkeep.test\r\napitoken: ${token}\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`;

/**
 * Sends a request whose body is `bytes` spaces, writing all of it before reading, as HTTP clients do; resolves
 * with what came back, whether the whole body was written, and the socket's error if it had one.
 */
function sendWholeBody(path: string, bytes: number): Promise<{ answer: string; wroteAll: boolean; error?: string }> {
  return new Promise((resolve) => {
    // allowHalfOpen: the server's FIN does not end our sending, as it does not for curl or a browser.
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true }, () => {
      socket.write(head(path, bytes));
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < bytes) {
          const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
          sent += part.length;
          if (!socket.write(part)) return void socket.once("drain", pump);
        }
        wroteAll = true;
        socket.end();
      };
      pump();
    });
    let answer = "";
    let wroteAll = false;
    let error: string | undefined;
    socket.on("data", (d) => (answer += d));
    socket.on("error", (err) => (error = (err as NodeJS.ErrnoException).code ?? err.message));
    socket.on("close", () => resolve({ answer, wroteAll, ...(error ? { error } : {}) }));
  });
}

describe("the HTTP server", () => {
  it("answers a body over the limit with 413 and Connection: close, and a client sending 20 MiB reads it without a reset", async () => {
    const sent = await sendWholeBody("/api/v1/devices/bulk", 20 * 1024 * 1024);
    expect(sent.error).toBeUndefined();
    expect(sent.wroteAll).toBe(true);
    expect(sent.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(sent.answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(sent.answer).not.toMatch(/keep-alive/i);
    expect(sent.answer).toMatch(/larger than 16 MiB/);
  });

  it("says Connection: close on a 413 for a small route's body too", async () => {
    const sent = await sendWholeBody("/api/v1/tags", 2 * 1024 * 1024);
    expect(sent.error).toBeUndefined();
    expect(sent.answer).toMatch(/^HTTP\/1\.1 413 [^]*\r\nconnection: close\r\n/i);
  });

  it("logs a client that aborts its body as a client abort at info, without a stack, never as an unhandled error", async () => {
    lines.length = 0;
    await new Promise<void>((resolve) => {
      const socket = connect({ port, host: "127.0.0.1" }, () => {
        socket.write(`${head("/api/v1/tags", 1000)}{"name": "half`);
        // Gone mid-body, once the server has started reading it.
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on("close", () => resolve());
    });
    await until("the abort to be logged", () => lines.some((l) => l.msg === "client aborted the request"));
    expect(lines.filter((l) => l.level === "error" || l.level === "warn")).toEqual([]);
    const aborted = lines.find((l) => l.msg === "client aborted the request")!;
    expect(aborted).toMatchObject({ level: "info", method: "POST", path: "/api/v1/tags" });
    expect(JSON.stringify(aborted)).not.toMatch(/stack|at .*\(node:/);
  });

  it("answers 404 to a path with a dot segment, plain or percent-encoded, instead of the route it resolves to", async () => {
    const get = (path: string) =>
      new Promise<string>((resolve) => {
        const socket = connect({ port, host: "127.0.0.1" }, () =>
          socket.write(`GET ${path} HTTP/1.1\r\nHost: netkeep.test\r\napitoken: ${token}\r\nConnection: close\r\n\r\n`),
        );
        let answer = "";
        socket.on("data", (d) => (answer += d));
        socket.on("close", () => resolve(answer));
      });
    // The route the path would resolve to answers.
    expect(await get("/api/v1/tags")).toMatch(/^HTTP\/1\.1 200 /);
    for (const path of [
      "/api/v1/devices/%2e%2e/tags",
      "/api/v1/devices/%2E%2e/tags",
      "/api/v1/devices/.%2e/tags",
      "/api/v1/devices/../tags",
      "/api/v1/./tags",
      "/api/v1/devices/%2e%2e",
    ]) {
      const answer = await get(path);
      expect(answer, path).toMatch(/^HTTP\/1\.1 404 /);
      expect(answer, path).toMatch(/a path may not hold \. or \.\. segments/);
    }
  });
});
