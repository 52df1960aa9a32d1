import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Logger } from "../logger.ts";

const entry = fileURLToPath(new URL("../../collector/main.ts", import.meta.url));

/**
 * Runs one collector beside the API (COLLECTOR=on, the default) and restarts it if it dies; the API keeps
 * serving either way. It shares the environment, so it opens the same database.
 */
export function startCollectorProcess(logger: Logger): ChildProcess {
  let stopping = false;
  let child: ChildProcess;
  const start = () => {
    child = spawn(process.execPath, ["--import", "tsx", entry], { stdio: "inherit", env: process.env });
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
