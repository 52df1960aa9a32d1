import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Logger } from "../logger.ts";

const entry = fileURLToPath(new URL("../../collector/main.ts", import.meta.url));

/**
 * Node options every collector process starts with (here, `npm run collector` in package.json, bench:collect).
 * Each download leaves some 100 KB of short-lived strings and arrays behind; with V8's young generation at 32 MB
 * a semi-space instead of 16, fewer of them live long enough to be copied and promoted: in bench:collect the
 * collector spent about 2 ms less CPU per download (15.9 -> 13.6-14.0 ms) and peaked at 354-373 MB at 500
 * sessions, against 306 MB (the target is 400). It has to be given at start-up: V8 sizes the heap before any
 * code runs.
 */
export const COLLECTOR_NODE_ARGS = ["--max-semi-space-size=32"];

/**
 * Runs one collector beside the API (COLLECTOR=on, the default) and restarts it if it dies; the API keeps
 * serving either way. It shares the environment, so it opens the same database.
 */
export function startCollectorProcess(logger: Logger): ChildProcess {
  let stopping = false;
  let child: ChildProcess;
  const start = () => {
    child = spawn(process.execPath, [...COLLECTOR_NODE_ARGS, "--import", "tsx", entry], { stdio: "inherit", env: process.env });
    child.on("exit", (code, signal) => {
      if (stopping) return;
      logger.warn("collector exited; restarting in 2s", { code, signal });
      setTimeout(start, 2000).unref();
    });
  };
  start();
  return {
    kill: (signal?: NodeJS.Signals) => {
      stopping = true;
      return child.kill(signal);
    },
  } as ChildProcess;
}
