import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../src/db/client.ts";
import { failureReason } from "../src/error-reason.ts";
import { storeDownload } from "./store-download.ts";
import type { StoreMessage, StoreReply, StoreThreadData } from "./store-thread.ts";

// The store thread (store-thread.ts): its own connection to the database, one reply per request, one at a time.
const port = parentPort!;
const { location, threadLock } = workerData as StoreThreadData;
const { client, db } = await openDatabase(location.url, location.authToken, threadLock);

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
    reply = { id: message.id, error: failureReason(err) };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies StoreReply);
