import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Logger } from "../kernel/logger.ts";
import { bundledEntry } from "./built.ts";
import { DATABASE_PREPARED_ENV } from "./services.ts";

/** dist/collector.js beside the API's bundle in production; from source, collector/main.ts through tsx. */
const built = bundledEntry("collector");
const entryArgs = built
  ? [fileURLToPath(built)]
  : ["--import", "tsx", fileURLToPath(new URL("../../collector/main.ts", import.meta.url))];

/**
 * Node options every collector process starts with (here, `npm run collector` in package.json, bench:collect).
 * The young generation is pinned at 16 MB a semi-space, V8's 64-bit default today, because memory at 500
 * sessions is what it trades against: 32 MB saved the event loop about 2 ms a download while it also stored
 * what it downloaded, and cost 50 MB; since storing moved to its own thread (collector/store-thread.ts) it cost
 * the same memory (414 against 367 MB peak, over the 400 MB target) for no measurable gain. It has to be given
 * at start-up: V8 sizes the heap before any code runs.
 */
export const COLLECTOR_NODE_ARGS = ["--max-semi-space-size=16"];

/** The IPC message the API sends its collector after queueing jobs (collector/parent-watch.ts onParentMessage). */
export const JOBS_QUEUED = "jobs-queued";

/**
 * Runs one collector beside the API (COLLECTOR=on, the default) and restarts it if it dies; the API keeps
 * serving either way. It shares the environment, so it opens the same database. The IPC channel is how the
 * collector learns the API is gone: the kernel closes it whatever ended the API (kill -9 included), and the
 * collector stops when it closes (collector/parent-watch.ts), so a restarted API never finds a second one running.
 */
export function startCollectorProcess(logger: Logger): CollectorProcess {
  let stopping = false;
  let child: ChildProcess;
  const start = () => {
    child = spawn(process.execPath, [...COLLECTOR_NODE_ARGS, ...entryArgs], {
      stdio: ["inherit", "inherit", "inherit", "ipc"],
      // The API has migrated and seeded the database before it starts its collector (src/main.ts).
      env: { ...process.env, [DATABASE_PREPARED_ENV]: "1" },
    });
    child.on("exit", (code, signal) => {
      if (stopping) return;
      logger.warn("collector exited; restarting in 2s", { code, signal });
      setTimeout(start, 2000).unref();
    });
  };
  start();
  return {
    wake() {
      // A collector still starting (or restarting) is not listening yet: it claims at its first pass anyway.
      if (child.connected) child.send(JOBS_QUEUED, (err) => void err);
    },
    stop(deadline) {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
      return new Promise((resolve) => {
        // The collector reads the same SHUTDOWN_GRACE_SECONDS and hands its jobs back before this deadline.
        const kill = setTimeout(
          () => {
            logger.error("the collector did not stop within the grace period; killing it");
            child.kill("SIGKILL");
            resolve(false);
          },
          Math.max(0, deadline - Date.now()),
        );
        child.once("exit", (code, signal) => {
          clearTimeout(kill);
          // Ended by the signal itself: it was still loading, before its handlers (and any job) existed.
          resolve(code === 0 || signal === "SIGTERM" || signal === "SIGINT");
        });
        child.kill("SIGTERM");
      });
    },
  };
}

export type CollectorProcess = {
  /** Tells the collector jobs were just queued, so it claims them now rather than at its next poll (pollIntervalMs). */
  wake(): void;
  /** SIGTERM, then waits for it to exit until `deadline` (epoch ms); SIGKILL after. True when it stopped cleanly. */
  stop(deadline: number): Promise<boolean>;
};
