import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../src/db/client.ts";
import { failureReason } from "../src/error-reason.ts";
import { SessionError } from "./session.ts";
import { storeDownload } from "./store-download.ts";
import type { StoreMessage, StoreReply, StoreThreadData } from "./store-thread.ts";

// The store thread (store-thread.ts): its own connection to the database, one reply per request, one at a time.
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

port.on("message", async (message: StoreMessage) => {
  if (message.type === "close") {
    client.close();
    port.close();
    return;
  }
  let reply: StoreReply;
  try {
    reply = { id: message.id, end: await storeDownload(db, message.request) };
  } catch (err) {
    reply = err instanceof SessionError ? { id: message.id, failure: { outcome: err.outcome, message: err.message } } : { id: message.id, error: failureReason(err) };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies StoreReply);
