import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../src/db/client.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import { SessionError } from "./session.ts";
import { storeDownloads, type Stored } from "./store-download.ts";
import type { StoreMessage, StoreReply, StoreThreadData } from "./store-thread.ts";

// The store thread (store-thread.ts): its own connection to the database, one reply per request, the requests
// that wait stored together (storeDownloads).
const port = parentPort!;

/**
 * Storing can wait a few milliseconds; a session's next answer cannot without every session slowing (they share
 * one event loop). So this thread asks the kernel to run it after the sessions' thread: ten steps nicer than the
 * process. bench:collect, paired rounds on 2 cores shared with the simulated devices: 0.79 -> 0.82 of bare ssh2's
 * rate (medians of 4), and no longer 0.72 in a bad round. On Linux a thread has its own nice value
 * (os.setPriority takes its id, read from /proc/thread-self); elsewhere the thread keeps the process's.
 */
function runAfterTheSessions(): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    setPriority(tid, Math.min(19, getPriority(tid) + 10));
  } catch {
    // No /proc (not Linux), or not allowed: the thread runs at the process's priority.
  }
}
runAfterTheSessions();
const { location, threadLock, writeWait } = workerData as StoreThreadData;
const { client, db } = await openDatabase(location.url, location.authToken, threadLock, writeWait);

/** Downloads per transaction at most (storeDownloads): the sessions' thread waits for the lock meanwhile. */
const STORE_BATCH = 16;
const waiting: Extract<StoreMessage, { type: "store" }>[] = [];
let storing = false;

const replyOf = (id: number, stored: Stored): StoreReply => {
  if ("end" in stored) return { id, end: stored.end };
  const err = stored.error;
  return err instanceof SessionError
    ? { id, failure: { outcome: err.outcome, message: err.message } }
    : { id, error: failureReason(err) };
};

/** Stores what waits, all of it in one transaction, then what arrived meanwhile, until nothing waits. */
async function storeWaiting(): Promise<void> {
  while (waiting.length) {
    const batch = waiting.splice(0, STORE_BATCH);
    const stored = await storeDownloads(
      db,
      batch.map((m) => m.request),
    ).catch((error: unknown) => batch.map(() => ({ error })));
    batch.forEach((m, i) => port.postMessage(replyOf(m.id, stored[i]!)));
  }
  storing = false;
}

port.on("message", (message: StoreMessage) => {
  if (message.type === "close") {
    client.close();
    port.close();
    return;
  }
  waiting.push(message);
  if (storing) return;
  storing = true;
  // After the messages already here, so downloads handed over together are stored together.
  setImmediate(() => void storeWaiting());
});
port.postMessage({ ready: true } satisfies StoreReply);
