import { Worker } from "node:worker_threads";
import type { Database } from "../src/db/client.ts";
import { releaseIfHeldBy } from "../src/db/write-turns.ts";
import { bundledEntry } from "../src/runtime/built.ts";
import type { JobOutcome } from "../src/db/schema/index.ts";
import { SessionError } from "./session.ts";
import type { JobEnd, StoreRequest } from "./store-download.ts";

/** What the thread starts with: the database, the lock its writes share with this thread's, and how long they wait. */
export type StoreThreadData = Pick<Database, "location" | "threadLock"> & Partial<Pick<Database, "writeWait">>;
export type StoreMessage = { type: "store"; id: number; request: StoreRequest } | { type: "close" };
/**
 * `end` undefined: the lease was lost. `error`: why storing failed (never a query's parameters). `failure`: the
 * download itself failed (a SessionError: its output cannot be a configuration), thrown again on this side.
 */
export type StoreReply =
  | { id: number; end?: JobEnd; error?: string; failure?: { outcome: JobOutcome; message: string } }
  | { ready: true };

// In production the thread runs its own bundle (dist/store-thread.js). From source, threads do not inherit this
// process's TypeScript loader: the thread registers tsx before loading its entry.
const threadEntry = (): { script: string | URL; eval: boolean } => {
  const built = bundledEntry("store-thread");
  if (built) return { script: built, eval: false };
  const bootstrap = `import { register } from ${JSON.stringify(import.meta.resolve("tsx/esm/api"))};
register();
await import(${JSON.stringify(new URL("./store-thread-entry.ts", import.meta.url).href)});`;
  return { script: bootstrap, eval: true };
};

/**
 * The thread's young generation. A store leaves some 1 MB of short-lived texts behind and almost nothing that
 * lives; V8's default would size it like the main thread's and add tens of MB at 500 sessions.
 */
const STORE_THREAD_YOUNG_MB = 8;

/**
 * Stores downloads (storeDownload) on a thread of its own, over its own connection to the database, so the
 * event loop that runs the sessions does not digest, compress and write 100 KB texts as well. With it all on one
 * loop, the loop was busy enough that every session waited on it and the collector ran 0.65 of bare ssh2's rate
 * (bench:collect, median of 3 rounds); with storing here, 0.75. Writes from the two threads take turns on
 * `threadLock` (write-turns.ts), and neither holds it across an await of the other, so neither can wait on the
 * other for good; if the thread dies holding it, it is freed here. The thread starts with the collector
 * (`ready`: module loading takes most of a second); one that dies fails the requests in its hands, and the next
 * request starts another.
 */
export function startStoreThread({ location, threadLock, writeWait = {} }: StoreThreadData) {
  type Settle = { resolve(end: JobEnd | undefined): void; reject(err: Error): void };
  /** The requests the thread has not answered yet, by id: how to settle each, and its promise (close waits for it). */
  type Thread = { worker: Worker; waiting: Map<number, Settle & { reply: Promise<unknown> }>; ready: Promise<void> };
  let thread: Thread | undefined;
  let nextId = 0;

  function start(): Thread {
    const entry = threadEntry();
    const worker = new Worker(entry.script, {
      eval: entry.eval,
      workerData: { location, threadLock, writeWait } satisfies StoreThreadData,
      resourceLimits: { maxYoungGenerationSizeMb: STORE_THREAD_YOUNG_MB },
    });
    let opened!: () => void;
    let failed!: (err: Error) => void;
    const ready = new Promise<void>((resolve, reject) => ((opened = resolve), (failed = reject)));
    ready.catch(() => {});
    const started: Thread = { worker, waiting: new Map(), ready };
    // Read now: once the thread has exited, worker.threadId is -1.
    const threadId = worker.threadId;
    const fail = (err: Error) => {
      failed(err);
      if (thread === started) thread = undefined;
      for (const { reject } of started.waiting.values()) reject(err);
      started.waiting.clear();
    };
    worker.on("message", (reply: StoreReply) => {
      if ("ready" in reply) return opened();
      const waiting = started.waiting.get(reply.id);
      started.waiting.delete(reply.id);
      if (reply.failure) waiting?.reject(new SessionError(reply.failure.outcome, reply.failure.message));
      else if (reply.error !== undefined) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.end);
    });
    worker.on("error", (err) => fail(new Error(`the store thread failed: ${err.message}`)));
    worker.on("exit", (code) => {
      releaseIfHeldBy(threadLock, threadId);
      fail(new Error(`the store thread exited (code ${code})`));
    });
    return started;
  }

  thread = start();
  return {
    /** The running thread's id, which its writes hold `threadLock` under; undefined when none runs. */
    get threadId(): number | undefined {
      return thread?.worker.threadId;
    },
    /** Settles once the thread has its database open (the first start takes most of a second: module loading). */
    get ready(): Promise<void> {
      return (thread ??= start()).ready;
    },
    store(request: StoreRequest): Promise<JobEnd | undefined> {
      const { worker, waiting } = (thread ??= start());
      const id = ++nextId;
      let settle!: Settle;
      const reply = new Promise<JobEnd | undefined>((resolve, reject) => (settle = { resolve, reject }));
      waiting.set(id, { ...settle, reply });
      worker.postMessage({ type: "store", id, request } satisfies StoreMessage);
      return reply;
    },
    /** Closes the thread's connection and ends it, once the requests in its hands are answered. */
    async close(): Promise<void> {
      const closing = thread;
      if (!closing) return;
      thread = undefined;
      await Promise.allSettled([...closing.waiting.values()].map((w) => w.reply));
      const exited = new Promise<void>((resolve) => closing.worker.once("exit", () => resolve()));
      closing.worker.postMessage({ type: "close" } satisfies StoreMessage);
      await exited;
    },
  };
}

export type StoreThread = ReturnType<typeof startStoreThread>;
