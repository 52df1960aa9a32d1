import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { JOBS_QUEUED } from "../src/runtime/collector-process.ts";
import { until } from "../test/helpers/until.ts";

const CHILD = fileURLToPath(new URL("./parent-watch.test-child.ts", import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function start(...args: string[]) {
  const child = fork(CHILD, args, { execArgv: ["--import", "tsx"], stdio: "ignore" });
  children.push(child);
  const messages: unknown[] = [];
  child.on("message", (m) => messages.push(m));
  return { child, messages };
}

describe("a collector's messages from the API that started it", () => {
  it("calls the handler for each JOBS_QUEUED the API sends (src/main.ts wakes its collector after queueing jobs), and for nothing else", async () => {
    const { child, messages } = start("--linger");
    await until("the collector to listen", () => messages.includes("listening"));
    child.send("something else");
    child.send(JOBS_QUEUED);
    child.send(JOBS_QUEUED);
    await until("the collector to be woken twice", () => messages.filter((m) => m === "woken").length === 2);
    expect(messages).toEqual(["listening", "woken", "woken"]);
  });

  it("does not keep the collector alive: with nothing else to do, it exits by itself", async () => {
    const { child, messages } = start();
    const code = await until(
      "the collector to exit by itself",
      () => child.exitCode,
      (c) => c !== null,
    );
    expect(code).toBe(0);
    expect(messages).toEqual(["listening"]);
  });
});
